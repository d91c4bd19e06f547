"""Which files a migration scan reads: the ``.py`` files under the paths it is given.

A folder is walked with an explicit stack, in name order. Skipped: ``.git``, ``.venv``,
``node_modules`` and ``__pycache__``; whatever a ``.gitignore`` in the scanned tree ignores (each
file applies below its own folder, a deeper one first, with git's patterns: ``/`` anchoring, ``**``,
``!`` negation, ``dir/``; read by ``pathspec``, which MkDocs already requires); whatever an
``--exclude`` pattern (the same syntax, relative to each scanned folder) matches. A symlinked
folder is never followed; a symlinked file is read only when it stays inside the scanned tree.
A file named on the command line is read even if a ``.gitignore`` ignores it (not if excluded).
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from pathspec import GitIgnoreSpec

from .errors import Problem
from .yamlload import one_line

SKIP_DIRS = frozenset({".git", ".venv", "node_modules", "__pycache__"})
SUFFIX = ".py"


class UsageError(Exception):
    """A path that doesn't exist or can't be scanned: the command stops with status 2."""


@dataclass
class Walk:
    """The files to scan (path to read, path to show), sorted, and what was passed over and why."""

    files: list[tuple[str, str]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


Specs = list[tuple[str, GitIgnoreSpec]]  # (folder relative to the scanned root, its .gitignore)


def collect(paths: list[str], excludes: list[str]) -> Walk:
    """Every file to scan under ``paths``; UsageError for a path that does not exist."""
    exclude = GitIgnoreSpec.from_lines(excludes)
    walk = Walk()
    seen: set[str] = set()
    for arg in paths:
        top = Path(arg)
        if not (top.exists() or top.is_symlink()):
            raise UsageError(f"{arg}: no such file or folder")
        if top.is_dir():
            _walk_dir(top, arg, exclude, walk, seen)
        elif not _ignored(exclude, posixpath.normpath(top.as_posix())):
            shown = _shown(arg, "")
            if shown not in seen:
                seen.add(shown)
                walk.files.append((str(top), shown))
    walk.files.sort(key=lambda f: f[1])
    return walk


def _walk_dir(top: Path, arg: str, exclude: GitIgnoreSpec, walk: Walk, seen: set[str]) -> None:
    real_top = os.path.realpath(top)
    base = Path(arg).as_posix()
    excluding = bool(exclude.patterns)
    stack: list[tuple[Path, str, Specs]] = [(top, "", [])]
    while stack:
        folder, rel, specs = stack.pop()
        ignore = folder / ".gitignore"
        if ignore.is_file() and not ignore.is_symlink():
            try:
                lines = ignore.read_text(encoding="utf-8", errors="replace").splitlines()
                specs = [*specs, (rel, GitIgnoreSpec.from_lines(lines))]
            except OSError as exc:
                walk.problems.append(Problem(_shown(arg, rel + ".gitignore"), 1, f"can't be read: {exc.strerror}"))
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name, reverse=True)
        except OSError as exc:
            walk.problems.append(Problem(_shown(arg, rel), 1, f"folder can't be read: {exc.strerror}; skipped"))
            continue
        for entry in entries:
            child = rel + entry.name
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if entry.name in SKIP_DIRS or (excluding and _ignored(exclude, child + "/")):
                    continue
                if specs and _git_ignored(specs, child + "/"):
                    continue
                stack.append((Path(entry.path), child + "/", specs))
                continue
            if not entry.name.endswith(SUFFIX) or (excluding and _ignored(exclude, child)):
                continue
            if specs and _git_ignored(specs, child):
                continue
            shown = one_line(posixpath.normpath(posixpath.join(base, child)))
            if is_link:
                target = os.path.realpath(entry.path)
                if os.path.isdir(target):
                    continue  # a symlinked folder (named like a .py file) is never followed
                if os.path.commonpath([real_top, target]) != real_top:
                    walk.problems.append(Problem(shown, 1, "symlink leads out of the scanned tree; not followed"))
                    continue
            elif not entry.is_file(follow_symlinks=False):
                continue  # a FIFO, socket or device would block or never end
            if shown not in seen:
                seen.add(shown)
                walk.files.append((entry.path, shown))


def _ignored(spec: GitIgnoreSpec, rel: str) -> bool:
    return bool(spec.check_file(rel).include)


def _git_ignored(specs: Specs, rel: str) -> bool:
    """git's rule: the deepest .gitignore with a matching pattern decides (its last match)."""
    for base, spec in reversed(specs):
        result = spec.check_file(rel[len(base) :])
        if result.include is not None:
            return result.include
    return False


def _shown(arg: str, rel: str) -> str:
    """The path as the user would write it: the argument, then the path under it."""
    return one_line(posixpath.normpath(posixpath.join(Path(arg).as_posix(), rel)) if rel else Path(arg).as_posix())
