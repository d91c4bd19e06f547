"""Under serve, the printable handbook's parts and their pages' sections are reused
(kb/mkdocs/build.py, kb/render/printpage.py) only while every input is the same: an edit changes
every part and section that shows it, a move or retitle every link to the page, and nothing else."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.mkdocs.build import Build, printable
from kb.render.printpage import PARTS

PART_1, PART_3 = PARTS[0].src_uri, PARTS[2].src_uri
URLS = {p.src_uri: p.src_uri.removesuffix(".md") + "/" for p in PARTS}


class _NavPage:
    def __init__(self, uri: str, html: str, url: str | None = None, title: str | None = None) -> None:
        self.file, self.src_uri, self.content = self, uri, html
        self.url, self.title = url or uri.removesuffix(".md") + "/", title or uri


def _site() -> list[_NavPage]:
    return [
        _NavPage("migrate/a.md", '<h1 id="a">A</h1><p>see <a href="../../limits/c/#x">c</a></p>'),
        _NavPage("migrate/b.md", '<h1 id="b">B</h1><p>plain</p>'),
        _NavPage("limits/c.md", '<h1 id="c">C</h1><h2 id="x">X</h2><p>see <a href="../../migrate/b/">b</a></p>'),
        _NavPage("limits/d.md", '<h1 id="d">D</h1><p id="quiet">quiet</p>'),
    ]


def _parts(build: Build, pages: list[_NavPage]) -> dict[str, tuple[str, list]]:
    """Each part as the cache gives it, checked against a fresh one made without any cache."""
    out = {}
    for part in (PART_1, PART_3):
        out[part] = build.printable(pages, part, URLS[part])
        assert out[part] == printable(pages, part, URLS[part])
    return out


def test_an_edit_changes_its_own_part_and_reuses_the_others_and_its_other_sections():
    build, pages = Build(serving=True), _site()
    first = _parts(build, pages)
    build.cache.derived.sweep()
    pages[1].content = '<h1 id="b">B</h1><p>edited</p>'
    second = _parts(build, pages)
    assert "edited" in second[PART_1][0] and "edited" not in first[PART_1][0]
    assert second[PART_3] == first[PART_3]
    assert build.cache.derived.sweep() == (3, 3)  # part 3, a's HTML and section reused; part 1, b's made


def test_moving_or_retitling_a_page_changes_every_section_that_links_to_it():
    build, pages = Build(serving=True), _site()
    first = _parts(build, pages)
    pages[1].url = "migrate/bee/"  # c (in part 3) links to b by its URL
    moved = _parts(build, pages)
    assert moved[PART_3] != first[PART_3]
    pages[3].title = "Dee"  # d's section heading when it has no h1 of its own: here it has one
    pages[3].content = "<p>no heading</p>"
    retitled = _parts(build, pages)
    assert "<h1>Dee</h1>" in retitled[PART_3][0]


def test_an_id_the_print_page_repeats_is_reported_with_the_sections_reused():
    build, pages = Build(serving=True), _site()
    assert build.printable(pages, PART_3, URLS[PART_3])[1] == []
    build.cache.derived.sweep()
    html, problems = build.printable(pages, PART_3, URLS[PART_3], '<h2 id="limits_c__x">Own</h2>')
    assert [p.path for p in problems] == ["docs/limits/c.md"] and "'limits_c__x'" in problems[0].message
    assert build.cache.derived.sweep() == (4, 1)  # both pages' HTML and sections reused, the part made again


EDITS = st.lists(
    st.tuples(
        st.integers(0, 3),
        st.sampled_from(["content", "url", "title"]),
        st.sampled_from(["<p>one</p>", '<h2 id="x">X</h2>', '<a href="../../migrate/a/#a">a</a>', "<p id='a'>i</p>"]),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(EDITS)
def test_never_stale_every_part_is_the_one_made_afresh(edits):
    """Any sequence of edits (a page's HTML, URL or title): each part the cache gives is exactly
    the one made with no cache (``_parts`` compares them after every edit)."""
    build, pages = Build(serving=True), _site()
    _parts(build, pages)
    for n, (i, what, value) in enumerate(edits):
        page = pages[i]
        if what == "content":
            page.content = (page.content or "") + value
        elif what == "url":
            page.url = f"{page.url.rstrip('/')}-{n}/"
        else:
            page.title = f"{page.title} {n}"
        _parts(build, pages)
        build.cache.derived.sweep()
