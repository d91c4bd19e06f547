"""The command line: exit codes, sorted file:line output, no traceback on bad input."""

import json
import sys

from buildtools import run
from conftest import write_tables


def test_validate_ok_on_the_mini_project(mini):
    result = run([sys.executable, "-m", "kb", "--root", str(mini), "validate"], mini.parent)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok: 7 records, 2 pages")


def test_validate_lists_every_problem_sorted_and_exits_1(mini):
    write_tables(mini / "docs" / "data", glossary="- {id: a, term: A}\n", modes="- {id: m}\n")
    (mini / "docs" / "index.md").write_text("# no front matter\n")
    result = run([sys.executable, "-m", "kb", "--root", str(mini), "validate"], mini.parent)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert "Traceback" not in result.stderr
    assert lines[-1].startswith("14 problem(s) in 0 records")
    problems = lines[:-1]
    assert problems == sorted(problems)
    assert "docs/data/glossary.yml:1: glossary[0]: missing field 'definition' (expected it to be set)" in problems
    assert "docs/index.md:1: no front matter (expected a '---' block with 'reviewed: YYYY-MM-DD')" in problems


def test_check_site_on_a_missing_folder(tmp_path):
    result = run([sys.executable, "-m", "kb", "check-site", str(tmp_path / "nope")], tmp_path)
    assert result.returncode == 2
    assert (
        result.stderr.strip() == f"{tmp_path / 'nope'}:1: no such folder (expected a built site; run the build first)"
    )


def test_validate_says_when_the_package_check_was_skipped(mini):
    (mini / "torch-tpu.pin").write_text("torch-tpu==0.2.0\n")
    result = run([sys.executable, "-m", "kb", "--root", str(mini), "validate"], mini.parent)
    assert result.returncode == 0, result.stderr
    assert "package check skipped: no cached torch-tpu==0.2.0 wheel in .cache/wheels/" in result.stderr


def test_check_site_names_the_folder_it_checked(tmp_path):
    site = tmp_path / "built-elsewhere"
    site.mkdir()
    (site / "index.html").write_text('<html><body><img src="//evil.example/x.png"></body></html>\n')
    result = run([sys.executable, "-m", "kb", "check-site", str(site)], tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith(f"{site}/index.html:1: ")


def test_check_wheel_holds_the_inventory_to_the_shape_the_pages_read(tmp_path):
    from kb.cli.wheelcmd import _inventory_is

    data = tmp_path / "docs" / "data"
    data.mkdir(parents=True)
    odd = {"api": ["not a name"], "env": []}  # what the wheel gives, but no page could render it
    (data / "package.json").write_text(json.dumps(odd))
    assert not _inventory_is(tmp_path, odd)
    good = {"api": ["torch.tpu.x"], "env": ["TPU_Y"]}
    (data / "package.json").write_text(json.dumps(good))
    assert _inventory_is(tmp_path, good)
    (data / "package.json").unlink()
    assert not _inventory_is(tmp_path, good)
