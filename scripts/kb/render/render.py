"""Shortcodes -> Markdown. Every value that comes from data is HTML-escaped.

A shortcode is an HTML comment, ``<!-- kb:NAME args -->``. Unknown names, tables, filters and
ids are problems with the page's path and line, never silently dropped. Shortcodes inside
fenced code blocks and inline code are left alone, so pages can document them.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache, partial
from html import unescape as html_unescape
from typing import Any, Callable, Literal, Protocol, TypeVar, get_args, get_origin

from ..core.diagramlayout import DiagramError
from ..core.errors import Problem
from ..core.escape import UnsafeValue, abbr_line, attr, https_url, link_title, md_code, md_rich, md_text, number
from ..core.escape import clear_caches as clear_escape_caches
from ..core.load import KB, Record
from ..core.mdscan import prose_lines
from ..core.schema import (
    STATUSES,
    TABLES,
    Benchmark,
    Claim,
    Conditions,
    Diagram,
    EnvVar,
    ErrorEntry,
    Figure,
    Framework,
    Hardware,
    Integration,
    InternalMessage,
    Limit,
    MigrationRule,
    Mode,
    Model,
    Source,
    Sourced,
    SourceKind,
    SpeedRun,
    Term,
)
from ..wheel.coverage import InventoryError, read_inventory, undocumented, undocumented_messages
from . import benchrender, charts, diagrams
from .abbrtrie import trie_pattern
from .errortopics import BY_KEY, TOPICS, Topic, topic_of
from .tablehtml import Tooltips, outside_tables, table_html


class ReviewQueue(Protocol):
    """What rendering asks of the review queue (kb/wiki/review.py's ``Queue``, a layer above)."""

    def markdown(self, link: Callable[[str], str]) -> str: ...

    def page_note(self, src_uri: str, link: Callable[[str], str]) -> str: ...


SHORTCODE = re.compile(r"<!--\s*kb:([A-Za-z_-]*)(.*?)-->")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
T = TypeVar("T", bound=Model)


class ShortcodeError(Exception):
    """A shortcode that can't be rendered; the caller adds path and line."""


@dataclass(frozen=True)
class Ctx:
    """What a renderer needs: the KB and the page it renders into (for relative links), and the
    review queue once every page has been read (``kb:review-queue``, the out-of-date note)."""

    kb: KB
    src_uri: str
    review: ReviewQueue | None = None

    def link(self, target: str) -> str:
        """A link from this page to ``target`` (a docs-relative path with optional #anchor)."""
        path, _, anchor = target.partition("#")
        return _relpath(path, posixpath.dirname(self.src_uri) or ".") + (f"#{anchor}" if anchor else "")


@lru_cache(maxsize=4096)
def _relpath(path: str, start: str) -> str:
    return posixpath.relpath(path, start)


def clear_caches() -> None:
    """Forget what rendering remembered (relative paths, escaped text): the bench times each
    validation from cold, as a build runs it."""
    _relpath.cache_clear()
    clear_escape_caches()


# ---- Text helpers ----


def text(value: object) -> str:
    """KB prose for Markdown: escaped, with `backticks` as inline code (see escape.md_rich)."""
    return md_rich(value)


def with_unit(value: float, unit: str, approx: bool = False) -> str:
    sign = "~" if approx else ""
    if unit == "%":
        return f"{sign}{number(value)}%"
    if unit == "x":
        return f"{sign}{number(value)}×"
    return f"{sign}{number(value)} {unit}"


# Left out of the search index (Material's search plugin skips the element, then drops the attribute
# from the page): the status badges, source links, page banner and an error entry's see-also line,
# the same few words on every section, which only weighed the index down (kb/render/searchindex.py).
NOT_SEARCHED = 'data-search-exclude="1"'


def badge(ctx: Ctx, status: str) -> str:
    attrs = f".kb-badge .kb-badge--{status} {NOT_SEARCHED}"
    return f"[{status}]({ctx.link('about/conventions.md#status-' + status)}){{ {attrs} }}"


def outdated(rec: Record[Model]) -> str:
    """For a record that documents an old spelling: say so, and give the name the package uses."""
    model = rec.model
    if getattr(model, "spelling", None) != "outdated":
        return ""
    current = getattr(model, "current", None) or "?"
    return f" **Outdated spelling, not for new code:** the package uses <code>{text(current)}</code>."


def vendor_label(rec: Record[Model]) -> str:
    by = getattr(rec.model, "measured_by", None)
    return {"vendor": "vendor claim", "customer": "customer claim"}.get(by or "", "")


def source_links(ctx: Ctx, rec: Record[Sourced]) -> str:
    sources = ctx.kb.index("sources")
    links = []
    for ref in rec.model.sources:
        found = sources.get(ref.id)
        if found is None:  # validation reports it with its line; never a KeyError here
            raise ShortcodeError(f"record '{rec.id}' cites unknown source '{ref.id}'")
        src = found.narrow(Source).model
        tip = link_title(f"{src.title}, {src.publisher}: {ref.locator}")
        label = md_text(cited_as(ctx, ref.id))  # readers see the publication; the id stays in the KB
        links.append(f'[{label}]({ctx.link("reference/sources.md#src-" + ref.id)} "{tip}"){{ .kb-src {NOT_SEARCHED} }}')
    return " ".join(links)


def conditions(cond: Conditions) -> str:
    """The conditions of a figure as plain text (escape it where it lands)."""
    parts: list[str] = []
    if cond.model:
        parts.append(cond.model)
    if cond.hardware:
        parts.append(cond.hardware)
    if cond.chips is not None:
        parts.append(f"{number(cond.chips)} chip{'s' if cond.chips != 1 else ''}")
    if cond.devices is not None:
        parts.append(f"{number(cond.devices)} device{'s' if cond.devices != 1 else ''}")
    if cond.seq_len is not None:
        parts.append(f"sequence length {number(cond.seq_len)}")
    if cond.workload:
        parts.append(cond.workload)
    if cond.mode:
        parts.append(cond.mode)
    if cond.note:
        parts.append(cond.note)
    return "; ".join(parts) or "not stated by the source"


def cited_as(ctx: Ctx, source_id: str) -> str:
    """What readers see for a source: its ``cite`` (publication and what), or its id if it has none."""
    found = ctx.kb.index("sources").get(source_id)
    cite = found.narrow(Source).model.cite if found is not None else None
    return cite or source_id


def conflicts(ctx: Ctx, rec: Record[Sourced]) -> str:
    said = [f"{text(cited_as(ctx, c.source))}: {text(c.says)}" for c in rec.model.conflicts]
    return " Who says what: " + "; ".join(said) + "." if said else ""


# ---- Filters ----


def _cites(rec: Record[Model]) -> list[str]:
    """The ids of the sources a record cites (filter_keys allows cites only for tables with sources)."""
    model = rec.model
    if not isinstance(model, (Sourced, Term)):
        raise KeyError("cites")
    return [r.id for r in model.sources]


def _field_value(rec: Record[Model], key: str) -> object:
    model = rec.model
    if key == "cites":
        return _cites(rec)
    if key in type(model).model_fields:
        return getattr(model, key)
    cond = getattr(model, "conditions", None)
    if cond is not None and key in Conditions.model_fields:
        return getattr(cond, key)
    raise KeyError(key)


def filter_keys(table: str) -> list[str]:
    """The keys a shortcode may filter ``table`` on: its fields, figure conditions, cites, cites_kind."""
    keys = list(TABLES[table].model_fields)
    if "conditions" in keys:
        keys += list(Conditions.model_fields)
    if "sources" in keys:
        keys += ["cites", "cites_kind"]
    return keys


def select(kb: KB, table: str, filters: dict[str, str]) -> list[Record[Model]]:
    """Records of ``table`` matching every filter; a value may list alternatives with commas, and
    an alternative ending in ``*`` matches every value that starts with the rest."""
    if table not in kb.tables:
        raise ShortcodeError(f"unknown table '{table}' (expected one of: {', '.join(kb.tables)})")
    allowed = filter_keys(table)
    for key in filters:
        if key not in allowed:
            raise ShortcodeError(f"unknown filter '{key}' for table '{table}' (expected one of: {', '.join(allowed)})")
    _check_alternatives(kb, table, filters)
    sources = kb.index("sources")
    out = []
    for rec in kb.tables[table]:
        ok = True
        for key, want in filters.items():
            options = want.split(",")
            if key == "cites_kind":
                kinds = {sources[i].narrow(Source).model.kind for i in _cites(rec) if i in sources}
                ok = ok and bool(kinds & set(options))
                continue
            value = _field_value(rec, key)
            values = value if isinstance(value, list) else [value]
            ok = ok and any(_matches(o, _fmt_filter(v)) for v in values for o in options)
        if ok:
            out.append(rec)
    if not out:
        shown = " ".join(f"{k}={v}" for k, v in filters.items())
        raise ShortcodeError(f"table '{table}' has no record matching '{shown}' (expected at least one)")
    return out


def _matches(option: str, value: str) -> bool:
    """A filter's alternative names the value, or its start followed by ``*`` (``code=TPU1*``)."""
    return value == option or (option.endswith("*") and len(option) > 1 and value.startswith(option[:-1]))


def _check_alternatives(kb: KB, table: str, filters: dict[str, str]) -> None:
    """Each alternative of a filter names a value the field takes in some record of ``table``
    (a mistyped one would silently match nothing while the others match)."""
    for key, want in filters.items():
        if key == "cites_kind":
            taken = set(get_args(SourceKind))
        else:
            taken = _declared(table, key)
            for rec in kb.tables[table]:
                value = _field_value(rec, key)
                taken.update(_fmt_filter(v) for v in (value if isinstance(value, list) else [value]))
        for option in want.split(","):
            if not any(_matches(option, value) for value in taken):
                known = sorted(taken - {"None"})
                shown = ", ".join(known[:12]) + (f" and {len(known) - 12} more" if len(known) > 12 else "")
                raise ShortcodeError(
                    f"filter '{key}={want}': no record of table '{table}' has {key} '{option}' "
                    f"(expected one of: {shown or 'no value'})"
                )


def _declared(table: str, key: str) -> set[str]:
    """The values a field's type allows when it lists them (a Literal, a boolean), as filters spell them."""
    model = TABLES[table]
    info = model.model_fields.get(key)
    if info is None and "conditions" in model.model_fields:
        info = Conditions.model_fields.get(key)
    ann = info.annotation if info is not None else None
    out: set[str] = set()
    for arg in (ann, *get_args(ann)):
        if get_origin(arg) is Literal:
            out |= {_fmt_filter(a) for a in get_args(arg)}
        elif arg is bool:
            out |= {"true", "false"}
    return out


def select_rows(kb: KB, table: str, kind: type[T], filters: dict[str, str]) -> list[Record[T]]:
    """``select``, with the records typed by the table's model ``kind``."""
    return [rec.narrow(kind) for rec in select(kb, table, filters)]


def _fmt_filter(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# ---- Tables ----


def md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(cell or "&nbsp;" for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _kb_table(name: str, header: list[str], rows: list[list[str]], cards: bool = True) -> str:
    """A KB table in a ``kb-table`` block. Every cell after the first carries its column's name,
    hidden on wide screens; on a phone kb.css shows each row as a card with these labels (unless
    ``cards`` is off, for a table narrow enough to stay a table)."""
    kind = f"kb-table kb-table--{attr(name)}" + (" kb-table--cards" if cards else "")
    return f'\n\n<div class="{kind}" markdown>\n\n{md_table(header, _with_labels(header, rows))}\n\n</div>\n\n'


def _with_labels(header: list[str], rows: list[list[str]]) -> list[list[str]]:
    label = [f'<span class="kb-label">{h}:</span> ' for h in header]
    return [[cell if i == 0 or not cell else label[i] + cell for i, cell in enumerate(row)] for row in rows]


def _glossary_table(kb: KB, header: list[str], rows: list[list[str]]) -> str:
    """The glossary's table as the HTML Markdown would make of it, tooltips included (Markdown's
    pass over 10,000 rows is most of what they cost a build, kb/render/tablehtml.py); the Markdown
    table where a cell holds more than that module writes."""
    terms, defined = _glossary(kb)
    tips = Tooltips((line for _, line in defined), partial(_found_in, *_term_index(terms)))
    html = table_html("glossary", header, _with_labels(header, rows), tips)
    return _kb_table("glossary", header, rows) if html is None else f"\n\n{html}\n\n"


def _anchor(prefix: str, rec: Record[Model]) -> str:
    return f'<span class="kb-anchor" id="{prefix}-{attr(rec.id)}"></span>'


@dataclass(frozen=True)
class Column:
    """One column of a rendered KB table: its header and how a record becomes an escaped cell."""

    header: str
    cell: Callable[[Ctx, Record[Model]], str]


def _typed(kind: type[T], cell: Callable[[Ctx, Record[T]], str]) -> Callable[[Ctx, Record[Model]], str]:
    """A cell for the rows of the table whose model is ``kind``."""
    return lambda ctx, r: cell(ctx, r.narrow(kind))


def _f(name: str) -> Callable[[Ctx, Record[Model]], str]:
    """A cell with one field as escaped prose (empty when unset)."""
    return lambda ctx, r: text(getattr(r.model, name) or "")


def _lead(prefix: str, name: str, bold: bool = True, note: str | None = None) -> Callable[[Ctx, Record[Model]], str]:
    """The first cell: an anchor, the field (bold), and an optional small note under it."""

    def cell(ctx: Ctx, r: Record[Model]) -> str:
        value = text(getattr(r.model, name))
        extra = getattr(r.model, note, None) if note else None
        small = f"<br><small>{text(extra)}</small>" if extra else ""
        return f"{_anchor(prefix, r)}{'**' + value + '**' if bold else value}{small}"

    return cell


def _status(ctx: Ctx, r: Record[Sourced]) -> str:
    return badge(ctx, r.model.status) + outdated(r)


def _evidence(ctx: Ctx, r: Record[Sourced]) -> str:
    """Status and sources in one cell: the badge, then the source links under it."""
    return f"{_status(ctx, r)}<br>{source_links(ctx, r)}"


def _limit_area(ctx: Ctx, r: Record[Limit]) -> str:
    """The area, linked to the limit's own section (kb:limit), which gives the details and sources."""
    return f"[**{text(r.model.area)}**](#limit-{attr(r.id)})"


def _source_title(ctx: Ctx, r: Record[Source]) -> str:
    s = r.model
    if s.url:
        try:
            name = f"[{text(s.title)}]({https_url(s.url)})"
        except UnsafeValue as exc:
            raise ShortcodeError(f"source '{r.id}': {exc}") from None
    else:
        name = f"{text(s.title)} (<code>{md_text(s.file)}</code>)"
    note = f" <br><small>{text(s.note)}</small>" if s.note else ""
    return f"{_anchor('src', r)}<code>{md_text(r.id)}</code> {name}{note}"


def _claim(ctx: Ctx, r: Record[Claim]) -> str:
    c = r.model
    wrong = f"<br><small>Reported: {text(c.corrects)}</small>" if c.corrects else ""
    return f"{_anchor('claim', r)}{text(c.statement)}{wrong}<small>{conflicts(ctx, r)}</small>"


def _figure_value(ctx: Ctx, r: Record[Figure]) -> str:
    f = r.model
    return f"**{text(with_unit(f.value, f.unit, f.approx))}**"


def _claimed_by(ctx: Ctx, r: Record[Figure]) -> str:
    v = vendor_label(r)
    return text(r.model.claimed_by) + (f" ({v})" if v else "")


def _mode_name(ctx: Ctx, r: Record[Mode]) -> str:
    return _lead("mode", "name")(ctx, r) + (" (default)" if r.model.default else "")


def _mode_select(ctx: Ctx, r: Record[Mode]) -> str:
    env = r.model.env_var
    return text(r.model.select) + (f"<br>env: <code>{md_text(env)}</code>" if env else "")


def _env_name(ctx: Ctx, r: Record[EnvVar]) -> str:
    return f"{_anchor('env', r)}<code>{md_text(r.model.name)}</code>"


def _with_conflicts(name: str) -> Callable[[Ctx, Record[Model]], str]:
    return _typed(Sourced, lambda ctx, r: text(getattr(r.model, name)) + f"<small>{conflicts(ctx, r)}</small>")


def _unit(name: str, unit: str) -> Callable[[Ctx, Record[Model]], str]:
    return lambda ctx, r: text(with_unit(getattr(r.model, name), unit))


def _framework(ctx: Ctx, r: Record[Framework]) -> str:
    """The framework's name, linked to its page's section, and its package."""
    m = r.model
    return f"{_anchor('fw', r)}[**{text(m.name)}**]({ctx.link(m.page)})<br><code>{md_text(m.package)}</code>"


def _versions(ctx: Ctx, r: Record[Framework]) -> str:
    m = r.model
    floor = f"from {m.floor}" if m.floor[:1].isdigit() else m.floor  # a release, or why there is none
    return text(floor + (f"; checked up to {m.ceiling}" if m.ceiling else ""))


def _package(ctx: Ctx, r: Record[Integration]) -> str:
    pkg = r.model.package
    return f"<code>{md_text(pkg)}</code>" if pkg else "none named"


def _rule(ctx: Ctx, r: Record[MigrationRule]) -> str:
    """The rule's id and what it matches, as code."""
    m = r.model.match
    kind, what = next((k, v) for k, v in m.model_dump().items() if v is not None)
    if kind == "keyword":
        value = what.get("value")
        value = "|".join(value) if isinstance(value, list) else value
        shown = f"{what['name']}={value}" if value else f"{what['name']}="
        what = f"{what['call']}({shown})" if what.get("call") else shown
    fix = r.model.fix
    fixed = ""
    if fix is not None:
        to = fix.to or fix.expression or "torch.set_float32_matmul_precision(...)"
        where = " where an <code>is_available()</code> test guards it" if fix.guard else ""
        fixed = f"<br><small>--fix: {md_text(fix.kind)} to {md_code(to)}{where}</small>"
    return (
        f"{_anchor('rule', r)}<code>{md_text(r.model.code)}</code> <code>{md_text(r.id)}</code>"
        f"<br><small>{md_text(kind)}: {md_code(what)}</small>{fixed}"
    )


def _rule_page(ctx: Ctx, r: Record[MigrationRule]) -> str:
    page = r.model.page
    return f"[{md_text(page)}]({ctx.link(page)})"


def _rests_on(ctx: Ctx, r: Record[MigrationRule]) -> str:
    return md_code(f"{r.model.rests_on.table}: {r.model.rests_on.id}")


def _error_cell(ctx: Ctx, r: Record[ErrorEntry]) -> str:
    return f"{_anchor('error', r)}{md_code(error_heading(r.model))}"


def _speed_what(ctx: Ctx, r: Record[SpeedRun]) -> str:
    """What the run measures, and under it, small, its note (the load average, the times behind a ratio)."""
    note = f"<br><small>{text(r.model.note)}</small>" if r.model.note else ""
    return text(SPEED_LABELS[r.model.what]) + note


def _cells(*pairs: tuple[str, str]) -> list[Column]:
    """Plain columns: (header, field) pairs, each field shown as escaped prose."""
    return [Column(header, _f(name)) for header, name in pairs]


STATUS_AND_SOURCES = [Column("Evidence", _typed(Sourced, _evidence))]
SPEED_LABELS: dict[str, str] = {
    "edit-to-reload": "One-page edit under ./dev serve, to the page served with it",
    "glossary-build": "CPU time 10,000 generated glossary terms add to a clean build",
    "hook-cost": "CPU time of a build with our hook, over plain MkDocs on the pre-rendered pages",
    "content-page-weight": "HTML of the heaviest content page",
    "print-part-weight": "HTML of the heaviest part of the printable handbook",
    "search-index-weight": "The search index",
    "scale-build": "Build time of a 1,000-page site, over that of the smallest (--sizes 40: the handbook alone)",
}
COLUMNS: dict[str, list[Column]] = {
    "sources": [
        Column("Source", _typed(Source, _source_title)),
        *_cells(("Publisher", "publisher")),
        Column("Published", _typed(Source, lambda ctx, r: text(r.model.published or "undated"))),
        *_cells(("Kind", "kind"), ("Language", "language"), ("Accessed", "accessed")),
    ],
    "claims": [Column("Fact", _typed(Claim, _claim)), *STATUS_AND_SOURCES],
    "figures": [
        Column("Figure", _lead("fig", "metric", bold=False, note="note")),
        Column("Value", _typed(Figure, _figure_value)),
        Column("Conditions", _typed(Figure, lambda ctx, r: text(conditions(r.model.conditions)))),
        Column("Claimed by", _typed(Figure, _claimed_by)),
        *STATUS_AND_SOURCES,
    ],
    "modes": [
        Column("Mode", _typed(Mode, _mode_name)),
        Column("How to select it", _typed(Mode, _mode_select)),
        *_cells(("Behaviour", "behaviour"), ("Cost", "cost"), ("Use when", "use_when")),
        *STATUS_AND_SOURCES,
    ],
    # An overview: what each limit means, its workaround and its sources are in its own section.
    "limits": [
        Column("Area", _typed(Limit, _limit_area)),
        *_cells(("Limit", "limit"), ("Roadmap", "roadmap")),
        Column("Status", _typed(Sourced, _status)),
    ],
    "env_vars": [
        Column("Variable", _typed(EnvVar, _env_name)),
        Column("Purpose", _with_conflicts("purpose")),
        *_cells(("Values", "values"), ("Default", "default"), ("Read when", "read_when")),
        *STATUS_AND_SOURCES,
    ],
    "api_map": [
        Column("CUDA side", _lead("api", "gpu", bold=False)),
        *_cells(("TorchTPU side", "tpu"), ("Change", "change"), ("Note", "note")),
        *STATUS_AND_SOURCES,
    ],
    "hardware": [
        Column("Generation", _lead("hw", "name", note="note")),
        Column("HBM per chip", _unit("hbm_gib", "GiB")),
        Column("bf16 peak per chip", _unit("bf16_tflops", "TFLOP/s")),
        *_cells(("Devices per chip", "devices_per_chip")),
        *STATUS_AND_SOURCES,
    ],
    "integrations": [
        Column("Project", _lead("int", "name")),
        *_cells(("Role", "role")),
        Column("Package", _typed(Integration, _package)),
        *_cells(("Note", "note")),
        *STATUS_AND_SOURCES,
    ],
    "frameworks": [
        Column("Framework", _typed(Framework, _framework)),
        Column("Versions", _typed(Framework, _versions)),
        *_cells(("On torch-tpu 0.2.0", "support"), ("What it does on a TPU host", "summary")),
        *STATUS_AND_SOURCES,
    ],
    "migration_rules": [
        Column("Rule", _typed(MigrationRule, _rule)),
        *_cells(("Severity", "severity"), ("What it finds", "message"), ("What to do", "suggestion")),
        Column("Explained in", _typed(MigrationRule, _rule_page)),
        Column("Rests on", _typed(MigrationRule, _rests_on)),
        *STATUS_AND_SOURCES,
    ],
    "errors": [
        Column("Message", _typed(ErrorEntry, _error_cell)),
        *_cells(("Cause", "cause"), ("Fix", "fix")),
        Column(
            "Explained in", _typed(ErrorEntry, lambda ctx, r: f"[{md_text(r.model.page)}]({ctx.link(r.model.page)})")
        ),
        *STATUS_AND_SOURCES,
    ],
    "internal_messages": [
        Column("Message", _typed(InternalMessage, lambda ctx, r: md_code(r.model.message))),
        *_cells(("Where", "where"), ("Why no reader meets it", "reason")),
    ],
    "glossary": [
        Column("Term", _lead("term", "term")),
        *_cells(("Stands for", "expansion"), ("Meaning", "definition")),
    ],
    "benchmarks": [
        Column("Run", lambda ctx, r: f"{_anchor('bench', r)}<code>{md_text(r.id)}</code>"),
        *_cells(("Measured", "measured"), ("Machine", "machine")),
        Column("Command", _typed(Benchmark, lambda ctx, r: md_code(r.model.command))),
        Column("Pages", _typed(Benchmark, lambda ctx, r: text(", ".join(number(n) for n in r.model.sizes)))),
    ],
    "speed": [
        Column("Run", lambda ctx, r: f"{_anchor('speed', r)}<code>{md_text(r.id)}</code>"),
        Column("What", _typed(SpeedRun, _speed_what)),
        Column("Median", _typed(SpeedRun, lambda ctx, r: f"**{r.model.median_s:.2f}** {_unit_of(r.model)}")),
        Column(
            "Min to max",
            _typed(SpeedRun, lambda ctx, r: f"{r.model.min_s:.2f} to {r.model.max_s:.2f} {_unit_of(r.model)}"),
        ),
        Column("Measurements", _typed(SpeedRun, lambda ctx, r: number(r.model.runs))),
        Column("Target", _typed(SpeedRun, lambda ctx, r: text(_speed_target(r.model)))),
        *_cells(("Measured", "measured"), ("Machine", "machine")),
        Column("Command", _typed(SpeedRun, lambda ctx, r: md_code(r.model.command))),
    ],
    "diagrams": [
        Column("Diagram", lambda ctx, r: f"<code>{md_text(r.id)}</code>"),
        *_cells(("Title", "title"), ("What it shows", "alt")),
    ],
}


def _unit_of(run: SpeedRun) -> str:
    return {"s": "s", "x": "×", "KB": "KB"}[run.unit]


def _speed_target(run: SpeedRun) -> str:
    """The target, the floor, and whether the median meets either."""
    unit = _unit_of(run)
    floor = f" (floor {run.floor_s:g} {unit})" if run.floor_s is not None else ""
    if run.median_s <= run.target_s:
        verdict = "met"
    elif run.floor_s is not None and run.median_s <= run.floor_s:
        verdict = "missed, within the floor"
    else:
        verdict = "missed"
    plain = f" (plain MkDocs and Material alone: {run.plain_s:g} s)" if run.plain_s is not None else ""
    return f"at most {run.target_s:g} {unit}{floor}: {verdict}{plain}"


def table_rows(ctx: Ctx, table: str, records: list[Record[Model]]) -> tuple[list[str], list[list[str]]]:
    """Header and cells for one KB table, through its column specs."""
    columns = COLUMNS[table]
    return [c.header for c in columns], [[c.cell(ctx, r) for c in columns] for r in records]


# ---- Shortcodes ----


def _parse_args(raw: str) -> tuple[list[str], dict[str, str]]:
    pos, kw = [], {}
    for tok in raw.split():
        if "=" in tok:
            key, _, value = tok.partition("=")
            if not key or not value:
                raise ShortcodeError(f"malformed argument '{tok}' (expected key=value)")
            if key in kw:
                raise ShortcodeError(f"argument '{key}' given twice (expected it once)")
            kw[key] = value
        else:
            pos.append(tok)
    return pos, kw


def _one(pos: list[str], what: str) -> str:
    if len(pos) != 1:
        raise ShortcodeError(f"expected exactly one {what}, got {len(pos)}")
    return pos[0]


def _record(ctx: Ctx, table: str, record_id: str) -> Record[Model]:
    rec = ctx.kb.get(table, record_id)
    if rec is None:
        raise ShortcodeError(f"unknown {table} id '{record_id}' (expected an id from docs/data/{table}.yml)")
    return rec


def sc_table(ctx: Ctx, pos: list[str], kw: dict[str, str]) -> str:
    table = _one(pos, "table name")
    header, rows = table_rows(ctx, table, select(ctx.kb, table, kw))
    return _glossary_table(ctx.kb, header, rows) if table == "glossary" else _kb_table(table, header, rows)


def sc_figure(ctx: Ctx, pos: list[str], kw: dict[str, str]) -> str:
    _no_kw(kw)
    rec = _record(ctx, "figures", _one(pos, "figure id")).narrow(Figure)
    f = rec.model
    tip = attr(f"{f.metric}: {conditions(f.conditions)}")
    label = vendor_label(rec)
    extra = "; ".join(x for x in (label, badge(ctx, f.status), source_links(ctx, rec)) if x)
    value = text(with_unit(f.value, f.unit, f.approx))
    return f'<span class="kb-figure" title="{tip}">{value}</span> <small class="kb-meta">({extra})</small>'


def sc_claim(ctx: Ctx, pos: list[str], kw: dict[str, str]) -> str:
    _no_kw(kw)
    rec = _record(ctx, "claims", _one(pos, "claim id")).narrow(Claim)
    c = rec.model
    meta = f"{badge(ctx, c.status)}; {source_links(ctx, rec)}"
    return f'{text(c.statement)}{outdated(rec)} <small class="kb-meta">({meta})</small>'


def sc_badge(ctx: Ctx, pos: list[str], kw: dict[str, str]) -> str:

    _no_kw(kw)
    status = _one(pos, "status")
    if status not in STATUSES:
        raise ShortcodeError(f"unknown status '{status}' (expected one of: {', '.join(STATUSES)})")
    return badge(ctx, status)


def _paragraphs(*lines: str) -> str:
    """Separate lines into Markdown paragraphs, set apart from the text around the shortcode."""
    return "\n\n" + "\n\n".join(lines) + "\n\n"


def _status_line(ctx: Ctx, rec: Record[Sourced]) -> str:
    """Badge, who says what (for disputed records) and source links."""
    return f"{badge(ctx, rec.model.status)}{outdated(rec)}{conflicts(ctx, rec)} · Sources: {source_links(ctx, rec)}"


def _labelled(ctx: Ctx, rec: Record[Sourced], rows: list[tuple[str, str]], anchor: str = "") -> str:
    """One paragraph per (label, field), the first after ``anchor``; the last one ends with the
    status and sources."""
    lines = [f"**{label}** {text(getattr(rec.model, name))}" for label, name in rows]
    lines[0] = anchor + lines[0]
    lines[-1] += f" · {_status_line(ctx, rec)}"
    return _paragraphs(*lines)


def sc_limit(ctx: Ctx, pos: list[str], kw: dict[str, str]) -> str:
    _no_kw(kw)
    rec = _record(ctx, "limits", _one(pos, "limit id")).narrow(Limit)
    return _labelled(
        ctx,
        rec,
        [
            ("The limit.", "limit"),
            ("What it means for a workload.", "impact"),
            ("Workaround today.", "workaround"),
            ("Roadmap.", "roadmap"),
        ],
        _anchor("limit", rec),
    )


def sc_mode(ctx: Ctx, pos: list[str], kw: dict[str, str]) -> str:
    _no_kw(kw)
    rec = _record(ctx, "modes", _one(pos, "mode id")).narrow(Mode)
    env_var = rec.model.env_var
    env = f" Environment: <code>{md_text(env_var)}</code>." if env_var else ""
    select = f"**Select it with** {text(rec.model.select)}.{env}"
    rest = _labelled(ctx, rec, [("Behaviour.", "behaviour"), ("Cost.", "cost"), ("Use it when", "use_when")])
    return "\n\n" + select + rest


def sc_chart(ctx: Ctx, pos: list[str], kw: dict[str, str]) -> str:
    table = _one(pos, "table name")
    if table == "hardware":
        field = kw.pop("value", "")
        if field not in charts.HARDWARE_FIELDS:
            raise ShortcodeError(f"chart of hardware needs value= one of {', '.join(charts.HARDWARE_FIELDS)}")
        return "\n\n" + charts.hardware_chart(select_rows(ctx.kb, "hardware", Hardware, kw), field) + "\n\n"
    if table == "figures":
        title = kw.pop("title", "").replace("_", " ")
        if not title:
            raise ShortcodeError("chart of figures needs title=Words_with_underscores")
        return "\n\n" + charts.figures_chart(select_rows(ctx.kb, "figures", Figure, kw), title) + "\n\n"
    raise ShortcodeError(f"no chart for table '{table}' (expected figures or hardware)")


def sc_diagram(ctx: Ctx, pos: list[str], kw: dict[str, str]) -> str:
    """A diagram of docs/data/diagrams.yml, drawn as SVG: ``<!-- kb:diagram ID -->``."""
    _no_kw(kw)
    rec = _record(ctx, "diagrams", _one(pos, "diagram id"))
    try:
        return "\n\n" + diagrams.render(ctx.kb, rec.narrow(Diagram).model) + "\n\n"
    except DiagramError as exc:
        raise ShortcodeError(f"{rec.path}:{rec.line}: {exc}") from None


def sc_entries(ctx: Ctx, pos: list[str], kw: dict[str, str]) -> str:
    """One heading per environment variable or error message (so search finds each as a section title)."""
    table = _one(pos, "table name")
    if table == "errors":
        topic = _error_topic(kw.pop("topic", None))
        rows = select_rows(ctx.kb, table, ErrorEntry, kw)
        shown = [rec for rec in rows if topic is None or topic_of(rec.model.page) == topic]
        if not shown:
            raise ShortcodeError(f"no error entry has the topic '{topic.key if topic else ''}' (expected at least one)")
        return "".join(_error_entry(ctx, rec) for rec in shown)
    if table != "env_vars":
        raise ShortcodeError(f"entries supports the tables env_vars and errors only, got '{table}'")
    blocks = []
    for rec in select_rows(ctx.kb, table, EnvVar, kw):
        v = rec.model
        old = " (outdated spelling)" if v.spelling == "outdated" else ""
        blocks.append(
            _paragraphs(
                f"### {v.name}{old} {{#env-{rec.id}}}",
                text(v.purpose),
                f"**Values:** {text(v.values)} · **Default:** {text(v.default)} · **Read:** {text(v.read_when)}",
                _status_line(ctx, rec),
            )
        )
    return "".join(blocks)


ENV_PAGE = "reference/environment-variables.md"


def sc_env_summary(ctx: Ctx, pos: list[str], kw: dict[str, str]) -> str:
    """The current names at a glance, each linked to its entry, then the outdated spellings apart."""
    if pos:
        raise ShortcodeError("env-summary takes no table name")
    _no_kw(kw)
    current, old = [], []
    for rec in select_rows(ctx.kb, "env_vars", EnvVar, {}):
        v = rec.model
        name = f"[<code>{md_text(v.name)}</code>]({ctx.link(f'{ENV_PAGE}#env-{rec.id}')})"
        group = f"[{md_text(v.group.replace('-', ' '))}]({ctx.link(f'{ENV_PAGE}#{v.group}')})"
        if v.spelling == "outdated":
            old.append([name, f"<code>{text(v.current or '?')}</code>", text(v.default)])
        else:
            current.append([name, md_text(v.read_by), group])
    parts = [_kb_table("env-summary", ["Variable", "Read by", "Section"], current, cards=False)]
    if old:
        parts.append(
            "Outdated spellings, kept apart: never use them in new code."
            + _kb_table("env-outdated", ["Outdated spelling", "Use instead", "Default"], old, cards=False)
        )
    return "".join(parts)


def error_heading(entry: ErrorEntry) -> str:
    """The message as a reader pastes it: ``RuntimeError: text`` when the code names the class."""
    shown = entry.kind is not None and entry.kind != "warning"
    return f"{entry.kind}: {entry.message}" if shown else entry.message


def _error_topic(key: str | None) -> Topic | None:
    if key is not None and key not in BY_KEY:
        raise ShortcodeError(f"unknown error topic '{key}' (expected one of: {', '.join(BY_KEY)})")
    return BY_KEY[key] if key is not None else None


def sc_error_index(ctx: Ctx, pos: list[str], kw: dict[str, str]) -> str:
    """The pages of the error index, each a link that holds the old anchor (``err-ID``) of every
    entry on it, so that a link made before the entries moved still lands on their page."""
    _no_kw(kw)
    if pos:
        raise ShortcodeError(f"unexpected argument '{pos[0]}' (expected none)")
    held: dict[str, list[str]] = {t.key: [] for t in TOPICS}
    for rec in select_rows(ctx.kb, "errors", ErrorEntry, {}):
        held[topic_of(rec.model.page).key].append(f'<span id="err-{attr(rec.id)}"></span>')
    items = [
        f"- [{md_text(t.title)}{''.join(held[t.key])}]({ctx.link(t.src_uri)}): "
        f"{len(held[t.key])} message{'s' if len(held[t.key]) != 1 else ''}"
        for t in TOPICS
        if held[t.key]
    ]
    return '\n\n<div class="kb-error-index" markdown>\n\n' + "\n".join(items) + "\n\n</div>\n\n"


def _error_entry(ctx: Ctx, rec: Record[ErrorEntry]) -> str:
    e = rec.model
    origin = "TorchTPU's Python code" if e.origin == "python" else "a TorchTPU native library"
    what = "warning" if e.kind == "warning" else "message"
    printed = f"*A {what} of {origin},* {md_code(e.file)}."
    if e.variable:
        printed += f" *Where the text shows …:* {text(e.variable)}"
    return _paragraphs(
        f"### {md_text(error_heading(e))} {{#err-{rec.id}}}",
        printed,
        f"**Cause.** {text(e.cause)}",
        f"**Fix.** {text(e.fix)}",
        f"**See** [{md_text(e.page)}]({ctx.link(e.page)}) · {_status_line(ctx, rec)}\n{{: {NOT_SEARCHED} }}",
    )


def sc_corrections(ctx: Ctx, pos: list[str], kw: dict[str, str]) -> str:
    """Claims whose report came from news and that primary sources correct or do not confirm."""
    if pos:
        raise ShortcodeError("corrections takes no table name")
    kw = {"cites_kind": "news", "status": "corrected,reported,disputed", **kw}
    rows = []
    for rec in select_rows(ctx.kb, "claims", Claim, kw):
        c = rec.model
        said = c.corrects or "; ".join(f"{cited_as(ctx, x.source)}: {x.says}" for x in c.conflicts) or c.statement
        rows.append(
            [f"{_anchor('claim', rec)}{text(said)}", badge(ctx, c.status), text(c.statement), source_links(ctx, rec)]
        )
    return _kb_table("corrections", ["What the reports said", "Status", "What the sources support", "Sources"], rows)


def sc_undocumented(ctx: Ctx, pos: list[str], kw: dict[str, str]) -> str:
    """The package's env vars or public names that no KB record documents yet (from the inventory)."""
    kind = _one(pos, "kind (env, api or messages)")
    if kind not in ("env", "api", "messages"):
        raise ShortcodeError(f"undocumented takes env, api or messages, got '{kind}'")
    _no_kw(kw)
    try:
        inv = read_inventory(ctx.kb.root)
        release = f"{text(str(inv.get('package', 'torch-tpu')))} {text(str(inv.get('version', '')))}"
        if kind == "messages":
            return _undocumented_messages(undocumented_messages(ctx.kb, inv), release)
    except InventoryError as exc:
        raise ShortcodeError(str(exc)) from None
    names = undocumented(ctx.kb, inv, kind)
    if not names:
        what = "environment variable" if kind == "env" else "public name"
        return f"\n\nEvery {what} of {release} is documented above.\n\n"
    if kind == "env":
        header = ["Variable", "Kind"]
        rows = [[f"`{name}`", "internal" if "_INTERNAL_" in name else "user-facing"] for name in names]
    else:
        header, rows = ["Public name"], [[f"`{name}`"] for name in names]
    return f"\n\n{len(names)} in the package ({release}), not yet documented:" + _kb_table("undocumented", header, rows)


def _undocumented_messages(messages: list[dict[str, str]], release: str) -> str:
    if not messages:
        return f"\n\nEvery message of {release} that this list follows has an entry.\n\n"
    rows = [[md_code(m["text"]), md_text(m["kind"]), md_code(m["where"])] for m in messages]
    return (
        f"\n\n{len(messages)} {'message' if len(messages) == 1 else 'messages'} {release} can print "
        f"{'has' if len(messages) == 1 else 'have'} no entry yet:\n\n"
        + _kb_table("messages", ["Message (… is a value)", "Raised as", "Where"], rows)
    )


def _no_kw(kw: dict[str, str]) -> None:
    if kw:
        raise ShortcodeError(f"unexpected argument '{next(iter(kw))}' (expected none)")


def sc_review_queue(ctx: Ctx, pos: list[str], kw: dict[str, str]) -> str:
    """The pages and records due for review (kb/wiki/review.py), one row each."""
    _no_kw(kw)
    if pos:
        raise ShortcodeError(f"unexpected argument '{pos[0]}' (expected none)")
    if ctx.review is None:  # the first reading of the pages: the queue needs all of them
        return "\n\n*The review queue is computed once every page has been read.*\n\n"
    return ctx.review.markdown(ctx.link)


def review_note(ctx: Ctx) -> str:
    """A 'may be out of date' admonition for a page that is due, to go under its title."""
    return ctx.review.page_note(ctx.src_uri, ctx.link) if ctx.review else ""


def sc_bench(ctx: Ctx, pos: list[str], kw: dict[str, str]) -> str:
    """A run of ./dev bench: ``<!-- kb:bench about|timings|faults|ratios|chart [id=RUN] -->``."""
    run_id = kw.pop("id", None)
    _no_kw(kw)
    try:
        return benchrender.render(ctx.kb, _one(pos, "part"), run_id)
    except benchrender.BenchError as exc:
        raise ShortcodeError(str(exc)) from None


REVIEW_QUEUE = "review-queue"  # the shortcode of a page that shows the review queue (kb.mkdocs.project reads it)
RENDERERS: dict[str, Callable[[Ctx, list[str], dict[str, str]], str]] = {
    "table": sc_table,
    "figure": sc_figure,
    "claim": sc_claim,
    "badge": sc_badge,
    "limit": sc_limit,
    "mode": sc_mode,
    "chart": sc_chart,
    "diagram": sc_diagram,
    "corrections": sc_corrections,
    "entries": sc_entries,
    "error-index": sc_error_index,
    "env-summary": sc_env_summary,
    "undocumented": sc_undocumented,
    REVIEW_QUEUE: sc_review_queue,
    "bench": sc_bench,
    "glossary": lambda ctx, pos, kw: sc_table(ctx, ["glossary", *pos], kw),
    "sources": lambda ctx, pos, kw: sc_table(ctx, ["sources", *pos], kw),
}


def render_markdown(markdown: str, ctx: Ctx, shown: str, first_line: int = 1) -> tuple[str, list[Problem]]:
    """Replace every shortcode in prose (not in code or comments); return the Markdown and the problems."""
    problems: list[Problem] = []
    lines = markdown.split("\n")
    for n, line in prose_lines(markdown):
        if "kb:" in line:
            lines[n] = _render_line(line, ctx, shown, first_line + n, problems)
        if ":" in line and _NEAR_SHORTCODE.search(line):
            problems += _near_shortcodes(line, shown, first_line + n)
    return "\n".join(lines), problems


# What a writer may mean as a shortcode but isn't one: the prefix in another case (<!-- KB:table -->,
# <!-- Kb:claim -->), or a template's braces ({{ kb:table }}). Left as is, each would vanish silently.
_NEAR_SHORTCODE = re.compile(r"<!--\s*(?!kb:)[kK][bB]\s*:|\{\{\s*[kK][bB]\s*:|<!--\s*kb\s+:")


def _near_shortcodes(line: str, shown: str, lineno: int) -> list[Problem]:
    problems = []
    for m in _NEAR_SHORTCODE.finditer(_INLINE_CODE.sub(lambda c: " " * len(c.group(0)), line)):
        written = m.group(0)
        problems.append(
            Problem(
                shown,
                lineno,
                f"{written!r} is not a shortcode, so it would show nothing (expected '<!-- kb:NAME ... -->', "
                "with 'kb:' in lower case)",
            )
        )
    return problems


def _render_line(line: str, ctx: Ctx, shown: str, lineno: int, problems: list[Problem]) -> str:
    code_spans = [(m.start(), m.end()) for m in _INLINE_CODE.finditer(line)]

    def replace(m: re.Match[str]) -> str:
        if any(a <= m.start() < b for a, b in code_spans):
            return str(m.group(0))
        name = m.group(1)
        renderer = RENDERERS.get(name)
        if renderer is None:
            problems.append(
                Problem(
                    shown,
                    lineno,
                    f"unknown shortcode 'kb:{name}' (expected one of: {', '.join('kb:' + k for k in RENDERERS)})",
                )
            )
            return str(m.group(0))
        try:
            pos, kw = _parse_args(m.group(2))
            return renderer(ctx, pos, kw)
        except ShortcodeError as exc:
            problems.append(Problem(shown, lineno, f"kb:{name}: {exc}"))
        except Exception as exc:  # noqa: BLE001 - a renderer bug or odd data is a problem at this line, not a crash
            problems.append(Problem(shown, lineno, f"kb:{name}: could not render ({type(exc).__name__}: {exc})"))
        return str(m.group(0))

    return SHORTCODE.sub(replace, line)


def abbreviations(kb: KB, markdown: str | None = None) -> str:
    """Abbreviation definitions for the glossary terms (hover tooltips), to append to a page.

    With ``markdown``, only the terms that occur in it as words, as written or with character
    references read as the characters they stand for (the abbr extension sees a term between two
    references as a word): it marks a term only where it occurs, so the page comes out the same,
    and Markdown does not try every term on every page."""
    terms, defined = _glossary(kb)
    if markdown is None:
        lines = [line for _, line in defined]
    else:
        used = _used_terms(terms, outside_tables(markdown))  # Markdown never looks into the HTML tables
        lines = [line for term, line in defined if term in used]
    # One block per definition: the abbr extension takes one definition from the front of a block
    # and puts the rest back, testing every block processor on it again (quadratic in its lines).
    return "\n\n" + "\n\n".join(lines) + "\n" if lines else ""


_GLOSSARY: dict[tuple[int, int], tuple[object, tuple[str, ...], list[tuple[str, str]]]] = {}


def _glossary(kb: KB) -> tuple[tuple[str, ...], list[tuple[str, str]]]:
    """The glossary's terms, and each term with its abbreviation line, made once per list of
    glossary records and its length (a build's KB; kept with the list, so its id is never another list's)."""
    records = kb.tables.get("glossary", [])
    key = (id(records), len(records))
    found = _GLOSSARY.get(key)
    if found is None or found[0] is not records:
        defined = []
        for rec in kb.rows("glossary", Term):
            t = rec.model
            tip = f"{t.expansion}: {t.definition}" if t.expansion else t.definition
            defined.append((t.term.strip(), abbr_line(t.term, tip)))
        _GLOSSARY.clear()  # one KB's at a time: a serve rebuild's new KB replaces the last one
        found = _GLOSSARY[key] = (records, tuple(t for t, _ in defined), defined)
    return found[1], found[2]


def _used_terms(terms: tuple[str, ...], markdown: str) -> set[str]:
    """The terms found as words (``\\bTERM\\b``, as the abbr extension matches) in either text.

    A term of word characters only is found where a whole word is that term: the page's words,
    met once, against a set of such terms. Any other term (a phrase, ``C++``) is found by one
    trie-shaped pattern tried at every word edge, which finds the longest there; the shorter terms
    it begins with are checked along it. No step tries every term, so the work grows with the text
    and the terms a page has, never with the whole glossary."""
    return _found_terms(terms, markdown) | _found_terms(terms, html_unescape(markdown))


def _found_terms(terms: tuple[str, ...], text: str) -> set[str]:
    """The terms found as words in ``text`` (see _used_terms)."""
    return _found_in(*_term_index(terms), text)


def _found_in(words: frozenset[str], phrases: tuple[re.Pattern[str], frozenset[str]] | None, text: str) -> set[str]:
    used = set(words.intersection(_WORD_RUN.findall(text)))
    if phrases is not None:
        _find_phrases(*phrases, text, used)
    return used


_WORD_RUN = re.compile(r"\w+")


@lru_cache(maxsize=8)
def _term_index(terms: tuple[str, ...]) -> tuple[frozenset[str], tuple[re.Pattern[str], frozenset[str]] | None]:
    """The terms that are one word; the others, and a pattern that finds the longest of them from
    each word edge (as a lookahead, so the next edge is tried even inside a match)."""
    words = frozenset(t for t in terms if _WORD_RUN.fullmatch(t))
    others = frozenset(terms) - words
    if not others:
        return words, None
    return words, (re.compile(f"(?=({trie_pattern(tuple(sorted(others)))}))"), others)


def _find_phrases(pattern: re.Pattern[str], others: frozenset[str], text: str, used: set[str]) -> None:
    """Add to ``used`` every term of ``others`` that occurs in ``text`` between two word edges."""
    for m in pattern.finditer(text):
        start, longest = m.start(), m.group(1)
        used.add(longest)
        for end in range(len(longest)):  # a shorter term it begins with, where a word edge follows
            if longest[:end] in others and _is_edge(text, start + end):
                used.add(longest[:end])


def _is_edge(text: str, at: int) -> bool:
    """Whether ``\\b`` holds at ``at``: the characters on either side differ in being word characters."""
    return (at > 0 and _is_word(text[at - 1])) != (at < len(text) and _is_word(text[at]))


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"  # what re's \w matches in a str pattern


def banner(meta: dict[str, Any], ctx: Ctx) -> str:
    """A one-line 'applies to / reviewed' note shown at the top of a page."""
    parts = []
    if meta.get("applies_to"):
        parts.append(f"Applies to: {text(meta['applies_to'])}")
    if meta.get("reviewed"):
        parts.append(f"Reviewed: {text(meta['reviewed'])}")
    return f'<p class="kb-banner" {NOT_SEARCHED}>{" · ".join(parts)}</p>\n\n' if parts else ""


def with_banner(markdown: str, note: str) -> str:
    """Put the banner right under the page's H1 (or first, if the page has none)."""
    match = re.search(r"^# .*$", markdown, re.M)
    if not note or not match:
        return note + markdown
    return markdown[: match.end()] + "\n\n" + note + markdown[match.end() :]
