"""``./dev build`` and ``./dev offline`` publish a site only when its build passed every check: a
failed build leaves the last good site (and zip) untouched, or none, and nothing half-built."""

import sys
import zipfile
from pathlib import Path

import pytest

from buildtools import run
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
def published(tmp_path_factory) -> Path:
    """A copy of the project with a good site/ published, then a page broken."""
    root = copy_project(tmp_path_factory.mktemp("publish"))
    rc, out = publish(root, "site")
    assert rc == 0, out
    (root / "site" / "good.txt").write_text("from the last good build")
    break_a_page(root)
    return root


def test_a_failed_build_leaves_the_last_good_site_untouched(published):
    rc, out = publish(published, "site")
    assert rc != 0, out
    assert "site/index.html:" in out and "script" in out, out  # named as site/, not the folder it was built in
    assert "site/ is the last good site, unchanged" in out, out
    assert (published / "site" / "good.txt").read_text() == "from the last good build"
    assert BAD not in (published / "site" / "index.html").read_text(encoding="utf-8")
    assert leftovers(published) == []


def test_a_failed_first_build_publishes_no_site(tmp_path):
    root = copy_project(tmp_path)
    break_a_page(root)
    rc, out = publish(root, "site")
    assert rc != 0, out
    assert "no site/ was written" in out, out
    assert not (root / "site").exists() and leftovers(root) == []


def test_the_offline_bundle_and_its_zip_are_replaced_together_only_by_a_passing_build(tmp_path):
    root = copy_project(tmp_path)
    args = ("site-offline", "--config", "mkdocs.offline.yml", "--zip", "site-offline.zip")
    rc, out = publish(root, *args)
    assert rc == 0, out
    names = zipfile.ZipFile(root / "site-offline.zip").namelist()
    assert "index.html" in names
    assert sorted(n.rstrip("/") for n in names) == sorted(
        p.relative_to(root / "site-offline").as_posix() for p in (root / "site-offline").rglob("*")
    )
    (root / "site-offline" / "good.txt").write_text("from the last good build")
    zipped = (root / "site-offline.zip").read_bytes()
    break_a_page(root)
    rc, out = publish(root, *args)
    assert rc != 0, out
    assert (root / "site-offline" / "good.txt").is_file() and (root / "site-offline.zip").read_bytes() == zipped
    assert BAD not in (root / "site-offline" / "index.html").read_text(encoding="utf-8")
    assert leftovers(root) == []
