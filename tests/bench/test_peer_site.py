"""benchmarks/peer_site.py: the generated project is valid when clean, and each fault is injected
exactly once, where the fault list says."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

from peer_site import FAULTS, generate, page_name  # noqa: E402

from kb.mkdocs.project import validate_project  # noqa: E402

PAGES = 70


@pytest.fixture(scope="module")
def projects(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("peers")
    return generate(tmp / "clean", PAGES), generate(tmp / "faulty", PAGES, faulty=True)


def texts(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted((root / "docs").rglob("*"))
        if p.suffix in (".md", ".yml")
    }


def test_the_size_counts_real_and_generated_pages(projects):
    clean, _ = projects
    assert clean.pages == PAGES == len(list((clean.root / "docs").rglob("*.md")))
    assert clean.generated[0] == page_name(0) == "bench/s00/page-0000.md"


def test_the_clean_project_passes_validation(projects):
    clean, _ = projects
    project = validate_project(clean.root, package=False)
    assert [str(p) for p in project.problems] == []
    assert {f"bench/s00/page-{i:04d}.md" for i in range(3)} <= set(project.pages)


def test_every_fault_is_injected_exactly_once_where_the_list_says(projects):
    clean, faulty = projects
    assert [i.fault.id for i in faulty.injected] == [f.id for f in FAULTS]
    before, after = texts(clean.root), texts(faulty.root)
    for inj in faulty.injected:
        needle = inj.fault.needle
        assert sum(t.count(needle) for t in before.values()) == 0, inj.fault.id
        assert sum(t.count(needle) for t in after.values()) == 1, inj.fault.id
        line = after[inj.file].split("\n")[inj.line - 1]
        assert needle in line, (inj.fault.id, line)
    changed = sorted(name for name in after if after[name] != before.get(name))
    assert changed == sorted(i.file for i in faulty.injected)


def test_validation_reports_each_page_fault_at_its_line(projects):
    _, faulty = projects
    problems = validate_project(faulty.root, package=False).problems
    where = {(p.path, p.line) for p in problems}
    for inj in faulty.injected:
        assert (inj.file, inj.line) in where, inj.fault.id
    assert len(problems) == len(FAULTS)


def test_configs_drop_sections_and_only_the_variants_differ(projects):
    clean, _ = projects
    configs = {p.name: p.read_text(encoding="utf-8") for p in clean.root.glob("mkdocs*.yml")}
    assert sorted(configs) == ["mkdocs.htmlproofer.yml", "mkdocs.plain.yml", "mkdocs.render.yml", "mkdocs.yml"]
    for text in configs.values():
        assert "navigation.sections" not in text and "navigation.prune" in text
        assert f"          - {clean.generated[-1]}\n" in text
    assert str(ROOT / "scripts" / "hooks.py") in configs["mkdocs.yml"]
    assert "hooks:" not in configs["mkdocs.plain.yml"]
    assert "render_hook.py" in configs["mkdocs.render.yml"]
    assert "  - htmlproofer:\n      validate_external_urls: false\n" in configs["mkdocs.htmlproofer.yml"]


def test_the_bench_sites_leave_out_every_print_page():
    from peer_site import PRINT_PAGES as LEFT_OUT

    from kb.render.printpage import PRINT_PAGES

    assert set(LEFT_OUT) == PRINT_PAGES


def test_the_published_shape_keeps_sections_and_the_printable_handbook(tmp_path):
    """bench.py scale's sites: the real mkdocs.yml and every print page; they validate, and the
    generated pages are in the nav under migrate/, which a part of the printable handbook holds."""
    from kb.render.printpage import PRINT_PAGES, part_of

    made = generate(tmp_path / "p", PAGES, as_published=True)
    config = (made.root / "mkdocs.yml").read_text(encoding="utf-8")
    assert "    - navigation.sections\n" in config and f"- migrate/{page_name(0)}\n" in config
    assert all((made.root / "docs" / p).is_file() for p in PRINT_PAGES)
    assert all(part_of(name) is not None for name in made.generated)
    project = validate_project(made.root, package=False)
    assert [str(p) for p in project.problems] == []
