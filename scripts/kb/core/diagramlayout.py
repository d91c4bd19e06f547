"""Where a diagram's boxes go and whether it can be drawn: words wrapped into boxes on a grid, sized
by generous glyph widths, and every record of ``docs/data/diagrams.yml`` checked with its file and
line (unknown records or nodes, overlaps, arrows that point back, words too wide). Validation runs
``check``; kb/render/diagrams.py draws the SVG from ``layout``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import Problem
from .escape import one_line
from .schema import Diagram, DiagramEdge, DiagramNode

if TYPE_CHECKING:  # pragma: no cover
    from .load import KB, Record

WIDTH = 600  # viewBox width; kb.css keeps the drawing at least 480 px wide (scrolling in its box)
_LABEL, _NOTE = 15, 14  # font sizes in px: at 480 px wide they are 12 and 11.2 px on screen
LABEL_LH, NOTE_LH = 19, 17
_PAD, ROW_GAP, _TOP = 9, 40, 2
# Generous average glyph widths (px per character) so that text never overflows its box.
_SANS, _MONO = 0.56, 0.62


@dataclass(frozen=True)
class Word:
    text: str
    code: bool
    glued: bool = False  # no space before it: "`X`;" is the code X and then ";"


@dataclass
class Box:
    node: DiagramNode
    label: list[list[Word]]
    note: list[list[Word]]
    x: float
    w: float
    y: float = 0
    h: float = 0


class DiagramError(ValueError):
    """A diagram that cannot be drawn; ``field`` is the path of the record field at fault."""

    def __init__(self, message: str, field: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.field = field


def words(value: str) -> list[Word]:
    """Split prose into words at spaces; a pair of backticks marks code (as KB prose writes it)."""
    parts = one_line(value).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick is literal
        parts[-2:] = [parts[-2] + "`" + parts[-1]]
    out: list[Word] = []
    space_before = True
    for i, part in enumerate(parts):
        for j, piece in enumerate(part.split(" ")):
            space_before = space_before or j > 0
            if piece:
                out.append(Word(piece, i % 2 == 1, glued=bool(out) and not space_before))
                space_before = False
    return out


def _units(line: list[Word]) -> list[list[Word]]:
    """A line's words grouped so that glued words never part."""
    units: list[list[Word]] = []
    for w in line:
        if w.glued and units:
            units[-1].append(w)
        else:
            units.append([w])
    return units


def width_of(line: list[Word], size: int) -> float:
    chars = sum(len(w.text) * (_MONO if w.code else _SANS) for w in line)
    spaces = sum(1 for w in line[1:] if not w.glued)
    return (chars + _SANS * spaces) * size


def wrap(value: str, size: int, room: float, where: str) -> list[list[Word]]:
    """Greedy word wrap into lines no wider than ``room``; a word that can never fit is an error."""
    lines: list[list[Word]] = []
    for unit in _units(words(value)):
        wide = width_of(unit, size)
        if wide > room:
            shown = "".join(w.text for w in unit)
            raise DiagramError(
                f"{where}: '{shown}' is {wide:.0f} px wide, its box leaves {room:.0f} px "
                "(expected a shorter word, a wider box (span) or fewer columns)"
            )
        if lines and width_of([*lines[-1], *unit], size) <= room:
            lines[-1] += unit
        else:
            lines.append([*unit])
    return lines


def record_name(kb: KB, node: DiagramNode) -> str | None:
    rec = kb.get(node.rests_on.table, node.rests_on.id)
    if rec is None:
        return None
    for field in ("name", "term"):
        value = getattr(rec.model, field, None)
        if isinstance(value, str):
            return value
    return None


def label_of(kb: KB, node: DiagramNode) -> str:
    label = node.label or record_name(kb, node)
    if label is None:
        raise DiagramError(
            f"node '{node.id}' has no label and its record has no name "
            "(expected label:, or rests_on a mode or glossary record)"
        )
    return label


def layout(kb: KB, diagram: Diagram) -> tuple[list[Box], float]:
    """Place every box on the grid and size the rows; returns the boxes and the drawing's height."""
    cell = WIDTH / diagram.columns
    along = [e for e in diagram.edges if _same_row(diagram, e)]  # arrows along a row need room
    inset = 18 if any(e.label for e in along) else 12 if along else 6
    boxes = []
    for i, node in enumerate(diagram.nodes):
        x, w = node.col * cell + inset, node.span * cell - 2 * inset
        room = w - 2 * _PAD
        where = f"'{node.id}'"
        try:
            label = wrap(label_of(kb, node), _LABEL, room, where)
        except DiagramError as exc:
            raise DiagramError(str(exc), ("nodes", i, "label" if node.label else "rests_on")) from None
        try:
            note = wrap(node.note, _NOTE, room, where) if node.note else []
        except DiagramError as exc:
            raise DiagramError(str(exc), ("nodes", i, "note")) from None
        if x + w > WIDTH + 0.01:
            raise DiagramError(
                f"{where}: col + span is past the last of {diagram.columns} columns", ("nodes", i, "span")
            )
        boxes.append(Box(node, label, note, x, w))
    y = float(_TOP)
    for row in sorted({b.node.row for b in boxes}):
        in_row = [b for b in boxes if b.node.row == row]
        h = max(2 * _PAD + len(b.label) * LABEL_LH + len(b.note) * NOTE_LH for b in in_row)
        for b in in_row:
            b.y, b.h = y, h
        y += h + ROW_GAP
    return boxes, y - ROW_GAP + _TOP + 2


def _same_row(diagram: Diagram, edge: DiagramEdge) -> bool:
    rows = {n.id: n.row for n in diagram.nodes}
    return rows.get(edge.source) == rows.get(edge.target)


def check(kb: KB) -> list[Problem]:
    """Every diagram record that cannot be drawn: unknown records or nodes, overlaps, words too wide."""
    problems: list[Problem] = []
    for rec in kb.rows("diagrams", Diagram):
        for field, message in _diagram_problems(kb, rec):
            problems.append(Problem(rec.path, rec.line_of(*field), f"{rec.where(*field)}: {message}"))
    return problems


def _diagram_problems(kb: KB, rec: Record[Diagram]) -> list[tuple[tuple[str | int, ...], str]]:
    d = rec.model
    found: list[tuple[tuple[str | int, ...], str]] = []
    seen: dict[str, int] = {}
    for i, node in enumerate(d.nodes):
        ref = node.rests_on
        if kb.get(ref.table, ref.id) is None:
            found.append(
                (
                    ("nodes", i, "rests_on"),
                    f"no {ref.table} record '{ref.id}' (expected an id from docs/data/{ref.table}.yml)",
                )
            )
        if node.id in seen:
            found.append(
                (("nodes", i, "id"), f"node id '{node.id}' is also nodes[{seen[node.id]}] (expected unique ids)")
            )
        seen.setdefault(node.id, i)
        for other in d.nodes[:i]:
            if other.row == node.row and node.col < other.col + other.span and other.col < node.col + node.span:
                found.append(
                    (
                        ("nodes", i, "col"),
                        f"'{node.id}' overlaps '{other.id}' in row {node.row} (expected boxes side by side)",
                    )
                )
    found += _edge_problems(d, seen)
    if not found:
        try:
            layout(kb, d)
        except DiagramError as exc:
            found.append((exc.field, str(exc)))
    return found


def _edge_problems(d: Diagram, ids: dict[str, int]) -> list[tuple[tuple[str | int, ...], str]]:
    found: list[tuple[tuple[str | int, ...], str]] = []
    nodes = {n.id: n for n in d.nodes}
    for j, edge in enumerate(d.edges):
        a, b = nodes.get(edge.source), nodes.get(edge.target)
        for key, name, node in (("from", edge.source, a), ("to", edge.target, b)):
            if node is None:
                found.append((("edges", j, key), f"no node '{name}' (expected one of: {', '.join(ids)})"))
        if a is not None and b is not None and not (b.row > a.row or (b.row == a.row and b.col > a.col)):
            found.append(
                (
                    ("edges", j),
                    f"'{a.id}' -> '{b.id}' points up or left (expected a lower row, or further right in the same row)",
                )
            )
    return found
