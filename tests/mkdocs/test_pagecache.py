"""Validation with a cache (kb/mkdocs/pagecache.py ProjectCache, as ``mkdocs serve`` runs it): the same
result as without, whatever was edited; unchanged pages are not rendered again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.core.load import ALL_TABLES, TableReads, load_kb
from kb.mkdocs.pagecache import OTHER_FILES, ProjectCache, data_digests, tree_digest
from kb.mkdocs.project import validate_project

FRONT = "---\nreviewed: 2026-11-01\ndescription: A test page about the figure.\n---\n"


def _result(root: Path, cache: ProjectCache | None) -> tuple:
    project = validate_project(root, package=False, cache=cache)
    pages = {uri: (p.rendered, sorted(p.anchors)) for uri, p in project.pages.items()}
    return pages, [str(p) for p in project.problems]


def _set(root: Path, table: str, key: str, value: str) -> None:
    """Replace the first ``key:`` value of ``docs/data/TABLE.yml`` with ``value`` (as written)."""
    path = root / "docs" / "data" / f"{table}.yml"
    text = path.read_text("utf-8")
    start = text.index(f"{key}: ")
    end = text.index("\n", start)
    path.write_text(text[:start] + f"{key}: {value}" + text[end:], "utf-8")


def _set_figure(root: Path, value: str) -> None:
    _set(root, "figures", "value", value)


def test_a_kb_edit_reaches_every_page_that_uses_the_record(mini):
    (mini / "docs" / "a.md").write_text(FRONT + "# A\n\n<!-- kb:figure tput -->\n", "utf-8")
    cache = ProjectCache()
    pages, _ = _result(mini, cache)
    assert "25,700" in pages["a.md"][0] and "25,700" in pages["sub/page.md"][0]
    cache.sweep()
    _set_figure(mini, "31337")
    pages, _ = _result(mini, cache)
    for uri in ("a.md", "sub/page.md"):
        assert "31,337" in pages[uri][0] and "25,700" not in pages[uri][0], uri
    assert _result(mini, cache) == _result(mini, None)


def _set_claim(root: Path, statement: str) -> None:
    _set(root, "claims", "statement", f'"{statement}"')


def test_a_table_edit_renders_again_only_the_pages_that_read_the_table(mini):
    """index.md reads no table, sub/page.md the figures (kb:figure), c.md the claims (kb:claim)."""
    (mini / "docs" / "c.md").write_text(FRONT + "# C\n\n<!-- kb:claim dev -->\n", "utf-8")
    cache = ProjectCache()
    _result(mini, cache)
    assert cache.sweep() == (0, 3)
    _set_claim(mini, "The device is `tpu`, edited.")
    pages, _ = _result(mini, cache)
    assert cache.sweep() == (2, 1)  # only c.md rendered again
    assert "edited" in pages["c.md"][0]
    _set_figure(mini, "31337")
    pages, _ = _result(mini, cache)
    assert cache.sweep() == (2, 1)  # only sub/page.md
    assert "31,337" in pages["sub/page.md"][0]
    assert _result(mini, cache) == _result(mini, None)


def test_an_unchanged_project_renders_no_page_again(mini):
    cache = ProjectCache()
    first = _result(mini, cache)
    assert cache.sweep() == (0, 2)
    assert _result(mini, cache) == first
    assert cache.sweep() == (2, 0)
    (mini / "docs" / "index.md").write_text(FRONT + "# Home, edited\n", "utf-8")
    _result(mini, cache)
    assert cache.sweep() == (1, 1)


def test_a_folder_digest_sees_every_byte_and_never_opens_a_fifo(tmp_path):
    (tmp_path / "a.yml").write_text("x: 1\n", "utf-8")
    before = tree_digest(tmp_path)
    (tmp_path / "a.yml").write_text("x: 2\n", "utf-8")
    assert tree_digest(tmp_path) != before

    os.mkfifo(tmp_path / "pipe.yml")
    assert tree_digest(tmp_path) != before  # returns: the FIFO is never opened


def test_a_table_digest_changes_with_its_own_files_only(mini):
    data = mini / "docs" / "data"
    whole, tables = data_digests(data, ["claims", "figures"])
    assert whole == tree_digest(data)
    (data / "claims.extra.yml").write_text("[]\n", "utf-8")  # a part of the claims table
    (data / "notes.txt").write_text("x\n", "utf-8")  # no table's: every render depends on it
    after = data_digests(data, ["claims", "figures"])[1]
    assert after["claims"] != tables["claims"] and after["figures"] == tables["figures"]
    assert after[OTHER_FILES] != tables[OTHER_FILES]


def test_table_reads_note_what_is_read_and_going_over_all_tables(mini):
    reads = TableReads.of(load_kb(mini / "docs" / "data"))
    reads.get("claims", "dev")
    assert reads.read.names == {"claims"}
    _ = [len(records) for records in reads.tables.values()]
    assert ALL_TABLES in reads.read.names


BODIES = [
    "# T\n",
    "# T\n\n<!-- kb:figure tput -->\n",
    "# T\n\n## Part\n\n<!-- kb:claim dev -->\n",
    "# T\n\n<!-- kb:nope -->\n",
]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["index.md", "sub/page.md"]),
            st.sampled_from(BODIES),
            st.sampled_from(["1", "2"]),
            st.sampled_from(["The device is `tpu`.", "It is `tpu`, edited."]),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_never_stale_validation_with_the_cache_is_validation_without(mini, edits):
    """Any sequence of page and KB edits (of the figures and the claims, which a page's render
    may or may not read): the cached validation reports and renders exactly what a fresh one does."""
    cache = ProjectCache()
    for page, body, value, statement in edits:
        (mini / "docs" / page).write_text(FRONT + body, "utf-8")
        _set_figure(mini, value)
        _set_claim(mini, statement)
        assert _result(mini, cache) == _result(mini, None)
        cache.sweep()


@pytest.mark.slow  # the real project and its wheels
def test_the_framework_check_is_reused_only_for_the_same_pins_and_wheels(tmp_path, real_wheels):
    """The real project, its cached wheels linked in: a frameworks.pin edit reaches the result."""
    from conftest import ROOT, copy_project

    root = copy_project(tmp_path / "p")
    wheels = root / ".cache" / "wheels"
    wheels.mkdir(parents=True)
    for wheel in (ROOT / ".cache" / "wheels").resolve().iterdir():
        (wheels / wheel.name).symlink_to(wheel)

    def result(cache: ProjectCache | None) -> tuple:
        project = validate_project(root, cache=cache)
        return [str(p) for p in project.problems], [n for n in project.notes if "framework" in n]

    cache = ProjectCache()
    first = result(cache)
    # what another build writes beside the wheels meanwhile (a download, an index) is no input
    (wheels / ".download.x").mkdir()
    (wheels / "torch_tpu-0.0.0-py3-none-any.whl.1-2.index.json").write_text("{}", "utf-8")
    assert result(cache) == first == result(None)
    assert cache.checks.sweep() == (1, 1)
    pins = root / "frameworks.pin"
    pins.write_text(pins.read_text("utf-8").replace("accelerate==1.16.0\n", ""), "utf-8")
    edited = result(cache)
    assert edited == result(None) and edited != first
    assert any("accelerate==1.16.0" in p for p in edited[0])
