"""``--fix`` edits exactly the text it read, or nothing, and says so: one real file is fixed once
however it is reached; a link out of the tree is refused on the command line as in the walk; a
file changed after the scan or during the write, locked by another run, read-only or not
writable is left byte-identical with a ``path:line: message``; mode, owner, extended attributes
and hard links are kept; a failure (disk full, permission) is reported for its file, the others
still fixed, the exit status non-zero; a signal stops the workers and leaves no temp file."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from buildtools import interruptible
from conftest import ROOT

ENV = {**os.environ, "PYTHONPATH": str(ROOT / "scripts")}
# a rename that makes the line longer, then a call its old column lands on when applied twice
SHIFTY = "import torch\ny = torch.cuda.device_count(); p(12); torch.cuda.synchronize()\n"
FIXED = "import torch\ny = torch.accelerator.device_count(); p(12); torch.accelerator.synchronize()\n"


def scan(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "kb", "--root", str(ROOT), "scan", *args]
    return subprocess.run(cmd, cwd=cwd, env=env or ENV, capture_output=True, text=True, timeout=300)


def test_a_file_reached_through_a_symlink_in_the_tree_is_fixed_once(tmp_path):
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "real.py").write_text(SHIFTY)
    (tree / "link.py").symlink_to("real.py")
    result = scan("--fix", "t", cwd=tmp_path)
    assert (tree / "real.py").read_text() == FIXED, result.stderr
    assert (tree / "link.py").is_symlink()


def test_a_file_named_twice_or_by_two_hard_links_is_fixed_once(tmp_path):
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "real.py").write_text(SHIFTY)
    os.link(tree / "real.py", tree / "other.py")
    scan("--fix", "t/real.py", "t/../t/real.py", "t/other.py", cwd=tmp_path)
    assert (tree / "real.py").read_text() == FIXED


def test_a_symlink_named_on_the_command_line_that_leaves_its_folder_is_refused(tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.py").write_text(SHIFTY)
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "link.py").symlink_to(tmp_path / "outside" / "x.py")
    result = scan("--fix", "t/link.py", cwd=tmp_path)
    assert (tmp_path / "outside" / "x.py").read_text() == SHIFTY
    assert "t/link.py:1: symlink leads out of" in result.stderr, result.stderr


def fix_here(*paths: Path, jobs: int = 1) -> int:
    """``--fix`` in this process, so a test can widen a race with monkeypatch."""
    from kb.__main__ import main

    return main(["--root", str(ROOT), "scan", "--fix", "--jobs", str(jobs), *map(str, paths)])


def append(path: Path, line: str = "saved = 1\n") -> None:
    with path.open("a") as out:
        out.write(line)


def test_a_save_between_the_scan_and_the_fix_is_kept(tmp_path, monkeypatch, capsys):
    import kb.scan.scanrun

    script = tmp_path / "t.py"
    script.write_text(SHIFTY)
    scan_all = kb.scan.scanrun.scan_all

    def scan_then_save(*args, **kwargs):
        out = scan_all(*args, **kwargs)
        script.write_text("import torch\np(12); q(1); torch.cuda.synchronize()\n")  # the user saves
        return out

    monkeypatch.setattr(kb.scan.scanrun, "scan_all", scan_then_save)
    assert fix_here(script) != 0
    assert script.read_text() == "import torch\np(12); q(1); torch.cuda.synchronize()\n"
    assert f"{script}:1: changed since it was scanned" in capsys.readouterr().err


def test_a_save_while_the_fix_is_made_is_kept(tmp_path, monkeypatch, capsys):
    import kb.scan.scanfix

    script = tmp_path / "t.py"
    script.write_text(SHIFTY)
    fix_text = kb.scan.scanfix.fix_text

    def fix_then_save(*args, **kwargs):
        out = fix_text(*args, **kwargs)
        append(script)
        return out

    monkeypatch.setattr(kb.scan.scanfix, "fix_text", fix_then_save)
    assert fix_here(script) != 0
    assert script.read_text() == SHIFTY + "saved = 1\n"
    assert f"{script}:1: changed while it was being fixed" in capsys.readouterr().err


def test_a_save_just_before_the_replace_is_kept_for_in_place_and_renamed_writes(tmp_path, monkeypatch, capsys):
    import kb.scan.fixwrite

    (tmp_path / "a.py").write_text(SHIFTY)
    (tmp_path / "b.py").write_text(SHIFTY)
    os.link(tmp_path / "b.py", tmp_path / "b2.py")  # written in place, through the inode
    monkeypatch.setattr(kb.scan.fixwrite, "BEFORE_REPLACE", append)
    assert fix_here(tmp_path / "a.py", tmp_path / "b.py") != 0
    assert (tmp_path / "a.py").read_text() == (tmp_path / "b.py").read_text() == SHIFTY + "saved = 1\n"
    err = capsys.readouterr().err
    assert f"{tmp_path}/a.py:1: changed while" in err and f"{tmp_path}/b.py:1: changed while" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "b.py", "b2.py"]  # no temp file left


SLOW_FIX = """
import os, sys, time
sys.path.insert(0, {scripts!r})
import kb.scan.scanfix, kb.scan.scanrun
fix_text, scan_all = kb.scan.scanfix.fix_text, kb.scan.scanrun.scan_all
def slow_fix(*args, **kwargs):
    out = fix_text(*args, **kwargs)
    time.sleep(0.05)  # each file takes a while
    return out
def late_scan(*args, **kwargs):
    out = scan_all(*args, **kwargs)
    barrier = os.environ["BARRIER"]  # wait until both runs have scanned (a hang guard, not a timing)
    open(os.path.join(barrier, str(os.getpid())), "w").close()
    deadline = time.monotonic() + 300
    while len(os.listdir(barrier)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(float(os.environ["FIX_AFTER"]))  # one starts fixing later
    return out
kb.scan.scanfix.fix_text, kb.scan.scanrun.scan_all = slow_fix, late_scan
from kb.__main__ import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
def test_two_fix_runs_at_once_leave_every_file_fixed_once(tmp_path):
    tree = tmp_path / "t"
    tree.mkdir()
    for i in range(60):
        (tree / f"f{i:02}.py").write_text(SHIFTY)
    driver = tmp_path / "slow_fix.py"
    driver.write_text(SLOW_FIX.format(scripts=str(ROOT / "scripts")))
    cmd = [sys.executable, str(driver), "--root", str(ROOT), "scan", "--fix", "--jobs", "2", "t"]
    barrier = tmp_path / "scanned"
    barrier.mkdir()
    env = {**ENV, "BARRIER": str(barrier)}
    runs = [
        subprocess.Popen(
            cmd, cwd=tmp_path, env={**env, "FIX_AFTER": delay}, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for delay in ("0", "1")
    ]
    outs = [run.communicate(timeout=600) for run in runs]
    assert not [out[1] for out in outs if b"Traceback" in out[1]]
    wrong = sorted(p.name for p in tree.iterdir() if p.read_text() != FIXED)
    assert wrong == [], outs[1][1].decode()[-2000:]
    # both scanned every file before either fixed one: whichever run came second to a file found it
    # changed and left it, whatever the machine's load made of the timing
    assert any(b"changed since it was scanned" in out[1] for out in outs)


def test_hard_links_extended_attributes_mode_and_group_are_kept(tmp_path):
    (tmp_path / "a.py").write_text(SHIFTY)
    os.link(tmp_path / "a.py", tmp_path / "a2.py")
    x = tmp_path / "x.py"
    x.write_text(SHIFTY)
    x.chmod(0o640)
    try:
        os.setxattr(x, "user.kb", b"kept")
    except OSError as exc:
        pytest.skip(f"no user extended attributes on {tmp_path}: {exc.strerror}")
    result = scan("--fix", "a.py", "x.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "a2.py").read_text() == FIXED and os.stat(tmp_path / "a.py").st_nlink == 2
    assert x.read_text() == FIXED and os.getxattr(x, "user.kb") == b"kept" and x.stat().st_mode & 0o7777 == 0o640


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_file_of_another_user_keeps_its_owner_and_setuid_bit_when_root_fixes_it(tmp_path):
    script = tmp_path / "o.py"
    script.write_text(SHIFTY)
    os.chown(script, 65534, 65534)
    script.chmod(0o4755)
    assert scan("--fix", "o.py", cwd=tmp_path).returncode == 0
    st = script.stat()
    assert script.read_text() == FIXED and (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (65534, 65534, 0o4755)


def test_a_read_only_file_is_refused_with_a_message_even_as_root(tmp_path):
    (tmp_path / "ro.py").write_text(SHIFTY)
    (tmp_path / "ro.py").chmod(0o444)
    (tmp_path / "ok.py").write_text(SHIFTY)
    result = scan("--fix", ".", cwd=tmp_path)
    assert result.returncode != 0
    assert (tmp_path / "ro.py").read_text() == SHIFTY and (tmp_path / "ok.py").read_text() == FIXED
    assert "ro.py:1: is read-only for you; not fixed" in result.stderr, result.stderr


def _as_nobody() -> list[str]:
    if os.geteuid() != 0:
        return []  # already not root: the permission checks are real as it is
    if not shutil.which("setpriv"):
        pytest.skip("running as root without setpriv: can't drop to a user the permissions apply to")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def test_as_a_user_read_only_files_and_folders_are_reported_and_the_others_fixed(tmp_path):
    prefix = _as_nobody()
    top = Path(tempfile.mkdtemp(prefix="kb-fix-perm-"))  # pytest's tmp_path is private to its user
    try:
        top.chmod(0o755)
        for name in ("ro.py", "ok.py", "locked/w.py"):
            (top / name).parent.mkdir(exist_ok=True)
            (top / name).write_text(SHIFTY)
        if prefix:
            for p in [top, *top.rglob("*")]:
                os.chown(p, 65534, 65534)
        (top / "ro.py").chmod(0o444)
        (top / "locked").chmod(0o555)
        cmd = [*prefix, sys.executable, "-m", "kb", "--root", str(ROOT), "scan", "--fix", "."]
        result = subprocess.run(cmd, cwd=top, env=ENV, capture_output=True, text=True, timeout=300)
        assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
        assert "finding(s)" in result.stdout  # the report is still printed
        assert (top / "ok.py").read_text() == FIXED
        assert (top / "ro.py").read_text() == SHIFTY == (top / "locked" / "w.py").read_text()
        assert "ro.py:1: is read-only for you; not fixed" in result.stderr
        assert "locked/w.py:1: can't be written (Permission denied); left as it was" in result.stderr
    finally:
        (top / "locked").chmod(0o755)
        shutil.rmtree(top)


FULL_DISK = """
import json, os, subprocess, sys
top = sys.argv[1]
os.chdir(top)
big = {shifty!r} + "# padding to need pages the disk no longer has\\n" * 1500
open("big.py", "w").write(big)
open("small.py", "w").write({shifty!r})
open("spare", "wb").write(b"x" * 8192)
try:
    with open("filler", "wb") as out:
        while True:
            out.write(b"x" * 4096)
            out.flush()
except OSError:
    pass
os.unlink("spare")  # two pages free: small.py's new text fits, big.py's doesn't
cmd = [sys.executable, "-m", "kb", "--root", {root!r}, "scan", "--fix", "big.py", "small.py"]
run = subprocess.run(cmd, capture_output=True, text=True)
print(json.dumps({{"rc": run.returncode, "err": run.stderr, "out": run.stdout, "big": open("big.py").read() == big,
    "small": open("small.py").read(), "names": sorted(os.listdir("."))}}))
"""


def test_a_full_disk_is_reported_for_its_file_and_the_others_are_fixed(tmp_path):
    if not shutil.which("unshare") or subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode:
        pytest.skip("can't make a user and mount namespace here (unshare -rm) to mount a small tmpfs")
    (tmp_path / "disk").mkdir()
    driver = tmp_path / "full_disk.py"
    driver.write_text(FULL_DISK.format(shifty=SHIFTY, root=str(ROOT)))
    script = f'mount -t tmpfs -o size=256k tmpfs "$1" && exec "{sys.executable}" "$2" "$1"'
    cmd = ["unshare", "-rm", "sh", "-c", script, "sh", str(tmp_path / "disk"), str(driver)]
    run = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=300)
    if run.returncode and "mount" in run.stderr:
        pytest.skip(f"can't mount a tmpfs in a user namespace: {run.stderr.strip()}")
    result = json.loads(run.stdout)
    assert result["rc"] != 0 and "Traceback" not in result["err"], result["err"]
    assert "big.py:1: can't be written (No space left on device); left as it was" in result["err"]
    assert result["big"] and result["small"] == FIXED
    assert result["names"] == ["big.py", "filler", "small.py"]  # no temp file left
    assert "finding(s)" in result["out"]


SLOW_REPLACE = """
import os, sys, time
sys.path.insert(0, {scripts!r})
import kb.scan.fixwrite
def slow(path):  # the new text is in its temp file, the swap is next: a signal now must leave none
    open(os.path.join({marks!r}, str(os.getpid())), "w").close()
    time.sleep(300)
kb.scan.fixwrite.AFTER_CHECK = slow
from kb.__main__ import main
sys.exit(main(sys.argv[1:]))
"""


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"  # a zombie is done


def _wait(condition, what: str, limit: float = 120) -> None:
    deadline = time.monotonic() + limit  # a hang guard with a wide margin, not a speed test
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_a_signal_stops_the_workers_and_leaves_no_temp_file(tmp_path, signum):
    tree, marks = tmp_path / "t", tmp_path / "marks"
    tree.mkdir()
    marks.mkdir()
    for i in range(8):
        (tree / f"f{i}.py").write_text(SHIFTY)
    driver = tmp_path / "slow_replace.py"
    driver.write_text(SLOW_REPLACE.format(scripts=str(ROOT / "scripts"), marks=str(marks)))
    cmd = [sys.executable, str(driver), "--root", str(ROOT), "scan", "--fix", "--jobs", "2", "t"]
    main = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=interruptible)
    try:
        _wait(lambda: len(list(marks.iterdir())) == 2, "both workers to reach the rename")
        workers = [int(p.name) for p in marks.iterdir()]
        main.send_signal(signum)
        _, err = main.communicate(timeout=120)
        _wait(lambda: all(_gone(pid) for pid in workers), "the workers to end")
    finally:
        main.kill()
        main.wait()
    assert sorted(p.name for p in tree.iterdir()) == [f"f{i}.py" for i in range(8)]  # no .f0.py.*.fix
    assert {p.read_text() for p in tree.iterdir()} <= {SHIFTY, FIXED}
    if signum != signal.SIGKILL:
        assert main.returncode == 128 + signum and b"Traceback" not in err, err.decode()[-2000:]
        assert f"stopped by {signal.Signals(signum).name}".encode() in err


def test_a_diff_with_line_separators_in_strings_applies_with_git(tmp_path):
    code = 'import torch\nmsg = "a\u2028b\x0cc"\ntorch.cuda.synchronize()\n'
    (tmp_path / "t.py").write_text(code, newline="")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    diff = scan("--diff", "t.py", cwd=tmp_path)
    (tmp_path / "fix.patch").write_text(diff.stdout, newline="")
    applied = subprocess.run(["git", "apply", "fix.patch"], cwd=tmp_path, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr + diff.stdout
    assert (tmp_path / "t.py").read_bytes() == code.replace("cuda", "accelerator").encode()
