"""Integration: build the real site strictly into a temporary folder and check the result."""

import sys

import pytest

from buildtools import run, validate
from conftest import ROOT
from kb.core.config import read_config
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
    from kb.wiki.urls import nav_pages

    config = read_config(ROOT).main.located
    assert config is not None
    return nav_pages(config)


def _text(html: str) -> str:
    import html as html_lib
    import re

    return html_lib.unescape(re.sub(r"<[^>]+>", "", html))


def _printed(built) -> str:
    """The parts of the printable handbook, one after the other."""
    from kb.render.printpage import PARTS

    return "\n".join((built / p.src_uri.removesuffix(".md") / "index.html").read_text("utf-8") for p in PARTS)


@pytest.mark.build
def test_the_print_parts_hold_every_nav_page_once_in_nav_order(built):
    import re

    from kb.render.printpage import PRINT_PAGES, prefix_of

    printed = _printed(built)
    sources = [s for s in _nav_sources() if s not in PRINT_PAGES]
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
def test_every_link_inside_a_print_part_resolves_within_the_parts(built):
    import re

    from kb.render.printpage import PARTS

    ids = {}
    for part in PARTS:
        name = part.src_uri.removesuffix(".md").rsplit("/", 1)[1]
        html = (built / part.src_uri.removesuffix(".md") / "index.html").read_text("utf-8")
        found = re.findall(r'<[a-z][^<>]*\sid="([^"]+)"', html)
        assert len(found) == len(set(found)), f"duplicate ids on {part.src_uri}"
        ids[name] = (set(found), html)
    linked = 0
    for name, (own, html) in ids.items():
        anchors = set(re.findall(r'<a\s[^<>]*href="#([^"]+)"', html))
        assert anchors <= own, sorted(anchors - own)[:10]
        linked += len(anchors)
        for other, anchor in re.findall(r'<a\s[^<>]*href="\.\./(part-\d)/#([^"]+)"', html):
            assert anchor in ids[other][0], (name, other, anchor)
        sections = "".join(re.findall(r'<section class="kb-print-page".*?</section>', html, re.S))
        assert not re.search(r'href="(?:\.\./)+(?:migrate|understand|limits|figures|reference|about)/', sections)
    assert linked > 100


@pytest.mark.build
def test_a_print_part_is_at_most_1_mb_and_a_content_page_at_most_150_kb(built):
    from kb.render.printpage import PRINT_PAGES

    parts = {"about/print/" + p.removesuffix(".md").rsplit("/", 1)[1] for p in PRINT_PAGES if "/print/" in p}
    heavy = []
    for page in built.rglob("*.html"):
        url = str(page.parent.relative_to(built))
        limit = 1_000_000 if url in parts else 150_000
        if page.stat().st_size > limit:
            heavy.append(f"{url}: {page.stat().st_size:,} bytes (limit {limit:,})")
    assert not heavy, "\n".join(heavy)


@pytest.mark.build
def test_code_blocks_and_tables_survive_on_the_print_page(built):
    import re

    from kb.render.printpage import for_paper

    printed = _printed(built)
    page = (built / "migrate" / "device-code" / "index.html").read_text(encoding="utf-8")
    code = re.search(r"<pre[^>]*>.*?</pre>", page, re.S)
    table = re.search(r"<table>.*?</table>", (built / "reference" / "hardware" / "index.html").read_text("utf-8"), re.S)
    assert code and table
    assert _text(code.group(0)) in _text(printed)
    assert _text(table.group(0)) in _text(printed)
    paper = for_paper(table.group(0))  # the tooltips are left off the paper

    def skeleton(html: str) -> str:  # the tags in order, without attributes (ids and links are rewritten)
        return " ".join(re.findall(r"</?[a-z0-9]+", html))

    assert skeleton(paper) in skeleton(printed) and "<abbr" in table.group(0)
    assert skeleton(code.group(0)) in skeleton(printed)


@pytest.mark.build
def test_the_tags_index_lists_every_allowed_tag(built):
    from kb.pages.tags import allowed_tags

    html = (built / "reference" / "tags" / "index.html").read_text(encoding="utf-8")
    allowed, _ = allowed_tags(read_config(ROOT).main)
    for tag in allowed or []:
        assert f'id="tag:{tag}"' in html, tag


@pytest.mark.build
def test_the_kb_export_is_published_at_the_site_root(built):
    import json

    from kb.core.load import load_kb
    from kb.mkdocs.export import dumps, kb_document

    expected = dumps(kb_document(load_kb(ROOT / "docs" / "data", ROOT), "torch-tpu==0.2.0"))
    assert (built / "kb.json").read_text(encoding="utf-8") == expected
    schema = json.loads((built / "kb.schema.json").read_text(encoding="utf-8"))
    assert schema["$schema"].endswith("2020-12/schema")


@pytest.mark.build
def test_every_scanner_rule_and_error_entry_is_on_one_of_its_pages(built):
    """The rule tables and the error index are split over pages by a filter each: none is left out."""
    import re

    import yaml

    def ids(table: str) -> set[str]:
        files = sorted((ROOT / "docs" / "data").glob(f"{table}*.yml"))
        return {rec["id"] for f in files for rec in yaml.safe_load(f.read_text("utf-8"))}

    def found(pages: list[str], pattern: str) -> list[str]:
        return [m for p in pages for m in re.findall(pattern, (built / p / "index.html").read_text("utf-8"))]

    rules = found(["reference/scanner-rules", "reference/scanner-rules-compute"], r'id="rule-([^"]+)"')
    assert sorted(rules) == sorted(ids("migration_rules"))
    errors = sorted(p.parent.relative_to(built).as_posix() for p in (built / "migrate" / "errors").glob("*/index.html"))
    assert sorted(found(errors, r'<h3 id="err-([^"]+)"')) == sorted(ids("errors"))
