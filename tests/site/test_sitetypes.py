"""Files a browser runs as documents whatever their name: read as markup by the site check, or
refused at their line; files a browser only downloads or shows as text are left alone."""

import gzip
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_sitecheck_hostile import page, run

from kb.site.sitetypes import document_types

SVG_SCRIPT = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
XHTML_SCRIPT = '<html xmlns="http://www.w3.org/1999/xhtml"><body><script>alert(1)</script></body></html>'


@pytest.mark.parametrize(
    ("rel", "body", "expected"),
    [
        ("img/evil.svgz", gzip.compress(SVG_SCRIPT.encode(), mtime=0), ":1: compressed SVG"),
        ("data/evil.xml", '<?xml version="1.0"?>\n' + XHTML_SCRIPT, ":2: <script> in page content"),
        ("data/evil.atom", SVG_SCRIPT, ":1: <script> in page content"),
        ("files/x.xht", XHTML_SCRIPT, ":1: <script> in page content"),
        ("data/evil.xsl", "<x/>", ":1: XSLT stylesheet"),
        ("data/evil.XSLT", "<x/>", ":1: XSLT stylesheet"),
        ("data/styled.xml", '<r/>\n<?xml-stylesheet type="text/xsl" href="t.xsl"?>', ":2: names an XSLT stylesheet"),
        ("data/x.rss", '<rss xmlns:xsl="http://www.w3.org/1999/XSL/Transform"/>', ":1: names an XSLT stylesheet"),
        (
            "data/p.xml",
            '<r>\n<h:script xmlns:h="http://www.w3.org/1999/xhtml">x</h:script></r>',
            ":2: the XHTML or SVG",
        ),
        ("img/p.svg", '<s:svg xmlns:s="http://www.w3.org/2000/svg"><s:script>x</s:script></s:svg>', "prefix 's:'"),
        ("data/e.xml", '<!DOCTYPE r [<!ENTITY x "y">]><r xmlns="http://www.w3.org/1999/xhtml">&x;</r>', "<!ENTITY>"),
        ("files/notes", "<!doctype html><p>hi", ":1: no known type, and it starts like HTML"),
        ("files/page.unknownext", "  <HTML><body onload=alert(1)>", "starts like HTML"),
        ("files/frame.dat", "\n<iframe srcdoc='x'></iframe>", "starts like HTML"),
    ],
)
def test_a_file_a_browser_runs_as_a_document_is_checked_or_refused(tmp_path, rel, body, expected):
    out = run(tmp_path, {"index.html": page(), rel: body})
    assert any(line.startswith(f"site/{rel}:") and expected in line for line in out), out


@pytest.mark.parametrize(
    ("rel", "body"),
    [
        ("sitemap.xml", '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>'),
        (
            "sitemap.xml.gz",
            gzip.compress(b"<urlset><script>x</script></urlset>", mtime=0),
        ),  # served as gzip: a download
        ("notes.txt", "<script>alert(1)</script>"),  # text/plain: shown as text
        ("data.json", '{"a": "<script>"}'),
        ("files/blob", "not markup <script>"),  # sniffed, but it does not start like HTML
        ("CNAME", "docs.example.org"),
        ("assets/x.js", "document.write('<script>')"),
        ("page2.html", '<p xmlns:h="http://www.w3.org/1999/xhtml">an xmlns means nothing in HTML</p>'),
    ],
)
def test_files_no_browser_runs_as_documents_are_left_alone(tmp_path, rel, body):
    out = run(tmp_path, {"index.html": page(), rel: body})
    assert not [line for line in out if line.startswith(f"site/{rel}:")], out


def test_only_what_needs_reading_is_opened(tmp_path):
    (tmp_path / "a.png").write_bytes(b"\x89PNG" + b"<html>" * 10)  # a known type: never opened
    (tmp_path / "gone.xml").write_text("<r/>")
    markup, problems = document_types(tmp_path, {"a.png", "gone.xml", "missing.xml"}, 1000)
    assert markup == [] and problems == []  # the missing file is the walk's to report


# ---- properties ----

SIGNATURES = ["!doctype html", "html", "head", "script", "iframe", "h1", "div", "font", "table", "a", "style"]
SIGNATURES += ["title", "b", "body", "br", "p", "!--"]
SUFFIXES = [".xml", ".xht", ".rss", ".atom", ".svg", ".xhtml", ".svgz", ".xsl", ".txt", ".json", ".png", "", ".zz9"]


def _cased(flips: list[bool], text: str) -> str:
    """``text`` with the letters ``flips`` marks in upper case."""
    return "".join(c.upper() if i < len(flips) and flips[i] else c for i, c in enumerate(text))


@settings(max_examples=200, deadline=None)
@given(suffix=st.sampled_from(SUFFIXES), body=st.binary(max_size=300))
def test_any_file_gives_problems_inside_it_never_an_exception(suffix, body):
    with tempfile.TemporaryDirectory() as tmp:
        rel = f"f/x{suffix}"
        (Path(tmp) / "f").mkdir()
        (Path(tmp) / rel).write_bytes(body)
        markup, problems = document_types(Path(tmp), {rel}, 10_000)
    assert markup in ([], [rel])
    for p in problems:
        assert p.path == f"site/{rel}" and 1 <= p.line <= body.count(b"\n") + 1 and "(expected" in p.message


@settings(max_examples=100, deadline=None)
@given(
    space=st.text(alphabet=" \t\r\n\x0c", max_size=8),
    tag=st.sampled_from(SIGNATURES),
    flips=st.lists(st.booleans(), max_size=14),
    end=st.sampled_from([" ", ">", "\t", "\n"]),
    rest=st.binary(max_size=50),
    name=st.sampled_from(["notes", "page.zz9", "a.unknownext", "x.dat"]),
)
def test_a_file_of_no_known_type_that_starts_like_html_is_refused(space, tag, flips, end, rest, name):
    body = f"{space}<{_cased(flips, tag)}{end}".encode() + rest
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / name).write_bytes(body)
        markup, problems = document_types(Path(tmp), {name}, 10_000)
    assert markup == [] and [p.line for p in problems] == [1] and "starts like HTML" in problems[0].message


@settings(max_examples=50, deadline=None)
@given(suffix=st.sampled_from([".svgz", ".xsl", ".xslt"]), flips=st.lists(st.booleans(), max_size=5))
def test_compressed_svg_and_xslt_are_refused_in_any_letter_case(suffix, flips):
    name = "d/x" + _cased(flips, suffix)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "d").mkdir()
        (Path(tmp) / name).write_bytes(b"")
        markup, problems = document_types(Path(tmp), {name}, 10_000)
    assert markup == [] and len(problems) == 1 and problems[0].line == 1
