"""The built-site check on small hand-made sites: links, anchors, assets, origins, leftovers.
Hostile pages (scripts, encodings, parser tricks, files) are in test_sitecheck_hostile.py."""

import re
from pathlib import Path

import pytest

from kb.site import sitecheck
from kb.site.sitecheck import check_site


def site(tmp_path, files):
    for rel, body in files.items():
        path = tmp_path / "site" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
    return tmp_path / "site"


def run(tmp_path, files, hints=None):
    return [str(p) for p in sorted(check_site(site(tmp_path, files), hints))]


GOOD = {
    "index.html": '<html>\n<link rel="stylesheet" href="assets/main.css">\n<a href="page/#intro">p</a>\n'
    '<a href="page/">p</a><img src="img/a.png"><a href="https://example.org/">ext</a>\n'
    '<a href="#top" id="top">t</a><a href="mailto:x@example.org">m</a>\n',
    "page/index.html": '<h2 id="intro">Intro</h2><a href="../">home</a><a href="../index.html#top">t</a>\n',
    "assets/main.css": "body{background:url(../img/a.png)} .x{background:url(data:image/png;base64,AA==)}\n",
    "img/a.png": "png",
    "404.html": '<link rel="stylesheet" href="/assets/main.css"><a href="/page/">p</a>\n',
}


def test_a_good_site_passes(tmp_path):
    assert run(tmp_path, GOOD) == []


def test_broken_link_anchor_image_are_found_with_lines(tmp_path):
    files = {
        **GOOD,
        "page/index.html": GOOD["page/index.html"] + '\n<a href="../nope/">x</a>\n'
        '<a href="../index.html#missing">y</a>\n<img src="../img/b.png">\n',
    }
    assert run(tmp_path, files, {"page/index.html": "docs/page.md"}) == [
        "site/page/index.html:3: broken link '../nope/' (expected nope/index.html in the built site) [from docs/page.md]",
        "site/page/index.html:4: missing anchor '#missing' in index.html (expected an element with id=\"missing\") [from docs/page.md]",
        "site/page/index.html:5: broken link '../img/b.png' (expected img/b.png in the built site) [from docs/page.md]",
    ]


def test_an_empty_fragment_is_not_a_missing_anchor(tmp_path):
    # href="#" (and "page/#") name no element: the top of the page, never a missing anchor
    files = {
        **GOOD,
        "index.html": GOOD["index.html"] + '<a href="#">top</a><a href="page/#">p</a><a href="#nope">n</a>\n',
    }
    assert run(tmp_path, files) == [
        "site/index.html:6: missing anchor '#nope' in index.html (expected an element with id=\"nope\")"
    ]


def test_raw_href_to_a_markdown_file_is_a_404(tmp_path):
    files = {**GOOD, "index.html": GOOD["index.html"] + '<a href="page.md">raw</a>\n'}
    assert run(tmp_path, files) == [
        "site/index.html:6: link 'page.md' points at a Markdown source (expected the built page; "
        "write links to .md files in Markdown, not raw HTML)"
    ]


def test_anything_loaded_from_another_origin_is_flagged(tmp_path):
    files = {
        **GOOD,
        "index.html": GOOD["index.html"]
        + "\n".join(
            [
                '<script src="https://cdn.jsdelivr.net/npm/x.js"></script>',
                '<link rel="stylesheet" href="//fonts.googleapis.com/css?family=Roboto">',
                '<img src="http://example.com/a.png">',
                '<iframe src="https://example.com/embed"></iframe>',
                '<style>@import "https://example.com/a.css"; .a{background:url(https://example.com/b.png)}</style>',
                "<div style=\"background:url('https://example.com/c.png')\"></div>",
                '<link rel="canonical" href="https://example.org/">',
            ]
        )
        + "\n",
        "assets/main.css": "@font-face{src:url(https://fonts.gstatic.com/x.woff2)}\n",
    }
    out = run(tmp_path, files)
    assert [line.split(": loads")[0] for line in out] == [
        "site/assets/main.css:1",
        "site/index.html:6",
        "site/index.html:7",
        "site/index.html:8",
        "site/index.html:9",
        "site/index.html:10",
        "site/index.html:10",
        "site/index.html:11",
    ]
    assert out[1] == (
        "site/index.html:6: loads 'https://cdn.jsdelivr.net/npm/x.js' from another origin (expected every "
        "script, style, font, image and frame to come from this site)"
    )


def test_root_absolute_links_are_flagged_except_on_the_404_page(tmp_path):
    files = {**GOOD, "page/index.html": GOOD["page/index.html"] + '<a href="/page/">abs</a>\n'}
    assert run(tmp_path, files) == [
        "site/page/index.html:2: root-absolute link '/page/' (expected a relative link, so the site works under any "
        "path and from file://)"
    ]


def test_leftover_shortcode(tmp_path):
    files = {**GOOD, "page/index.html": GOOD["page/index.html"] + "<p><!-- kb:figure x --></p>\n"}
    assert run(tmp_path, files, {"page/index.html": "docs/page.md"}) == [
        "site/page/index.html:2: shortcode left unrendered (expected the hook to replace every '<!-- kb:' comment) "
        "[from docs/page.md]"
    ]


def test_escaped_shortcode_text_is_not_a_leftover(tmp_path):
    files = {**GOOD, "page/index.html": GOOD["page/index.html"] + "<code>&lt;!-- kb:figure x --&gt;</code>\n"}
    assert run(tmp_path, files) == []


def test_link_outside_the_site(tmp_path):
    files = {**GOOD, "index.html": GOOD["index.html"] + '<a href="../../etc/passwd">x</a>\n'}
    assert run(tmp_path, files) == [
        "site/index.html:6: link '../../etc/passwd' points outside the site (expected a file inside it)"
    ]


def test_the_theme_scripts_the_check_allows_are_the_ones_material_emits():
    # Outside the article, an inline script must be one of Material's, known by hash. After a theme
    # upgrade this fails until THEME_SCRIPTS in kb/site/sitecheck.py lists the new scripts' hashes.
    material = pytest.importorskip("material")
    templates = Path(material.__file__).parent / "templates" / "partials" / "javascripts"
    scripts = [
        (path.name, re.sub(r"\{\{.*?\}\}", "", m.group(1)))
        for path in sorted(templates.glob("*.html"))
        for m in re.finditer(r"<script>(.*?)</script>", path.read_text(encoding="utf-8"), re.S)
    ]
    assert [name for name, body in scripts if not sitecheck._theme_script(body)] == []
    assert len(scripts) == len(sitecheck.THEME_SCRIPTS)
