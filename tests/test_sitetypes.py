"""Files a browser runs as documents whatever their name: read as markup by the site check, or
refused at their line; files a browser only downloads or shows as text are left alone."""

import gzip

import pytest

from kb.sitetypes import document_types
from test_sitecheck_hostile import page, run

SVG_SCRIPT = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
XHTML_SCRIPT = '<html xmlns="http://www.w3.org/1999/xhtml"><body><script>alert(1)</script></body></html>'


@pytest.mark.parametrize(
    ("rel", "body", "expected"),
    [
        ("img/evil.svgz", gzip.compress(SVG_SCRIPT.encode()), ":1: compressed SVG"),
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
        ("sitemap.xml.gz", gzip.compress(b"<urlset><script>x</script></urlset>")),  # served as gzip: a download
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
