"""A write lease (Linux ``F_SETLEASE``) on the file ``--fix`` is about to replace.

Editors take no lock, but the kernel tells a lease holder about every ``open`` of its file: a write
lease is granted only while no other process has the file open, and from then on any process that
opens it is held in ``open`` (up to ``/proc/sys/fs/lease-break-time``) until the holder lets go.
``--fix`` holds one from just before its last check until the old file is gone, and asks
``writer_waiting`` before it lets the old file go: a process waiting to open it for writing (an
editor about to save) makes the fix swap back, so that save lands in the file at the path. A
process opening it only to read is no save and changes nothing.

The lease's signal (SIGIO, which would end the process) is ignored while it is held. No lease
(another process has the file open, it belongs to another user, the file system has no leases,
or this is not the main thread) means ``writer_waiting`` is always False and the re-check after
the swap is the only guard.
"""

from __future__ import annotations

import fcntl
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager

ENABLED = True  # tests turn it off to reach the checks without a lease


@contextmanager
def leased(fd: int) -> Iterator[Callable[[], bool]]:
    """A write lease on ``fd`` for the block; yields ``writer_waiting`` (always False without one)."""
    try:
        old = signal.signal(signal.SIGIO, signal.SIG_IGN) if ENABLED else None
    except ValueError:  # not the main thread: signals can't be set here
        old = None
    held = old is not None and _take(fd)
    try:
        yield (lambda: _writer_waiting(fd)) if held else (lambda: False)
    finally:
        if held:
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
        if old is not None:
            signal.signal(signal.SIGIO, old)


def _take(fd: int) -> bool:
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
    except OSError:  # EAGAIN: open elsewhere; EACCES: not ours; EINVAL: no leases on this file system
        return False
    return True


def _writer_waiting(fd: int) -> bool:
    """A process is held in ``open`` for writing (the lease is being broken down to none)."""
    return bool(fcntl.fcntl(fd, fcntl.F_GETLEASE) == fcntl.F_UNLCK)
