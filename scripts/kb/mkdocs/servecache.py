"""Under ``mkdocs serve``: a page whose inputs did not change since the last rebuild is not
converted from Markdown again, nor parsed again for the search index (kb/mkdocs/pagecache.py holds the
results). Together these were about 55% of a rebuild.

What the conversion reads, and so what its key holds: the page's final Markdown (the KB records
its shortcodes render, its banner and abbreviations are in it), its path and URL, the site's
files and their URLs (links are resolved against them), mkdocs.yml (the extensions and link
checks) and every snippet file. A conversion that logged a warning is never kept, so the warning
(a strict-mode stop) comes back on every rebuild until the page is fixed; the anchors a page
holds and links to are kept, so MkDocs checks the links into an edited page against it anew.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import jinja2.bccache

from .pagecache import Memo, ProjectCache, digest, tree_digest


@dataclass
class Converted:
    """What ``Page.render`` sets on a page, with the linked files by their path."""

    content: str
    toc: Any
    title: str | None
    anchors: set[str]
    links: dict[str, dict[str, str]] | None


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


class TemplateCode(jinja2.BytecodeCache):
    """The theme's templates compiled once per serve: Jinja checks each against its source's
    checksum before using it, so an edited template is compiled again."""

    def __init__(self) -> None:
        self.code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.key in self.code:
            bucket.bytecode_from_string(self.code[bucket.key])

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.code[bucket.key] = bucket.bytecode_to_string()


@dataclass
class ServeCache:
    converted: Memo[Converted] = field(default_factory=Memo)
    searched: Memo[list[dict[str, Any]]] = field(default_factory=Memo)
    project: ProjectCache = field(default_factory=ProjectCache)  # validation's (kb/mkdocs/project.py)
    derived: Memo[Any] = field(default_factory=Memo)  # the build's own steps on a page (kb/mkdocs/build.py)
    templates: TemplateCode = field(default_factory=TemplateCode)
    site: str = ""
    snippets: str = ""  # their digest when the build started
    config: Any = (
        None  # the build's MkDocs config  # the digest of what every page's conversion reads besides its own Markdown
    )

    def start(self, config: Any, files: Any) -> None:
        """A new build: the site's files, the Markdown settings as MkDocs loaded them (not the file,
        which may have changed since) and the snippets, read as they are now."""
        listing = sorted(f"{f.src_uri}\0{f.dest_uri}\0{f.url}" for f in files)
        settings = [config[k] for k in ("markdown_extensions", "mdx_configs", "validation", "use_directory_urls")]
        self.config, self.snippets = config, _snippets_digest(config)
        self.site = digest([*listing, repr(settings), self.snippets])

    def attach(self, page: Any) -> None:
        """Make ``page.render`` reuse the last conversion of the same inputs."""
        page.render = lambda config, files: self._render(page, config, files)

    def _render(self, page: Any, config: Any, files: Any) -> None:
        key = digest([self.site, page.file.src_uri, page.file.url, page.markdown or ""])
        found = self.converted.get(key)
        if found is not None:
            _apply(page, found, files)
            return
        self.converted.misses += 1
        warnings = _Warnings()
        logger = logging.getLogger("mkdocs")
        logger.addHandler(warnings)
        try:
            type(page).render(page, config, files)
        finally:
            logger.removeHandler(warnings)
        if not warnings.count:
            self.converted.put(key, _taken(page))

    def cache_search(self, plugins: Any) -> None:
        """Wrap Material's search index so an unchanged page's entries are reused. Material only
        writes an entry out (json.dumps) once made, so each is copied, not its lists and strings."""
        plugin = plugins.get("material/search") if hasattr(plugins, "get") else None
        index = getattr(plugin, "search_index", None)
        if index is None:
            return
        original = index.add_entry_from_context

        def add(page: Any) -> None:
            key = _search_key(page)
            found = self.searched.get(key)
            if found is not None:
                index.entries.extend(dict(entry) for entry in found)
                return
            self.searched.misses += 1
            start = len(index.entries)
            original(page)
            self.searched.put(key, [dict(entry) for entry in index.entries[start:]])

        index.add_entry_from_context = add

    def sweep(self) -> str:
        """End of a build: drop what it did not use, and every conversion when a snippet changed
        during the build (one may hold the new text under the old key); what was reused."""
        if self.config is not None and _snippets_digest(self.config) != self.snippets:
            self.converted.entries.clear()
        self.derived.sweep()
        (ch, cm), (sh, sm), (rh, rm) = self.converted.sweep(), self.searched.sweep(), self.project.sweep()
        return (
            f"page cache: {ch} of {ch + cm} conversions, {sh} of {sh + sm} search parses "
            f"and {rh} of {rh + rm} shortcode renders reused"
        )


def _snippets_digest(config: Any) -> str:
    """Every file under pymdownx.snippets' base paths (relative ones from the working folder, as
    the extension reads them)."""
    paths = (config["mdx_configs"] or {}).get("pymdownx.snippets", {}).get("base_path", ["."])
    return digest(tree_digest(Path(p)) for p in ([paths] if isinstance(paths, str) else paths))


def _taken(page: Any) -> Converted:
    links = page.links_to_anchors
    return Converted(
        page.content or "",
        copy.deepcopy(page.toc),
        page._title_from_render,
        set(page.present_anchor_ids or ()),
        None if links is None else {f.src_uri: dict(v) for f, v in links.items()},
    )


def _apply(page: Any, found: Converted, files: Any) -> None:
    page.content = found.content
    page.toc = copy.deepcopy(found.toc)
    page._title_from_render = found.title
    page.present_anchor_ids = set(found.anchors)
    if found.links is not None:
        page.links_to_anchors = {files.get_file_from_path(uri): dict(v) for uri, v in found.links.items()}


def _search_key(page: Any) -> str:
    meta = page.meta or {}
    return digest(
        [
            page.url,
            str(page.title),
            page.content or "",
            repr([meta.get("search"), meta.get("tags"), meta.get("title")]),
            _toc_text(page.toc),
        ]
    )


def _toc_text(items: Any) -> str:
    return repr([(i.title, i.url, i.level, _toc_text(i.children)) for i in items or ()])
