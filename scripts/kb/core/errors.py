"""Problems are values with a location; one formatter prints them all."""

from __future__ import annotations

import unicodedata
from typing import NamedTuple

# Written as escapes when a problem is printed: a message echoes input, and a raw ESC could drive
# the terminal, a bidi override or invisible character make the line read differently from what it
# holds, a line break forge another ``path:line``, a lone surrogate fail the print.
_ESCAPED = ("Cc", "Cf", "Cs", "Zl", "Zp")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape_text(text: str) -> str:
    """``text`` with every control, format (bidi, zero-width), separator and surrogate character
    written as a Python-style escape (``\\n``, ``\\x1b``, ``\\u202e``); everything else as is."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(_escape(ch) if unicodedata.category(ch) in _ESCAPED else ch for ch in text)


def _escape(ch: str) -> str:
    code = ord(ch)
    if ch in _NAMED:
        return _NAMED[ch]
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


class Problem(NamedTuple):
    """One thing wrong, at ``path:line``: what is wrong and what was expected. (A named tuple:
    ordered by path, line and message, and cheap to import, which a site check run pays first.)"""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        """One line of visible text, always: see ``escape_text``."""
        return f"{escape_text(self.path)}:{self.line}: {escape_text(self.message)}"


class KBError(Exception):
    """Raised with every problem of a run, so they can be listed together."""

    def __init__(self, problems: list[Problem]):
        self.problems = sorted(set(problems))
        super().__init__(format_problems(self.problems))


def format_problems(problems: list[Problem]) -> str:
    """All problems, sorted by file and line, one per line."""
    return "\n".join(str(p) for p in sorted(set(problems)))


def finish(problems: list[Problem], where: str, ok: str) -> int:
    """A command's end: every problem sorted, then a count, on stderr; or the ok line. 1 or 0."""
    import sys

    if problems:
        print(format_problems(problems), file=sys.stderr)
        print(f"{len(problems)} problem(s) {where}", file=sys.stderr)
        return 1
    print(ok)
    return 0
