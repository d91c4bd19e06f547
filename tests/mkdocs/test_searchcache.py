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
