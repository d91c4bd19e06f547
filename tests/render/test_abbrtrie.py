"""kb.render.abbrtrie: the abbr tooltips matched by a trie-shaped pattern find what the abbr
extension's own pattern finds, and a page converts to the same HTML with it as without it."""

from __future__ import annotations

import re
from types import SimpleNamespace

import markdown
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT
from kb.mkdocs.build import Build
from kb.render import abbrtrie
from kb.render.abbrtrie import TrieAbbrExtension, abbr_pattern, flat_pattern
from kb.render.tablehtml import StashTablesExtension

# Word and non-word characters, a non-ASCII letter and digit, and characters a pattern escapes.
CHARS = "ab_AB1 .-+*()|?\\é٣"
keys = st.lists(st.text(CHARS, min_size=1, max_size=5), min_size=1, max_size=12, unique=True)


def spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


@settings(max_examples=400, deadline=None)
@given(keys, st.lists(st.text(CHARS, max_size=6), max_size=10))
def test_the_trie_pattern_finds_the_spans_of_the_flat_one(terms: list[str], parts: list[str]) -> None:
    """Texts built from the keys themselves and other characters: the shadowed cases (a key that
    begins another, a key ending inside a word) come up often."""
    text = "".join(p + (terms[i % len(terms)] if i % 2 else "") for i, p in enumerate(parts))
    found = tuple(terms)
    assert spans(abbr_pattern(found), text) == spans(re.compile(flat_pattern(found)), text)


def test_the_flat_pattern_is_the_extensions_own() -> None:
    """The reference the trie is held to is what the abbr extension compiles."""
    md = markdown.Markdown(extensions=["abbr"])
    md.convert("TPU and XLA.\n\n*[TPU]: Tensor Processing Unit\n\n*[XLA]: Accelerated Linear Algebra\n")
    assert md.treeprocessors["abbr"].RE.pattern == flat_pattern(("TPU", "XLA"))


def test_a_trie_too_deep_to_nest_falls_back_to_the_flat_pattern(monkeypatch) -> None:
    chain = tuple("x" * n for n in range(1, 8))  # each key begins the next: a group per key
    monkeypatch.setattr(abbrtrie, "MAX_DEPTH", 3)
    abbr_pattern.cache_clear()
    try:
        assert abbr_pattern(chain).pattern == flat_pattern(chain)
        text = "xxx xxxxxxxxx x"
        assert spans(abbr_pattern(chain), text) == spans(re.compile(flat_pattern(chain)), text)
    finally:
        abbr_pattern.cache_clear()


WORDS = ["TPU", "TPU pod", "XLA", "C++", ".pt", "HBM", "chip", "a_b", "é1", "pod"]
blocks = st.lists(
    st.tuples(
        st.sampled_from(["", "# ", "- ", "> ", "| a | b |\n| --- | --- |\n| "]),
        st.lists(
            st.tuples(st.sampled_from(WORDS + ["the", "x"]), st.sampled_from([" ", ", ", "*", "**", "`", "]", ". "])),
            max_size=12,
        ),
    ),
    min_size=1,
    max_size=6,
)


def page(body: list[tuple[str, list[tuple[str, str]]]], defined: list[str]) -> str:
    lines = [lead + "".join(word + sep for word, sep in words) for lead, words in body]
    lines += [f"*[{term}]: {term} spelled out" for term in defined]
    return "\n\n".join(lines) + "\n"


@settings(max_examples=200, deadline=None)
@given(blocks, st.lists(st.sampled_from(WORDS), unique=True, max_size=len(WORDS)))
def test_a_page_converts_to_the_same_html_with_the_trie(body, defined) -> None:
    """Headings, lists, quotes, tables and inline markup: abbreviations in the text and in the
    tail of every element, against the extension alone."""
    text = page(body, defined)
    extensions = ["abbr", "tables", "md_in_html", "attr_list"]
    plain = markdown.Markdown(extensions=extensions).convert(text)
    assert markdown.Markdown(extensions=[*extensions, TrieAbbrExtension()]).convert(text) == plain


def test_the_trie_replaces_the_extensions_tree_processor_and_shares_its_terms() -> None:
    md = markdown.Markdown(extensions=["abbr", TrieAbbrExtension()])
    assert isinstance(md.treeprocessors["abbr"], abbrtrie.TrieAbbrTreeprocessor)
    assert md.treeprocessors["abbr"].abbrs is md.parser.blockprocessors["abbr"].abbrs
    assert "abbr" not in markdown.Markdown(extensions=[TrieAbbrExtension()]).treeprocessors


def test_its_repr_is_the_same_in_every_build() -> None:
    """The serve cache keys each page's conversion by the Markdown settings' repr."""
    assert repr(TrieAbbrExtension()) == repr(TrieAbbrExtension())


def test_the_build_adds_it_to_mkdocs_extensions() -> None:
    config = SimpleNamespace(
        config_file_path=str(ROOT / "mkdocs.yml"),
        repo_url=None,
        edit_uri=None,
        site_url=None,
        markdown_extensions=["abbr"],
    )
    Build().check_config(config)
    assert [type(e) for e in config.markdown_extensions[1:]] == [TrieAbbrExtension, StashTablesExtension]
