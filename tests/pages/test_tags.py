"""Page tags (kb/pages/tags.py): declared once in mkdocs.yml, every page's tags checked with its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT
from kb.core.config import read_config
from kb.mkdocs.project import validate_project
from kb.pages.tags import allowed_tags

CONFIG = """\
site_name: Mini
plugins:
  - search
  - tags:
      tags_allowed: [training, inference]
nav:
  - index.md
  - sub/page.md
"""
ALLOWED = "training, inference"


def tag_problems(root: Path, front: str, config: str = CONFIG) -> list[str]:
    (root / "mkdocs.yml").write_text(config, encoding="utf-8")
    (root / "docs" / "index.md").write_text(
        f"---\nreviewed: 2026-11-01\n{front}description: Test page 2.\n---\n# Home\n", encoding="utf-8"
    )
    problems = validate_project(root, package=False).problems
    return [str(p) for p in problems if "tag" in p.message]  # other checks are other tests' business


def test_declared_tags_pass(mini):
    assert tag_problems(mini, "tags: [training, inference]\n") == []


def test_an_undeclared_tag_is_reported_at_its_line_with_the_allowed_list(mini):
    problems = tag_problems(mini, "tags:\n  - training\n  - trainig\n")
    assert problems == [
        f"docs/index.md:5: tag 'trainig' is not an allowed tag (expected one of: {ALLOWED}; "
        "a new tag is declared under tags_allowed in mkdocs.yml)"
    ]


@pytest.mark.parametrize(
    ("front", "line", "shown"),
    [
        ('tags:\n  - ""\n', 4, "an empty string"),
        ('tags:\n  - "<b>x</b>"\n', 4, "'<b>x</b>'"),
        ("tags:\n  - [training]\n", 4, "['training']"),
        ("tags:\n  - Training Mode\n", 4, "'Training Mode'"),
    ],
)
def test_a_tag_that_is_not_a_plain_name_is_reported(mini, front, line, shown):
    assert tag_problems(mini, front) == [
        f"docs/index.md:{line}: tags[0] is {shown}, not a plain tag name "
        f"(expected lowercase letters, digits and '-'; one of: {ALLOWED})"
    ]


@pytest.mark.parametrize("front", ["tags: training\n", "tags: []\n", "tags:\n"])
def test_tags_must_be_a_non_empty_list(mini, front):
    assert tag_problems(mini, front) == [
        "docs/index.md:3: front matter 'tags' must be a non-empty list of tag names "
        f"(expected e.g. 'tags: [training]'; one of: {ALLOWED})"
    ]


def test_a_tags_plugin_without_an_allow_list_is_reported(mini):
    config = CONFIG.replace("  - tags:\n      tags_allowed: [training, inference]\n", "  - tags\n")
    problems = tag_problems(mini, "tags: [training]\n", config)
    assert problems == [
        "docs/index.md:3: tag 'training' is not declared (expected a tags plugin in mkdocs.yml with a tags_allowed list)",
        "mkdocs.yml:4: the tags plugin has no tags_allowed list "
        "(expected 'tags_allowed:' listing every tag a page may use)",
    ]


def test_an_allow_list_entry_with_markup_is_reported(mini):
    config = CONFIG.replace("[training, inference]", '[training, "<i>x</i>"]')
    problems = tag_problems(mini, "tags: [training]\n", config)
    assert problems == [
        "mkdocs.yml:5: tags_allowed[1] '<i>x</i>' is not a plain tag name (expected lowercase letters, digits and '-')"
    ]


def test_the_real_site_declares_task_and_area_tags_and_tags_every_page():
    from kb.render.printpage import PRINT_PAGES

    allowed, problems = allowed_tags(read_config(ROOT).main)
    assert problems == []
    assert allowed is not None
    tasks = {"training", "inference", "distributed", "debugging", "performance"}
    areas = {"modes", "precision", "compile", "kernels", "serving", "frameworks"}
    assert set(allowed) == tasks | areas | {"handbook"}  # handbook: the About pages
    project = validate_project(ROOT, package=False)
    untagged = [
        uri
        for uri, page in project.pages.items()
        if not page.meta.get("tags") and uri not in ("reference/tags.md", *PRINT_PAGES)
    ]
    assert untagged == []
    used = {tag for page in project.pages.values() for tag in page.meta.get("tags", [])}
    assert used == tasks | areas | {"handbook"}  # every declared tag lists at least one page
