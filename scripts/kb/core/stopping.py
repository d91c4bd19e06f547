"""Stopping a command cleanly: SIGTERM and SIGHUP raise ``Stopped`` (as Ctrl-C raises
KeyboardInterrupt), so ``finally`` blocks remove temporary files; a child process asks to be sent
SIGTERM when its parent dies, even by SIGKILL."""

from __future__ import annotations

import ctypes
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Stopped(Exception):
    """SIGTERM or SIGHUP arrived."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _stop(signum: int, frame: FrameType | None) -> None:
    raise Stopped(signum)


@contextmanager
def stoppable() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise ``Stopped``; the old handlers come back after."""
    old: dict[int, Callable[[int, FrameType | None], object] | int | None] = {
        s: signal.signal(s, _stop) for s in SIGNALS
    }
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


def signal_name(exc: BaseException) -> tuple[int, str]:
    """The number and name of the signal a ``Stopped`` or ``KeyboardInterrupt`` stands for."""
    signum = exc.signum if isinstance(exc, Stopped) else signal.SIGINT
    return signum, signal.Signals(signum).name


def die_with_parent() -> None:
    """In a child process: SIGTERM when the parent dies, even by SIGKILL (Linux PR_SET_PDEATHSIG)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the parent's own handlers still stop its children
