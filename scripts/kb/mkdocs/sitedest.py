"""Where ``python -m kb publish`` may put a site, and how it swaps the new one in.

A destination is refused (with a message, before anything is built) when it is the project root
or a folder above it, holds ``mkdocs.yml`` or the docs folder, lies inside the docs folder, is a
file or a symlink. Just before the swap it is refused too when it holds anything the last publish
did not write: each publish writes ``MARKER``, the list of every path it put in the site, and
only those, plus dotfiles at the top (``.git``, ``.nojekyll``: a gh-pages checkout), may be there.
Those dotfiles are carried into the new site (moved, not copied) before the swap.

The swap is ``renameat2(RENAME_EXCHANGE)`` on Linux: one system call exchanges the two folders, so
at every instant the destination is a complete site, old or new; the old one is then removed from
the building folder. Where the call is missing (not glibc 2.28+, or a file system without it) the
fallback is two renames: the old site to a ``.NAME.*.old`` folder, then the new one into place; for
that instant there is no site, and a kill then leaves the old one in ``.NAME.*.old``.

A publish holds an ``flock`` on its building folder; the next publish removes any building or old
folder no live publish holds, so what a SIGKILL left behind goes with the next run.
"""

from __future__ import annotations

import fcntl
import glob
import os
import re
import shutil
import tempfile
from pathlib import Path

from ..core.exchange import exchange as _exchange

MARKER = ".kb-published"
_HEADER = "# written by python -m kb publish: every path below is replaced by the next publish\n"


class DestError(Exception):
    """The destination may not be replaced: the message says why (it starts with the folder)."""


def refuse_early(root: Path, dest: str, config: str) -> None:
    """DestError when ``root/dest`` is a folder publish must never replace, whatever it holds."""
    target = (root / dest).resolve()
    project = root.resolve()
    docs = (project / docs_dir(root / config)).resolve()
    why = ""
    if target == project or project.is_relative_to(target):
        why = "is the project folder or holds it"
    elif target.is_relative_to(docs):
        why = "is inside the docs folder"
    elif (target / "mkdocs.yml").exists() or docs.is_relative_to(target):
        why = "holds mkdocs.yml or a docs folder"
    elif (root / dest).is_symlink() or (target.exists() and not target.is_dir()):
        why = "is a symlink or a file, not a site folder"
    if why:
        raise DestError(f"{dest}: {why}; publish replaces only a site folder it wrote (expected e.g. site)")


def docs_dir(config: Path) -> str:
    try:
        found = re.search(r"^docs_dir:\s*['\"]?([^'\"\s#]+)", config.read_text(encoding="utf-8"), re.M)
    except OSError:
        return "docs"
    return found.group(1) if found else "docs"


def check_owned(target: Path, dest: str) -> None:
    """DestError when ``target`` holds a path the last publish did not write (top dotfiles aside)."""
    if not target.exists():
        return
    try:
        written = set((target / MARKER).read_text(encoding="utf-8").splitlines()[1:])
    except (OSError, UnicodeDecodeError):
        raise DestError(
            f"{dest}: not written by python -m kb publish (no {MARKER}); move or delete it, then publish again"
        ) from None
    for path in _paths(target):
        if path not in written and path != MARKER and not _top_dotfile(path):
            raise DestError(
                f"{dest}/{path}: not written by the last publish; move it out of {dest}/, then publish again"
            )


def _top_dotfile(path: str) -> bool:
    return path.startswith(".") and "/" not in path


def _paths(folder: Path) -> list[str]:
    """Every path under ``folder`` (folders too), relative and sorted; a top dotfolder is one path."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        rel = Path(dirpath).relative_to(folder).as_posix()
        prefix = "" if rel == "." else rel + "/"
        out += [prefix + name for name in dirnames + filenames]
        if not prefix:  # .git and the like are carried over whole, never walked
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
    return sorted(out)


def write_marker(fresh: Path) -> None:
    (fresh / MARKER).write_text(_HEADER + "".join(p + "\n" for p in _paths(fresh)), encoding="utf-8")


def carry_dotfiles(old: Path, fresh: Path, dest: str) -> list[tuple[Path, Path]]:
    """Move the old site's top dotfiles the publish did not write into the new one; the moves made."""
    if not old.is_dir():
        return []
    written = set((old / MARKER).read_text(encoding="utf-8").splitlines()[1:])
    moves = []
    for entry in sorted(os.listdir(old)):
        if entry.startswith(".") and entry != MARKER and entry not in written:
            if os.path.lexists(fresh / entry):
                raise DestError(f"{dest}/{entry}: the new site has one too; move yours out, then publish again")
            moves.append((old / entry, fresh / entry))
    for src, dst in moves:
        os.rename(src, dst)
    return moves


def swap(fresh: Path, target: Path) -> None:
    """Put ``fresh`` at ``target``; the old site (if any) is left at ``fresh``'s path to remove."""
    if not target.exists():
        os.rename(fresh, target)
        fresh.mkdir()
        return
    if _exchange(fresh, target):
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
    os.rename(target, old / target.name)
    os.rename(fresh, target)
    os.rename(old / target.name, fresh)
    old.rmdir()


def hold(folder: Path) -> int:
    """A lock on ``folder`` while this publish builds in it (``sweep`` leaves it alone)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def sweep(parent: Path, name: str) -> None:
    """Remove the ``.NAME.*.building`` and ``.NAME.*.old`` folders no live publish holds."""
    pattern = f".{glob.escape(name)}.*"
    for left in sorted(parent.glob(pattern + ".building")) + sorted(parent.glob(pattern + ".old")):
        try:
            fd = os.open(left, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            remove(left)
        except BlockingIOError:
            pass  # another publish is building there
        finally:
            os.close(fd)


def remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
