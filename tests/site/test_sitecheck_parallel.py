"""What replaced the hand-written tokenizer's shortcuts: two processes, the line locator and the
theme's stylesheets known by hash. Each must give exactly the answers of the plain reading."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.site import sitecheck
from kb.site.sitecheck import check_site
from kb.site.sitedoc import Page, read_css
from kb.site.siteurl import foreign

CUT = '<li class="md-nav__item">'
# Material-shaped fragments and hostile ones: a start tag hidden in a comment, an attribute value,
# a script, a style, a textarea, SVG... each must leave every real element at its real line.
FRAGMENTS = [
    CUT + '<a href="../a/" class="md-nav__link">A</a></li>\n',
    '<header class="md-header"><a href="../../" title="home">h</a></header>\n',
    '<div class="md-content"><article class="md-content__inner md-typeset"><h1 id="t">T</h1>\n',
    "</article></div>\n",
    '<script src="../../assets/javascripts/bundle.js"></script>\n',
    "<script>var x = '<a href=\"nope\">';</script>\n",
    "<!-- a comment <a href='c'> <img src='c'> -->\n",
    '<a title="<a href=\'q\'>" href="../d/">d</a>\n',
    "<textarea><a href='t'></textarea>\n",
    "<svg><a href='s'><text>x</text></a></svg>\n",
    '<img src="../img/missing.png" id="i">\n',
    "<A HREF='upper'>u</A>\n",
    "<p>text\non two lines</p>\n",
]


def real_lines(text: str) -> list[int]:
    """The line of each <a>/<img> the HTML5 parser makes, by marking each fragment's own elements."""
    page = Page(text, True)
    return [text.count("\n", 0, page.offset(node)) + 1 for node in page.root.css("a,img")]


@settings(
    max_examples=int(os.environ.get("KB_HYPOTHESIS_EXAMPLES", "25")) * 8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=14))
def test_the_locator_puts_every_element_on_the_line_of_its_start_tag(fragments):
    # Each fragment's real elements, with the line the fragment starts on: what the locator must say.
    expected, line = [], 1
    for fragment in fragments:
        expected += [line] * len(Page(fragment, True).root.css("a,img"))
        line += fragment.count("\n")
    assert real_lines("".join(fragments)) == expected, fragments


def many_pages(tmp_path, count):
    site = tmp_path / "site"
    for i in range(count):
        page = site / f"s{i % 7}" / f"p{i}" / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        nav = "".join(f'{CUT}<a href="../p{j}/">p{j}</a></li>\n' for j in range(i % 7, count, 7))
        faults = ""
        if i % 50 == 3:
            faults += '<a href="../p99999/">gone</a>\n<a href="../../s1/p1/#nope">no anchor</a>\n'
        if i % 61 == 5:
            faults += '<script src="https://cdn.example/x.js"></script>\n<!-- kb:claim x -->\n'
        page.write_text(
            f"<html><head><title>P{i}</title></head><body><nav>{nav}</nav>"
            f'<article class="md-content__inner"><h1 id="top">P{i}</h1>\n{faults}'
            f'<a href="../../s{(i + 1) % 7}/p{(i + 1) % count}/#top">next</a></article></body></html>\n',
            encoding="utf-8",
        )
    return site


def test_two_processes_find_exactly_what_one_finds(tmp_path):
    site = many_pages(tmp_path, sitecheck.PARALLEL_FROM + 40)
    one = sorted(map(str, check_site(site, workers=1)))
    two = sorted(map(str, check_site(site, workers=2)))
    assert two == one
    assert any("broken link '../p99999/'" in p for p in one)
    assert any("missing anchor '#nope'" in p for p in one)
    assert any("cdn.example" in p for p in one)
    assert any("shortcode left unrendered" in p for p in one)


def test_when_the_second_process_dies_the_first_reads_everything(tmp_path, monkeypatch):
    site = many_pages(tmp_path, sitecheck.PARALLEL_FROM + 40)
    one = sorted(map(str, check_site(site, workers=1)))
    parent = os.getpid()
    read_all = sitecheck._read_all

    def dies_in_the_child(*args, **kwargs):
        if os.getpid() != parent:
            raise RuntimeError("the child fails")
        return read_all(*args, **kwargs)

    monkeypatch.setattr(sitecheck, "_read_all", dies_in_the_child)
    assert sorted(map(str, check_site(site, workers=2))) == one


def test_a_link_climbing_out_of_the_site_is_reported_from_each_depth(tmp_path):
    site = tmp_path / "site"
    for rel in ("a/index.html", "a/b/index.html", "a/b/c/index.html"):
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(f'{CUT}<a href="../../x/">x</a></li>\n', encoding="utf-8")
    (site / "x").mkdir()
    (site / "x" / "index.html").write_text("x\n", encoding="utf-8")
    out = sorted(str(p) for p in check_site(site, workers=1))
    # from a/ it climbs out; from a/b/ it reaches x/; from a/b/c/ it misses a/x/
    assert out == [
        "site/a/b/c/index.html:1: broken link '../../x/' (expected a/x/index.html in the built site)",
        "site/a/index.html:1: link '../../x/' points outside the site (expected a file inside it)",
    ]


def test_the_check_site_command_does_not_import_the_knowledge_base(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<p>ok</p>\n", encoding="utf-8")
    code = (
        "import sys, runpy; sys.argv = ['kb', '--root', sys.argv[1], 'check-site', sys.argv[2]]\n"
        "try:\n    runpy.run_module('kb', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('pydantic', 'kb.core.schema', 'kb.scan.scan', 'kb.wheel.package') if m in sys.modules))"
    )
    scripts = str(Path(__file__).resolve().parents[2] / "scripts")
    env = {**os.environ, "PYTHONPATH": scripts}
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path), str(site)], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("[]"), out.stdout


def test_the_theme_stylesheets_skipped_by_hash_are_materials_and_hold_no_foreign_url():
    # A stylesheet whose bytes are Material's own is not read (tinycss2 is slow over main.css). After
    # a theme upgrade this fails until THEME_STYLES in kb/site/sitecheck.py lists the new hashes.
    material = pytest.importorskip("material")
    folder = Path(material.__file__).parent / "templates" / "assets" / "stylesheets"
    styles = sorted(folder.glob("*.css"))
    hashes = {hashlib.sha256(p.read_bytes()).hexdigest(): p.name for p in styles}
    assert hashes == sitecheck.THEME_STYLES
    for path in styles:  # read anyway here: nothing it holds would have been reported
        doc = read_css(path.read_text(encoding="utf-8"))
        assert doc.findings == [] and not any(foreign(url) and not url.startswith("data:") for _, url, _ in doc.refs), (
            path.name
        )


def test_an_edited_theme_stylesheet_is_read(tmp_path):
    material = pytest.importorskip("material")
    css = next((Path(material.__file__).parent / "templates" / "assets" / "stylesheets").glob("palette*.css"))
    site = tmp_path / "site"
    (site / "assets").mkdir(parents=True)
    (site / "index.html").write_text("<p>x</p>", encoding="utf-8")
    (site / "assets" / css.name).write_text(css.read_text() + "\n@import 'https://evil.example/x.css';")
    out = [str(p) for p in check_site(site)]
    assert len(out) == 1 and "loads 'https://evil.example/x.css'" in out[0]
