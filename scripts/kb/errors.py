"""Problems are values with a location; one formatter prints them all."""

from __future__ import annotations

from typing import NamedTuple


class Problem(NamedTuple):
    """One thing wrong, at ``path:line``: what is wrong and what was expected. (A named tuple:
    ordered by path, line and message, and cheap to import, which a site check run pays first.)"""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        """One line, always: a line break in a path or message can't forge another ``path:line``."""
        return f"{self.path}:{self.line}: {self.message}".replace("\r", "\\r").replace("\n", "\\n")


class KBError(Exception):
    """Raised with every problem of a run, so they can be listed together."""

    def __init__(self, problems: list[Problem]):
        self.problems = sorted(set(problems))
        super().__init__(format_problems(self.problems))


def format_problems(problems: list[Problem]) -> str:
    """All problems, sorted by file and line, one per line."""
    return "\n".join(str(p) for p in sorted(set(problems)))
