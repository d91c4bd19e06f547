"""Stable URLs: the redirect map and the list of every URL the handbook has published.

A page that moves keeps its old URL through a redirect (the mkdocs-redirects plugin, whose
``redirect_maps`` in mkdocs.yml maps the old page to the new one, both docs-relative ``.md``
paths). ``docs/data/published-urls.txt`` lists every URL path ever published, one per line: each
must still be a page in the nav, a redirect's old page, or be marked ``removed: REASON``; and every
page in the nav must be listed. So a page deleted or renamed without a redirect fails the build.
"""

from __future__ import annotations

import ast
import importlib.util
import posixpath
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ..core.config import SiteConfig
from ..core.errors import Problem
from ..core.yamlload import KeyPath, Located
from ..site.sitepaths import built_file

PUBLISHED = "docs/data/published-urls.txt"
_MD_PATH = re.compile(r"(?:[a-z0-9][a-z0-9._-]*/)*[a-z0-9][a-z0-9._-]*\.md")
_URL_PATH = re.compile(r"/(?:[a-z0-9][a-z0-9._-]*/)*")
_ENTRY = re.compile(r"(\S+)(?:\s+removed:\s*(.*))?")
_HOW_TO_REDIRECT = (
    "add a redirect from the old page to the new one under plugins: redirects: redirect_maps: in "
    "mkdocs.yml and mkdocs.offline.yml, or write 'removed: WHY' after the URL"
)


@dataclass
class Redirects:
    """The plugin's map (old page -> new page#anchor) and the mkdocs.yml line of each entry."""

    targets: dict[str, str] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    line: int = 1  # of the map itself (or of plugins:)
    configured: bool = False  # mkdocs.yml lists the plugin


@dataclass
class Published:
    """One line of the published-URL list."""

    url: str
    line: int
    removed: str | None = None


def url_of(src_uri: str) -> str:
    """The URL path a page is served at with directory URLs: 'a/b.md' -> '/a/b/', 'a/index.md' -> '/a/'."""
    stem = src_uri[: -len(".md")]
    if stem == "index" or stem.endswith("/index"):
        stem = stem[: -len("index")]
    else:
        stem += "/"
    return "/" + stem.lstrip("/")


def redirects_of(config: Located) -> tuple[Redirects, list[Problem]]:
    """The ``redirects`` plugin's ``redirect_maps`` from a parsed mkdocs.yml."""
    data = config.data if isinstance(config.data, dict) else {}
    plugins = data.get("plugins")
    found = Redirects()
    if not isinstance(plugins, list):
        return found, []
    for i, item in enumerate(plugins):
        if not (isinstance(item, dict) and "redirects" in item):
            continue
        path: KeyPath = ("plugins", i, "redirects", "redirect_maps")
        options = item["redirects"]
        found.configured = True
        maps: Any = options.get("redirect_maps", {}) if isinstance(options, dict) else {}
        found.line = config.line(path)
        if not isinstance(maps, dict):
            return found, [
                Problem("mkdocs.yml", found.line, "redirect_maps is not a mapping (expected old.md: new.md)")
            ]
        for old, new in maps.items():
            found.lines[str(old)] = config.line(path + (old,))
            found.targets[str(old)] = new if isinstance(new, str) else repr(new)
    return found, []


def check_redirects(redirects: Redirects, pages: dict[str, set[str]]) -> list[Problem]:
    """Each entry maps a page that no longer exists to one that does, directly (``pages`` maps each
    page to its anchors)."""
    built = {_html(uri): uri for uri in pages}
    sources: dict[str, str] = {}  # stub file -> the old page that writes it
    problems = []
    for old, new in redirects.targets.items():
        for why in _redirect_faults(old, new, built, sources, redirects.targets, pages):
            problems.append(Problem("mkdocs.yml", redirects.lines[old], f"redirect '{old}' -> '{new}': {why}"))
    return problems


def _redirect_faults(
    old: str,
    new: str,
    built: dict[str, str],
    sources: dict[str, str],
    targets: dict[str, str],
    pages: dict[str, set[str]],
) -> list[str]:
    """What is wrong with one entry of the map (``sources`` collects the stubs seen so far)."""
    target, _, anchor = new.partition("#")
    if not _MD_PATH.fullmatch(old):
        return ["the old page is not a docs-relative .md path (expected e.g. 'section/old-name.md')"]
    if not _MD_PATH.fullmatch(target) or (anchor and not re.fullmatch(r"[\w-]+", anchor)):
        return [
            "the new page is not a docs-relative .md path (expected e.g. 'section/new-name.md', optionally #anchor)"
        ]
    faults = []
    html = _html(old)
    if html in built:
        faults.append(
            f"docs/{built[html]} is a page at that URL (expected the old page to be gone; remove the redirect)"
        )
    elif html in sources:
        faults.append(f"'{sources[html]}' already redirects from the same URL (expected one redirect per old URL)")
    sources[html] = old
    if target in targets:
        end = _end_of(target, targets)
        if end is None:
            faults.append(f"'{target}' is itself redirected, and the redirects loop (expected no chains or loops)")
        else:
            faults.append(f"'{target}' is itself redirected (expected no chains: point at '{end}' directly)")
    elif target not in pages:
        faults.append(f"docs/{target} does not exist (expected the page that replaced it)")
    elif anchor and anchor not in pages[target]:
        faults.append(f"docs/{target} has no anchor '#{anchor}' (expected a heading or id with that name)")
    return faults


def _end_of(start: str, targets: dict[str, str]) -> str | None:
    """Where a chain of redirects ends; None when it loops."""
    seen = {start}
    page = start
    while page in targets:
        page = targets[page].partition("#")[0]
        if page in seen:
            return None
        seen.add(page)
    return page


def _html(src_uri: str) -> str:
    return url_of(src_uri).lstrip("/") + "index.html"


def read_published(root: Path) -> tuple[list[Published], list[Problem]]:
    """The list's entries: '/url/path/' or '/url/path/  removed: why'; '#' starts a comment line."""
    path = root / PUBLISHED
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return [], [Problem(PUBLISHED, 1, "missing (expected the list of every published URL path, one per line)")]
    except (OSError, UnicodeDecodeError) as exc:
        return [], [Problem(PUBLISHED, 1, f"cannot be read ({exc}) (expected UTF-8 text)")]
    entries: list[Published] = []
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for n, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _ENTRY.fullmatch(line)
        url = m.group(1) if m else line
        if m is None or not _URL_PATH.fullmatch(url) or (m.group(2) is not None and not m.group(2).strip()):
            problems.append(
                Problem(
                    PUBLISHED,
                    n,
                    f"'{line[:100]}' is not an entry (expected a URL path such as /migrate/quickstart/, "
                    "optionally followed by 'removed: WHY')",
                )
            )
            continue
        if url in seen:
            problems.append(
                Problem(PUBLISHED, n, f"'{url}' is listed twice (expected once; first on line {seen[url]})")
            )
            continue
        seen[url] = n
        entries.append(Published(url, n, m.group(2).strip() if m.group(2) else None))
    return entries, problems


def nav_pages(config: Located) -> list[str]:
    """The .md pages the nav names."""
    data = config.data if isinstance(config.data, dict) else {}
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, str) and node.endswith(".md") and ":" not in node:
            found.append(node)

    walk(data.get("nav"))
    return found


def check_published(
    entries: list[Published], nav: list[str], redirects: Redirects, shown_of: dict[str, str]
) -> list[Problem]:
    """Every published URL still leads somewhere (or is marked removed), and every nav page is listed.

    ``shown_of`` maps a page to its path as shown in problems (``docs/...``)."""
    current = {url_of(uri): uri for uri in nav}
    moved = {url_of(old): old for old in redirects.targets if _MD_PATH.fullmatch(old)}
    problems = []
    listed = {e.url for e in entries}
    for e in entries:
        if e.removed is not None:
            if e.url in current or e.url in moved:
                what = f"docs/{current[e.url]}" if e.url in current else f"a redirect from '{moved[e.url]}'"
                problems.append(
                    Problem(PUBLISHED, e.line, f"'{e.url}' is marked removed but is {what} (expected one or the other)")
                )
        elif e.url not in current and e.url not in moved:
            problems.append(
                Problem(
                    PUBLISHED,
                    e.line,
                    f"'{e.url}' was published but is no page in the nav, no redirect and not marked removed "
                    f"(expected it to keep working: {_HOW_TO_REDIRECT})",
                )
            )
    for url, uri in sorted(current.items()):
        if url not in listed:
            problems.append(
                Problem(
                    shown_of.get(uri, f"docs/{uri}"),
                    1,
                    f"the page's URL '{url}' is not in {PUBLISHED} (expected a line '{url}' there: "
                    "add it with the page, and never delete a line)",
                )
            )
    for url, old in sorted(moved.items()):
        if url not in listed:
            problems.append(
                Problem(
                    "mkdocs.yml",
                    redirects.lines[old],
                    f"the redirect's old URL '{url}' is not in {PUBLISHED} (expected a line '{url}' there)",
                )
            )
    return problems


def check_urls(
    site: SiteConfig, pages: dict[str, set[str]], shown_of: dict[str, str]
) -> tuple[list[Problem], list[str]]:
    """The redirect map and the published-URL list of the project of ``site``: (problems, notes).

    A project whose mkdocs.yml has no redirects plugin and that has no list (a test fixture, a
    fresh site) is not held to stable URLs; a note says so."""
    root, config = site.root, site.main.located
    if config is None:
        return [], []  # absent or unreadable: kb/core/config.py reports that
    redirects, problems = redirects_of(config)
    if not redirects.configured and not (root / PUBLISHED).exists():
        return problems, [f"stable URL check skipped: no redirects plugin in mkdocs.yml and no {PUBLISHED}"]
    problems += check_redirects(redirects, pages)
    entries, found = read_published(root)
    problems += found
    if not found or entries:
        problems += check_published(entries, nav_pages(config), redirects, shown_of)
    return problems, []


def project_redirects(site: SiteConfig) -> dict[str, str]:
    """The redirect map in mkdocs.yml (mkdocs.offline.yml repeats it; a test keeps them equal)."""
    config = site.main.located
    return redirects_of(config)[0].targets if config is not None else {}


def redirect_pages(targets: dict[str, str], use_directory_urls: bool = True) -> dict[str, str]:
    """Each redirect stub's site-relative path -> the exact text mkdocs-redirects writes there (for
    the built-site check). The text is the plugin's own template, read from its source file so the
    check doesn't import MkDocs; the paths follow the plugin's rules (tests/wiki/test_urls.py holds them
    to the plugin's own helpers). Entries the validator rejects are left out: the build fails
    before any stub is written."""
    if not targets:
        return {}
    template = _plugin_template()
    out: dict[str, str] = {}
    for old, new in targets.items():
        target, hash_, anchor = new.partition("#")
        if not (_MD_PATH.fullmatch(old) and _MD_PATH.fullmatch(target)):
            continue
        stub = built_file(old, use_directory_urls)
        dest = posixpath.relpath(_page_url(target, use_directory_urls), posixpath.dirname(stub) or ".")
        dest += ("/" if use_directory_urls else "") + hash_ + anchor
        out[stub] = template.format(url=dest)
    return out


def _page_url(uri: str, use_directory_urls: bool) -> str:
    """A page's URL as MkDocs writes it: 'a/b/' (or 'a/b.html'), './' for the home page."""
    dest = built_file(uri, use_directory_urls)
    folder, name = posixpath.split(dest)
    return (folder or ".") + "/" if use_directory_urls and name == "index.html" else dest


@cache
def _plugin_template() -> str:
    """``HTML_TEMPLATE`` of the installed mkdocs-redirects, read from its source without importing it."""
    spec = importlib.util.find_spec("mkdocs_redirects.plugin")
    source = Path(spec.origin).read_text(encoding="utf-8") if spec and spec.origin else ""
    for node in ast.parse(source).body:
        if (
            isinstance(node, ast.Assign)
            and [getattr(t, "id", None) for t in node.targets] == ["HTML_TEMPLATE"]
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    from mkdocs_redirects import plugin  # type: ignore[import-untyped]  # the layout changed: ask it

    return str(plugin.HTML_TEMPLATE)


def built_redirects(plugins: Any, use_directory_urls: bool) -> dict[str, str]:
    """``redirect_pages`` for the redirects plugin's map as a build uses it (``config.plugins``;
    validated by ``check_urls`` before the build)."""
    plugin = plugins.get("redirects")
    maps = plugin.config.get("redirect_maps", {}) if plugin is not None else {}
    return redirect_pages({str(old): str(new) for old, new in maps.items()}, use_directory_urls)
