"""How ``--fix`` writes a file: only over the very text it scanned, keeping what the file is.

- **Locked.** Each file is opened and locked (``fcntl.flock``, exclusive) before it is read for the
  fix, and the lock is held until it is replaced; a lock taken on a file that another run has just
  replaced is dropped and taken again on the new one. Two ``--fix`` runs on one tree take turns,
  and the second finds the file changed since its scan (below) and leaves it.
- **Unchanged since the scan.** The bytes read under the lock must hash as the scan's did, and just
  before the replace the path must still name the same file (device, inode) with the same size,
  mtime and bytes. Otherwise the file is left as it is now, with a message.
- **A save during the write is kept.** Editors don't take ``flock``, so a save can land after that
  check. The new text goes to a temporary file in the same folder (``kb.scan.fixtemp``), which gets the
  file's mode, group and extended attributes, and is swapped in with ``renameat2(RENAME_EXCHANGE)``
  (``kb.core.exchange``): the old file stays linked at the temporary name and is checked once more
  (same inode, size, mtime, bytes). If a save reached it, or a new file was renamed over the path
  in between, the two are swapped back and the user's save is what the path holds. From just
  before the last check until the old file is gone a write lease is held (``kb.scan.fixlease``): an
  editor opening the file to save in that time is held in ``open`` and makes the fix swap back
  first. Without a lease, a write that lands in the old file after the re-check, through a
  descriptor opened before the swap, is lost. Where the exchange call is missing the fix is a
  plain ``rename``, then the same re-check through the locked descriptor of the old file, whose
  bytes are put back if they changed (a save by rename in the instant before the rename is lost
  there).
- **Kept as it was.** A file is refused when the user can't write it or it has no write bit (even
  as root). When it has other hard links or belongs to another user it is rewritten in place,
  through the same inode (owner, mode, links and extended attributes stay; on a failure the old
  bytes are written back, and so they are when a save renamed a new file over its path meanwhile;
  a save written into it between the check and the write is overwritten). The temporary file is
  removed in ``finally``; one a SIGKILL left is removed by the command or the next ``--fix``.

Every failure is a ``Problem`` for the file, never an exception.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..core.errors import Problem
from ..core.exchange import exchange
from . import fixlease, fixtemp

LOCK_WAIT = 60.0  # seconds to wait for another run's lock on one file before leaving it
BEFORE_REPLACE: Callable[[Path], None] | None = None  # test hook: new text written, last check next
AFTER_CHECK: Callable[[Path], None] | None = None  # test hook: the last check passed, the write or rename next
CHANGED = "changed since it was scanned; not fixed (run the scan again)"
CHANGED_NOW = "changed while it was being fixed; left as it is now (run --fix again)"
SAVED_DURING = "changed while writing; left as the user saved it"


def digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


class Refused(Exception):
    """The file is left as it is: ``message`` says why."""


@contextmanager
def locked(path: Path) -> Iterator[int]:
    """``path`` opened read-only and locked; Refused when another run holds it for too long."""
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        fd = _open(path, deadline)
        try:
            if _lock(fd, deadline) and _same(os.fstat(fd), os.stat(path)):
                yield fd
                return
        finally:
            os.close(fd)  # closing drops the lock
        if time.monotonic() > deadline:
            raise Refused(f"locked by another process for {LOCK_WAIT:.0f} s; not fixed")


def _open(path: Path, deadline: float) -> int:
    """``path`` opened to read; while another run holds a lease on it (kb.scan.fixlease) a non-blocking
    open says EWOULDBLOCK, for the few milliseconds of its swap."""
    while True:
        try:
            return os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise Refused(f"locked by another process for {LOCK_WAIT:.0f} s; not fixed") from None
            time.sleep(0.02)


def _lock(fd: int, deadline: float) -> bool:
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)


def read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _unchanged(path: Path, fd: int, before: os.stat_result, raw: bytes) -> bool:
    """``path`` still names the file open as ``fd``, with its size, mtime and bytes as checked
    (read through ``fd``: opening the path again would break this process's own lease)."""
    try:
        now = os.stat(path)
        if not _same(now, before) or (now.st_size, now.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
            return False
        return read_all(fd) == raw
    except OSError:
        return False


def _before_replace(path: Path) -> None:
    if BEFORE_REPLACE is not None:
        BEFORE_REPLACE(path)


def _last_check(path: Path, fd: int, before: os.stat_result, raw: bytes) -> None:
    if not _unchanged(path, fd, before, raw):
        raise Refused(CHANGED_NOW)
    if AFTER_CHECK is not None:
        AFTER_CHECK(path)


def refusal(path: Path, st: os.stat_result) -> str:
    """Why the user may not have the file rewritten ('' when they may)."""
    if not stat.S_ISREG(st.st_mode):
        return "is no longer a regular file; not fixed"
    if not st.st_mode & 0o222 or not os.access(path, os.W_OK):
        return "is read-only for you; not fixed (make it writable to fix it)"
    return ""


def replace(path: Path, fd: int, raw: bytes, data: bytes) -> None:
    """Put ``data`` in place of ``raw`` at ``path`` (locked through ``fd``); Refused with the reason."""
    st = os.fstat(fd)
    why = refusal(path, st)
    if why:
        raise Refused(why)
    try:
        if st.st_nlink > 1 or st.st_uid != os.geteuid():
            _in_place(path, fd, st, raw, data)
        else:
            _by_rename(path, fd, st, raw, data)
    except OSError as exc:
        raise Refused(f"can't be written ({exc.strerror or exc}); left as it was") from None


def _in_place(path: Path, fd: int, st: os.stat_result, raw: bytes, data: bytes) -> None:
    """Rewrite through the same inode: its links, owner, mode and attributes stay. A save by
    rename in the meantime leaves the path to the user's file; the inode gets its bytes back."""
    out = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        _before_replace(path)
        _last_check(path, fd, st, raw)
        try:
            _write_at(out, data)
        except OSError:
            _write_at(out, raw)  # the old bytes fit where they were
            raise
        if not _is(path, st):
            _write_at(out, raw)
            raise Refused(SAVED_DURING)
    finally:
        os.close(out)


def _write_at(fd: int, data: bytes) -> None:
    view = memoryview(data)
    done = 0
    while done < len(data):
        done += os.pwrite(fd, view[done:], done)
    os.ftruncate(fd, len(data))
    os.fsync(fd)


def _by_rename(path: Path, fd: int, st: os.stat_result, raw: bytes, data: bytes) -> None:
    """A temporary file beside it with its mode, group and extended attributes swapped in for it,
    under a lease (kb.scan.fixlease); then the file swapped out is checked once more, and swapped back
    when a save reached it or an editor waits to write to it."""
    handle, temp = _temp_copy(path, st, data)
    try:
        new = os.fstat(handle)
        _before_replace(path)
        with fixlease.leased(fd) as writer_waiting:
            _last_check(path, fd, st, raw)
            if exchange(temp, path):
                _settle(path, temp, fd, st, raw, new, writer_waiting)
                os.unlink(temp)  # the old file, as checked, with no writer waiting: the lease still holds any
            else:
                if writer_waiting():
                    raise Refused(SAVED_DURING)  # it saves once the lease is let go, into the file at the path
                os.replace(temp, path)
                _settle_replaced(path, fd, st, raw, new)
    finally:
        if os.path.lexists(temp):
            os.unlink(temp)
        os.close(handle)  # drops its lock only once its name is gone (kb.scan.fixtemp)


def _temp_copy(path: Path, st: os.stat_result, data: bytes) -> tuple[int, Path]:
    """A locked temporary file beside ``path`` holding ``data``, with ``st``'s mode and group and
    ``path``'s extended attributes: its descriptor and name."""
    handle, name = fixtemp.create(path)
    try:
        _write_at(handle, data)
        os.fchmod(handle, stat.S_IMODE(st.st_mode))
        if os.fstat(handle).st_gid != st.st_gid:
            os.fchown(handle, -1, st.st_gid)
        for attr in _xattrs(path):
            os.setxattr(handle, attr, os.getxattr(path, attr, follow_symlinks=False))
    except BaseException:
        os.unlink(name)
        os.close(handle)
        raise
    return handle, name


def _settle(
    path: Path,
    temp: Path,
    fd: int,
    st: os.stat_result,
    raw: bytes,
    new: os.stat_result,
    writer_waiting: Callable[[], bool],
) -> None:
    """After the exchange ``temp`` holds what ``path`` held. Unless that is the file checked, as it
    was checked, with no editor waiting to write to it, a save came in between: swap back (if the
    path was saved over again since, that newer save stays)."""
    if _is(temp, st) and _intact(fd, st, raw) and not writer_waiting():
        return
    if _is(path, new) and not exchange(temp, path):
        os.replace(temp, path)
    raise Refused(SAVED_DURING)


def _settle_replaced(path: Path, fd: int, st: os.stat_result, raw: bytes, new: os.stat_result) -> None:
    """After a plain rename (no exchange here): the old file, still open as ``fd``, is checked once
    more; a save written into it goes back to the path. A save by rename in between is lost."""
    if _intact(fd, st, raw):
        return
    if _is(path, new):
        handle, temp = _temp_copy(path, os.fstat(fd), read_all(fd))
        try:
            os.replace(temp, path)
        finally:
            os.close(handle)
    raise Refused(SAVED_DURING)


def _is(path: Path, st: os.stat_result) -> bool:
    """``path`` names the file ``st`` was taken of."""
    try:
        return _same(os.lstat(path), st)
    except OSError:
        return False


def _intact(fd: int, st: os.stat_result, raw: bytes) -> bool:
    """The file open as ``fd`` still has the size, mtime and bytes it had when checked."""
    now = os.fstat(fd)
    return (now.st_size, now.st_mtime_ns) == (st.st_size, st.st_mtime_ns) and read_all(fd) == raw


def _xattrs(path: Path) -> list[str]:
    try:
        return os.listxattr(path, follow_symlinks=False)
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
            return []
        raise


def problem(shown: str, message: str) -> Problem:
    return Problem(shown, 1, message)
