"""Which files a migration scan reads: the ``.py`` files under the paths it is given.

A folder is walked with an explicit stack, in name order. Skipped: ``.git``, ``.venv``,
``node_modules`` and ``__pycache__``; whatever a ``.gitignore`` in the scanned tree ignores (each
file applies below its own folder, a deeper one first, with git's patterns: see ``globmatch``, which
matches in linear time and looks literal names up, so neither a hostile pattern nor a generated
200,000-line file slows the walk); whatever an ``--exclude`` pattern (the same syntax, relative to
each scanned folder) matches. A symlinked folder is never followed; a symlinked file is read only
when it stays inside the scanned tree; a symlink named on the command line, only when it stays
inside the folder that holds it (the tree a walk of that folder would allow). A file named on the
command line is read even if a ``.gitignore`` ignores it (not if excluded). Every path is resolved
to its real file, and a file reached twice (named twice, linked, hard-linked) is read once, under
the name that is not a symlink (else the first in order), so ``--fix`` edits it once. Only regular
files are read: a FIFO, socket or device (named, found or linked to) would block or never end, so
it is a problem, skipped.

A path is shown with every character that isn't printable (controls, escape, bidi overrides, line
separators, undecodable bytes) written as an escape, so a file name can't drive the terminal or
forge a line of the report; the real path is kept for opening the file.
"""

from __future__ import annotations

import os
import posixpath
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import Problem, escape_text
from .globmatch import PatternError, PatternSet

SKIP_DIRS = frozenset({".git", ".venv", "node_modules", "__pycache__"})
SUFFIX = ".py"


class UsageError(Exception):
    """A path that doesn't exist or can't be scanned: the command stops with status 2."""


@dataclass
class Walk:
    """The files to scan (path to read, path to show), sorted, and what was passed over and why."""

    files: list[tuple[str, str]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


Specs = list[tuple[str, PatternSet]]  # (folder relative to the scanned root, its .gitignore)


def collect(paths: list[str], excludes: list[str]) -> Walk:
    """Every file to scan under ``paths``; UsageError for a path that does not exist or a bad --exclude."""
    exclude = _excludes(excludes)
    walk = Walk()
    seen: set[str] = set()
    for arg in paths:
        top = Path(arg)
        if not (top.exists() or top.is_symlink()):
            raise UsageError(f"{escape_text(arg)}: no such file or folder")
        if top.is_dir():
            _walk_dir(top, arg, exclude, walk, seen)
        elif not _excluded_file(exclude, posixpath.normpath(top.as_posix())):
            shown = _shown(arg, "")
            problem = _not_regular(str(top)) or _leaves(top)
            if problem:
                walk.problems.append(Problem(shown, 1, problem))
            elif shown not in seen:
                seen.add(shown)
                walk.files.append((str(top), shown))
    walk.files = _one_per_file(walk.files)
    return walk


def _leaves(top: Path) -> str:
    """Why a symlink named on the command line is refused: it leads out of the folder holding it."""
    if not top.is_symlink():
        return ""
    folder = os.path.realpath(top.parent)
    if os.path.commonpath([folder, os.path.realpath(top)]) != folder:
        return "symlink leads out of the folder that holds it; not followed"
    return ""


def _one_per_file(files: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Each real file once, as (its real path, the name shown), sorted by that name."""
    seen: set[tuple[int, int]] = set()
    folders: dict[str, str] = {}
    out = []
    for path, shown in sorted(files, key=lambda f: (os.path.islink(f[0]), f[1])):
        try:
            st = os.stat(path)
        except OSError:  # left to the reader, which says why it can't be read
            out.append((path, shown))
            continue
        if (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            out.append((_real_path(path, folders), shown))
    return sorted(out, key=lambda f: f[1])


def _real_path(path: str, folders: dict[str, str]) -> str:
    """``os.path.realpath(path)``, with the folder of a file that is no symlink resolved once for
    every file in it (``folders``): realpath reads each part of the path again for each file."""
    if os.path.islink(path):
        return os.path.realpath(path)
    folder, name = os.path.split(path)
    real = folders.get(folder)
    if real is None:
        real = folders[folder] = os.path.realpath(folder)
    return os.path.join(real, name)


def _excludes(excludes: list[str]) -> PatternSet:
    patterns = PatternSet()
    for text in excludes:
        try:
            added = patterns.add_line(text, comments=False)
        except PatternError as exc:
            raise UsageError(f"--exclude {text!r}: {exc}") from None
        if not added:
            raise UsageError(f"--exclude {text!r}: expected a pattern (a name, path or glob)")
    return patterns


def _read_ignore(path: Path, shown: str, walk: Walk) -> PatternSet | None:
    """A .gitignore's patterns; a line git would match nothing with is a problem (and ignored)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        walk.problems.append(Problem(shown, 1, f"can't be read: {exc.strerror}; its patterns are not applied"))
        return None
    text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "surrogateescape")  # names compare as os gives them
    patterns = PatternSet()
    lines = text.split("\n")
    for number, why in patterns.add_lines(lines):
        msg = f"pattern {lines[number - 1].rstrip()!r}: {why}; git matches nothing with it, so it is ignored"
        walk.problems.append(Problem(shown, number, msg))
    return patterns if patterns else None


def _walk_dir(top: Path, arg: str, exclude: PatternSet, walk: Walk, seen: set[str]) -> None:
    real_top = os.path.realpath(top)
    base = Path(arg).as_posix()
    excluding = bool(exclude)
    stack: list[tuple[Path, str, Specs]] = [(top, "", [])]
    while stack:
        folder, rel, specs = stack.pop()
        ignore = folder / ".gitignore"
        if ignore.is_file() and not ignore.is_symlink():
            spec = _read_ignore(ignore, _shown(arg, rel + ".gitignore"), walk)
            if spec is not None:
                specs = [*specs, (rel, spec)]
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
                if entry.name in SKIP_DIRS or (excluding and exclude.decide(child, True)):
                    continue
                if specs and _git_ignored(specs, child, True):
                    continue
                stack.append((Path(entry.path), child + "/", specs))
                continue
            if not entry.name.endswith(SUFFIX) or (excluding and exclude.decide(child, False)):
                continue
            if specs and _git_ignored(specs, child, False):
                continue
            shown = escape_text(posixpath.normpath(posixpath.join(base, child)))
            if is_link:
                target = os.path.realpath(entry.path)
                if os.path.isdir(target):
                    continue  # a symlinked folder (named like a .py file) is never followed
                if os.path.commonpath([real_top, target]) != real_top:
                    walk.problems.append(Problem(shown, 1, "symlink leads out of the scanned tree; not followed"))
                    continue
            problem = _not_regular(entry.path) if is_link or not entry.is_file(follow_symlinks=False) else ""
            if problem:
                walk.problems.append(Problem(shown, 1, problem))
            elif shown not in seen:
                seen.add(shown)
                walk.files.append((entry.path, shown))


def _not_regular(path: str) -> str:
    """Why ``path`` (followed if a symlink) is skipped when it is a FIFO, socket or device, else ''.
    A path that can't be stat'ed is left to the reader, which reports why it can't be read."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return ""
    if stat.S_ISREG(mode):
        return ""
    kind = (
        "a FIFO"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "not a regular file"
    )
    return f"is {kind}, which could block the scan (expected a regular file); skipped"


def _excluded_file(exclude: PatternSet, path: str) -> bool:
    """A file named on the command line is excluded when it, or a folder on its path, is."""
    if not exclude:
        return False
    parts = path.lstrip("/").split("/")
    for i in range(1, len(parts)):
        if exclude.decide("/".join(parts[:i]), True):
            return True
    return bool(exclude.decide("/".join(parts), False))


def _git_ignored(specs: Specs, rel: str, is_dir: bool) -> bool:
    """git's rule: the deepest .gitignore with a matching pattern decides (its last match)."""
    for base, spec in reversed(specs):
        result = spec.decide(rel[len(base) :], is_dir)
        if result is not None:
            return result
    return False


def _shown(arg: str, rel: str) -> str:
    """The path as the user would write it: the argument, then the path under it."""
    return escape_text(posixpath.normpath(posixpath.join(Path(arg).as_posix(), rel)) if rel else Path(arg).as_posix())
