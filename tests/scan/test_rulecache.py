"""kb.scan.rulecache: the checked rules table kept in .cache, used only under its own key.

Each test copies the project's rules table into a temporary folder, so the key (which covers the
rules files' paths and bytes) is the test's own and the project's .cache is never touched.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import ROOT
from kb.core.errors import KBError
from kb.scan import rulecache
from kb.scan.rulecache import NAME, cache_key, cached_rules, read_cache, write_cache
from kb.scan.scanrules import RuleSet, SiteBase, load_rules, rule_files

ENV = {**os.environ, "PYTHONPATH": str(ROOT / "scripts")}


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """A folder with the project's rules table (docs/data/migration_rules*.yml) and no mkdocs.yml."""
    data = tmp_path / "docs" / "data"
    data.mkdir(parents=True)
    for path in rule_files(ROOT):
        shutil.copyfile(path, data / path.name)
    return tmp_path


def _key(project: Path, url: str | None = None) -> str:
    return cache_key(rule_files(project), SiteBase(url))


def test_a_cache_hit_gives_the_rules_the_table_gives(project):
    cached_rules(rule_files(project), project, None, project / ".cache")
    kept = read_cache(project / ".cache" / NAME, _key(project))
    assert kept is not None and kept.rules
    assert [repr(r) for r in kept.rules] == [repr(r) for r in load_rules(rule_files(project), project).rules]


def test_a_scan_with_its_rules_cached_never_imports_pydantic(project):
    """The whole command, in a process of its own: written by the first scan, read by the second."""
    (project / "t.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    code = (
        "import sys, io, contextlib; from kb.__main__ import main;"
        "out = io.StringIO(); contextlib.redirect_stdout(out).__enter__();"
        "main(['--root', sys.argv[1], 'scan', '--format', 'json', 't.py']);"
        "print(sorted(m for m in sys.modules if m.startswith(('pydantic', 'kb.core.schema'))), file=sys.stderr)"
    )
    cmd = [sys.executable, "-c", code, str(project)]
    first = subprocess.run(cmd, cwd=project, env=ENV, capture_output=True, text=True)
    assert (project / ".cache" / NAME).is_file(), first.stderr
    assert "pydantic" in first.stderr  # the table was read and checked
    second = subprocess.run(cmd, cwd=project, env=ENV, capture_output=True, text=True)
    assert second.stderr.strip() == "[]", second.stderr


def test_a_cache_under_another_key_is_never_used(project):
    folder = project / ".cache"
    stale = RuleSet.of([])  # what an older table compiled to
    assert write_cache(folder / NAME, _key(project, "https://old.example.org/"), stale)
    rules = cached_rules(rule_files(project), project, None, folder)
    assert rules.rules and rules.rules == load_rules(rule_files(project), project).rules
    assert read_cache(folder / NAME, _key(project)) is not None  # rewritten under the current key


def test_an_edited_rules_file_changes_the_key(project):
    folder = project / ".cache"
    before = cached_rules(rule_files(project), project, None, folder)
    table = rule_files(project)[0]
    text = table.read_text(encoding="utf-8")
    old = before.rules[0].message
    table.write_text(text.replace(old, old + " Edited.", 1), encoding="utf-8")
    after = cached_rules(rule_files(project), project, None, folder)
    assert after.rules[0].message == old + " Edited."


def test_the_link_base_is_part_of_the_key(project):
    folder = project / ".cache"
    plain = cached_rules(rule_files(project), project, None, folder)
    linked = cached_rules(rule_files(project), project, "https://h.example.org/", folder)
    assert not plain.rules[0].link.startswith("https://")
    assert linked.rules[0].link.startswith("https://h.example.org/")


@pytest.mark.parametrize("damage", ["garbage", "cut", "empty", "other_object"])
def test_a_corrupt_cache_is_ignored_and_rebuilt(project, damage):
    folder = project / ".cache"
    key = _key(project)
    cached_rules(rule_files(project), project, None, folder)
    path = folder / NAME
    data = path.read_bytes()
    header = data[: data.index(b"\n") + 1]
    damaged = {
        "garbage": header + b"\x80\x05not a pickle at all",
        "cut": data[: len(data) // 2],
        "empty": b"",
        "other_object": header + b"\x80\x04K\x01.",  # a pickled 1, not a RuleSet
    }[damage]
    path.write_bytes(damaged)
    assert read_cache(path, key) is None
    rules = cached_rules(rule_files(project), project, None, folder)
    assert rules.rules == load_rules(rule_files(project), project).rules
    assert read_cache(path, key) is not None


def test_a_folder_that_cant_be_written_means_no_cache(project, monkeypatch):
    """A read-only folder (refused even to root here: mkstemp is made to fail as it would there)."""

    def refused(*args: object, **kwargs: object) -> tuple[int, str]:
        raise PermissionError(errno.EACCES, "Permission denied")

    folder = project / ".cache"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "mkstemp", refused)
    rules = cached_rules(rule_files(project), project, None, folder)
    assert rules.rules == load_rules(rule_files(project), project).rules
    assert list(folder.iterdir()) == []


def test_a_cache_folder_that_cant_be_made_means_no_cache(project):
    (project / "blocker").write_text("a file where the folder would be")
    folder = project / "blocker" / "cache"
    rules = cached_rules(rule_files(project), project, None, folder)
    assert rules.rules == load_rules(rule_files(project), project).rules
    assert not write_cache(folder / NAME, "k", rules)


def test_a_table_with_problems_is_reported_and_never_kept(project):
    table = rule_files(project)[0]
    table.write_text(table.read_text(encoding="utf-8") + "\n- id: broken\n", encoding="utf-8")
    with pytest.raises(KBError):
        cached_rules(rule_files(project), project, None, project / ".cache")
    assert not (project / ".cache" / NAME).exists()


def test_the_key_covers_the_code_that_compiles_the_table():
    names = {p.name for p in rulecache.code_files()}
    assert {"schema.py", "load.py", "yamlload.py", "scanrules.py"} <= names


def test_the_scan_command_keeps_the_cache_in_the_project(project):
    (project / "t.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    cmd = [sys.executable, "-m", "kb", "--root", str(project), "scan", "--format", "json", "t.py"]
    first = subprocess.run(cmd, cwd=project, env=ENV, capture_output=True, text=True)
    assert (project / ".cache" / NAME).is_file(), first.stderr
    second = subprocess.run(cmd, cwd=project, env=ENV, capture_output=True, text=True)
    assert first.stdout == second.stdout and json.loads(first.stdout)["findings"]
