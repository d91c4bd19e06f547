"""Static SVG bar charts drawn at build time from KB records: no JavaScript, no external asset."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.escape import attr, number, svg_text

if TYPE_CHECKING:  # pragma: no cover
    from ..core.load import Record
    from ..core.schema import Figure, Hardware

HARDWARE_FIELDS = {"hbm_gib": ("HBM per chip", "GiB"), "bf16_tflops": ("bf16 peak per chip", "TFLOP/s")}

# A narrow drawing (420 units) with each label on its own line above its bar: scaled to a 390 px
# phone's ~358 px column, 13-unit text still renders at 11 px; on a desktop it is drawn 1:1.
_W, _BAR_H, _LINE, _GAP = 420, 18, 18, 10
_CHAR_W = 7.5  # a generous average glyph width at 13px, so value labels are never clipped


def bar_chart(title: str, bars: list[tuple[str, float, str]]) -> str:
    """Horizontal bars: (label, value, value text). Returns one block of HTML with no blank lines."""
    top = max((v for _, v, _ in bars), default=0) or 1
    value_w = 12 + _CHAR_W * max((len(shown) for _, _, shown in bars), default=0)
    plot_w = max(_W - value_w, 40.0)
    step = _LINE + _BAR_H + _GAP
    height = 30 + len(bars) * step
    esc = svg_text
    slug = attr("".join(c if c.isalnum() else "-" for c in title.lower()).strip("-"))
    parts = [
        f'<div class="kb-chart"><svg xmlns="http://www.w3.org/2000/svg" role="img" '
        f'aria-labelledby="chart-{slug}" viewBox="0 0 {_W} {height}" width="100%" style="max-width:{_W}px">',
        f'<title id="chart-{slug}">{esc(title)}</title>',
        f'<text x="0" y="16" class="kb-chart__title">{esc(title)}</text>',
    ]
    for i, (label, value, shown) in enumerate(bars):
        y = 30 + i * step
        w = max(1.0, plot_w * value / top)
        parts.append(f'<text x="0" y="{y + 13}" class="kb-chart__label">{esc(label)}</text>')
        parts.append(
            f'<rect x="0" y="{y + _LINE}" width="{w:.1f}" height="{_BAR_H}" class="kb-chart__bar">'
            f"<title>{esc(label)}: {esc(shown)}</title></rect>"
        )
        parts.append(
            f'<text x="{w + 6:.1f}" y="{y + _LINE + _BAR_H * 0.72:.1f}" class="kb-chart__value">{esc(shown)}</text>'
        )
    parts.append("</svg></div>")
    return "".join(parts)


def figures_chart(records: list[Record[Figure]], title: str) -> str:
    """One bar per figure, labelled by its distinguishing conditions."""
    bars = []
    for rec in records:
        f = rec.model
        c = f.conditions
        label = f"seq {number(c.seq_len)}" if c.seq_len is not None else (c.model or f.metric)
        if c.workload:
            label += f", {c.workload}"
        tilde = "~" if f.approx else ""
        bars.append((label, f.value, f"{tilde}{number(f.value)} {f.unit} ({f.status})"))
    return bar_chart(title, bars)


def hardware_chart(records: list[Record[Hardware]], field: str) -> str:
    name, unit = HARDWARE_FIELDS[field]
    bars = []
    for rec in records:
        value = getattr(rec.model, field)
        bars.append((rec.model.name, value, f"{number(value)} {unit}"))
    return bar_chart(f"{name} by TPU generation ({unit})", bars)
