"""Diagrams drawn at build time from ``docs/data/diagrams.yml``: boxes on a grid, arrows between.

Every box rests on a KB record (a box without a label shows the record's name), so a diagram
names nothing the KB does not hold. The SVG has no script, no fixed colour (classes styled in
kb.css from Material's colour variables, which print overrides) and a title, a description and a
text version beside it. Where the boxes go, and the check of every diagram, are kb/core/diagramlayout.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.diagramlayout import LABEL_LH, NOTE_LH, ROW_GAP, WIDTH, Box, Word, label_of, layout
from ..core.escape import attr, md_rich, md_text, one_line, svg_text
from ..core.schema import Diagram

if TYPE_CHECKING:  # pragma: no cover
    from ..core.load import KB


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
    lines = [(line, "kb-diagram__label", LABEL_LH) for line in box.label]
    lines += [(line, "kb-diagram__note", NOTE_LH) for line in box.note]
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
        mid = y1 + ROW_GAP / 2
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
