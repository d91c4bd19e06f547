"""The compacted search index: every word lunr would find stays in its section, only repeats,
markup and stop words go, and a malformed index fails with a clear error."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kb.render.searchindex import (
    TEASER,
    WORDS,
    SearchIndexError,
    compact_file,
    compact_index,
    material_worker,
    split_text,
    stop_words,
)

# mkdocs.yml's separator (the test holds the code to it, not to the file's current value)
SEPARATOR = r"""[\s\u200b\-_,:;!?=\[\]()"`/'’|\\{}#$%*@~^–—…·×]+|\.(?!\d)|&[lg]t;|(?!\b)(?=[A-Z][a-z])"""
SEP = re.compile(SEPARATOR)
STOP = stop_words()


def words_of(text: str) -> set[str]:
    return {w.lower() for w in SEP.split(re.sub(r"<[^>]+>", " ", text)) if w} - STOP


def found(word: str, words: set[str]) -> bool:
    """Material makes every query word a prefix: a word is found through any word it starts."""
    return any(w.startswith(word) for w in words)


def index(*docs: dict) -> dict:
    config = {"lang": ["en"], "separator": SEPARATOR, "pipeline": ["stopWordFilter"], "fields": {WORDS: {}}}
    return {"config": config, "docs": list(docs)}


LONG = (
    "<p>Run the TPU sample from step 1 and time each call of <code>train_step</code>. The first call "
    "includes the XLA compile and is slow.</p><p>The second call reuses the compiled graph; "
    "recompiles show up as slow steps. Set <code>TORCH_TPU_DEFER_AND_FUSE=1</code> and compare "
    "DeferAndFuse with torch.compile 2.13.</p>"
)


def test_stop_words_are_read_from_materials_worker():
    assert {"the", "and", "of"} <= STOP and "tpu" not in STOP


def test_materials_search_worker_is_the_one_its_page_config_names():
    """overrides/main.html starts the handbook's worker in the head with this path of Material's
    worker: the same file Material's base.html puts in each page's config."""
    import material

    templates = Path(material.__file__).parent / "templates"
    path = material_worker()
    assert re.fullmatch(r"assets/javascripts/workers/search\.[0-9a-f]+\.min\.js", path), path
    assert (templates / path).is_file()
    assert f'"search": "{path}"' in (templates / "base.html").read_text(encoding="utf-8")


def test_a_long_text_becomes_a_teaser_and_its_other_words_once():
    teaser, words = split_text(LONG, "8. Verify", SEP, STOP)
    assert len(teaser) <= TEASER + 2 and teaser.endswith(" …") and "<" not in teaser
    assert teaser.startswith("Run the TPU sample from step 1")
    said = words.split()
    assert len(said) == len({w.lower() for w in said}), "a word repeated"
    assert not {w.lower() for w in said} & STOP
    assert "DEFER" in said and "2.13" in said and "Defer" not in said  # DeferAndFuse: the same lunr token


def test_every_word_stays_findable_in_its_section():
    teaser, words = split_text(LONG, "Verify", SEP, STOP)
    kept = words_of(teaser) | words_of(words) | words_of("Verify")
    missing = [w for w in words_of(LONG) if not found(w, kept)]
    assert not missing


@given(
    st.lists(
        st.sampled_from(["recompile", "recompiles", "TPU", "tpu_dist", "v7", "x.y", "a", "the", "Run"]), max_size=80
    )
)
def test_no_word_is_lost_for_any_text(parts):
    text = " ".join(parts)
    teaser, words = split_text(text, "", SEP, STOP)
    kept = words_of(teaser) | words_of(words)
    assert all(found(w, kept) for w in words_of(text))


def test_a_short_text_is_kept_as_written_and_tags_stay_on_pages_only():
    out = compact_index(
        index(
            {"location": "a/", "title": "A", "text": "<p>Short.</p>", "tags": ["debugging"]},
            {"location": "a/#b", "title": "B", "text": LONG, "tags": ["debugging"]},
        )
    )
    page, section = out["docs"]
    assert page == {"location": "a/", "title": "A", "text": "Short.", "tags": ["debugging"]}
    assert "tags" not in section and section[WORDS]
    assert compact_index(out) == out  # compacting twice changes nothing


def test_an_index_without_the_words_field_or_config_fails_clearly(tmp_path):
    bare = index()
    bare["config"]["fields"] = {}
    with pytest.raises(SearchIndexError, match="fields has no 'words'"):
        compact_index(bare)
    with pytest.raises(SearchIndexError, match="usable config"):
        compact_index({"docs": []})
    path = tmp_path / "search_index.json"
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(SearchIndexError, match="not a search index"):
        compact_file(path)
    path.write_text("{", encoding="utf-8")
    with pytest.raises(SearchIndexError, match="not JSON"):
        compact_file(path)


def test_compact_file_rewrites_in_place_and_reports_sizes(tmp_path):
    path = tmp_path / "search_index.json"
    path.write_text(json.dumps(index({"location": "a/#b", "title": "B", "text": LONG * 5})), encoding="utf-8")
    before, after = compact_file(path)
    assert after < before / 3 and path.stat().st_size == after
    assert json.loads(path.read_text(encoding="utf-8"))["docs"][0][WORDS]


def test_the_printable_copy_drops_the_search_attributes():
    from types import SimpleNamespace

    from kb.mkdocs.build import print_sections

    page = SimpleNamespace(
        file=SimpleNamespace(src_uri="a.md"),
        url="a/",
        title="A",
        content='<p class="kb-banner" data-search-exclude="1">Applies to</p><a data-search-exclude="1" href="#x">x</a>',
    )
    (section,) = print_sections([page])
    assert section.html == '<p class="kb-banner">Applies to</p><a href="#x">x</a>'
