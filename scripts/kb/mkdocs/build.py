"""The MkDocs build's steps as library calls, for the hook (scripts/hooks.py) to call from its events.

One ``Build`` lives for a whole ``mkdocs build`` or ``mkdocs serve``. Under serve a broken edit must
not leave the server stuck: its problems are printed and the last good knowledge base and pages
keep being served until the edit is fixed; the built-site check runs beside the server after each
rebuild, so the page reloads without waiting for it, and its problems are printed when it is done;
a check the next rebuild overtook (rewriting the site under it) ends quietly, never with a traceback.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from ..core.config import SiteConfig, read_config
from ..core.errors import Problem, format_problems
from ..core.yamlload import YAMLProblem, decode
from ..pages.pages import split_front_matter
from ..render.abbrtrie import TrieAbbrExtension
from ..render.postprocess import fix_html
from ..render.printpage import PRINT_PAGES, Reuse, Section, build_print, over_budget, part_of
from ..render.readingpath import link_reading_path
from ..render.render import Ctx, abbreviations, banner, render_markdown, review_note, with_banner
from ..render.searchindex import SearchIndexError, compact_file, material_worker
from ..render.slim import slim_html
from ..render.tablehtml import StashTablesExtension
from ..wiki.editlinks import check_settings
from .export import export_project
from .pagecache import Memo, digest
from .project import Project, built_sources, validate_project
from .servecache import ServeCache
from .serveguard import LastGood
from .watcher import quicken

T = TypeVar("T")
CHECK_TIMED = "built-site check took"  # ./dev bench reads the time from this line


class BuildFailed(Exception):
    """Problems that stop the build; the hook turns this into MkDocs' PluginError."""

    def __init__(self, problems: list[Problem], what: str) -> None:
        super().__init__(f"{len(problems)} problem(s) in the {what}:\n{format_problems(problems)}")


def fail(problems: list[Problem], what: str) -> None:
    if problems:
        raise BuildFailed(problems, what)


def report(problems: list[Problem], what: str) -> None:
    """Under serve: print the problems (not as warnings, which strict mode would turn into a stop)."""
    print(
        f"\n{len(problems)} problem(s) in the {what} (still serving the last good version):\n"
        f"{format_problems(problems)}\n",
        file=sys.stderr,
        flush=True,
    )


def page_markdown(
    project: Project, uri: str, rendered: str, meta: dict[str, Any], memo: Memo[Any] | None = None
) -> str:
    """A page's Markdown as MkDocs converts it: shortcodes rendered, the applies-to banner and the
    out-of-date note under the title, and the glossary terms the page uses as abbreviations (with
    ``memo``, reused for the same text and KB)."""
    kb = project.kb
    assert kb is not None
    ctx = Ctx(kb, uri, project.review)
    out = with_banner(rendered, banner(meta, ctx) + review_note(ctx))
    glossary = project.table_keys.get("glossary", "")  # the one table abbreviations() reads
    return out + _memo(memo, ["abbr", glossary, out], lambda: abbreviations(kb, out), bool(project.kb_key))


def _memo(memo: Memo[Any] | None, parts: list[str], make: Callable[[], T], usable: bool = True) -> T:
    """``make()``, reused from ``memo`` for the same ``parts`` (every input of ``make``)."""
    if memo is None or not usable:
        return make()
    key = digest(parts)
    found = memo.get(key)
    if found is None:
        memo.misses += 1
        found = make()
        memo.put(key, found)
    return found  # what make() returned for these parts


def finish(html: str) -> str:
    """A built page as it is written: the theme's markup fixed for accessibility, then lighter."""
    return slim_html(fix_html(html))


@dataclass
class Build:
    serving: bool = False
    project: Project | None = None
    last_good: Project | None = None  # the last project that validated, served while an edit is broken
    last_pages: dict[str, str] = field(default_factory=dict)  # each page's last good Markdown
    generation: int = 0  # counts builds, so that a site check of an older build under serve is dropped
    last_site: LastGood | None = None  # under serve: a copy of the last site that built
    cache: ServeCache = field(default_factory=ServeCache)  # under serve: work on unchanged pages
    cached_generation: int = 0  # the build the cache was last set up for
    site_config: SiteConfig | None = None  # this build's mkdocs.yml and mkdocs.offline.yml, read once

    def _derived(self) -> Memo[Any] | None:
        return self.cache.derived if self.serving else None

    def printable(
        self, pages: list[Any], print_src: str, print_url: str, own_html: str = ""
    ) -> tuple[str, list[Problem]]:
        """A part of the printable handbook (``printable``), reused under serve while none of its
        pages changed and no page was added, moved or retitled (the HTML of another part's pages
        is not read); each of its pages' sections is reused while that page did not change."""
        memo = self._derived()
        skipped = unprinted(pages)
        parts = ["print", print_src, print_url, own_html, *sorted(skipped)]
        for p in pages:
            parts += [p.file.src_uri, p.url, p.title or "", (p.content or "") if _printed_on(p, print_src) else ""]
        return _memo(memo, parts, lambda: printable(pages, print_src, print_url, own_html, memo, skipped))

    def finish(self, html: str) -> str:
        """``finish`` (accessibility fixes, then lighter markup), reused under serve for a page
        whose HTML did not change."""
        return _memo(self._derived(), ["finish", html], lambda: finish(html))

    def reuse_templates(self, env: Any) -> Any:
        """Under serve, the theme's templates are not compiled again on every rebuild. Every
        build: the templates get the path of Material's search worker (overrides/main.html starts
        the handbook's search worker in the page head with it)."""
        env.globals["kb_search_worker"] = material_worker()
        if self.serving:
            env.bytecode_cache = self.cache.templates
        return env

    def reuse_unchanged(self, page: Any, config: Any, files: Any) -> None:
        """Under serve, let an unchanged page reuse its last conversion and search entries."""
        if not self.serving:
            return  # a build does all the work, always
        if self.cached_generation != self.generation:
            self.cached_generation = self.generation
            self.cache.start(config, files)
            self.cache.cache_search(config.plugins)
        self.cache.attach(page)

    def keep_serving(self, server: Any, site: Path) -> Any:
        """Under serve, wrap the server's builder so a failed rebuild leaves the last good site, and
        look for edits every 0.1 s rather than MkDocs' 0.5 s (kb/mkdocs/watcher.py)."""
        self.last_site = LastGood(site)
        server.builder = self.last_site.wrap(server.builder)
        return quicken(server)

    def shut_down(self) -> None:
        if self.last_site is not None:
            self.last_site.close()

    def check_config(self, config: Any) -> Any:
        """The site address and the Git host for the edit actions (MkDocs' config), checked before
        any template sees them; no repository URL means no actions. mkdocs.yml and
        mkdocs.offline.yml are read here, once per build, for every check that needs them."""
        self.site_config = read_config(Path(config.config_file_path).parent)
        text = self.site_config.main.text or ""  # unreadable: validation reports it
        fail(check_settings(config.repo_url, config.edit_uri, text, config.site_url), "site and Git host settings")
        if not config.repo_url:
            config.edit_uri = None  # MkDocs would warn that the edit path alone is no URL
        config.markdown_extensions.append(TrieAbbrExtension())  # the abbr tooltips, matched by a trie
        config.markdown_extensions.append(StashTablesExtension())  # tables written as HTML, stored whole
        return config

    def follow_reading_path(self, nav: Any, config: Any) -> Any:
        """Previous and next along mkdocs.yml's extra.reading_path (kb/render/readingpath.py), whose
        problems give their line in mkdocs.yml (read here if check_config has not read it)."""
        if self.site_config is None:
            self.site_config = read_config(Path(config.config_file_path).parent)
        text = self.site_config.main.text
        fail(link_reading_path(nav.pages, config.extra.get("reading_path"), text or ""), "reading path")
        return nav

    def pre_build(self, root: Path, log: Callable[[str], None]) -> None:
        """Validate the KB and every page before anything is built."""
        self.generation += 1
        cache = self.cache.project if self.serving else None
        project = validate_project(root, cache=cache, config=self.site_config)
        for note in project.notes:
            log(note)
        if project.problems and self.serving and self.last_good is not None:
            report(project.problems, "knowledge base or pages")
            self.project = self.last_good
            return
        fail(project.problems, "knowledge base or pages")
        self.project = self.last_good = project

    def page(self, markdown: str, uri: str, meta: dict[str, Any], source: str | None) -> str:
        """The Markdown of one page; a page validation did not see as it is now (generated by a
        plugin, or shown from the last good KB) is rendered here."""
        project = self.project
        assert project is not None and project.kb is not None
        known = project.pages.get(uri)
        if known is not None and known.body.strip() == markdown.strip():
            rendered = known.rendered
        else:
            shown, first_line = _source_of(uri, source)
            rendered, problems = render_markdown(markdown, Ctx(project.kb, uri, project.review), shown, first_line)
            if problems and self.serving and uri in self.last_pages:
                report(problems, uri)
                return self.last_pages[uri]
            fail(problems, uri)
        out = self.last_pages[uri] = page_markdown(project, uri, rendered, meta, self._derived())
        return out

    def export(self, root: Path, site: Path) -> None:
        """kb.json and kb.schema.json (kb/mkdocs/export.py); under serve, kb.json's text is reused
        while docs/data and the pin are the same."""
        export_project(self.project, root, site, partial(_memo, self._derived()))

    def compact_search(self, index: Path, log: Callable[[str], None]) -> None:
        """Material's search index, compacted in place (kb/render/searchindex.py); none without search.
        Under serve, a section's split is reused for the same text (kb/mkdocs/pagecache.py)."""
        if not index.is_file():
            return
        try:
            before, after = compact_file(index, partial(_memo, self._derived()))
        except SearchIndexError as exc:
            fail([Problem(str(index), 1, str(exc))], "search index")
            return
        log(f"search index: {before:,} -> {after:,} bytes")

    def check_site(
        self,
        site: Path,
        shown: str,
        directory_urls: bool,
        redirects: dict[str, str],
        root_path: str,
        log: Callable[[str], None],
    ) -> None:
        """The search index compacted, then the built-site check; under serve the check runs beside
        the server and only reports."""
        from ..site.sitecheck import check_site

        self.compact_search(site / "search" / "search_index.json", log)
        assert self.project is not None
        hints = built_sources(self.project.pages, directory_urls)
        generation = self.generation

        def run(workers: int) -> list[Problem]:
            start = time.perf_counter()
            problems = check_site(site, hints, shown=shown, redirects=redirects, workers=workers, root_path=root_path)
            log(f"{CHECK_TIMED} {time.perf_counter() - start:.3f} s, {len(problems)} problem(s)")
            return problems

        if not self.serving:
            fail(run(2), "built site")
            return
        log(self.cache.sweep())

        def in_background() -> None:  # one process: the server's threads are running
            try:
                problems = run(1)
            except Exception as exc:  # noqa: BLE001  # a thread's error would print a traceback
                if generation == self.generation:  # else the next build rewrote the site under the check
                    report(
                        [Problem(shown, 1, f"the built-site check stopped: {type(exc).__name__}: {exc}")], "built site"
                    )
                return
            if problems and generation == self.generation:  # a newer build makes these stale
                report(problems, "built site")

        threading.Thread(target=in_background, name="kb-check-site", daemon=True).start()


# Material's search plugin drops these attributes from a page when it indexes it, which for most
# pages comes after the print page collects them: the same pattern, for the printable copy.
_SEARCH_ATTRS = re.compile(r'\s?data-search-\w+="[^"]+"')
_NO_PART = "no part of the printable handbook holds this page (expected its folder in PARTS, kb/render/printpage.py)"


def print_sections(pages: list[Any], print_src: str | None = None, memo: Memo[Any] | None = None) -> list[Section]:
    """The nav pages other than the print pages, as sections of the printable handbook (with
    ``print_src``, the HTML only of the pages that part prints: the others' is not read; with
    ``memo``, a page's HTML without the search attributes is reused for the same HTML)."""

    def unsearched(html: str) -> str:
        return str(_memo(memo, ["unsearched", html], lambda: _SEARCH_ATTRS.sub("", html)))

    return [
        Section(p.file.src_uri, p.url, p.title or "", unsearched(p.content or ""))
        if print_src is None or _printed_on(p, print_src)
        else Section(p.file.src_uri, p.url, p.title or "", "")
        for p in pages
        if p.file.src_uri not in PRINT_PAGES
    ]


def _printed_on(page: Any, print_src: str) -> bool:
    part = part_of(page.file.src_uri)
    return part is not None and part.src_uri == print_src and page.file.src_uri not in PRINT_PAGES


def unprinted(pages: list[Any]) -> frozenset[str]:
    """The pages that no part of the printable handbook prints: past its size limit (over_budget)."""
    return over_budget([(p.file.src_uri, len(p.content or "")) for p in pages if p.file.src_uri not in PRINT_PAGES])


def printable(
    pages: list[Any],
    print_src: str,
    print_url: str,
    own_html: str = "",
    memo: Memo[Any] | None = None,
    skipped: frozenset[str] | None = None,
) -> tuple[str, list[Problem]]:
    """The part ``print_src`` of the printable handbook's HTML, on a line of its own as Markdown
    puts a raw HTML block, and a problem for each id it would repeat (``own_html``: the print
    page's own content) and for each page that no part holds (``memo``: under serve, each page's
    section is reused for the same inputs, see build_print; ``skipped``: ``unprinted(pages)``)."""
    urls = {p.file.src_uri: p.url for p in pages}
    skipped = unprinted(pages) if skipped is None else skipped
    sections, elsewhere, problems = [], {}, []
    reuse: Reuse | None = None if memo is None else partial(_memo, memo)
    for section in print_sections(pages, print_src, memo):
        part = part_of(section.src_uri)
        if part is None:
            problems.append(Problem(f"docs/{section.src_uri}", 1, _NO_PART))
            continue
        sections.append(section)
        if part.src_uri != print_src:
            elsewhere[section.src_uri] = urls.get(part.src_uri, part.src_uri.removesuffix(".md") + "/")
    html, repeated = build_print(sections, print_url, own_html, elsewhere, print_src, reuse, skipped)
    return "\n" + html, problems + repeated


def _source_of(uri: str, source: str | None) -> tuple[str, int]:
    """``docs/...`` and the line of the file that MkDocs' Markdown for the page starts on (front
    matter and the blank lines after it counted)."""
    shown = f"docs/{uri}"
    try:
        text = decode(Path(source or "").read_bytes(), shown)
    except (OSError, YAMLProblem):
        return shown, 1
    body, line = split_front_matter(text, shown)[1:3]
    return shown, line + len(body) - len(body.lstrip("\n"))  # MkDocs drops the blank lines after front matter
