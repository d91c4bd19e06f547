"""The whole pipeline for one project folder: load -> validate -> render -> check."""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from ..core.config import MAIN, SiteConfig, read_config
from ..core.errors import Problem, escape_text
from ..core.files import scan_project
from ..core.load import ALL_TABLES, KB, TableReads, read_kb
from ..core.mdscan import prose_lines
from ..core.schema import TABLES
from ..core.validate import validate_kb
from ..core.yamlload import YAMLProblem, check_characters, decode
from ..pages import pages as pages_module
from ..pages.namecheck import Reuse, check_errors, check_names, fresh
from ..pages.pages import (
    Page,
    check_descriptions,
    check_nav,
    check_pages,
    check_section_links,
    page_anchors,
    split_front_matter,
)
from ..pages.saidonce import check_said_once
from ..pages.tags import check_tags
from ..render import render as render_module
from ..render.render import REVIEW_QUEUE, SHORTCODE, Ctx, render_markdown
from ..site.allowlist import check_scripts
from ..site.sitepaths import built_file
from ..wheel import fwwheels
from ..wheel.coverage import InventoryError, message_problems, read_inventory
from ..wheel.package import PIN_FILE, PackageError, cached_wheel, load_index, pin_text, read_pin
from ..wheel.wheel import WheelIndex
from ..wheel.wheelfacts import check_facts
from ..wiki.editlinks import check_environment
from ..wiki.review import Queue, build_today, make_queue, release_of
from ..wiki.urls import check_urls
from .pagecache import OTHER_FILES, Memo, ProjectCache, data_digests, digest, tree_digest

REVIEW_SHORTCODE = f"kb:{REVIEW_QUEUE}"  # a page that shows the review queue (kb/wiki/review.py)


@dataclass
class Project:
    root: Path
    kb: KB | None = None
    pages: dict[str, Page] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    review: Queue | None = None  # the pages and records due for review (kb/wiki/review.py)
    kb_key: str = ""  # under serve: the digest of docs/data the KB was read from (kb/mkdocs/pagecache.py)
    table_keys: dict[str, str] = field(default_factory=dict)  # and of each table's files (pagecache.data_digests)

    @property
    def docs(self) -> Path:
        return self.root / "docs"


def validate_project(
    root: Path,
    wheel: Path | None = None,
    package: bool = True,
    cache: ProjectCache | None = None,
    config: SiteConfig | None = None,
) -> Project:
    """Check the files, load and validate the KB, render every page and check its links.

    The KB is a gate: pages are rendered (and ``project.kb`` is set) only when every table loads
    and every reference resolves. Otherwise the KB's problems are reported and the page checks
    that need no KB still run: front matter, characters, links between pages and files, anchors
    (on pages without shortcodes, whose anchors are known without rendering), snippet includes
    and the nav. Nothing under docs/ is read before the file scan has found it safe.

    With ``package`` (the default), the handbook is also held to the pinned wheel when it is
    cached (or given as ``wheel``); when it is not, a note says the package check was skipped.
    With ``cache`` (under serve), the KB and the pages' shortcodes are not read or rendered again
    when their inputs are unchanged (kb/mkdocs/pagecache.py); every check still runs. ``config``: mkdocs.yml
    and mkdocs.offline.yml as the build read them (kb/core/config.py); read here when not given.
    """
    project = Project(root)
    scan = scan_project(root)
    project.problems += scan.problems
    kb, problems, kb_key, table_keys = _read_kb(project.docs / "data", root, cache)
    if not problems:
        problems = validate_kb(kb)
    project.problems += problems
    ready = not problems  # the gate: render only from a KB whose references all resolve
    renders = _Renders(kb_key, cache.renders, table_keys, cache.anchors) if cache is not None and kb_key else _Renders()
    queue_for = partial(review_queue, root, kb) if ready else None
    pages, problems, project.review = read_pages(
        scan.pages, project.docs, root, kb if ready else None, renders, queue_for
    )
    project.problems += problems
    project.problems += check_descriptions(pages)
    try:
        if ready:
            project.problems += check_pages(pages, project.docs, kb)
            project.problems += check_section_links(kb, pages)
        else:  # without sources, every external URL would look unregistered: that check waits for the KB
            project.problems += [
                p
                for p in check_pages(pages, project.docs, KB(kb.root))
                if "is not a registered source" not in p.message
            ]
    except Exception as exc:  # a bug in a check must not become a traceback
        project.problems.append(_crash(exc, "docs"))
    refused = any(p.path == MAIN for p in scan.problems)  # never read: outside the project, a FIFO, too large
    site = read_config(root, refused) if config is None or refused else config
    project.problems += site.problems
    project.problems += check_said_once((p.shown, p.body, p.body_line) for p in pages)
    _check_config(project, pages, site)
    project.pages = {p.src_uri: p for p in pages}
    if ready:
        project.kb, project.kb_key, project.table_keys = kb, kb_key, table_keys
        if package:
            project.problems += check_package(project, wheel, cache=cache)
    project.problems = sorted(set(project.problems))
    return project


def _read_kb(data: Path, root: Path, cache: ProjectCache | None) -> tuple[KB, list[Problem], str, dict[str, str]]:
    """The KB and its problems, and the digests of docs/data it was read from, whole and by table
    ("" and {} without a cache, or when a table changed while it was read: then nothing read from
    it is kept)."""
    if cache is None:
        return (*read_kb(data, shown_root=root), "", {})
    before, tables = data_digests(data, TABLES)
    found = cache.kbs.get(before)
    if found is not None:
        return found[0], list(found[1]), before, tables
    kb, problems = read_kb(data, shown_root=root)
    if tree_digest(data) != before:
        return kb, problems, "", {}
    cache.kbs.put(before, (kb, list(problems)))
    return kb, problems, before, tables


@dataclass
class _Renders:
    """Where read_pages may reuse a page's rendered shortcodes and anchors: the KB's digests and the
    cache (only for a KB read whole from one state of docs/data: a ``kb_key``).

    A render is kept with the digests of the tables it read (load.TableReads) and of docs/data's
    files that are no table (read by path, such as the message inventory), and reused for the same
    page text while those digests hold: an edit to one table renders again only the pages that
    read it."""

    kb_key: str = ""
    memo: Memo[tuple[tuple[tuple[str, str], ...], str, list[Problem]]] | None = None
    tables: dict[str, str] = field(default_factory=dict)  # digest by table name (pagecache.data_digests)
    anchor_memo: Memo[frozenset[str]] | None = None

    def anchors(self, rendered: str) -> set[str]:
        """``page_anchors`` of a rendered page, reused under serve for the same text."""
        if self.anchor_memo is None:
            return page_anchors(rendered)
        found = self.anchor_memo.get_or_make(digest(["anchors", rendered]), lambda: frozenset(page_anchors(rendered)))
        return set(found or ())

    def render(self, page: Page, kb: KB, queue: Queue | None) -> tuple[str, list[Problem]]:
        """The page's Markdown with its shortcodes rendered; a page that shows the review queue
        depends on the date and every page, so it is never reused."""
        body, src_uri, shown, line = page.body, page.src_uri, page.shown, page.body_line
        if self.memo is None or not self.kb_key or REVIEW_SHORTCODE in body:
            return render_markdown(body, Ctx(kb, src_uri, queue), shown, line)
        key = digest([src_uri, shown, str(line), body])
        found = self.memo.entries.get(key)
        if found is not None and all(self.tables.get(t, "") == d for t, d in found[0]):
            self.memo.get(key)  # counted as reused
            return found[1], list(found[2])
        self.memo.misses += 1
        reads = TableReads.of(kb)
        out, problems = render_markdown(body, Ctx(reads, src_uri, queue), shown, line)
        names = set(self.tables) if ALL_TABLES in reads.read.names else reads.read.names | {OTHER_FILES}
        self.memo.put(key, (tuple((t, self.tables.get(t, "")) for t in sorted(names)), out, list(problems)))
        return out, problems


def _check_config(project: Project, pages: list[Page], site: SiteConfig) -> None:
    """The checks that read mkdocs.yml: the nav, tags, settings, scripts and the published URLs
    (only the tags' shape when the file scan found mkdocs.yml unsafe to read: a FIFO, too large)."""
    try:
        project.problems += check_tags(site, pages)
    except Exception as exc:  # a bug in a check must not become a traceback
        project.problems.append(_crash(exc, MAIN))
    if site.refused:
        return
    try:
        project.problems += check_nav(site.main, pages)
        project.problems += check_environment(site)
        project.problems += check_scripts(site)
        found, notes = check_urls(site, {p.src_uri: p.anchors for p in pages}, {p.src_uri: p.shown for p in pages})
        project.problems += found
        project.notes += notes
    except Exception as exc:  # a bug in a check must not become a traceback
        project.problems.append(_crash(exc, MAIN))


# Pages are read by regular expressions (here, in pages.py and in render.py) some of which take
# time that grows with the square of a line's length on hostile input ('[a' or '<a ' repeated).
# The largest page is 16 KB and the longest line 516 characters; these limits keep the worst case
# to seconds. A page past them is reported and checked no further (links to it still resolve).
MAX_PAGE_BYTES = 256_000
MAX_LINE = 4_000


class _AnyAnchor(set[str]):
    """The anchors of a page that was not rendered: shortcodes add headings, so any anchor may exist."""

    def __contains__(self, item: object) -> bool:
        return True


def read_pages(
    paths: list[Path],
    docs: Path,
    root: Path,
    kb: KB | None,
    renders: _Renders | None = None,
    queue_for: Callable[[list[Page]], tuple[Queue, list[Problem]]] | None = None,
) -> tuple[list[Page], list[Problem], Queue | None]:
    """Read ``paths`` (pages the file scan found safe) and, with a KB, render their shortcodes,
    each page once: ``queue_for`` makes the review queue from every page's sources first (the
    pages that show it need it), and it is returned.

    Never raises for bad input: a page that can't be read or rendered is a problem at its line.
    Without a KB the pages keep their shortcodes, and a page with any has ``_AnyAnchor``. A page
    that can't be read, or is past a limit, is kept as an empty stand-in, so that the nav and
    links to it don't report it missing.
    """
    pages, problems, readable = _read_sources(paths, docs, root)
    if kb is None:
        return pages, problems, None
    queue = None
    if queue_for is not None:
        try:
            queue, found = queue_for(pages)
            problems += found
        except Exception as exc:  # a bug in a check must not become a traceback
            problems.append(_crash(exc, "docs"))
    renders = renders or _Renders()
    for page in readable:
        try:
            page.rendered, found = renders.render(page, kb, queue)
            problems += found
            page.anchors = renders.anchors(page.rendered)
        except Exception as exc:  # a bug in a renderer must not become a traceback
            problems.append(_crash(exc, page.shown))
            page.rendered, page.anchors = page.body, _AnyAnchor()
    return pages, problems, queue


def _read_sources(paths: list[Path], docs: Path, root: Path) -> tuple[list[Page], list[Problem], list[Page]]:
    """Every page read, with its front matter split off; the pages that can be rendered, apart.
    Until rendered, a page's anchors are its headings (``_AnyAnchor`` when it has shortcodes)."""
    pages: list[Page] = []
    problems: list[Problem] = []
    readable: list[Page] = []
    for path in paths:
        src_uri = path.relative_to(docs).as_posix()
        shown = path.relative_to(root).as_posix()
        text, found = _read_page(path, shown)
        problems += found
        if text is None:
            pages.append(Page(src_uri, shown, "", anchors=_AnyAnchor()))
            continue
        page = Page(src_uri, shown, text)
        pages.append(page)
        try:
            page.meta, page.body, page.body_line, found = split_front_matter(text, shown)
            problems += found  # the front matter's characters are checked by the YAML reader
            problem = check_characters(page.body, shown, page.body_line, allow="\t")  # code blocks may need tabs
            if problem:
                problems.append(problem)
            page.rendered = page.body
            has_shortcodes = any(SHORTCODE.search(line) for _, line in prose_lines(page.body))
            page.anchors = _AnyAnchor() if has_shortcodes else page_anchors(page.body)
            readable.append(page)
        except Exception as exc:  # a bug in a check must not become a traceback
            problems.append(_crash(exc, shown))
            page.rendered, page.anchors = page.body, _AnyAnchor()
    return pages, problems, readable


def _read_page(path: Path, shown: str) -> tuple[str | None, list[Problem]]:
    """The text of a page (None when it can't be checked) and the problems with its bytes and lines."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_PAGE_BYTES + 1)
    except OSError as exc:
        return None, [Problem(shown, 1, f"cannot be read: {exc.strerror or exc} (expected a readable file)")]
    if len(raw) > MAX_PAGE_BYTES:
        return None, [
            Problem(shown, 1, f"page is larger than {MAX_PAGE_BYTES // 1000} KB (expected at most that; split it)")
        ]
    try:
        text = decode(raw, shown)  # CRLF line ends and a byte order mark read as LF and no mark
    except YAMLProblem as exc:
        return None, [exc.problem]
    for n, line in enumerate(text.split("\n")):
        if len(line) > MAX_LINE:
            return None, [
                Problem(
                    shown,
                    n + 1,
                    f"line of {len(line):,} characters (expected at most {MAX_LINE:,}; break it, "
                    "and the page is checked once it fits)",
                )
            ]
    return text, []


def _crash(exc: Exception, shown: str) -> Problem:
    """An unexpected exception as a problem where it happened: the traceback names the page (a frame
    of kb.pages.pages with a ``page``), the line (``lineno``) and the shortcode (``name`` in render's
    ``replace``); otherwise line 1 of ``shown``. A frame's module is known by its globals, which are
    that module's own namespace, never by its name: a move or rename keeps the attribution."""
    line, name = 1, None
    in_pages, in_render = vars(pages_module), vars(render_module)
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        module, code, local = frame.f_globals, frame.f_code.co_name, frame.f_locals
        if module is in_pages and isinstance(local.get("page"), Page):
            shown = local["page"].shown
        if (module is in_pages or module is in_render) and isinstance(local.get("lineno"), int):
            line = local["lineno"]
        if module is in_render and code == "replace" and isinstance(local.get("name"), str):
            name = local["name"]
    what = f"kb:{name}: the renderer failed" if name else "the page could not be checked"
    return Problem(
        shown,
        line,
        escape_text(
            f"{what} ({type(exc).__name__}: {exc}) (expected it to work: this is a bug in scripts/kb, "
            "please report it with this page)"
        ),
    )


def review_queue(root: Path, kb: KB, pages: list[Page]) -> tuple[Queue, list[Problem]]:
    """The review queue as of the build's date (``KB_TODAY`` or today), from the pages' sources."""
    today, problems = build_today(os.environ)
    try:
        release = release_of(kb, *read_pin(root)) if (root / PIN_FILE).is_file() else None
    except PackageError:
        release = None  # check_package reports the pin
    return make_queue(kb, pages, today, release=release), problems


def check_package(
    project: Project, wheel: Path | None = None, index: WheelIndex | None = None, cache: ProjectCache | None = None
) -> list[Problem]:
    """Hold the KB, pages and samples to the pinned wheel, or say why that was skipped."""
    assert project.kb is not None
    if not (project.root / PIN_FILE).is_file() and index is None and wheel is None:
        project.notes.append(f"package check skipped: no {PIN_FILE} in {project.root}")
        return []
    try:
        pin = pin_text(project.root)
        if index is None:
            wheel = wheel or cached_wheel(project.root)
            if wheel is None:
                project.notes.append(
                    f"package check skipped: no cached {pin} wheel in .cache/wheels/ "
                    "(run './dev check-wheel' once to download it; the build never downloads)"
                )
                return []
            index = _load_index(wheel, cache)
    except PackageError as exc:
        return [exc.problem]
    others = frozenset(fwwheels.framework_pins(project.root))
    reuse = _package_reuse(project, wheel, pin, others, cache)
    kb, held = project.kb, index
    problems = check_names(
        kb, project.pages.values(), project.root / "snippets", held, pin, project.root, others, reuse
    )
    problems += _framework_check(project, cache)
    problems += (reuse or fresh)(
        ["errors, messages, facts"], lambda: check_errors(kb, held) + _messages(project) + check_facts(kb, held.facts)
    )
    project.notes.append(f"package check: held to {pin} ({Path(index.path).name})")
    return problems


def _load_index(wheel: Path, cache: ProjectCache | None) -> WheelIndex:
    """``load_index``, reused under serve for the same wheel by name, size and modification time
    (the key of load_index's own index of it)."""
    if cache is None:
        return load_index(wheel)
    found = cache.indexes.get_or_make(
        digest(["index", str(wheel.resolve()), _stat_line(wheel)]), partial(load_index, wheel)
    )
    assert found is not None  # load_index returns an index or raises
    return found


def _package_reuse(
    project: Project, wheel: Path | None, pin: str, others: frozenset[str], cache: ProjectCache | None
) -> Reuse | None:
    """Under serve, a package check's problems reused for the same parts (the page or sample
    checked, with its text) and the same KB (all of docs/data), pin, framework pins and wheel (by
    name, size and modification time, as load_index trusts its own index of it)."""
    if cache is None or not project.kb_key or wheel is None:
        return None
    memo, context = cache.package, ["package", project.kb_key, pin, *sorted(others), _stat_line(wheel)]

    def reuse(parts: list[str], make: Callable[[], list[Problem]]) -> list[Problem]:
        return list(memo.get_or_make(digest([*context, *parts]), make) or [])

    return reuse


def _framework_check(project: Project, cache: ProjectCache | None) -> list[Problem]:
    """``fwwheels.check``, reused under serve for the same KB, frameworks.pin and cached wheels (a
    wheel by name, size and modification time: released files, never edited, too large to hash)."""
    kb, root = project.kb, project.root
    assert kb is not None
    if cache is None or not project.kb_key:
        return fwwheels.check(kb, root, project.notes)
    pins = root / fwwheels.PIN_FILE
    stats = [_stat_line(w) for w in sorted((root / fwwheels.CACHE).glob("*.whl"))]
    key = digest(["frameworks", project.kb_key, pins.read_bytes() if pins.is_file() else b"", *stats])
    found = cache.checks.get(key)
    if found is None:
        cache.checks.misses += 1
        notes: list[str] = []
        found = (fwwheels.check(kb, root, notes), notes)
        cache.checks.put(key, found)
    project.notes += found[1]
    return list(found[0])


def _stat_line(wheel: Path) -> str:
    """A wheel's name, size and modification time; only the wheels, as ``fwwheels`` reads only
    them (an index cache or a download written beside them by another build is not an input)."""
    try:
        st = wheel.stat()
    except OSError:  # removed since the listing: the check will not find it either
        return f"{wheel.name} gone"
    return f"{wheel.name} {st.st_size} {st.st_mtime_ns}"


def _messages(project: Project) -> list[Problem]:
    """Every message the wheel prints is an error entry or an internal one (kb.wheel.coverage). Without a
    usable inventory there is nothing to hold the entries to: check-wheel reports that inventory."""
    assert project.kb is not None
    try:
        return message_problems(project.kb, read_inventory(project.root / "docs" / "data"))
    except InventoryError:
        return []


def built_sources(pages: dict[str, Page], directory_urls: bool = True) -> dict[str, str]:
    """Map a built HTML file (site-relative) to the page it came from, for error hints."""
    return {built_file(uri, directory_urls): page.shown for uri, page in pages.items()}
