"""The built-site check reads pages in remembered stretches and on both cores: both shortcuts
must give exactly the answers of reading every page whole, in one process, whatever the page holds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb import sitecheck
from kb.sitecheck import _scan_part, _Scanner, check_site

CUT = '<li class="md-nav__item">'
# Fragments shaped like Material's markup, and hostile ones that put a cut point where reading
# it alone would be wrong: inside a comment, an attribute, a script, a style, a textarea, SVG...
FRAGMENTS = [
    CUT + '<a href="../a/" class="md-nav__link">A</a></li>\n',
    CUT + '<a href="../b/#x" class="md-nav__link">B</a></li>\n',
    '<header class="md-header"><a href="../../" title="home">h</a></header>\n',
    '<div class="md-header__topic"><span>Title</span></div>\n',
    '<div class="md-content"><article class="md-content__inner md-typeset"><h1 id="t">T</h1>\n',
    "</article></div>\n",
    '<footer class="md-footer"><a href="../c/">next</a></footer>\n',
    '<script src="../../assets/javascripts/bundle.js"></script>\n',
    "<script>var x = 1;</script>\n",
    '<link rel="canonical" href="https://example.org/x/">\n',
    "<title>Page</title>\n",
    "<!-- a comment " + CUT + " -->\n",
    "<!-- unterminated " + CUT,
    '<a title="' + CUT + '" href="../d/">d</a>\n',
    "<a title='x " + CUT + "' onclick=alert(1)>d</a>\n",
    "<script>document.write('" + CUT + "')</script>\n",
    "<style>a{background:url(//evil.example/" + CUT + ")}</style>\n",
    "<textarea>" + CUT + "</textarea>\n",
    "<svg><style>" + CUT + "<img src=x onerror=alert(1)></style></svg>\n",
    "<svg><title>" + CUT + "</title>\n",
    "</svg>\n",
    "<math><style>" + CUT + "</style></math>\n",
    "<plaintext>" + CUT,
    "</a x=1>\n",
    "<!-->" + CUT + "\n",
    "</" + CUT,
    "<" + CUT,
    '<img src="../img/missing.png" id="i">\n',
    "<!-- kb:table x -->\n",
    "\x1b$B\n",
    '<a href="javascript:alert(1)">j</a>\n',
    "<script",
]


def whole(text: str) -> tuple:
    part = _scan_part(text, {}, False)
    return (part.ids, sorted(part.refs), sorted(part.events), part.article)


def stretched(scanner: _Scanner, text: str) -> tuple:
    doc = scanner.page(text, True)
    refs = sorted(
        r._replace(offset=at + lo + r.offset) for at, bits in doc.parts for lo, part in bits.links for r in part.refs
    )
    events = sorted(e._replace(offset=at + e.offset) for at, bits in doc.parts for e in bits.events)
    article = min((at + bits.article for at, bits in doc.parts if bits.article >= 0), default=-1)
    return (doc.ids, refs, events, article)


@settings(
    max_examples=int(os.environ.get("KB_HYPOTHESIS_EXAMPLES", "25")) * 8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=14), min_size=1, max_size=4))
def test_reading_in_remembered_stretches_equals_reading_each_page_whole(pages):
    scanner = _Scanner()  # shared by the pages, as in a real check: stretches seen on one are reused
    for fragments in pages:
        text = "".join(fragments)
        assert stretched(scanner, text) == whole(text), text


def test_a_cut_inside_a_comment_makes_the_page_read_whole():
    text = FRAGMENTS[0] + "<!-- " + CUT + " --><script>alert(1)</script>" + FRAGMENTS[1]
    doc = _Scanner().page(text, True)
    assert len(doc.parts) == 1 and doc.parts[0][0] == 0  # one piece: read whole
    assert stretched(_Scanner(), text) == whole(text)


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
        "print(sorted(m for m in ('pydantic', 'kb.schema', 'kb.scan', 'kb.package') if m in sys.modules))"
    )
    scripts = str(Path(__file__).resolve().parents[1] / "scripts")
    env = {**os.environ, "PYTHONPATH": scripts}
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path), str(site)], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("[]"), out.stdout


def test_the_css_character_classes_mean_what_their_long_spelling_means():
    # The classes are spelled as "not these ASCII characters" because the long spelling, with the
    # whole non-ASCII range, is slow to compile; both must accept exactly the same characters.
    import re

    from kb.sitecheck import _CSS_NAME_CHAR, _CSS_NAME_START, _CSS_OTHER

    pairs = [
        (_CSS_NAME_START, r"[a-zA-Z_\x80-\U0010ffff]"),
        (_CSS_NAME_CHAR, r"[\w\-\x80-\U0010ffff]"),
        (_CSS_OTHER, r"(?![\"'/@\\(){};a-zA-Z_\-])[\x00-\x7f]"),
    ]
    chars = [chr(c) for c in [*range(0x300), 0x2028, 0xFFFD, 0xFFFF, 0x10000, 0x1F600, 0x10FFFF]]
    for short, long in pairs:
        a, b = re.compile(short), re.compile(long)
        assert [c for c in chars if a.fullmatch(c)] == [c for c in chars if b.fullmatch(c)], short


NAMES = ["a", "A", "h2", "div", "span", "img", "link", "abbr", "script", "base", "article", "meta"]
ATTRS = [
    "id",
    "href",
    "class",
    "title",
    "HREF",
    "name",
    "onclick",
    "src",
    "style",
    "rel",
    "aria-label",
    "data-x",
    "alt",
    "width",
    "loading",
]
VALUES = [
    "",
    "x",
    "../a/",
    "#top",
    "a b",
    "//evil.example/x",
    "/abs/",
    "javascript:alert(1)",
    "a&amp;b",
    "x:y",
    "\\\\evil",
    "data:text/html,x",
    "é",
    "a\tb",
    "icon",
    "canonical",
    "Canonical",
    "stylesheet",
    "prev next",
    "a &#40;b&#41;",
    "<b>",
]


@settings(max_examples=int(os.environ.get("KB_HYPOTHESIS_EXAMPLES", "25")) * 20, deadline=None)
@given(
    st.sampled_from(NAMES),
    st.lists(
        st.tuples(st.sampled_from(ATTRS), st.sampled_from(VALUES), st.sampled_from(['="{}"', "='{}'", "={}"])),
        max_size=4,
    ),
    st.sampled_from([">", "/>"]),
)
def test_the_quick_reading_of_common_tags_equals_the_general_one(name, attrs, end):
    from kb.sitecheck import _digest, _digest_all

    text = "".join(f" {key}" + quote.format(value) for key, value, quote in attrs)
    assert _digest(name, text, end) == _digest_all(name, text, end), (name, text, end)


def test_the_quick_reading_equals_the_general_one_for_every_pair_of_attributes():
    """Exhaustive over one and two attributes, double-quoted (the only quoting the quick path takes)."""
    from kb.sitecheck import _digest, _digest_all

    keys = ["id", "href", "src", "name", "rel", "title", "alt", "onclick"]
    values = ["", "x", "../a/", "/abs/", "//evil.example/x", "icon", "canonical", "a &#40;b&#41;", "x:y"]
    singles = [f' {key}="{value}"' for key in keys for value in values]
    texts = ["", *singles, *(a + b for a in singles for b in singles)]
    for name in ("a", "img", "link", "abbr", "h2", "div"):
        for text in texts:
            for end in (">", "/>"):
                assert _digest(name, text, end) == _digest_all(name, text, end), (name, text, end)


def test_when_the_second_process_dies_the_first_reads_everything(tmp_path, monkeypatch):
    site = many_pages(tmp_path, sitecheck.PARALLEL_FROM + 40)
    one = sorted(map(str, check_site(site, workers=1)))
    parent = os.getpid()
    scan = sitecheck._scan_files

    def dies_in_the_child(*args, **kwargs):
        if os.getpid() != parent:
            raise RuntimeError("the child fails")
        return scan(*args, **kwargs)

    monkeypatch.setattr(sitecheck, "_scan_files", dies_in_the_child)
    assert sorted(map(str, check_site(site, workers=2))) == one
