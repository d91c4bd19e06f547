"""Work on a page kept across the rebuilds of one ``mkdocs serve``, keyed by a digest of every
input the work reads, so that a page nobody touched costs nothing to rebuild and a cached result
is never stale: a changed input is a different key.

The keys are built by the caller from the inputs themselves (the page's final Markdown, which
holds every KB record its shortcodes render, the site's file list, mkdocs.yml, the snippets), never
from timestamps. After each build ``sweep`` drops what that build did not use, so the cache holds
one site's worth of entries. Nothing is cached for ``mkdocs build``: it always does all the work.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")


def digest(parts: Iterable[str | bytes]) -> str:
    """A digest of ``parts`` in order; the lengths are hashed too, so no two splits of the same
    text collide (``("ab", "c")`` and ``("a", "bc")`` differ)."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
        h.update(b"%d:" % len(data))
        h.update(data)
    return h.hexdigest()


def tree_digest(folder: Path) -> str:
    """A digest of every file under ``folder`` (relative path and bytes); empty when it is absent."""
    if not folder.is_dir():
        return digest(["absent"])
    parts: list[str | bytes] = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        parts += [path.relative_to(folder).as_posix(), path.read_bytes()]
    return digest(parts)


@dataclass
class Memo(Generic[T]):
    """Results by key; ``hits`` and ``misses`` count since the last ``sweep``."""

    entries: dict[str, T] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    hits: int = 0
    misses: int = 0

    def get(self, key: str) -> T | None:
        found = self.entries.get(key)
        if found is not None:
            self.used.add(key)
            self.hits += 1
        return found

    def put(self, key: str, value: T) -> None:
        self.entries[key] = value
        self.used.add(key)

    def get_or_make(self, key: str, make: Callable[[], T | None]) -> T | None:
        """The cached result, or ``make()``'s, kept unless it is None (a result that must not be
        reused, such as one whose making logged a warning)."""
        found = self.get(key)
        if found is not None:
            return found
        self.misses += 1
        value = make()
        if value is not None:
            self.put(key, value)
        return value

    def sweep(self) -> tuple[int, int]:
        """End of a build: drop the entries it did not use; (hits, misses) of that build."""
        self.entries = {k: v for k, v in self.entries.items() if k in self.used}
        counts = (self.hits, self.misses)
        self.used, self.hits, self.misses = set(), 0, 0
        return counts
