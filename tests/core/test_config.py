"""kb.core.config: mkdocs.yml and mkdocs.offline.yml are read once per check of a project (and once
per build), and a file that can't be read is reported once, with its line."""

from __future__ import annotations

import pathlib
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import ROOT
from kb.core.config import MAIN, OFFLINE, read_config
from kb.mkdocs.build import Build
from kb.mkdocs.project import validate_project

CONFIG = "site_name: Test\nnav:\n  - Home: index.md\n  - Page: sub/page.md\n"


def make_project(mini: Path) -> Path:
    (mini / MAIN).write_text(CONFIG, encoding="utf-8")
    return mini


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the configuration files opened, in order, however they are opened."""
    names: list[str] = []
    real_open, real_io = pathlib.Path.open, open

    def path_open(self: Path, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        if self.name in (MAIN, OFFLINE):
            names.append(self.name)
        return real_open(self, *args, **kwargs)  # type: ignore[arg-type]

    def builtin_open(file: object, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        if Path(str(file)).name in (MAIN, OFFLINE):
            names.append(Path(str(file)).name)
        return real_io(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(pathlib.Path, "open", path_open)
    monkeypatch.setattr("builtins.open", builtin_open)
    return names


def test_validating_a_project_reads_each_config_file_once(mini: Path, opened: list[str]):
    root = make_project(mini)
    (root / OFFLINE).write_text((root / MAIN).read_text(encoding="utf-8"), encoding="utf-8")
    opened.clear()
    project = validate_project(root, package=False)
    assert project.problems == []
    assert sorted(opened) == sorted([MAIN, OFFLINE])


def test_a_build_reads_them_once_for_every_check(mini: Path, opened: list[str]):
    """The hook's order: on_config (settings), on_pre_build (validation), on_nav (reading path)."""
    root = make_project(mini)
    config = SimpleNamespace(
        config_file_path=str(root / MAIN), repo_url=None, edit_uri=None, site_url=None, extra={}, markdown_extensions=[]
    )
    build = Build()
    opened.clear()
    build.check_config(config)
    build.pre_build(root, lambda note: None)
    build.follow_reading_path(SimpleNamespace(pages=[]), config)
    assert opened == [MAIN]  # the mini project has no offline config


def test_the_reading_path_reads_the_config_when_it_comes_first(mini: Path, opened: list[str]):
    """follow_reading_path does not rely on check_config having run: it reads mkdocs.yml itself,
    once, so its problems still give their line."""
    root = make_project(mini)
    config = SimpleNamespace(config_file_path=str(root / MAIN), extra={})
    build = Build()
    opened.clear()
    build.follow_reading_path(SimpleNamespace(pages=[]), config)
    assert opened == [MAIN]
    assert build.site_config is not None and build.site_config.main.text is not None


def test_an_unreadable_config_is_reported_once_with_its_line(mini: Path):
    root = make_project(mini)
    (root / MAIN).write_text("site_name: x\nnav: [a\n", encoding="utf-8")
    config = read_config(root)
    assert config.main.located is None and len(config.problems) == 1
    (problem,) = config.problems
    assert problem.path == MAIN and problem.line >= 2
    found = [p for p in validate_project(root, package=False).problems if p.path == MAIN]
    assert found == [problem]


def test_a_refused_config_is_never_read(opened: list[str]):
    config = read_config(ROOT, refused=True)
    assert config.main.text is None and config.main.problems == () and MAIN not in opened
