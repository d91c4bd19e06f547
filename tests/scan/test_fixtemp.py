"""A SIGKILL never leaves ``--fix``'s temporary files behind for good, and no user file is taken
for one: a worker killed between writing its temp file and the swap fails its file with a message
(the command does not wait for it forever) and the command removes what it left; a run killed
whole leaves them to the next ``--fix``, which removes only its own (``kb.scan.fixtemp``)."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import ROOT

ENV = {**os.environ, "PYTHONPATH": str(ROOT / "scripts")}
SHIFTY = "import torch\ny = torch.cuda.device_count(); p(12); torch.cuda.synchronize()\n"
FIXED = SHIFTY.replace("cuda", "accelerator")
PAUSE = """
import os, sys, time
sys.path.insert(0, {scripts!r})
import kb.scan.fixwrite
def pause(path):  # the fixed text is in its temp file, the swap is next
    open(os.path.join({marks!r}, str(os.getpid())), "w").close()
    time.sleep(300)
kb.scan.fixwrite.AFTER_CHECK = pause
from kb.__main__ import main
sys.exit(main(sys.argv[1:]))
"""


def _start(tmp_path: Path, jobs: int, *paths: str) -> tuple[subprocess.Popen[bytes], Path]:
    marks = tmp_path / "marks"
    marks.mkdir()
    driver = tmp_path / "pause.py"
    driver.write_text(PAUSE.format(scripts=str(ROOT / "scripts"), marks=str(marks)))
    cmd = [sys.executable, str(driver), "--root", str(ROOT), "scan", "--fix", "--jobs", str(jobs), *paths]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return proc, marks


def _wait(condition, what: str, limit: float = 120) -> None:
    deadline = time.monotonic() + limit  # a hang guard with a wide margin, not a speed test
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.05)


def temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".fix"))


def test_a_worker_killed_before_its_swap_fails_its_file_and_leaves_no_temp_file(tmp_path):
    tree = tmp_path / "t"
    tree.mkdir()
    for i in range(8):
        (tree / f"f{i}.py").write_text(SHIFTY)
    proc, marks = _start(tmp_path, 2, "t")
    try:
        _wait(lambda: len(list(marks.iterdir())) == 2, "both workers to write a temp file")
        assert len(temps(tree)) == 2
        os.kill(int(sorted(marks.iterdir())[0].name), signal.SIGKILL)
        _, err = proc.communicate(timeout=120)  # before: the command waited for the dead worker forever
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 1 and b"Traceback" not in err, err.decode()[-2000:]
    assert b"its worker process was killed; fixed or left as it was" in err, err.decode()[-2000:]
    assert temps(tree) == []
    assert {p.read_text() for p in tree.iterdir()} <= {SHIFTY, FIXED}


def test_the_next_fix_removes_what_a_killed_run_left_and_nothing_of_the_users(tmp_path):
    script = tmp_path / "t.py"
    script.write_text(SHIFTY)
    proc, marks = _start(tmp_path, 1, "t.py")
    try:
        _wait(lambda: any(marks.iterdir()), "the temp file to be written")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    left = temps(tmp_path)
    assert len(left) == 1 and ".kbfix-" in left[0] and script.read_text() == SHIFTY
    mine = {".t.py.1234.fix": "a user's file", ".t.py.kbfix-notmine.fix.bak": "a user's file"}
    for name, text in mine.items():
        (tmp_path / name).write_text(text)
    (tmp_path / ".t.py.kbfix-abcdEFG1.fix").symlink_to(script)  # not a regular file
    live = tmp_path / ".t.py.kbfix-live0000.fix"  # a live run's temp file: it holds the lock
    live.write_text(FIXED)
    with live.open() as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        cmd = [sys.executable, "-m", "kb", "--root", str(ROOT), "scan", "--fix", "t.py"]
        result = subprocess.run(cmd, cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert script.read_text() == FIXED
    assert temps(tmp_path) == sorted([".t.py.1234.fix", ".t.py.kbfix-abcdEFG1.fix", live.name])
    assert all((tmp_path / name).read_text() == text for name, text in mine.items())


def _swallowing_worker(ready: Path) -> None:
    import kb.scan.scanrun

    signal.signal(signal.SIGTERM, kb.scan.scanrun._exit_fixer)
    ready.touch()
    while True:  # as the pool's own code does: any exception becomes a task's result, then it waits on
        try:
            time.sleep(1)
        except BaseException:  # noqa: BLE001, S110
            pass


def test_a_fix_worker_sent_sigterm_outside_a_file_exits_even_where_the_pool_catches_everything(tmp_path):
    """The pool's worker loop catches BaseException (a SystemExit there was taken as a result, and
    the worker waited forever for work while the command waited for it: a hang, 1 run in 4 of 400
    files). Outside a file the signal must end the worker at once."""
    import multiprocessing

    ready = tmp_path / "ready"
    worker = multiprocessing.get_context("fork").Process(target=_swallowing_worker, args=(ready,))
    worker.start()
    try:
        _wait(ready.exists, "the worker to start")
        worker.terminate()
        worker.join(timeout=60)
        assert not worker.is_alive(), "the worker took the signal as an exception and went on"
        assert worker.exitcode == 128 + signal.SIGTERM
    finally:
        worker.kill()
        worker.join()
