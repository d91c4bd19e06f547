"""Cross-table rules: unique ids, known sources, no orphans, status rules, dates."""

from __future__ import annotations

import datetime as dt

from . import diagrams
from .errors import Problem
from .load import KB, Record, is_row
from .schema import PRIMARY_KINDS, MigrationRule, Model, Source, Sourced


def validate_kb(kb: KB, today: dt.date | None = None) -> list[Problem]:
    """Every cross-record problem in the KB, unsorted."""
    today = today or dt.date.today()
    problems: list[Problem] = []
    problems += _unique_ids(kb)
    problems += diagrams.check(kb)
    sources = kb.index("sources")
    cited: set[str] = set()
    for records in kb.tables.values():
        for rec in records:
            problems += _refs(rec, sources, cited)
            if is_row(rec, Sourced):
                problems += _status(rec, sources)
            problems += _verified(rec, today)
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
        if rec.model.accessed > today:
            problems.append(
                Problem(
                    rec.path,
                    rec.line_of("accessed"),
                    f"{rec.where('accessed')}: {rec.model.accessed} is in the future (expected a date up to {today})",
                )
            )
    return problems


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


def _verified(rec: Record[Model], today: dt.date) -> list[Problem]:
    verified = getattr(rec.model, "verified", None)
    if verified is not None and verified > today:
        return [
            Problem(
                rec.path,
                rec.line_of("verified"),
                f"{rec.where('verified')}: {verified} is in the future (expected a date up to {today})",
            )
        ]
    return []
