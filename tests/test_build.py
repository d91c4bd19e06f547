"""Integration: build the real site strictly into a temporary folder and check the result."""

import sys

import pytest

from buildtools import build, run, validate
from conftest import ROOT


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    site = tmp_path_factory.mktemp("build") / "site"
    result = build(ROOT, site)
    assert result.returncode == 0, result.stdout + result.stderr
    return site


def test_validate_passes_on_the_real_project():
    result = validate(ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok: ")


def test_strict_build_and_site_check_pass(built):
    result = run([sys.executable, "-m", "kb", "check-site", str(built)], ROOT)
    assert result.returncode == 0, result.stderr
    assert (built / "index.html").is_file()


def test_no_shortcode_survives_and_nothing_loads_from_elsewhere(built):
    for page in built.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        assert "<!-- kb:" not in html, page
        for needle in ("fonts.googleapis", "fonts.gstatic", "unpkg.com", "jsdelivr", "cdnjs", "googletagmanager"):
            assert needle not in html, (page, needle)


def test_glossary_terms_become_tooltips_and_badges_render(built):
    html = (built / "figures" / "index.html").read_text(encoding="utf-8")
    assert '<abbr title="High Bandwidth Memory' in html
    assert 'class="kb-badge kb-badge--' in html
    assert "<svg" in html


def test_the_check_never_writes_into_docs(tmp_path):
    before = {p: p.stat().st_mtime_ns for p in (ROOT / "docs").rglob("*") if p.is_file()}
    validate(ROOT)
    after = {p: p.stat().st_mtime_ns for p in (ROOT / "docs").rglob("*") if p.is_file()}
    assert before == after
