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
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from ..core.errors import Problem
    from ..core.load import KB
    from ..wheel.wheel import WheelIndex

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


MAX_READ = 8_000_000  # larger files, links and special files are told apart by their lstat only


def tree_digest(folder: Path) -> str:
    """A digest of everything under ``folder``: the relative path and bytes of each regular file
    (never opening a link, a FIFO or a file past ``MAX_READ``, which the file scan reports)."""
    return _flat_digest(folder, _tree_parts(folder))


def _flat_digest(folder: Path, parts: list[tuple[str, str | bytes]]) -> str:
    return digest(part for pair in parts for part in pair) if folder.is_dir() else digest(["absent"])


def _tree_parts(folder: Path) -> list[tuple[str, str | bytes]]:
    """Each file under ``folder`` as (relative path, its bytes or, when it is not read, its lstat)."""
    if not folder.is_dir():
        return []
    parts: list[tuple[str, str | bytes]] = []
    for path in sorted(folder.rglob("*")):
        info, rel = path.lstat(), path.relative_to(folder).as_posix()
        if stat.S_ISREG(info.st_mode) and info.st_size <= MAX_READ:
            parts.append((rel, path.read_bytes()))
        else:
            parts.append((rel, f"{info.st_mode} {info.st_size} {info.st_mtime_ns} {info.st_ino}"))
    return parts


OTHER_FILES = ""  # in ``data_digests``: every file of the folder that belongs to no table


def data_digests(folder: Path, tables: Iterable[str]) -> tuple[str, dict[str, str]]:
    """From one read of ``folder`` (docs/data): its ``tree_digest``, and a digest per table of the
    files that hold it (``NAME.yml`` and ``NAME.*.yml`` at the top, as kb/core/load.py reads them), with
    every other file under ``OTHER_FILES``. A table edit changes its own digest and no other."""
    names = set(tables)
    parts = _tree_parts(folder)
    grouped: dict[str, list[str | bytes]] = {}
    for rel, data in parts:
        stem = rel.split(".", 1)[0]
        table = stem if stem in names and "/" not in rel and rel.endswith(".yml") else OTHER_FILES
        grouped.setdefault(table, []).extend((rel, data))
    return _flat_digest(folder, parts), {k: digest(v) for k, v in grouped.items()}


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


@dataclass
class ProjectCache:
    """Validation's reusable work (kb/mkdocs/project.py): the KB as read from docs/data, by a digest of
    that folder, and each page's rendered shortcodes, by the page's own text and the digests of
    the tables its render read."""

    kbs: Memo[tuple[KB, list[Problem]]] = field(default_factory=Memo)
    renders: Memo[tuple[tuple[tuple[str, str], ...], str, list[Problem]]] = field(default_factory=Memo)  # by table
    checks: Memo[tuple[list[Problem], list[str]]] = field(default_factory=Memo)  # problems, notes
    package: Memo[list[Problem]] = field(default_factory=Memo)  # the package check's, by part (project.py)
    indexes: Memo[WheelIndex] = field(default_factory=Memo)  # the pinned wheel's index, by the wheel's stat
    anchors: Memo[frozenset[str]] = field(default_factory=Memo)  # each rendered page's anchors, by its text

    def sweep(self) -> tuple[int, int]:
        """End of a build; (reused, made) page renders."""
        self.kbs.sweep()
        self.checks.sweep()
        self.package.sweep()
        self.indexes.sweep()
        self.anchors.sweep()
        return self.renders.sweep()
