"""The scan's worker pool ends even when a worker does not: once its results are in, or once it is
terminated, a worker that has not exited after the grace period is killed (kb.scan.scanrun._join,
_terminate)."""

from __future__ import annotations

import signal
import threading
import time
from multiprocessing import get_context, util

import pytest

from kb.scan import scanrun

HANG_S = 60.0  # a guard: the test fails rather than hangs


def _stuck_at_exit() -> int:
    util.Finalize(None, time.sleep, args=(3600,), exitpriority=100)  # runs as the worker exits
    return 1


def test_a_worker_that_never_exits_is_killed_once_the_results_are_in(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(scanrun, "_EXIT_S", 0.5)
    pool = get_context("fork").Pool(1)
    assert pool.apply(_stuck_at_exit) == 1
    workers = list(pool._pool)
    pool.close()
    done = threading.Thread(target=scanrun._join, args=(pool,), daemon=True)
    done.start()
    done.join(HANG_S)
    assert not done.is_alive(), "the pool waited for a worker that never exits"
    assert [w.exitcode for w in workers] == [-signal.SIGKILL]


def test_workers_that_exit_on_their_own_are_never_killed():
    pool = get_context("fork").Pool(2)
    assert pool.map(abs, [-1, -2]) == [1, 2]
    workers = list(pool._pool)
    pool.close()
    scanrun._join(pool)
    assert [w.exitcode for w in workers] == [0, 0]


def _deaf() -> None:
    """A worker that a SIGTERM does not reach, as one whose SIGTERM came just before it blocked on
    the task queue's lock."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})


def test_a_terminated_worker_that_never_exits_is_killed(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(scanrun, "_EXIT_S", 0.5)
    pool = get_context("fork").Pool(1, initializer=_deaf)
    assert pool.apply(abs, (-1,)) == 1
    pool.apply_async(time.sleep, (3600,))  # busy: the pool's stop sentinel never reaches it either
    time.sleep(0.2)
    workers = list(pool._pool)
    done = threading.Thread(target=scanrun._terminate, args=(pool,), daemon=True)
    done.start()
    done.join(HANG_S)
    try:
        assert not done.is_alive(), "terminating the pool waited for a worker that never exits"
        assert [w.exitcode for w in workers] == [-signal.SIGKILL]
    finally:  # failed, the test must not leave the worker for pytest to wait on as it exits
        for w in workers:
            if w.exitcode is None:
                w.kill()


def test_terminated_workers_that_exit_are_never_killed():
    pool = get_context("fork").Pool(2)
    assert pool.map(abs, [-1, -2]) == [1, 2]
    workers = list(pool._pool)
    scanrun._terminate(pool)
    assert all(w.exitcode in (0, -signal.SIGTERM) for w in workers), [w.exitcode for w in workers]
