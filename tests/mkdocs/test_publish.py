"""``./dev build`` and ``./dev offline`` publish a site only when its build passed every check: a
failed build leaves the last good site (and zip) untouched, or none, and nothing half-built."""

import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from buildtools import interruptible, run
from conftest import copy_project

BAD = "<script>alert('published')</script>"  # passes validation; the built-site check fails it


def publish(root: Path, *args: str) -> tuple[int, str]:
    result = run([sys.executable, "-m", "kb", "publish", *args], root, timeout=600)
    return result.returncode, result.stdout + result.stderr


def break_a_page(root: Path) -> None:
    page = root / "docs" / "index.md"
    page.write_text(page.read_text(encoding="utf-8") + f"\n{BAD}\n", encoding="utf-8")


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith("."))


@pytest.fixture(scope="module")
def good_publish(tmp_path_factory) -> Path:
    """A copy of the project with a good site/ and out/site.zip published, built once for the tests
    that start from one; each works on its own copy (copy_published)."""
    root = copy_project(tmp_path_factory.mktemp("good-publish"))
    rc, out = publish(root, "site", "--zip", "out/site.zip")
    assert rc == 0, out
    return root


def copy_published(good: Path, dest: Path) -> Path:
    """A copy of ``good`` (publish recognises its own site and zip by their contents, not their place)."""
    shutil.copytree(good, dest, symlinks=True)
    return dest


@pytest.fixture(scope="module")
def published(good_publish, tmp_path_factory) -> Path:
    """A copy of the project with a good site/ published, then a page broken."""
    root = copy_published(good_publish, tmp_path_factory.mktemp("publish") / "p")
    (root / "site" / "good.txt").write_text("from the last good build")
    break_a_page(root)
    return root


@pytest.mark.build
def test_a_failed_build_leaves_the_last_good_site_untouched(published):
    rc, out = publish(published, "site")
    assert rc != 0, out
    assert "site/index.html:" in out and "script" in out, out  # named as site/, not the folder it was built in
    assert "site/ is the last good site, unchanged" in out, out
    assert (published / "site" / "good.txt").read_text() == "from the last good build"
    assert BAD not in (published / "site" / "index.html").read_text(encoding="utf-8")
    assert leftovers(published) == []


@pytest.mark.build
def test_a_failed_first_build_publishes_no_site(tmp_path):
    root = copy_project(tmp_path)
    break_a_page(root)
    rc, out = publish(root, "site")
    assert rc != 0, out
    assert "no site/ was written" in out, out
    assert not (root / "site").exists() and leftovers(root) == []


@pytest.mark.build
def test_the_offline_bundle_and_its_zip_are_replaced_together_only_by_a_passing_build(tmp_path):
    root = copy_project(tmp_path)
    args = ("site-offline", "--config", "mkdocs.offline.yml", "--zip", "site-offline.zip")
    rc, out = publish(root, *args)
    assert rc == 0, out
    names = zipfile.ZipFile(root / "site-offline.zip").namelist()
    assert "index.html" in names
    assert sorted(n.rstrip("/") for n in names) == sorted(
        p.relative_to(root / "site-offline").as_posix()
        for p in (root / "site-offline").rglob("*")
        if p.name != ".kb-published"  # the folder's list of what publish wrote, not part of the site
    )
    (root / "site-offline" / "good.txt").write_text("from the last good build")
    zipped = (root / "site-offline.zip").read_bytes()
    break_a_page(root)
    rc, out = publish(root, *args)
    assert rc != 0, out
    assert (root / "site-offline" / "good.txt").is_file() and (root / "site-offline.zip").read_bytes() == zipped
    assert BAD not in (root / "site-offline" / "index.html").read_text(encoding="utf-8")
    assert leftovers(root) == []


# -- publish only ever replaces a folder it wrote --------------------------------------------------


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return copy_project(tmp_path_factory.mktemp("guard"))


@pytest.mark.build
@pytest.mark.parametrize("dest", [".", "docs", "docs/assets", "..", "scripts/.."])
def test_the_project_its_docs_and_folders_holding_them_are_refused(project, dest):
    before = sorted(p.name for p in project.iterdir())
    rc, out = publish(project, dest)
    assert rc != 0 and "Traceback" not in out, out
    assert f"{dest}: " in out and "publish replaces only a site folder it wrote" in out, out
    assert sorted(p.name for p in project.iterdir()) == before and (project / "mkdocs.yml").is_file()
    assert (project / "docs" / "index.md").is_file() and (project / "docs" / "assets").is_dir()


@pytest.mark.build
def test_a_folder_holding_a_mkdocs_yml_or_a_symlink_is_refused(project):
    (project / "other").mkdir(exist_ok=True)
    (project / "other" / "mkdocs.yml").write_text("site_name: mine\n")
    (project / "linked").symlink_to(project / "other")
    for dest in ("other", "linked"):
        rc, out = publish(project, dest)
        assert rc != 0 and "publish replaces only a site folder it wrote" in out, out
    assert (project / "other" / "mkdocs.yml").read_text() == "site_name: mine\n"
    assert (project / "linked").is_symlink()


@pytest.mark.build
def test_a_site_folder_publish_did_not_write_is_refused(tmp_path):
    root = copy_project(tmp_path)
    (root / "site").mkdir()
    (root / "site" / "notes.txt").write_text("mine")
    rc, out = publish(root, "site")
    assert rc != 0 and "Traceback" not in out, out
    assert "site: not written by python -m kb publish" in out, out
    assert (root / "site" / "notes.txt").read_text() == "mine" and leftovers(root) == []


@pytest.mark.build
def test_a_file_added_to_a_published_site_is_kept_and_refused_and_dotfiles_are_carried(good_publish, tmp_path):
    root = copy_published(good_publish, tmp_path / "p")
    (root / "site" / ".git").mkdir()
    (root / "site" / ".git" / "HEAD").write_text("ref: refs/heads/gh-pages\n")
    (root / "site" / ".nojekyll").write_text("")
    (root / "site" / "about" / "notes.txt").write_text("mine")
    rc, out = publish(root, "site")
    assert rc != 0 and "site/about/notes.txt: not written by the last publish" in out, out
    assert (root / "site" / "about" / "notes.txt").read_text() == "mine"
    (root / "site" / "about" / "notes.txt").unlink()
    (root / "site" / "index.html").write_text("old")
    rc, out = publish(root, "site")
    assert rc == 0, out
    assert (root / "site" / ".git" / "HEAD").read_text() == "ref: refs/heads/gh-pages\n"
    assert (root / "site" / ".nojekyll").is_file() and (root / "site" / "index.html").read_text() != "old"
    assert leftovers(root) == []


def test_the_swap_exchanges_the_folders_or_falls_back_to_two_renames(tmp_path, monkeypatch):
    from kb.mkdocs import sitedest

    for exchange in (True, False):
        old, new = tmp_path / f"site{exchange}", tmp_path / f"new{exchange}"
        old.mkdir()
        (old / "page").write_text("old")
        new.mkdir()
        (new / "page").write_text("new")
        if not exchange:
            monkeypatch.setattr(sitedest, "_exchange", lambda a, b: False)
        else:
            assert sitedest._exchange(new, old) and sitedest._exchange(new, old)  # there and back
        sitedest.swap(new, old)
        assert (old / "page").read_text() == "new" and (new / "page").read_text() == "old"


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _publish_until_building(root, output):
    """Start ``kb publish site`` and return once MkDocs has begun writing its building folder."""
    cmd = [sys.executable, "-m", "kb", "publish", "site"]
    env = {**os.environ, "PYTHONPATH": str(root / "scripts"), "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=output, stderr=output, preexec_fn=interruptible)
    deadline = time.monotonic() + 300  # a hang guard, not a speed test
    while not list(root.glob(".site.*.building/*")):
        assert time.monotonic() < deadline and proc.poll() is None, "MkDocs never started writing"
        time.sleep(0.05)
    return proc


@pytest.mark.build
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_mkdocs_and_removes_the_building_folder(tmp_path, signum):
    root = copy_project(tmp_path)
    proc = _publish_until_building(root, subprocess.PIPE)
    try:
        mkdocs = _children(proc.pid)
        deadline = time.monotonic() + 300  # a hang guard, not a speed test
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=300)
        while not all(_gone(pid) for pid in mkdocs):
            assert time.monotonic() < deadline, "MkDocs is still running"
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait()
    assert mkdocs and not (root / "site").exists()
    assert leftovers(root) == [] and proc.returncode == 128 + signum, err.decode()[-2000:]
    assert b"Traceback" not in err and b"nothing published" in err


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except FileNotFoundError:
        return True


FULL_DISK = 'mount -t tmpfs -o size=1m tmpfs "$1/out" && cd "$1" && "$2" -m kb publish out/site'


@pytest.mark.build
def test_a_full_disk_during_the_build_is_one_plain_line_and_nothing_is_left(tmp_path):
    if not shutil.which("unshare") or subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode:
        pytest.skip("can't make a user and mount namespace here (unshare -rm) to mount a small tmpfs")
    root = copy_project(tmp_path / "p")
    (root / "out").mkdir()
    env = {**os.environ, "PYTHONPATH": str(root / "scripts"), "NO_MKDOCS_2_WARNING": "1"}
    cmd = ["unshare", "-rm", "sh", "-c", FULL_DISK + '; ls -A "$1/out"', "sh", str(root), sys.executable]
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if "mount:" in result.stderr:
        pytest.skip(f"can't mount a tmpfs in a user namespace: {result.stderr.strip()}")
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert ":1: No space left on device (during the MkDocs build)" in result.stderr, result.stderr[-3000:]
    assert "\nout/site/" in result.stderr and "nothing published" in result.stderr, result.stderr[-3000:]
    assert result.stdout.strip() == ""  # out/ is empty: no site, no building folder


@pytest.mark.build
def test_what_a_killed_publish_left_goes_with_the_next_one(tmp_path):
    root = copy_project(tmp_path)
    proc = _publish_until_building(root, subprocess.DEVNULL)
    try:
        mkdocs = _children(proc.pid)
        deadline = time.monotonic() + 300  # a hang guard, not a speed test
        proc.kill()
        proc.wait(timeout=60)
        while not all(_gone(pid) for pid in mkdocs):  # sent SIGTERM when publish died
            assert time.monotonic() < deadline, "MkDocs is still running"
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait()
    assert [p.name.endswith(".building") for p in root.glob(".site.*")] == [True]  # SIGKILL: no cleanup
    rc, out = publish(root, "site")
    assert rc == 0, out
    assert leftovers(root) == [] and (root / "site" / "index.html").is_file()


# -- the --zip destination follows the same rules ------------------------------------------------


def _user_files(root: Path) -> None:
    (root / "README.md").write_text("# my project\n")
    (root / "notes.zip").write_text("my notes, not a zip")
    with zipfile.ZipFile(root / "theirs.zip", "w") as other:
        other.writestr("a.txt", "a zip some other tool wrote")
    (root / "linked.zip").symlink_to(root / "theirs.zip")


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("mkdocs.yml", "is not named .zip"),
        ("README.md", "is not named .zip"),
        (".", "is not named .zip"),
        ("docs.zip/..", "is not named .zip"),
        ("docs/site.zip", "is inside the docs folder"),
        ("site/site.zip", "is inside site/, the site it zips"),
        ("linked.zip", "is a symlink or a folder"),
        ("notes.zip", "not written by python -m kb publish"),
        ("theirs.zip", "not written by python -m kb publish"),
    ],
)
@pytest.mark.build
def test_a_zip_destination_that_is_not_publishs_own_is_refused_before_building(project, name, why):
    if not (project / "notes.zip").exists():
        _user_files(project)
    before = {p: (project / p).read_bytes() for p in ("mkdocs.yml", "README.md", "notes.zip", "theirs.zip")}
    rc, out = publish(project, "site", "--zip", name)
    assert rc == 2 and "Traceback" not in out, out
    assert f"{name}: {why}" in out, out
    assert {p: (project / p).read_bytes() for p in before} == before and (project / "linked.zip").is_symlink()
    assert not (project / "site").exists() and leftovers(project) == []


@pytest.mark.build
def test_a_zip_is_replaced_only_while_it_is_publishs_own(good_publish, tmp_path):
    root = copy_published(good_publish, tmp_path / "p")
    first = (root / "out" / "site.zip").stat().st_ino
    rc, out = publish(root, "site", "--zip", "out/site.zip")
    assert rc == 0, out
    assert (root / "out" / "site.zip").stat().st_ino != first  # its own zip: replaced in one rename
    assert "index.html" in zipfile.ZipFile(root / "out" / "site.zip").namelist()
    (root / "site" / "good.txt").write_text("the last good build")
    (root / "site" / ".kb-published").write_text(
        (root / "site" / ".kb-published").read_text() + "good.txt\n"
    )  # as if that build wrote it
    cmd = [sys.executable, "-m", "kb", "publish", "site", "--zip", "out/site.zip"]
    env = {**os.environ, "PYTHONPATH": str(root / "scripts"), "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 300  # a hang guard, not a speed test
        while not list(root.glob(".site.*.building/*")):
            assert time.monotonic() < deadline and proc.poll() is None, "MkDocs never started writing"
            time.sleep(0.05)
        (root / "out" / "site.zip").unlink()
        (root / "out" / "site.zip").write_text("mine now")  # the user puts a file there mid-build
        out, _ = proc.communicate(timeout=600)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 2 and "Traceback" not in out, out
    assert "out/site.zip: not written by python -m kb publish" in out, out
    assert (root / "out" / "site.zip").read_text() == "mine now"
    assert (root / "site" / "good.txt").is_file()  # the site was not swapped either: both or neither
    assert leftovers(root) == [] and sorted(p.name for p in (root / "out").iterdir()) == ["site.zip"]


def test_a_zip_a_killed_publish_was_writing_goes_with_the_next_one_unless_one_still_writes_it(tmp_path):
    import fcntl

    from kb.mkdocs.zipdest import sweep_zips

    left, live, mine = (
        tmp_path / ".site.zip.abc123.building",
        tmp_path / ".site.zip.live.building",
        tmp_path / "site.zip",
    )
    for path in (left, live, mine):
        path.write_text("x")
    (tmp_path / ".site.zip.link.building").symlink_to(mine)
    with live.open() as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        sweep_zips(tmp_path, "site.zip")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site.zip.link.building", live.name, "site.zip"]
