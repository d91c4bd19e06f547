"""Cross-table rules: unique ids, known sources, no orphans, status rules, dates."""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path
from urllib.parse import unquote

from . import agree, diagramlayout
from .errors import Problem
from .load import KB, Record, is_row
from .schema import PRIMARY_KINDS, MigrationRule, Model, Source, Sourced


def build_date() -> dt.date:
    """The date at build time, for the checks that refuse a date in the future (tests replace it)."""
    return dt.date.today()


def validate_kb(kb: KB, today: dt.date | None = None) -> list[Problem]:
    """Every cross-record problem in the KB, unsorted."""
    today = today or build_date()
    problems: list[Problem] = []
    problems += _unique_ids(kb)
    problems += diagramlayout.check(kb)
    sources = kb.index("sources")
    cited: set[str] = set()
    for records in kb.tables.values():
        for rec in records:
            problems += _refs(rec, sources, cited)
            if is_row(rec, Sourced):
                problems += _status(rec, sources)
            problems += _dates(rec, today)
    problems += _rules(kb)
    problems += _glossary_size(kb)
    problems += agree.check(kb)
    problems += _sources(kb, cited)
    return problems


# Every glossary term is a tooltip, and a row of the glossary page and of the printable handbook,
# so each term adds to every build and to those pages' weight (about 280 bytes of HTML a page). The
# cost grows linearly (the abbr extension's pattern is trie-shaped, kb/render/abbrtrie.py, and the
# glossary's table is written as HTML, kb/render/tablehtml.py): 10,000 terms add about 3.7 s of CPU
# to a build, where plain MkDocs and Material alone take about 2.6 s for the same rows (bench.py
# glossary --build --floor; 6 s before the HTML table; before the trie, the glossary page's share
# grew with the square of the terms).
MAX_GLOSSARY_TERMS = 20_000


def _glossary_size(kb: KB) -> list[Problem]:
    records = kb.tables.get("glossary", [])
    if len(records) <= MAX_GLOSSARY_TERMS:
        return []
    rec = records[MAX_GLOSSARY_TERMS]
    return [
        Problem(
            rec.path,
            rec.line,
            f"{rec.where()}: the glossary has {len(records):,} terms (expected at most {MAX_GLOSSARY_TERMS:,}: "
            "every term is a tooltip and a row of the glossary page and the printable handbook, so each "
            "adds to every build and to those pages' weight; keep the terms readers meet in the handbook)",
        )
    ]


def _unique_ids(kb: KB) -> list[Problem]:
    problems = []
    for records in kb.tables.values():
        first: dict[str, Record[Model]] = {}
        for rec in records:
            if rec.id in first:
                problems.append(
                    Problem(
                        rec.path,
                        rec.line_of("id"),
                        f"{rec.where('id')}: duplicate id '{rec.id}' "
                        f"(first used on line {first[rec.id].line_of('id')}; expected unique ids)",
                    )
                )
            else:
                first[rec.id] = rec
    return problems


def _refs(rec: Record[Model], sources: dict[str, Record[Model]], cited: set[str]) -> list[Problem]:
    """Every source a record points at (sources[] and conflicts[]) must exist."""
    problems = []
    refs = [("sources", i, "id", ref.id) for i, ref in enumerate(getattr(rec.model, "sources", []))]
    refs += [("conflicts", i, "source", c.source) for i, c in enumerate(getattr(rec.model, "conflicts", []))]
    for key, i, field, source_id in refs:
        cited.add(source_id)
        if source_id not in sources:
            problems.append(
                Problem(
                    rec.path,
                    rec.line_of(key, i, field),
                    f"{rec.where(key, i, field)}: unknown source "
                    f"'{source_id}' (expected an id from docs/data/sources.yml)",
                )
            )
    return problems


def _kinds(rec: Record[Sourced], sources: dict[str, Record[Model]]) -> set[str]:
    return {sources[r.id].narrow(Source).model.kind for r in rec.model.sources if r.id in sources}


def _status(rec: Record[Sourced], sources: dict[str, Record[Model]]) -> list[Problem]:
    """The status rules of about/conventions.md."""
    model = rec.model
    status = model.status
    where, line = rec.where("status"), rec.line_of("status")
    has_primary = bool(_kinds(rec, sources) & PRIMARY_KINDS)
    named = {c.source for c in model.conflicts}
    if status == "confirmed" and not has_primary:
        return [
            Problem(
                rec.path,
                line,
                f"{where}: 'confirmed' but no cited source is primary or vendor-docs "
                "(expected a primary or vendor-docs source, or status 'reported')",
            )
        ]
    if status == "disputed" and len(named) < 2:
        return [
            Problem(
                rec.path,
                line,
                f"{where}: 'disputed' but conflicts name {len(named)} source(s) "
                "(expected at least two sources, each with what it says)",
            )
        ]
    if status == "corrected":
        if not has_primary:
            return [
                Problem(
                    rec.path,
                    line,
                    f"{where}: 'corrected' but no cited source is primary or vendor-docs "
                    "(expected the correction to rest on a primary or vendor-docs source)",
                )
            ]
        if not named:
            return [
                Problem(
                    rec.path,
                    line,
                    f"{where}: 'corrected' but conflicts is empty "
                    "(expected the source that published the wrong claim and what it says)",
                )
            ]
    return []


DATE_FIELDS = ("verified", "accessed", "measured", "published")  # published may be YYYY or YYYY-MM


def _dates(rec: Record[Model], today: dt.date) -> list[Problem]:
    """Every date of a record is on or before ``today``; a partial date counts from its first day."""
    problems = []
    for key in DATE_FIELDS:
        value = getattr(rec.model, key, None)
        if value is None:
            continue
        first = value if isinstance(value, dt.date) else _first_day(str(value))
        if first is not None and first > today:
            problems.append(
                Problem(
                    rec.path,
                    rec.line_of(key),
                    f"{rec.where(key)}: {value} is in the future (expected a date up to {today})",
                )
            )
    return problems


def _rules(kb: KB) -> list[Problem]:
    """Each scanner rule has a code of its own and rests on a record that exists."""
    problems: list[Problem] = []
    codes: dict[str, str] = {}
    for rule in kb.rows("migration_rules", MigrationRule):
        code = rule.model.code
        if code in codes:
            problems.append(
                Problem(
                    rule.path,
                    rule.line_of("code"),
                    f"{rule.where('code')}: code {code} is also rule '{codes[code]}' (expected one code per rule)",
                )
            )
        codes.setdefault(code, rule.id)
        table, ref = rule.model.rests_on.table, rule.model.rests_on.id
        if kb.get(table, ref) is None:
            problems.append(
                Problem(
                    rule.path,
                    rule.line_of("rests_on"),
                    f"{rule.where('rests_on')}: no {table} record '{ref}' (expected an id from docs/data/{table}.yml)",
                )
            )
    return problems


def _sources(kb: KB, cited: set[str]) -> list[Problem]:
    """Each source is cited, can be found (url or file), and its file stays inside the project
    (its dates are checked with every record's, in ``_dates``)."""
    problems: list[Problem] = []
    for rec in kb.rows("sources", Source):
        if rec.id not in cited:
            problems.append(
                Problem(
                    rec.path,
                    rec.line,
                    f"{rec.where()}: source '{rec.id}' is cited by no record "
                    "(expected every source to back at least one fact; cite it or remove it)",
                )
            )
        if rec.model.url is None and rec.model.file is None:
            problems.append(
                Problem(
                    rec.path,
                    rec.line,
                    f"{rec.where()}: source '{rec.id}' has neither url nor file "
                    "(expected one of them, so a reader can find it)",
                )
            )
        problems += _source_file(rec, kb.root.parent.parent)
    return problems


def _first_day(value: str) -> dt.date | None:
    parts = [int(p) for p in value.split("-")] + [1, 1]
    try:
        return dt.date(parts[0], parts[1], parts[2])
    except ValueError:
        return None  # the schema reports a date that isn't one


# A file: value with a space describes where an excerpt came from ('code excerpt: ... (repository
# path unknown)'), unless it starts the way a path outside the project does.
_OUTSIDE = re.compile(r"\s*(?:[/\\~]|\.\.|file:|[A-Za-z]:)", re.I)


def _source_file(rec: Record[Source], root: Path) -> list[Problem]:
    """A source's ``file:`` path stays inside the project: not absolute, no '..', no symlink out."""
    value = rec.model.file
    if value is None:
        return []
    path = unquote(value).strip()
    if re.search(r"\s", path) and not _OUTSIDE.match(path):
        return []
    outside = (
        _OUTSIDE.match(path) is not None
        or ".." in re.split(r"[/\\]", path)
        or not Path(os.path.realpath(root / path)).is_relative_to(os.path.realpath(root))
    )
    if not outside:
        return []
    return [
        Problem(
            rec.path,
            rec.line_of("file"),
            f"{rec.where('file')}: {value!r} points outside the project (expected a path inside the project "
            "folder, without '..', not absolute and not through a symlink that leads out)",
        )
    ]
