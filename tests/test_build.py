"""Integration: build the real site strictly into a temporary folder and check the result."""

import sys

import pytest

from buildtools import run, validate
from conftest import ROOT
from wikisite import plain_build


@pytest.fixture(scope="session")
def build_run():
    return plain_build()  # one build of the real project for the whole session


@pytest.fixture(scope="session")
def built(build_run):
    return build_run[0]


@pytest.mark.build
def test_the_build_says_how_long_its_site_check_took_as_the_bench_reads_it(build_run):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import peers

    assert len(peers.HOOK_CHECK.findall(build_run[1])) == 1, build_run[1][-2000:]


def test_validate_passes_on_the_real_project():
    result = validate(ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok: ")


@pytest.mark.build
def test_strict_build_and_site_check_pass(built):
    result = run([sys.executable, "-m", "kb", "check-site", str(built)], ROOT)
    assert result.returncode == 0, result.stderr
    assert (built / "index.html").is_file()


@pytest.mark.build
def test_no_shortcode_survives_and_nothing_loads_from_elsewhere(built):
    for page in built.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        assert "<!-- kb:" not in html, page
        for needle in ("fonts.googleapis", "fonts.gstatic", "unpkg.com", "jsdelivr", "cdnjs", "googletagmanager"):
            assert needle not in html, (page, needle)


@pytest.mark.build
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


# ---- The printable handbook, the tags index and the KB export, in the built site ----


def _nav_sources() -> list[str]:
    """The docs/ paths of the nav in mkdocs.yml, in order."""
    from kb.urls import nav_pages, read_config

    config = read_config(ROOT)
    assert config is not None
    return nav_pages(config)


def _text(html: str) -> str:
    import html as html_lib
    import re

    return html_lib.unescape(re.sub(r"<[^>]+>", "", html))


@pytest.mark.build
def test_the_print_page_holds_every_nav_page_in_nav_order(built):
    import re

    from kb.printpage import PRINT_PAGE, prefix_of

    printed = (built / "about" / "print" / "index.html").read_text(encoding="utf-8")
    sources = [s for s in _nav_sources() if s != PRINT_PAGE]
    sections = re.findall(r'<section class="kb-print-page" id="([^"]+)">', printed)
    assert sections == [prefix_of(s) for s in sources]
    position = 0
    for src in sources:  # each page's own title (its h1), found after the previous one
        own = built / (src[:-3].removesuffix("index") + ("/" if not src.endswith("index.md") else "") + "index.html")
        h1 = re.search(r"<h1[^>]*>(.*?)</h1>", own.read_text(encoding="utf-8"), re.S)
        assert h1, own
        title = _text(h1.group(1)).replace("¶", "").strip()
        found = _text(printed).find(title, position)
        assert found >= 0, (src, title)
        position = found


@pytest.mark.build
def test_every_link_inside_the_print_page_resolves_within_it(built):
    import re

    printed = (built / "about" / "print" / "index.html").read_text(encoding="utf-8")
    ids = re.findall(r'<[a-z][^<>]*\sid="([^"]+)"', printed)
    assert len(ids) == len(set(ids)), "duplicate ids on the print page"
    anchors = set(re.findall(r'<a\s[^<>]*href="#([^"]+)"', printed))
    assert len(anchors) > 100
    assert anchors <= set(ids), sorted(anchors - set(ids))[:10]
    assert not re.search(r'href="\.\./(?:migrate|understand|limits|figures|reference|about)/', printed)


@pytest.mark.build
def test_code_blocks_and_tables_survive_on_the_print_page(built):
    import re

    printed = (built / "about" / "print" / "index.html").read_text(encoding="utf-8")
    page = (built / "migrate" / "device-code" / "index.html").read_text(encoding="utf-8")
    code = re.search(r"<pre[^>]*>.*?</pre>", page, re.S)
    table = re.search(r"<table>.*?</table>", (built / "reference" / "hardware" / "index.html").read_text("utf-8"), re.S)
    assert code and table
    assert _text(code.group(0)) in _text(printed)
    assert _text(table.group(0)) in _text(printed)

    def skeleton(html: str) -> str:  # the tags in order, without attributes (ids and links are rewritten)
        return " ".join(re.findall(r"</?[a-z0-9]+", html))

    assert skeleton(table.group(0)) in skeleton(printed)
    assert skeleton(code.group(0)) in skeleton(printed)


@pytest.mark.build
def test_the_tags_index_lists_every_allowed_tag(built):
    from kb.tags import allowed_tags

    html = (built / "reference" / "tags" / "index.html").read_text(encoding="utf-8")
    allowed, _ = allowed_tags(ROOT)
    for tag in allowed or []:
        assert f'id="tag:{tag}"' in html, tag


@pytest.mark.build
def test_the_kb_export_is_published_at_the_site_root(built):
    import json

    from kb.export import dumps, kb_document
    from kb.load import load_kb

    expected = dumps(kb_document(load_kb(ROOT / "docs" / "data", ROOT), "torch-tpu==0.2.0"))
    assert (built / "kb.json").read_text(encoding="utf-8") == expected
    schema = json.loads((built / "kb.schema.json").read_text(encoding="utf-8"))
    assert schema["$schema"].endswith("2020-12/schema")
