"""kb.render.tablehtml: the glossary's table written as HTML converts to the HTML Markdown makes of
its Markdown table (tooltips included), in a build (raw block stored whole) and in plain MkDocs."""

from __future__ import annotations

import json
import re
import tempfile
from functools import lru_cache
from pathlib import Path

import markdown
from hypothesis import given, settings
from hypothesis import strategies as st
from mkdocs.config import load_config

from conftest import ROOT, write_tables
from kb.core.load import KB, load_kb, read_kb
from kb.render import render
from kb.render.abbrtrie import TrieAbbrExtension
from kb.render.tablehtml import StashTables, StashTablesExtension, Tooltips, cell_html, outside_tables

PAGE = "# Glossary\n\nHBM, TPU pods and C++ in prose.\n"


@lru_cache(maxsize=1)
def _site_markdown() -> tuple[list[object], dict[str, object]]:
    config = load_config(str(ROOT / "mkdocs.yml"))
    return list(config.markdown_extensions), dict(config.mdx_configs)


def convert(text: str, stash: bool) -> str:
    """``text`` as the site's Markdown settings convert it, with the build's extensions (``stash``)
    or as plain MkDocs does (kb render's output)."""
    extensions, configs = _site_markdown()
    extra = [TrieAbbrExtension(), StashTablesExtension()] if stash else []
    return str(markdown.Markdown(extensions=[*extensions, *extra], extension_configs=configs).convert(text))


def glossary_kb(folder: Path, terms: list[tuple[str, str | None, str]]) -> KB:
    records = "".join(
        f"- id: t{i}\n  term: {json.dumps(term)}\n"
        + (f"  expansion: {json.dumps(expansion)}\n" if expansion else "")
        + f"  definition: {json.dumps(definition)}\n  verified: 2026-11-01\n  checked_against: torch-tpu==0.2.0\n"
        for i, (term, expansion, definition) in enumerate(terms)
    )
    return load_kb(write_tables(folder / "docs" / "data", glossary=records), shown_root=folder)


def routes(kb: KB, after: str = "") -> tuple[str, str, str, str]:
    """The page's Markdown with the HTML table, and the page converted from the Markdown table, from
    the HTML table in a build, and from the HTML table in plain MkDocs (``after``: what follows the table)."""
    ctx = render.Ctx(kb, "reference/glossary.md")
    header, rows = render.table_rows(ctx, "glossary", render.select(kb, "glossary", {}))
    as_markdown = PAGE + render._kb_table("glossary", header, rows) + after
    as_html = PAGE + render._glossary_table(kb, header, rows) + after
    reference = convert(as_markdown + render.abbreviations(kb, as_markdown), stash=False)
    page = as_html + render.abbreviations(kb, as_html)
    return as_html, reference, convert(page, stash=True), convert(page, stash=False)


def assert_same(kb: KB, written: bool = True) -> None:
    as_html, reference, built, plain = routes(kb)
    assert ('<div class="kb-table kb-table--glossary kb-table--cards">\n<table>' in as_html) is written
    assert built == reference
    assert plain == reference


def test_the_handbooks_glossary_converts_to_the_same_html() -> None:
    kb, problems = read_kb(ROOT / "docs" / "data")
    assert not problems
    assert_same(kb)


AWKWARD = [
    ("TPU", "Tensor Processing Unit", "A chip; a TPU pod holds many TPUs, see `TPU pod` and XLA_FLAGS."),
    ("TPU pod", None, 'Many TPU chips on one network, "a pod" for short, & more <b>.'),
    ("pod", None, "A pod of TPU's: TPU pod TPU."),
    ("C++", None, "A language; C++ code calls XLA."),
    ("XLA", "Accelerated Linear Algebra", 'The compiler: "XLA" compiles HLO; see 1. TPU'),
    ("Meaning", None, "A word the table's header shows: Meaning, Stands for."),
    ("é1", None, "A term of a non-ASCII letter: é1 and é12 and _é1."),
    ("v5e", "TPU v5e", "- a chip (TPU v5e) with HBM"),
    ("HBM", "High Bandwidth Memory", "Memory; tip: ''"),
]


def test_an_awkward_glossary_converts_to_the_same_html(tmp_path: Path) -> None:
    """Phrases that begin with another term, a term in the header and the labels, references in
    terms and definitions, inline code, quotes and markup in the text and the tips."""
    assert_same(glossary_kb(tmp_path, AWKWARD))


def test_text_after_the_table_converts_to_the_same_html(tmp_path: Path) -> None:
    """In a build, the same HTML; in plain MkDocs (kb render's output), whose raw-HTML preprocessor
    reads the block, a blank line after it (the glossary page ends with its table)."""
    as_html, reference, built, plain = routes(glossary_kb(tmp_path, AWKWARD), "\nA TPU pod.\n\n## After\n")
    assert "</table>\n</div>\n<p>A" in reference
    assert built == reference
    assert plain == reference.replace("</table>\n</div>\n<p>A", "</table>\n</div>\n\n<p>A")


def test_a_cell_with_more_than_plain_text_keeps_the_markdown_table(tmp_path: Path) -> None:
    """A term with inline code is bold around a tag: Markdown's business, so the table stays Markdown."""
    kb = glossary_kb(tmp_path, [*AWKWARD, ("torch`xla`", None, "Inline code in a term.")])
    assert_same(kb, written=False)


WORDS = ["TPU", "TPU pod", "pod", "C++", "XLA", "é1", "Meaning", "a_b", "HBM"]
GLUE = [" ", ", ", "'", '"', "`", "&", ": ", "_", "<", " - ", "1. "]
texts = st.lists(st.tuples(st.sampled_from(WORDS + ["the", "x"]), st.sampled_from(GLUE)), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(WORDS), st.one_of(st.none(), texts), texts),
        min_size=1,
        max_size=6,
        unique_by=lambda t: t[0],
    )
)
def test_any_glossary_of_these_words_converts_to_the_same_html(entries) -> None:
    terms = [
        (
            term,
            "".join(w + g for w, g in expansion).strip() or None if expansion else None,
            "".join(w + g for w, g in d).strip(),
        )
        for term, expansion, d in entries
    ]
    with tempfile.TemporaryDirectory() as tmp:
        assert_same(glossary_kb(Path(tmp), terms))


def test_cells_it_does_not_know_are_left_to_markdown() -> None:
    tips = Tooltips(["*[TPU]: Tensor Processing Unit"], lambda text: {"TPU"} if "TPU" in text else set())
    assert cell_html('<span class="kb-label">Meaning:</span> A TPU&#39;s **chip**', tips) == (
        '<span class="kb-label">Meaning:</span> A <abbr title="Tensor Processing Unit">TPU</abbr>&#39;s <strong>chip</strong>'
    )
    for cell in ["a *b*", "**<code>x</code>**", "** x**", "**a", "a_b", "[a](b)", '<a href="x">a</a>', "&amp;", "a\\b"]:
        assert cell_html(cell, tips) is None, cell


BLOCK = '<div class="kb-table kb-table--x kb-table--cards">\n<table>\n<tbody>\n<tr>\n<td>a</td>\n</tr>\n</tbody>\n</table>\n</div>'


def test_only_a_written_block_after_a_blank_line_is_stored_whole() -> None:
    md = markdown.Markdown()
    stash = StashTables(md)
    assert stash.run(["text", "", *BLOCK.split("\n"), ""]) == ["text", "", md.htmlStash.get_placeholder(0), ""]
    odd = [
        ["text", *BLOCK.split("\n")],  # no blank line before
        ["", *BLOCK.split("\n"), "text"],  # no blank line after
        ["", *BLOCK.replace("<td>a</td>", "<td><div>a</td>").split("\n"), "</div>", ""],  # a div inside
        ["", *BLOCK.replace("<td>a</td>", "a").split("\n"), ""],  # a line that is no row or cell
        ["", *BLOCK.split("\n")[:-1], ""],  # never closed
    ]
    for lines in odd:
        assert StashTables(markdown.Markdown()).run(list(lines)) == lines


def test_blocks_it_leaves_convert_as_markdown_converts_them() -> None:
    for text in [
        f"<div markdown>\n\n{BLOCK}\n\n</div>\n",
        f"Text\n{BLOCK}\n",
        f"{BLOCK.replace('<td>a</td>', '<td><div>a</td>')}\n</div>\n\n*[a]: A tip\n\na\n",
        f"```\n\n{BLOCK}\n\n```\n",
    ]:
        assert convert(text, stash=True) == convert(text, stash=False), text


def test_the_terms_of_a_written_table_need_no_tooltip_line(tmp_path: Path) -> None:
    """Markdown never looks into the raw HTML, so only the terms outside it get a line."""
    kb = glossary_kb(tmp_path, AWKWARD)
    as_html = routes(kb)[0]
    assert outside_tables(as_html) == PAGE + "\n\n\n\n"
    lines = render.abbreviations(kb, as_html)
    assert re.findall(r"^\*\[(.*?)\]", lines, re.M) == ["TPU", "HBM"]  # "TPU pods", "C++ in": no words
    assert len(render._used_terms(tuple(t for t, _, _ in AWKWARD), as_html)) > 5  # the table's, had it been read
