"""The temporary files ``--fix`` writes beside a file, and removing the ones a killed run left.

Each is named ``.NAME.kbfix-XXXXXXXX.fix`` (``MARK`` and eight random characters from
``tempfile``) and is locked (``flock``) from the moment it exists until its name is gone. A
SIGKILL can still leave one: the kernel drops the lock with the process. ``sweep`` removes, in the
folders it is given, only files with that exact name shape, that are regular files this user
owns and that no live process holds locked, so a user's own ``.x.py.1234.fix`` or a live run's
file is never touched. The command sweeps after its worker processes are gone, on every exit
path, and a later ``--fix`` sweeps the folders it scans first.
"""

from __future__ import annotations

import fcntl
import os
import re
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

MARK = "kbfix"
_NAME = re.compile(rf"^\..+\.{MARK}-[A-Za-z0-9_]{{8}}\.fix$")


def create(path: Path) -> tuple[int, Path]:
    """A new locked temporary file beside ``path``: its descriptor and name."""
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.{MARK}-", suffix=".fix", dir=path.parent)
    fcntl.flock(handle, fcntl.LOCK_EX)
    return handle, Path(name)


def is_temp_name(name: str) -> bool:
    return bool(_NAME.match(name))


def sweep(folders: Iterable[Path]) -> list[Path]:
    """Remove the temporary files a killed ``--fix`` left in ``folders``; the paths removed."""
    removed = []
    for folder in sorted(set(folders)):
        try:
            names = [n for n in os.listdir(folder) if is_temp_name(n)]
        except OSError:
            continue
        removed += [folder / n for n in sorted(names) if _remove_if_left(folder / n)]
    return removed


def _remove_if_left(path: Path) -> bool:
    """Unlink ``path`` when it is this user's regular file and no live process holds its lock."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            return False
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        now = os.lstat(path)
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            return False
        os.unlink(path)
        return True
    except OSError:  # locked by a live run (BlockingIOError), or gone meanwhile
        return False
    finally:
        os.close(fd)
