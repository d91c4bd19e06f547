"""The serve-time page cache (kb/mkdocs/pagecache.py, kb/mkdocs/servecache.py): an unchanged page is reused, a
page whose inputs changed never is. MkDocs' own Files and Page objects, as a rebuild makes them."""

from __future__ import annotations

import logging
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mkdocs.config import load_config
from mkdocs.structure.files import get_files
from mkdocs.structure.pages import Page

from kb.mkdocs.build import Build, finish, page_markdown, printable
from kb.mkdocs.pagecache import Memo, digest
from kb.mkdocs.project import validate_project
from kb.mkdocs.servecache import ServeCache

CONFIG = """\
site_name: T
docs_dir: docs
markdown_extensions:
  - abbr
  - attr_list
  - toc:
      permalink: {permalink}
  - pymdownx.snippets:
      base_path: [{snippets}]
      check_paths: true
"""


def _config(root: Path, permalink: bool = True):
    (root / "snippets").mkdir(exist_ok=True)
    text = CONFIG.format(snippets=root / "snippets", permalink=str(permalink).lower())
    (root / "mkdocs.yml").write_text(text, encoding="utf-8")
    return load_config(config_file=str(root / "mkdocs.yml"), site_dir=str(root / "site"))


def _convert(
    root: Path, markdown: dict[str, str], cache: ServeCache | None, permalink: bool = True
) -> dict[str, tuple]:
    """One rebuild as MkDocs does it (new Files and Pages), each page converted through ``cache``
    (None: MkDocs alone); each page's HTML, toc titles, anchors and links to anchors."""
    config = _config(root, permalink)
    files = get_files(config)
    if cache is not None:
        cache.start(config, files)
    out = {}
    for file in files.documentation_pages():
        page = Page(None, file, config)
        page.markdown = markdown.get(file.src_uri, (root / "docs" / file.src_uri).read_text("utf-8"))
        if cache is not None:
            cache.attach(page)
        page.render(config, files)
        links = {f.src_uri: v for f, v in (page.links_to_anchors or {}).items()}
        out[file.src_uri] = (page.content, [t.title for t in page.toc], page.present_anchor_ids, links)
    return out


def _kb_markdown(root: Path) -> dict[str, str]:
    """Each page's final Markdown, rendered from the KB as the build renders it."""
    project = validate_project(root, package=False)
    assert project.kb is not None, project.problems
    return {uri: page_markdown(project, uri, p.rendered, p.meta) for uri, p in project.pages.items()}


def _page(root: Path, name: str, body: str) -> None:
    front = "---\nreviewed: 2026-11-01\ndescription: A test page about the figure.\n---\n"
    (root / "docs" / name).write_text(front + body, encoding="utf-8")


def test_a_kb_edit_changes_every_page_that_uses_the_record_and_no_other(mini):
    _page(mini, "a.md", "# A\n\n<!-- kb:figure tput -->\n")
    _page(mini, "b.md", "# B\n\nAlso: <!-- kb:figure tput -->\n")
    for stub in ("about/conventions.md", "reference/sources.md"):  # what the figure links to
        (mini / "docs" / stub).parent.mkdir()
        (mini / "docs" / stub).write_text("# Stub\n", "utf-8")
    cache = ServeCache()
    before = _convert(mini, _kb_markdown(mini), cache)
    assert "25,700" in before["a.md"][0] and "25,700" in before["b.md"][0]
    cache.sweep()
    figures = mini / "docs" / "data" / "figures.yml"
    figures.write_text(figures.read_text("utf-8").replace("value: 25700", "value: 31337"), encoding="utf-8")
    after = _convert(mini, _kb_markdown(mini), cache)
    for uri in ("a.md", "b.md", "sub/page.md"):  # every page that shows the figure
        assert "31,337" in after[uri][0] and "25,700" not in after[uri][0], uri
    for uri in ("index.md", "about/conventions.md", "reference/sources.md"):
        assert after[uri] == before[uri]
    assert cache.sweep().startswith("page cache: 3 of 6 conversions"), "only the pages without the figure"


def test_a_page_nobody_touched_is_not_converted_again(tmp_path):
    (tmp_path / "docs").mkdir()
    for n in range(3):
        (tmp_path / "docs" / f"p{n}.md").write_text(f"# P{n}\n\n## Part\n\nSee [p0](p0.md#part).\n", "utf-8")
    cache = ServeCache()
    first = _convert(tmp_path, {}, cache)
    assert cache.sweep() == "page cache: 0 of 3 conversions, 0 of 0 search parses and 0 of 0 shortcode renders reused"
    (tmp_path / "docs" / "p1.md").write_text("# P1 edited\n", "utf-8")
    second = _convert(tmp_path, {}, cache)
    assert cache.sweep() == "page cache: 2 of 3 conversions, 0 of 0 search parses and 0 of 0 shortcode renders reused"
    assert second["p0.md"] == first["p0.md"] and second["p2.md"] == first["p2.md"]
    assert "P1 edited" in second["p1.md"][0]


def test_a_conversion_that_warned_is_never_kept_so_the_warning_comes_back(tmp_path, caplog):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "p.md").write_text("# P\n\n[gone](missing.md)\n", "utf-8")
    cache = ServeCache()
    for _ in range(2):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="mkdocs"):
            _convert(tmp_path, {}, cache)
        assert "missing.md" in caplog.text
    assert cache.sweep() == "page cache: 0 of 2 conversions, 0 of 0 search parses and 0 of 0 shortcode renders reused"


def test_digest_separates_parts():
    assert digest(["ab", "c"]) != digest(["a", "bc"])
    assert digest([b"x"]) == digest(["x"])


def test_sweep_drops_what_a_build_did_not_use():
    memo: Memo[str] = Memo()
    memo.put("a", "1")
    memo.put("b", "2")
    memo.sweep()
    assert memo.get("a") == "1"
    assert memo.sweep() == (1, 0)
    assert memo.get("b") is None and memo.entries == {"a": "1"}


PIECES = ["# T", "## Part", "[p0](p0.md#part)", "[p1](p1.md)", "[x](missing.md)", '--8<-- "s.md"', "text *em*"]
SNIPPETS = ["snippet one", "## From a snippet", "[p2](p2.md)"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.dictionaries(
                st.sampled_from(["p0.md", "p1.md", "p2.md"]), st.lists(st.sampled_from(PIECES), max_size=4)
            ),
            st.sampled_from(SNIPPETS),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_never_stale_the_cached_conversion_is_always_a_fresh_one(tmp_path_factory, builds):
    """Any sequence of rebuilds (pages edited, added, removed; the snippet edited): every page
    converted through the cache is exactly what MkDocs alone makes of it."""
    root = tmp_path_factory.mktemp("site")
    cache = ServeCache()
    for pages, snippet in builds:
        docs = root / "docs"
        docs.mkdir(exist_ok=True)
        for old in docs.glob("*.md"):
            old.unlink()
        (docs / "index.md").write_text("# Home\n", "utf-8")
        for name, pieces in pages.items():
            (docs / name).write_text("\n\n".join(pieces) + "\n", "utf-8")
        _config(root)
        (root / "snippets" / "s.md").write_text(snippet + "\n", "utf-8")
        logging.disable(logging.WARNING)  # the missing links warn; what is compared is the result
        try:
            assert _convert(root, {}, cache) == _convert(root, {}, None)
        finally:
            logging.disable(logging.NOTSET)
        cache.sweep()


def test_mkdocs_yml_edits_reach_every_page(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "p.md").write_text("# P\n\n## Part\n", "utf-8")
    cache = ServeCache()
    assert "headerlink" in _convert(tmp_path, {}, cache)["p.md"][0]
    assert "headerlink" not in _convert(tmp_path, {}, cache, permalink=False)["p.md"][0]


class _NavPage:
    def __init__(self, uri: str, html: str) -> None:
        self.file, self.url, self.title, self.content = self, uri.removesuffix(".md") + "/", uri, html
        self.src_uri = uri


def test_the_print_page_and_the_html_fixes_are_reused_only_for_the_same_pages():
    build = Build(serving=True)
    pages = [_NavPage("migrate/a.md", "<h1 id='a'>A</h1><p>one</p>"), _NavPage("migrate/b.md", "<h1 id='b'>B</h1>")]
    part = "about/print/part-1.md"
    first = build.printable(pages, part, "print/")
    assert first == printable(pages, part, "print/") and "one" in first[0]
    assert build.printable(pages, part, "print/") == first
    pages[0].content = "<h1 id='a'>A</h1><p>two</p>"
    second = build.printable(pages, part, "print/")
    assert second == printable(pages, part, "print/") and "two" in second[0] and "one" not in second[0]
    html = '<div class="md-search" data-md-component="search" role="dialog"><p>x</p>'
    assert build.finish(html) == build.finish(html) == finish(html) != html
    assert build.cache.derived.sweep() == (4, 9)  # a part, b's HTML and section, and a fix reused


def test_a_template_is_compiled_once_and_again_when_it_changes():
    import jinja2

    from kb.mkdocs.servecache import TemplateCode

    class Counted(TemplateCode):
        dumps = 0

        def dump_bytecode(self, bucket) -> None:
            Counted.dumps += 1
            super().dump_bytecode(bucket)

    code = Counted()

    def render(source: str) -> str:
        env = jinja2.Environment(loader=jinja2.DictLoader({"t.html": source}), bytecode_cache=code)
        return env.get_template("t.html").render(x=1)

    assert render("a{{ x }}") == "a1" and Counted.dumps == 1
    assert render("a{{ x }}") == "a1" and Counted.dumps == 1  # reused, not compiled again
    assert render("b{{ x }}") == "b1" and Counted.dumps == 2  # the changed source, compiled again


def test_a_snippet_edited_during_a_build_drops_that_builds_conversions(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "p.md").write_text('# P\n\n--8<-- "s.md"\n', "utf-8")
    _config(tmp_path)
    (tmp_path / "snippets" / "s.md").write_text("old\n", "utf-8")
    cache = ServeCache()
    _convert(tmp_path, {}, cache)
    (tmp_path / "snippets" / "s.md").write_text("new\n", "utf-8")  # after the build read it
    cache.sweep()
    assert not cache.converted.entries
