"""Diagrams drawn at build time from ``docs/data/diagrams.yml``: boxes on a grid, arrows between.

Every box rests on a KB record (a box without a label shows the record's name), so a diagram
names nothing the KB does not hold. The SVG has no script, no fixed colour (classes styled in
kb.css from Material's colour variables, which print overrides) and a title, a description and a
text version beside it. ``check`` reports what cannot be drawn with the record's file and line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.errors import Problem
from ..core.escape import attr, md_rich, md_text, one_line, svg_text
from ..core.schema import Diagram, DiagramEdge, DiagramNode

if TYPE_CHECKING:  # pragma: no cover
    from ..core.load import KB, Record

WIDTH = 600  # viewBox width; kb.css keeps the drawing at least 480 px wide (scrolling in its box)
_LABEL, _NOTE = 15, 14  # font sizes in px: at 480 px wide they are 12 and 11.2 px on screen
_LABEL_LH, _NOTE_LH = 19, 17
_PAD, _ROW_GAP, _TOP = 9, 40, 2
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
        h = max(2 * _PAD + len(b.label) * _LABEL_LH + len(b.note) * _NOTE_LH for b in in_row)
        for b in in_row:
            b.y, b.h = y, h
        y += h + _ROW_GAP
    return boxes, y - _ROW_GAP + _TOP + 2


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


def render(kb: KB, diagram: Diagram) -> str:
    """The figure: the SVG, a caption and the diagram as text. One HTML block, no blank line."""
    boxes, height = layout(kb, diagram)
    slug = attr(f"diagram-{diagram.id}")
    svg = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="{slug}-title {slug}-desc" '
        f'viewBox="0 0 {WIDTH} {height:.0f}" width="100%" class="kb-diagram__svg">',
        f'<title id="{slug}-title">{svg_text(diagram.title)}</title>',
        f'<desc id="{slug}-desc">{svg_text(diagram.alt)}</desc>',
    ]
    at = {b.node.id: b for b in boxes}
    for edge in diagram.edges:
        svg.append(_edge(at[edge.source], at[edge.target], edge.label))
    for box in boxes:
        svg.append(_box(box))
    svg.append("</svg>")
    # The drawing keeps its width and scrolls inside its box on a narrow screen: the box takes the
    # keyboard focus (arrow keys scroll it) and says so; the hint shows only where it scrolls.
    scroller = f'tabindex="0" role="region" aria-label="{attr(one_line(diagram.title))}: drawing"'
    hint = '<p class="kb-diagram__hint">Scroll sideways for the whole drawing, or read it as text below.</p>'
    return (
        f'<figure class="kb-diagram" id="{slug}"><div class="kb-diagram__scroll" {scroller}>{"".join(svg)}</div>'
        f"{hint}<figcaption>{md_text(diagram.title)}</figcaption>{as_text(kb, diagram)}</figure>"
    )


def _box(box: Box) -> str:
    kind = box.node.kind
    rx = 16 if kind == "question" else 4
    parts = [
        f'<rect class="kb-diagram__box kb-diagram__box--{kind}" x="{box.x:.1f}" y="{box.y:.1f}" '
        f'width="{box.w:.1f}" height="{box.h:.1f}" rx="{rx}"/>'
    ]
    lines = [(line, "kb-diagram__label", _LABEL_LH) for line in box.label]
    lines += [(line, "kb-diagram__note", _NOTE_LH) for line in box.note]
    text_h = sum(lh for _, _, lh in lines)
    y = box.y + (box.h - text_h) / 2
    cx = box.x + box.w / 2
    for line, cls, lh in lines:
        y += lh
        parts.append(f'<text x="{cx:.1f}" y="{y - 5:.1f}" text-anchor="middle" class="{cls}">{_tspans(line)}</text>')
    return "".join(parts)


def _tspans(line: list[Word]) -> str:
    out = []
    for i, w in enumerate(line):
        text = f'<tspan class="kb-diagram__code">{svg_text(w.text)}</tspan>' if w.code else svg_text(w.text)
        out.append(text if i == 0 or w.glued else " " + text)
    return "".join(out)


def _edge(a: Box, b: Box, label: str | None) -> str:
    """A down arrow (straight, or with one elbow) to a lower row, or a right arrow along a row."""
    if b.node.row == a.node.row:
        y = a.y + a.h / 2
        x1, x2 = a.x + a.w, b.x
        path, head = (
            f"M{x1:.1f},{y:.1f} H{x2 - 7:.1f}",
            f"{x2:.1f},{y:.1f} {x2 - 8:.1f},{y - 4.5:.1f} {x2 - 8:.1f},{y + 4.5:.1f}",
        )
        lx, ly, anchor = (x1 + x2) / 2, y - 6, "middle"
    else:
        x1, y1 = a.x + a.w / 2, a.y + a.h
        x2, y2 = b.x + b.w / 2, b.y
        mid = y1 + _ROW_GAP / 2
        bend = "" if abs(x1 - x2) < 0.5 else f" V{mid:.1f} H{x2:.1f}"
        path = f"M{x1:.1f},{y1:.1f}{bend} V{y2 - 7:.1f}"
        head = f"{x2:.1f},{y2:.1f} {x2 - 4.5:.1f},{y2 - 8:.1f} {x2 + 4.5:.1f},{y2 - 8:.1f}"
        lx, ly, anchor = (x2 + 6, y2 - 9, "start") if bend else (x1 + 6, mid + 4, "start")
    cls = "kb-diagram__edge-label"
    text = f'<text x="{lx:.1f}" y="{ly:.1f}" text-anchor="{anchor}" class="{cls}">{svg_text(label)}</text>'
    text = text if label else ""
    return f'<path class="kb-diagram__edge" d="{path}"/><polygon class="kb-diagram__head" points="{head}"/>{text}'


def as_text(kb: KB, diagram: Diagram) -> str:
    """The diagram as a list: each box, then where its arrows lead (with their labels). Open, so a
    phone, where the drawing scrolls, shows every box, the decision tree's answers among them."""
    names = {n.id: md_rich(label_of(kb, n)) for n in diagram.nodes}
    items = []
    for node in diagram.nodes:
        note = f" ({md_rich(node.note)})" if node.note else ""
        out = [e for e in diagram.edges if e.source == node.id]
        leads = "; ".join(f"{md_text(e.label) + ': ' if e.label else ''}{names[e.target]}" for e in out)
        items.append(f"<li>{names[node.id]}{note}{' → ' + leads if leads else ''}</li>")
    summary = "<summary>The diagram as text</summary>"
    return f'<details class="kb-diagram__text" open>{summary}<ul>{"".join(items)}</ul></details>'
