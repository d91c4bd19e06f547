"""The printable handbook (kb/render/printpage.py): sections in order, ids prefixed, links kept inside."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from kb.render.printpage import Section, build_print, relative_url


def printed(sections: list[Section], print_url: str) -> str:
    """The print page's HTML as the build makes it (kb/mkdocs/build.py calls build_print), with no id repeated."""
    html, repeated = build_print(sections, print_url)
    assert repeated == []
    return html


def attributes(html: str) -> list[tuple[str, str | None]]:
    """Every attribute of every start tag, as a browser's parser sees them."""
    found: list[tuple[str, str | None]] = []

    class Parser(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.extend(attrs)

    Parser().feed(html)
    return found


HOME = Section(
    "index.md", "", "Home", '<h1 id="home">Home</h1>\n<p>See <a href="migrate/steps/#verify">verify</a>.</p>'
)
STEPS = Section(
    "migrate/steps.md",
    "migrate/steps/",
    "Steps",
    '<h1 id="steps">Steps</h1>\n'
    '<h2 id="verify">Verify<a class="headerlink" href="#verify">&para;</a></h2>\n'
    '<p><a href="../../">home</a>, <a href="../../reference/glossary/">glossary</a>, '
    '<a href="https://example.org/x#y">out</a>, <img alt="c" src="../../assets/chart.svg"/></p>\n'
    '<div class="tabbed-set" data-tabs="1:2"><input checked="checked" id="__tabbed_1_1" name="__tabbed_1" '
    'type="radio"/><label for="__tabbed_1_1">GPU</label></div>\n'
    '<pre><code><span id="__span-0-1"><a href="#__codelineno-0-1" id="__codelineno-0-1"></a>'
    "x = a &lt; b &amp;&amp; &quot;id=&quot;\n</span></code></pre>\n"
    "<table>\n<thead>\n<tr><th>a</th><th>b</th></tr>\n</thead>\n<tbody>\n<tr><td>1</td><td>2</td></tr>\n"
    '</tbody>\n</table>\n<p>Prose that says id="x" and href="y" stays prose.</p>',
)
GLOSSARY = Section("reference/glossary.md", "reference/glossary/", "Glossary <&>", "<p>No heading here.</p>")


def test_sections_come_in_the_given_order_with_a_heading_each():
    out = printed([HOME, STEPS, GLOSSARY], "about/print/")
    ids = re.findall(r'<section class="kb-print-page" id="([^"]+)">', out)
    assert ids == ["index", "migrate_steps", "reference_glossary"]
    assert '<section class="kb-print-page" id="reference_glossary">\n<h1>Glossary &#60;&#38;&#62;</h1>' in out


def test_ids_are_prefixed_and_stay_unique():
    out = printed([HOME, STEPS, Section("other.md", "other/", "Other", STEPS.html)], "about/print/")
    ids = [value for name, value in attributes(out) if name == "id"]
    assert len(ids) == len(set(ids))
    assert 'id="migrate_steps__verify"' in out
    assert '<input checked="checked" id="migrate_steps____tabbed_1_1" name="migrate_steps____tabbed_1"' in out
    assert '<label for="migrate_steps____tabbed_1_1">' in out


def test_links_to_handbook_pages_point_at_their_sections():
    out = printed([HOME, STEPS, GLOSSARY], "about/print/")
    assert '<a href="#migrate_steps__verify">verify</a>' in out  # another page's anchor
    assert '<a class="headerlink" href="#migrate_steps__verify">' in out  # the page's own anchor
    assert '<a href="#index">home</a>' in out
    assert '<a href="#reference_glossary">glossary</a>' in out


def test_other_links_are_relative_to_the_print_page_or_left_alone():
    out = printed([HOME, STEPS], "about/print/")
    assert '<a href="https://example.org/x#y">out</a>' in out
    assert 'src="../../assets/chart.svg"' in out
    assert '<a href="../../reference/glossary/">glossary</a>' in out  # not in the printed set: a page link


def test_code_blocks_tables_and_prose_are_copied_as_written():
    out = printed([STEPS], "about/print/")
    assert "x = a &lt; b &amp;&amp; &quot;id=&quot;\n</span></code></pre>" in out
    table = STEPS.html[STEPS.html.index("<table>") : STEPS.html.index("</table>") + 8]
    assert table in out
    assert '<p>Prose that says id="x" and href="y" stays prose.</p>' in out


def test_rewritten_attributes_are_escaped():
    hostile = Section("x.md", "x/", "X", '<a href="#&quot;&gt;&lt;script&gt;" id="a&quot;b">x</a>')
    out = printed([hostile], "p/")
    assert "<script" not in out
    assert 'href="#x__&quot;&gt;&lt;script&gt;"' in out
    assert 'id="x__a&quot;b"' in out


def test_relative_url_for_folder_and_file_urls():
    assert relative_url("assets/a.svg", "about/print/") == "../../assets/a.svg"
    assert relative_url("assets/a.svg", "about/print.html") == "../assets/a.svg"
    assert relative_url("reference/x/", "about/print/") == "../../reference/x/"
    assert relative_url("", "about/print/") == "../../"


def test_a_section_id_that_the_print_page_already_has_fails_at_that_page():
    """about/print.md's own heading 'Index' has the id the home page's section gets."""
    html, problems = build_print([HOME, STEPS], "about/print/", '<h2 id="index">Index</h2>')
    assert [str(p) for p in problems] == [
        "docs/index.md:1: on the printable page (about/print.md), id 'index' of this page's section is also an "
        "id of docs/about/print.md (expected unique ids: rename this page or the heading that makes it)"
    ]
    assert 'id="index"' in html  # the fragment is still built; the build fails on the problem


def test_an_id_inside_one_section_that_is_another_sections_id_fails():
    """'a.md' with a heading id 'b__x' and 'a/_b.md' with one 'x' both print as 'a__b__x'."""
    first = Section("a.md", "a/", "A", '<h2 id="b__x">X</h2>')
    second = Section("a/_b.md", "a/_b/", "B", '<h2 id="x">X</h2>')
    problems = build_print([first, second], "about/print/")[1]
    assert [(p.path, p.line) for p in problems] == [("docs/a/_b.md", 1)]
    assert "id 'a__b__x' of this page's section is also an id of docs/a.md" in problems[0].message


def test_distinct_pages_give_no_problem():
    assert build_print([HOME, STEPS, GLOSSARY], "about/print/", '<h1 id="print">Print</h1>')[1] == []


def test_each_page_goes_to_the_part_of_its_longest_folder():
    from kb.render.printpage import part_of

    assert part_of("index.md").src_uri == "about/print/part-1.md"
    assert part_of("migrate/quickstart.md").src_uri == "about/print/part-1.md"
    assert part_of("migrate/errors/compile.md").src_uri == "about/print/part-2.md"
    assert part_of("about/print.md").src_uri == "about/print/part-4.md"  # left out by the build, as a print page
    assert part_of("other/page.md") is None and part_of("index.md.bak") is None


def test_a_link_to_a_page_printed_on_another_part_goes_to_that_part():
    out = build_print(
        [HOME, STEPS, GLOSSARY], "about/print/part-1/", elsewhere={"migrate/steps.md": "about/print/part-2/"}
    )[0]
    assert 'id="migrate_steps"' not in out and '<section class="kb-print-page" id="reference_glossary">' in out
    assert '<a href="../part-2/#migrate_steps__verify">verify</a>' in out
    assert '<a href="#index">home</a>' not in out  # the steps page is not printed here, nor its links


def test_tooltips_and_permalinks_are_left_off_the_paper():
    section = Section(
        "a.md",
        "a/",
        "A",
        '<h2 id="x">X<a class="headerlink" href="#x" title="Permanent link">&para;</a></h2>'
        '<p><abbr title="High Bandwidth Memory">HBM</abbr> <a class="kb-src" href="../s/#src-w" title="Wheel: f.py">w</a></p>',
    )
    out = printed([section], "about/print/part-1/")
    assert '<h2 id="a__x">X</h2><p>HBM <a class="kb-src" href="../../../s/#src-w">w</a></p>' in out


def test_a_part_prints_pages_up_to_its_budget_and_the_rest_of_that_part_is_past_it():
    from kb.render.printpage import over_budget

    sizes = [("index.md", 80), ("migrate/a.md", 30), ("reference/x.md", 90), ("migrate/b.md", 5), ("other.md", 999)]
    assert over_budget(sizes, budget=100) == {"migrate/a.md", "migrate/b.md"}  # b is small, but after a: nav order
    assert over_budget(sizes, budget=89) == {"migrate/a.md", "migrate/b.md", "reference/x.md"}
    assert over_budget(sizes, budget=1000) == frozenset()


def test_a_page_past_the_budget_is_linked_at_the_end_and_links_to_it_go_to_its_page():
    out = printed_skipping([HOME, STEPS, GLOSSARY], "about/print/part-1/", frozenset({"migrate/steps.md"}))
    assert 'id="migrate_steps"' not in out and "Printed from their own pages" in out
    assert '<a href="../../../migrate/steps/#verify">verify</a>' in out  # from the home page's section
    assert '<li><a href="../../../migrate/steps/">Steps</a></li>' in out
    assert out.index('id="reference_glossary"') < out.index('id="kb-print-linked"')


def printed_skipping(sections: list[Section], print_url: str, skipped: frozenset[str]) -> str:
    html, repeated = build_print(sections, print_url, skipped=skipped)
    assert repeated == []
    return html


def test_the_print_page_states_the_budget_the_code_uses():
    from pathlib import Path

    from kb.render.printpage import PRINT_BUDGET

    text = (Path(__file__).resolve().parents[2] / "docs" / "about" / "print.md").read_text(encoding="utf-8")
    assert f"{PRINT_BUDGET:,} characters" in " ".join(text.split())
