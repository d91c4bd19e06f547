"""Under serve, the search index's compaction (kb/render/searchindex.py, called by kb/mkdocs/build.py)
reuses a section's split only for the same text, title, separator and stop words: the compacted
file is always the one a build without the cache writes."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.mkdocs.build import Build
from kb.render.searchindex import WORDS, compact_file

SEPARATOR = r"[\s\-]+"
LONG = "Run the sample from step one and time each call of the train step; the first call compiles. " * 2


def _index(texts: list[str], separator: str = SEPARATOR, pipeline: tuple[str, ...] = ("stopWordFilter",)) -> str:
    config = {"lang": ["en"], "separator": separator, "pipeline": list(pipeline), "fields": {WORDS: {}}}
    docs = [{"location": f"p/#s{i}", "title": f"S{i}", "text": t} for i, t in enumerate(texts)]
    return json.dumps({"config": config, "docs": docs})


def _both(build: Build, tmp: Path, raw: str) -> str:
    """The file compacted through the serve cache, which must be the one compacted without it."""
    cached, fresh = tmp / "cached.json", tmp / "fresh.json"
    cached.write_text(raw, "utf-8")
    fresh.write_text(raw, "utf-8")
    build.compact_search(cached, lambda _: None)
    compact_file(fresh)
    assert cached.read_bytes() == fresh.read_bytes()
    return cached.read_text("utf-8")


def test_an_edited_section_is_split_again_and_the_others_are_reused(tmp_path):
    build = Build(serving=True)
    _both(build, tmp_path, _index([LONG, LONG + " Tensor", "short"]))
    build.cache.derived.sweep()
    out = _both(build, tmp_path, _index([LONG, LONG + " Gradient", "short"]))
    assert "Gradient" in out and "Tensor" not in out
    assert build.cache.derived.sweep() == (2, 1)


def test_the_separator_and_stop_words_are_part_of_the_key(tmp_path):
    build = Build(serving=True)
    first = _both(build, tmp_path, _index([LONG]))
    assert _both(build, tmp_path, _index([LONG], separator=r"[\s\-;]+")) != first  # "step;" splits now
    late = "Tensor " * 20 + "whom Gradient"  # a stop word past the teaser
    assert "whom" not in _both(build, tmp_path, _index([late]))
    assert "whom" in _both(build, tmp_path, _index([late], pipeline=()))  # no stop word filter: kept


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from([LONG, "short", LONG + " extra", "Other words here. " * 9]), max_size=4)))
def test_never_stale_any_sequence_of_indexes_compacts_as_without_the_cache(tmp_path_factory, indexes):
    build, tmp = Build(serving=True), tmp_path_factory.mktemp("s")
    for texts in indexes:
        _both(build, tmp, _index(texts))
        build.cache.derived.sweep()


class _Index:
    """Material's search index as the serve cache wraps it: entries made from a page, parse counted."""

    def __init__(self) -> None:
        self.entries: list[dict] = []
        self.parses = 0

    def add_entry_from_context(self, page) -> None:
        self.parses += 1
        self.entries.append({"location": page.url, "title": page.title, "text": page.content, "tags": ["t"]})


class _Plugins(dict):
    pass


class _Page:
    def __init__(self, url: str, content: str) -> None:
        self.url, self.title, self.content, self.meta, self.toc = url, url, content, {}, []


def _entries(cache, pages: list[_Page]) -> tuple[list[dict], int]:
    index = _Index()
    cache.cache_search(_Plugins({"material/search": type("P", (), {"search_index": index})()}))
    for page in pages:
        index.add_entry_from_context(page)
    return index.entries, index.parses


def test_a_pages_search_entries_are_reused_until_its_html_changes_and_never_shared():
    from kb.mkdocs.servecache import ServeCache

    cache = ServeCache()
    first, parses = _entries(cache, [_Page("a/", "<p>one</p>"), _Page("b/", "<p>two</p>")])
    assert parses == 2
    first[0]["text"] = "changed by a writer"  # what one build does to an entry is not kept
    again, parses = _entries(cache, [_Page("a/", "<p>one</p>"), _Page("b/", "<p>edited</p>")])
    assert parses == 1 and [e["text"] for e in again] == ["<p>one</p>", "<p>edited</p>"]
