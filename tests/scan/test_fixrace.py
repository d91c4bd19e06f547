"""An editor's save in the instant after ``--fix``'s last check and before its rename is kept.

Editors take no lock, so the save is made by a test hook (``kb.scan.fixwrite.AFTER_CHECK``) at the
worst moment: the file has just been found unchanged and the fixed text is about to replace it.
Both ways an editor saves are tried: writing into the file (``>>``, the same inode) and writing a
new file renamed over it (a new inode). With the lease (kb.scan.fixlease) the save into the file is
made by another process, as an editor's would be, which the kernel holds in ``open`` until the
fix lets go; without it (the lease turned off) the save is made at once, and found by the re-check
after the swap. Either way the user's save must be what the path holds afterwards, with a message,
and no temporary file left. What cannot be closed is in CONTRIBUTING.md."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT

SHIFTY = "import torch\ny = torch.cuda.device_count(); p(12); torch.cuda.synchronize()\n"
FIXED = SHIFTY.replace("cuda", "accelerator")
SAVED = SHIFTY + "saved = 1\n"
EDITOR = """
import os, sys, time
path, mode, opened, go = sys.argv[1:]
with open(path, mode) as f:  # held here by the fix's lease, if it has one
    open(opened, "w").close()
    while mode == "a" and not os.path.exists(go):  # it writes only when told: after the fix is done
        time.sleep(0.01)
    f.write("saved = 1\\n") if mode == "a" else f.read()
"""


@pytest.fixture
def no_lease(monkeypatch):
    import kb.scan.fixlease

    monkeypatch.setattr(kb.scan.fixlease, "ENABLED", False)


def fix_here(*paths: Path) -> int:
    from kb.__main__ import main

    return main(["--root", str(ROOT), "scan", "--fix", "--jobs", "1", *map(str, paths)])


def save_in_place(path: Path) -> None:
    with path.open("a") as out:
        out.write("saved = 1\n")


def save_by_rename(path: Path) -> None:
    swap = path.with_name(path.name + ".swp")
    swap.write_text(SAVED)
    os.replace(swap, path)


@pytest.mark.parametrize("save", [save_in_place, save_by_rename])
def test_without_a_lease_a_save_right_after_the_last_check_is_what_the_file_holds(
    tmp_path, monkeypatch, capsys, save, no_lease
):
    import kb.scan.fixwrite

    script = tmp_path / "t.py"
    script.write_text(SHIFTY)
    (tmp_path / "other.py").write_text(SHIFTY)
    saved: list[Path] = []

    def hook(path: Path) -> None:
        if path.name == "t.py":
            save(path)
            saved.append(path)

    monkeypatch.setattr(kb.scan.fixwrite, "AFTER_CHECK", hook)
    assert fix_here(script, tmp_path / "other.py") != 0
    assert saved, "the hook never ran"
    assert script.read_text() == SAVED
    assert (tmp_path / "other.py").read_text() == FIXED  # the file nobody touched is fixed
    err = capsys.readouterr().err
    assert f"{script}:1: changed while writing; left as the user saved it" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.py", "t.py"]  # no temp file left


def test_without_renameat2_or_a_lease_a_save_into_the_file_is_put_back(tmp_path, monkeypatch, capsys, no_lease):
    import kb.scan.fixwrite

    script = tmp_path / "t.py"
    script.write_text(SHIFTY)
    script.chmod(0o640)
    monkeypatch.setattr(kb.scan.fixwrite, "exchange", lambda a, b: False)
    monkeypatch.setattr(kb.scan.fixwrite, "AFTER_CHECK", save_in_place)
    assert fix_here(script) != 0
    assert script.read_text() == SAVED and script.stat().st_mode & 0o777 == 0o640
    assert f"{script}:1: changed while writing; left as the user saved it" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["t.py"]


def test_with_no_save_the_fix_is_made_with_either_swap(tmp_path, monkeypatch):
    import kb.scan.fixwrite

    for name, exchange in (("a.py", kb.scan.fixwrite.exchange), ("b.py", lambda a, b: False)):
        monkeypatch.setattr(kb.scan.fixwrite, "exchange", exchange)
        (tmp_path / name).write_text(SHIFTY)
        assert fix_here(tmp_path / name) == 0
        assert (tmp_path / name).read_text() == FIXED
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "b.py"]


def test_a_save_by_rename_while_a_hard_linked_file_is_written_in_place_is_kept(tmp_path, monkeypatch, capsys, no_lease):
    import kb.scan.fixwrite

    script = tmp_path / "t.py"
    script.write_text(SHIFTY)
    os.link(script, tmp_path / "t2.py")  # written in place, through the inode both names share
    monkeypatch.setattr(kb.scan.fixwrite, "AFTER_CHECK", save_by_rename)
    assert fix_here(script) != 0
    assert script.read_text() == SAVED
    assert (tmp_path / "t2.py").read_text() == SHIFTY  # the other name: as it was, not half a change
    assert f"{script}:1: changed while writing; left as the user saved it" in capsys.readouterr().err


def _open_from_another_process(path: Path, mode: str, started: list[subprocess.Popen[bytes]]) -> None:
    """An editor (``a``: it opens the file now and writes to it later, when ``go`` exists) or a
    tool reading it (``r``), in its own process; returns once the kernel holds it in ``open`` for
    the fix's lease, or it has the file open (no lease)."""
    opened = path.with_name("opened")
    proc = subprocess.Popen([sys.executable, "-c", EDITOR, str(path), mode, str(opened), str(path.with_name("go"))])
    started.append(proc)
    deadline = time.monotonic() + 120  # a hang guard, not a speed test
    while not opened.exists() and Path(f"/proc/{proc.pid}/wchan").read_text() != "__break_lease":
        assert time.monotonic() < deadline and proc.poll() is None, "the other process never reached open()"
        time.sleep(0.01)


@pytest.fixture
def leases(tmp_path):
    """Skip where the kernel can't show what these tests need: a lease, and a process held by one."""
    import fcntl

    probe = tmp_path / "probe"
    probe.write_text("")
    with probe.open() as f:
        try:
            fcntl.fcntl(f, fcntl.F_SETLEASE, fcntl.F_WRLCK)
            fcntl.fcntl(f, fcntl.F_SETLEASE, fcntl.F_UNLCK)
        except OSError as exc:
            pytest.skip(f"no file leases on {tmp_path}'s file system ({exc.strerror}): --fix runs without one there")
    probe.unlink()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        time.sleep(0.5)
        if Path(f"/proc/{sleeper.pid}/wchan").read_text() in ("", "0"):
            pytest.skip("this kernel hides /proc/PID/wchan: the test can't see the editor held in open()")
    finally:
        sleeper.kill()
        sleeper.wait()


@pytest.mark.parametrize("swap", ["exchange", "rename"])
def test_with_a_lease_an_editor_opening_the_file_right_after_the_last_check_saves_into_it(
    tmp_path, monkeypatch, capsys, swap, leases
):
    import kb.scan.fixwrite

    script = tmp_path / "t.py"
    script.write_text(SHIFTY)
    savers: list[subprocess.Popen[bytes]] = []
    if swap == "rename":
        monkeypatch.setattr(kb.scan.fixwrite, "exchange", lambda a, b: False)
    monkeypatch.setattr(kb.scan.fixwrite, "AFTER_CHECK", lambda path: _open_from_another_process(path, "a", savers))
    code = fix_here(script)
    (tmp_path / "go").touch()  # the editor writes now, after the fix's last look at the file
    assert [proc.wait(timeout=120) for proc in savers] == [0]
    assert script.read_text() == SAVED  # without the lease: FIXED, the save went to the old file, unlinked
    assert code != 0
    assert f"{script}:1: changed while writing; left as the user saved it" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["go", "opened", "t.py"]


def test_with_a_lease_a_process_only_reading_the_file_does_not_stop_the_fix(tmp_path, monkeypatch, leases):
    import kb.scan.fixwrite

    script = tmp_path / "t.py"
    script.write_text(SHIFTY)
    readers: list[subprocess.Popen[bytes]] = []
    monkeypatch.setattr(kb.scan.fixwrite, "AFTER_CHECK", lambda path: _open_from_another_process(path, "r", readers))
    assert fix_here(script) == 0
    assert [proc.wait(timeout=120) for proc in readers] == [0]
    assert script.read_text() == FIXED and sorted(p.name for p in tmp_path.iterdir()) == ["opened", "t.py"]
