"""Problems are values with a location; one formatter prints them all."""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

# Written as escapes when a problem or a scan report is printed: a message echoes input, and a raw
# ESC could drive the terminal, a bidi override or invisible character make the line read
# differently from what it holds, a line break forge another ``path:line``, a lone surrogate fail
# the print.
_ESCAPED = ("Cc", "Cf", "Cs", "Zl", "Zp")
# Unicode's Default_Ignorable_Code_Point set (DerivedCoreProperties.txt), which renderers draw as
# nothing: beside the format characters above it holds fillers, variation selectors (which can
# carry hidden bytes after an emoji) and reserved code points such as U+2065.
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape_text(text: str) -> str:
    """``text`` with every control, format (bidi, zero-width), separator, surrogate and default-
    ignorable character written as a Python-style escape (``\\n``, ``\\x1b``, ``\\u202e``);
    everything else as is. The one escaper for text shown in a terminal or a report."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(_escape(ch) if _hidden(ch) else ch for ch in text)


def _hidden(ch: str) -> bool:
    return unicodedata.category(ch) in _ESCAPED or _IGNORABLE.match(ch) is not None


def _escape(ch: str) -> str:
    code = ord(ch)
    if ch in _NAMED:
        return _NAMED[ch]
    if 0xDC80 <= code <= 0xDCFF:  # os.fsdecode's stand-in for a byte of a file name that isn't UTF-8
        return f"\\x{code - 0xDC00:02x}"
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
