"""The review queue: the pages and KB records that are due for another look, and why.

Every page carries ``reviewed:`` and every record ``verified:``. An item is due when that date is

- older than ``max_age`` days (default 90) on ``today``;
- before the pinned torch-tpu release: the release date is the ``published:`` date of the source
  record for that release's PyPI page (``https://pypi.org/project/NAME/VERSION/``). The wheel itself
  carries no date (its zip entries are all stamped 1980-01-01), so the KB is the honest offline
  record. A month-only date counts from the first day of the month: only reviews made before the
  release's month are flagged;
- before a source it relies on was published: the source says something new since. A source has
  no separate "updated" date, so ``published:`` is the date of the text the KB cites; a month-only
  date counts from its first day, as for the release. Re-reading a source (``accessed:``) changes
  nothing in it and does not make anything due. A record relies on the sources in its ``sources:``
  list. A page cites the sources it links to (every external URL on
  a page is a registered source) and the sources of the records it places by id
  (``kb:figure``, ``kb:claim``, ``kb:limit``, ``kb:mode``), whose facts its prose talks about.
  Tables and lists (``kb:table``, ``kb:entries``, charts) are not counted for the page: the records
  in them are in the queue themselves.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from ..core.errors import Problem
from ..core.escape import md_code, md_text
from ..core.load import KB, Record
from ..core.mdscan import prose_lines
from ..core.schema import Model, Source
from ..pages.pages import Page
from ..render.render import md_table

DEFAULT_MAX_AGE = 90
TODAY_VAR = "KB_TODAY"
_PLACED = re.compile(r"<!--\s*kb:(figure|claim|limit|mode)\s+([a-z0-9][a-z0-9-]*)\s*-->")
_PLACED_TABLE = {"figure": "figures", "claim": "claims", "limit": "limits", "mode": "modes"}
_URL = re.compile(r"""https://[^\s<>"'`)\]]+""")
_REVIEWED = re.compile(r"^reviewed\s*:", re.M)
_INLINE_CODE = re.compile(r"(`+).+?\1")


@dataclass(frozen=True)
class Release:
    """The pinned release (``torch-tpu==0.2.0``) and the date it was published, when the KB has it."""

    spec: str
    date: dt.date | None = None
    shown_date: str = ""  # as the source states it (``2026-10``)


@dataclass(frozen=True)
class Due:
    """One page or record due for review, at the line of its review date."""

    path: str
    line: int
    label: str  # 'page' or 'TABLE record ID'
    last: dt.date
    reasons: tuple[str, ...]
    src_uri: str | None = None  # for a page: its docs-relative path

    def __str__(self) -> str:
        return str(Problem(self.path, self.line, "due for review: " + "; ".join(self.reasons)))


def parse_today(value: str | None) -> dt.date:
    """``value`` (YYYY-MM-DD) or, when it is empty, the date today. ValueError on anything else."""
    if not value:
        return dt.date.today()
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            return dt.date.fromisoformat(value)
    except ValueError:
        pass
    raise ValueError(f"'{value}' is not a date (expected YYYY-MM-DD)")


def build_today(environ: Mapping[str, str]) -> tuple[dt.date, list[Problem]]:
    """The build's notion of today: ``KB_TODAY`` when set (for reproducible builds and tests)."""
    try:
        return parse_today(environ.get(TODAY_VAR)), []
    except ValueError as exc:
        return dt.date.today(), [Problem(TODAY_VAR, 1, f"environment variable {TODAY_VAR}: {exc}")]


def period_start(value: str) -> dt.date:
    """The first day of a YYYY, YYYY-MM or YYYY-MM-DD date."""
    parts = [int(p) for p in value.split("-")] + [1, 1]
    return dt.date(parts[0], parts[1], parts[2])


def release_of(kb: KB, project: str, version: str) -> Release:
    """The pinned release, dated by the KB source for its PyPI page (no date when there is none)."""
    spec = f"{project}=={version}"
    page = f"https://pypi.org/project/{project}/{version}".lower()
    for rec in kb.rows("sources", Source):
        src = rec.model
        if src.url and src.url.rstrip("/").lower() == page and src.published:
            return Release(spec, period_start(src.published), src.published)
    return Release(spec)


def page_sources(page: Page, kb: KB) -> set[str]:
    """The ids of the sources a page cites: those it links to, and those of the records it places by id."""
    by_url = {rec.model.url.rstrip("/"): rec.id for rec in kb.rows("sources", Source) if rec.model.url}
    cited: set[str] = set()
    for _, prose in prose_lines(page.body):
        line = _INLINE_CODE.sub("", prose)  # a shortcode or URL shown as code is not placed
        for url in _URL.findall(line):
            found = by_url.get(url.rstrip(".,;:").split("#")[0].rstrip("/"))
            if found:
                cited.add(found)
        for name, record_id in _PLACED.findall(line):
            rec = kb.get(_PLACED_TABLE[name], record_id)
            if rec is not None:
                cited.update(_cites(rec))
    return cited


def _cites(rec: Record[Model]) -> list[str]:
    return [ref.id for ref in getattr(rec.model, "sources", [])]


def _reasons(
    last: dt.date,
    verb: str,
    cited: Iterable[str],
    published: dict[str, tuple[dt.date, str]],
    today: dt.date,
    max_age: int,
    release: Release | None,
) -> tuple[str, ...]:
    reasons = []
    age = (today - last).days
    if age > max_age:
        reasons.append(f"last {verb} {last}, {age} days ago (expected within {max_age} days)")
    if release and release.date and last < release.date:
        reasons.append(f"last {verb} {last}, before {release.spec} was published ({release.shown_date})")
    newer = sorted((published[s], s) for s in set(cited) if s in published and published[s][0] > last)
    if newer:
        listed = ", ".join(f"'{s}' ({shown})" for (_, shown), s in newer)
        reasons.append(
            f"cites {'a source' if len(newer) == 1 else 'sources'} published after it was last {verb}: {listed}"
        )
    return tuple(reasons)


def review_queue(
    kb: KB, pages: Iterable[Page], today: dt.date, max_age: int = DEFAULT_MAX_AGE, release: Release | None = None
) -> list[Due]:
    """Every page and record that is due, in path and line order."""
    published = {
        rec.id: (period_start(rec.model.published), rec.model.published)
        for rec in kb.rows("sources", Source)
        if rec.model.published
    }
    due: list[Due] = []
    for page in pages:
        reviewed = page.meta.get("reviewed")
        try:
            last = dt.date.fromisoformat(str(reviewed))
        except ValueError:
            continue  # the page check reports a missing or malformed date
        reasons = _reasons(last, "reviewed", page_sources(page, kb), published, today, max_age, release)
        if reasons:
            m = _REVIEWED.search(page.text)
            line = page.text.count("\n", 0, m.start()) + 1 if m else 1
            due.append(Due(page.shown, line, "page", last, reasons, page.src_uri))
    for table, records in kb.tables.items():
        for rec in records:
            verified = getattr(rec.model, "verified", None)
            if not isinstance(verified, dt.date):
                continue
            reasons = _reasons(verified, "verified", _cites(rec), published, today, max_age, release)
            if reasons:
                due.append(Due(rec.path, rec.line_of("verified"), f"{table} record {rec.id}", verified, reasons))
    return sorted(due, key=lambda d: (d.path, d.line))


@dataclass(frozen=True)
class Queue:
    """The review queue of one run, with what it was computed against (for the page that shows it)."""

    today: dt.date
    max_age: int
    release: Release | None
    items: tuple[Due, ...]

    def of_page(self, src_uri: str) -> Due | None:
        return next((d for d in self.items if d.src_uri == src_uri), None)

    def rules(self) -> str:
        """What the queue was computed against, in a sentence."""
        release = self.release
        if release is None:
            when = "the pinned release (unknown: no torch-tpu.pin)"
        elif release.date is None:
            when = f"{release.spec} (its date is unknown: add a source for its PyPI page, with published:)"
        else:
            when = f"{release.spec} was published ({release.shown_date})"
        return (
            f"last reviewed (a page) or verified (a record) more than {self.max_age} days before "
            f"{self.today.isoformat()}, before {when}, or before a source it cites was published"
        )

    def markdown(self, link: Callable[[str], str]) -> str:
        """The queue as the review-queue page shows it: what it was computed against, then a row per item."""
        intro = f"\n\nDue: {md_text(self.rules())}. "
        if not self.items:
            return intro + "Nothing is due.\n\n"
        rows = []
        for due in self.items:
            if due.src_uri is not None:
                item = f"[{md_text(due.path)}]({link(due.src_uri)})"
            else:
                item = f"{md_code(f'{due.path}:{due.line}')} ({md_text(due.label)})"
            rows.append([item, md_text(due.last.isoformat()), "; ".join(md_text(r) for r in due.reasons)])
        count = f"{len(self.items)} item{'s' if len(self.items) != 1 else ''} due:\n\n"
        return intro + count + md_table(["Page or record", "Last reviewed", "Why"], rows) + "\n\n"

    def page_note(self, src_uri: str, link: Callable[[str], str]) -> str:
        """A 'may be out of date' admonition for the page ``src_uri`` when it is due, else ``""``."""
        due = self.of_page(src_uri)
        if due is None:
            return ""
        why = "; ".join(md_text(r) for r in due.reasons)
        return (
            f'!!! warning "This page may be out of date"\n\n'
            f"    Last reviewed {md_text(due.last.isoformat())}. Due for review: {why}. "
            f"See the [review queue]({link('about/review-queue.md')}).\n\n"
        )


def make_queue(
    kb: KB, pages: Iterable[Page], today: dt.date, max_age: int = DEFAULT_MAX_AGE, release: Release | None = None
) -> Queue:
    return Queue(today, max_age, release, tuple(review_queue(kb, pages, today, max_age, release)))
