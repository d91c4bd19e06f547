"""Swap two paths in one system call: Linux ``renameat2(RENAME_EXCHANGE)``.

At every instant each name holds one of the two files or folders, never none; both stay linked,
so the one swapped out can still be checked, and swapped back. ``exchange`` says False where the
call is missing (not glibc 2.28+, not Linux) or the file system has no such operation; the caller
then falls back to a plain rename and says what that guarantees.
"""

from __future__ import annotations

import ctypes
import errno
import os
from pathlib import Path

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def exchange(a: Path, b: Path) -> bool:
    """Swap ``a`` and ``b``; False when this system has no such call for them, OSError on a failure."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(b))
