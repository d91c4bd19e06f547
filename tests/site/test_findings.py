"""The site check's findings, URLs and link answers are named types whose fields say what None and "" mean."""

from __future__ import annotations

from pathlib import Path

from kb.site import sitecheck
from kb.site.sitecheck import Answer, Link
from kb.site.sitedoc import AttrProblem, Finding, Ref, _attr, read_html

PAGE = (
    '<html><head><meta http-equiv="refresh" content="5"><base href="https://cdn.example/"></head><body>'
    '<a href="javascript:void(0)">share</a><article class="md-content__inner"><p>x</p>'
    '<meta http-equiv="refresh" content="0"><img src="i.png" onload="x()"></article></body></html>'
)


def test_a_finding_carries_a_message_for_each_side_of_the_page():
    doc = read_html(PAGE, False)
    by_needle = {f.needle: f for f in doc.findings}
    assert all(isinstance(f, Finding) for f in doc.findings)
    theme_refresh = by_needle['<meta http-equiv="refresh" content="5">']
    assert theme_refresh.in_theme is None and theme_refresh.in_content  # the theme may refresh to its own site
    base = by_needle['<base href="https://cdn.example/">']
    assert base.in_theme == "<base href='https://cdn.example/'> points away from the site (expected the site itself)"
    assert base.in_content and base.in_content != base.in_theme
    handler = by_needle['<img src="i.png" onload="x()">']
    assert handler.in_content == handler.in_theme  # wrong on either side: one message
    assert not any(f.needle.startswith("<a ") for f in doc.findings)  # a no-op share link outside content
    assert doc.refs == [Ref(doc.refs[0].place, "i.png", loads=True)] and doc.refs[0].place < 0  # an element


def test_an_attribute_problem_says_where_it_is_wrong():
    (_, (srcdoc,)) = _attr("iframe", "srcdoc", "<p>x</p>", "")
    assert srcdoc == AttrProblem(srcdoc.in_content, srcdoc.in_content, noop=False)
    (_, (noop,)) = _attr("a", "href", "javascript:void(0)", "")
    assert noop.noop and noop.in_content == noop.in_theme
    (_, (css,)) = _attr("p", "style", "background: url(data:image/png;base64,AA)", "")
    assert css.in_content and css.in_theme is None  # data: in CSS is the theme's business outside content


def test_a_link_answer_names_the_file_and_fragment_to_look_up():
    files = {"a/index.html", "b/index.html"}
    assert sitecheck._link("#top", False, "a/index.html", "a", files, "/") == Answer(None, "a/index.html", "top")
    assert sitecheck._link("../b/#x", False, "a/index.html", "a", files, "/") == Answer(None, "b/index.html", "x")
    assert sitecheck._link("https://example.org/", False, "a/index.html", "a", files, "/") == Answer(None, "", "")
    broken = sitecheck._link("c/", False, "a/index.html", "a", files, "/")
    assert broken.problem and (broken.target, broken.fragment) == ("", "")


def test_only_links_with_a_problem_or_a_fragment_are_kept():
    doc = read_html('<p><a href="#x">x</a><a href="b/">b</a><a href="nowhere/">n</a></p>', True)
    job = sitecheck.Job(Path("/site"), {}, {}, {"index.html", "b/index.html"}, "/")
    links = sitecheck._links(job, "index.html", doc, {})
    assert [(type(link), link.url, link.answer.fragment, bool(link.answer.problem)) for link in links] == [
        (Link, "#x", "x", False),
        (Link, "nowhere/", "", True),
    ]
