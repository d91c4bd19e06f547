"""Where ``python -m kb publish DIR --zip NAME`` may write its zip of the site, and how it replaces one.

The same rules as for the site folder (``kb.mkdocs.sitedest``). ``NAME`` is refused, with a message and
before anything is built, when it does not end in ``.zip``, is a symlink or a folder, is the
MkDocs configuration, is the project folder or holds it, is the docs folder or lies inside it, or
lies inside the site folder being published; and, then and again just before the replace, when it
is a file the last publish did not write. Each zip publish writes carries ``COMMENT`` as its zip
comment, and only a file that is a zip with that comment is replaced.

The new zip is written to a locked ``.NAME.*.building`` file beside ``NAME`` and renamed over it in
one step, so ``NAME`` holds the old zip or the new one at every instant. A killed publish can
leave that file; the next publish removes it when no live publish holds its lock.
"""

from __future__ import annotations

import fcntl
import glob
import os
import stat
import tempfile
import zipfile
from pathlib import Path

from .sitedest import DestError, docs_dir

COMMENT = b"written by python -m kb publish --zip: the next publish replaces it"


def refuse_zip(root: Path, name: str, dest: str, config: str) -> None:
    """DestError when ``root/name`` is not a place publish may write a zip."""
    path = root / name
    target = path.resolve()
    project = root.resolve()
    docs = (project / docs_dir(root / config)).resolve()
    site = (root / dest).resolve()
    why = ""
    if path.suffix.lower() != ".zip":
        why = "is not named .zip"
    elif path.is_symlink() or (path.exists() and not path.is_file()):
        why = "is a symlink or a folder, not a zip"
    elif target == (root / config).resolve():
        why = "is the MkDocs configuration"
    elif project.is_relative_to(target):
        why = "is the project folder or holds it"
    elif target.is_relative_to(docs):
        why = "is inside the docs folder"
    elif target.is_relative_to(site):
        why = f"is inside {dest}/, the site it zips"
    if why:
        raise DestError(f"{name}: {why}; --zip writes only a zip of its own (expected e.g. site.zip)")
    check_zip_owned(path, name)


def check_zip_owned(path: Path, name: str) -> None:
    """DestError when ``path`` exists and is not a zip an earlier publish wrote."""
    if not os.path.lexists(path):
        return
    try:
        with zipfile.ZipFile(path) as archive:
            ours = archive.comment == COMMENT
    except (OSError, zipfile.BadZipFile):
        ours = False
    if not ours or path.is_symlink():
        raise DestError(f"{name}: not written by python -m kb publish; move or delete it, then publish again")


def write_zip(folder: Path, path: Path) -> tuple[int, Path]:
    """A zip of everything under ``folder`` (named relative to it, sorted), marked as publish's,
    written to a locked temporary file beside ``path``: its descriptor (the lock) and name."""
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".building", dir=path.parent)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        with zipfile.ZipFile(name, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.comment = COMMENT
            for item in sorted(folder.rglob("*")):
                archive.write(item, item.relative_to(folder).as_posix())
        os.chmod(name, 0o666 & ~_umask())  # mkstemp makes it private; the zip is meant to be shared
    except BaseException:
        os.unlink(name)
        os.close(handle)
        raise
    return handle, Path(name)


def replace_zip(fresh: Path, path: Path, name: str) -> None:
    """Put ``fresh`` at ``path`` in one rename, if ``path`` is still publish's own (or absent)."""
    check_zip_owned(path, name)
    os.replace(fresh, path)


def sweep_zips(parent: Path, name: str) -> None:
    """Remove the ``.NAME.*.building`` files no live publish holds (a killed one left them)."""
    for left in sorted(parent.glob(f".{glob.escape(name)}.*.building")):
        try:
            fd = os.open(left, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                os.unlink(left)
        except OSError:
            pass  # another publish is writing it, or it is gone
        finally:
            os.close(fd)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
