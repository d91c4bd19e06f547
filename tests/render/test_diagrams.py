"""Diagrams (kb/render/diagrams.py): layout, escaping, the text version, and every check with its line."""

import re
import textwrap

import pytest

from conftest import ROOT, write_tables
from kb.core.diagramlayout import WIDTH, check, layout, words, wrap
from kb.core.load import load_kb, read_kb
from kb.core.schema import Diagram
from kb.core.validate import validate_kb
from kb.render.diagrams import render
from kb.render.render import Ctx, render_markdown

GOOD = """\
    - id: flow
      title: "A <b>flow</b> & more"
      alt: "Two steps; the second is HBM."
      columns: 2
      nodes:
        - {id: ask, kind: question, label: "Does it `run`?", rests_on: {table: claims, id: dev}, row: 0, col: 0}
        - {id: term, kind: answer, note: "`x=1`; then go", rests_on: {table: glossary, id: hbm}, row: 0, col: 1}
        - {id: last, label: "<script>alert(1)</script>", rests_on: {table: claims, id: dev}, row: 1, col: 0, span: 2}
      edges:
        - {from: ask, to: term, label: "yes"}
        - {from: ask, to: last, label: "no"}
      verified: 2026-11-30
      checked_against: torch-tpu==0.2.0
"""


def kb_with(tmp_path, diagrams: str = GOOD):
    data = write_tables(tmp_path / "docs" / "data", diagrams=textwrap.dedent(diagrams))
    return load_kb(data, shown_root=tmp_path)


def problems_for(tmp_path, old: str, new: str) -> list[str]:
    text = GOOD.replace(old, new)
    assert text != GOOD, f"the test's replacement of {old!r} changed nothing"
    kb = kb_with(tmp_path, text)
    return [f"{p.path}:{p.line}: {p.message}" for p in check(kb)]


def test_the_good_diagram_has_no_problem_and_renders_one_block(tmp_path):
    kb = kb_with(tmp_path)
    assert check(kb) == [] and validate_kb(kb) == []
    out, problems = render_markdown("<!-- kb:diagram flow -->", Ctx(kb, "page.md"), "docs/page.md")
    assert problems == []
    block = out.strip()
    assert block.startswith('<figure class="kb-diagram" id="diagram-flow">') and "\n" not in block
    assert 'role="img" aria-labelledby="diagram-flow-title diagram-flow-desc"' in block
    assert '<desc id="diagram-flow-desc">Two steps; the second is HBM.</desc>' in block
    # The scroller takes the keyboard and is named; the text version is open, for a phone.
    assert re.search(r'<div class="kb-diagram__scroll" tabindex="0" role="region" aria-label="[^"]+: drawing">', block)
    assert '<details class="kb-diagram__text" open>' in block and 'class="kb-diagram__hint"' in block


def test_a_box_without_label_shows_its_records_name_in_the_drawing_and_the_text(tmp_path):
    kb = kb_with(tmp_path)
    out = render(kb, kb.rows("diagrams", Diagram)[0].model)
    assert out.count(">HBM</text>") == 1
    assert "<li>HBM (<code>x&#61;1</code>; then go)</li>" in out


def test_hostile_text_is_escaped_everywhere(tmp_path):
    out = render(kb := kb_with(tmp_path), kb.rows("diagrams", Diagram)[0].model)
    assert "<script" not in out and "<b>" not in out
    assert "&#60;script&#62;" in out or "&lt;script&gt;" in out


def test_code_and_its_punctuation_stay_together():
    got = [(w.text, w.code, w.glued) for w in words("`X=1`; the `f(a)`, ok")]
    assert got == [
        ("X=1", True, False),
        (";", False, True),
        ("the", False, False),
        ("f(a)", True, False),
        (",", False, True),
        ("ok", False, False),
    ]


@pytest.mark.parametrize("room", [100.0, 140.0, 250.0])
def test_wrapped_lines_fit_their_room(room):
    from kb.core.diagramlayout import width_of

    lines = wrap("Does asynchronous execution hide where an error or `NaN` comes from, today?", 14, room, "n")
    assert all(width_of(line, 14) <= room for line in lines)
    assert " ".join(w.text for line in lines for w in line).replace(" ,", ",") == (
        "Does asynchronous execution hide where an error or NaN comes from, today?"
    )


def test_boxes_stay_inside_the_drawing(tmp_path):
    kb = kb_with(tmp_path)
    boxes, height = layout(kb, kb.rows("diagrams", Diagram)[0].model)
    assert all(0 <= b.x and b.x + b.w <= WIDTH and b.y + b.h <= height for b in boxes)
    assert boxes[2].y > boxes[0].y + boxes[0].h  # row 1 below row 0


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("id: hbm}", "id: nope}", r"diagrams\.yml:7: diagrams\[0\]\.nodes\[1\]\.rests_on: no glossary record 'nope'"),
        ("{from: ask, to: last", "{from: ask, to: lost", r":11: diagrams\[0\]\.edges\[1\]\.to: no node 'lost'"),
        (
            "{from: ask, to: term",
            "{from: term, to: ask",
            r":10: diagrams\[0\]\.edges\[0\]: 'term' -> 'ask' points up or left",
        ),
        ("row: 1, col: 0, span: 2", "row: 0, col: 0.5, span: 1", r":8: .*'last' overlaps 'ask' in row 0"),
        ("{id: last,", "{id: ask,", r":8: .*node id 'ask' is also nodes\[0\]"),
        (
            "then go",
            "then_a_very_long_single_word_that_never_fits",
            r":7: diagrams\[0\]\.nodes\[1\]\.note: 'term': 'then_a_very_long_single_word_that_never_fits' is \d+ px wide",
        ),
        (
            "row: 1, col: 0, span: 2",
            "row: 1, col: 1, span: 2",
            r":8: diagrams\[0\]\.nodes\[2\]\.span: 'last': col \+ span is past the last of 2 columns",
        ),
    ],
)
def test_each_problem_names_the_file_line_and_field(tmp_path, old, new, expected):
    found = problems_for(tmp_path, old, new)
    assert any(re.search(expected, p) for p in found), found


def test_a_label_less_box_on_a_nameless_record_is_a_problem(tmp_path):
    found = problems_for(
        tmp_path,
        'note: "`x=1`; then go", rests_on: {table: glossary, id: hbm}',
        'note: "x", rests_on: {table: claims, id: dev}',
    )
    assert any("node 'term' has no label and its record has no name" in p for p in found), found


def test_unknown_diagram_is_a_problem_at_the_page_line(tmp_path):
    kb = kb_with(tmp_path)
    _, problems = render_markdown("x\n<!-- kb:diagram nope -->", Ctx(kb, "page.md"), "docs/page.md", first_line=3)
    assert [(p.line, p.message) for p in problems] == [
        (4, "kb:diagram: unknown diagrams id 'nope' (expected an id from docs/data/diagrams.yml)")
    ]


def test_the_handbooks_diagrams_check_clean_and_each_is_on_a_page():
    kb, problems = read_kb(ROOT / "docs" / "data", ROOT)
    assert problems == [] and check(kb) == []
    pages = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.md"))
    for rec in kb.rows("diagrams", Diagram):
        assert f"<!-- kb:diagram {rec.id} -->" in pages, f"diagram '{rec.id}' is on no page"
        assert render(kb, rec.model).count("<rect ") == len(rec.model.nodes)
