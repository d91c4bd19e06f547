"""Page rules, checked on the Markdown sources with their lines: front matter, shortcodes,
links and anchors between pages, images, and external URLs (each must be a registered source)."""

from __future__ import annotations

import datetime as dt
import html
import posixpath
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ..core import validate
from ..core.config import ConfigFile
from ..core.errors import Problem
from ..core.load import KB, Record
from ..core.mdscan import code_mask, prose_lines
from ..core.schema import ErrorEntry, Framework, MigrationRule, Source
from ..core.yamlload import KeyPath, Located, YAMLProblem, parse

_FRONT = re.compile(r"\A---[ \t]*\n(.*?\n)?---[ \t]*\n", re.S)
# Bounded repeats keep these linear on hostile lines (a line of 100,000 '[' or '<a ').
_MD_LINK = re.compile(
    r"(!?)\[(?:[^\[\]]|\[[^\[\]]{0,500}\]){0,1000}\]\(\s*<?([^)\s>]{1,2000})>?(?:\s+\"[^\"]{0,500}\")?\s*\)"
)
_HTML_REF = re.compile(
    r"""<(?:a|img|script|link|iframe|source)\b[^<>]{0,2000}?\s(?:href|src)\s*=\s*["']([^"']+)["']""", re.I
)
_URL = re.compile(r"""https?://[^\s<>"'`)\]]+""")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_ATTR_ID = re.compile(r"\{[^}]*#([\w-]+)[^}]*\}\s*$")
_RAW_ID = re.compile(r"""\sid\s*=\s*["']([^"']+)["']""")
_SNIPPET = re.compile(r"""^\s*-{1,}8<-{1,}\s+(["'])([^"']+)\1""")


@dataclass
class Page:
    """One Markdown page: its source, front matter and rendered body."""

    src_uri: str
    shown: str
    text: str
    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    body_line: int = 1
    rendered: str = ""
    anchors: set[str] = field(default_factory=set)


def split_front_matter(text: str, shown: str) -> tuple[dict[str, Any], str, int, list[Problem]]:
    """(meta, body, first body line, problems). A page must start with front matter."""
    m = _FRONT.match(text)
    if not m:
        return {}, text, 1, [Problem(shown, 1, "no front matter (expected a '---' block with 'reviewed: YYYY-MM-DD')")]
    body_line = text.count("\n", 0, m.end()) + 1
    try:
        located = parse(m.group(1) or "", shown)
    except YAMLProblem as exc:
        p = exc.problem
        msg = "front matter is empty" if "empty" in p.message else p.message
        line = 1 if "empty" in p.message else p.line + 1
        return (
            {},
            text[m.end() :],
            body_line,
            [Problem(shown, line, msg + (" (expected 'reviewed: YYYY-MM-DD')" if "empty" in p.message else ""))],
        )
    meta = located.data if isinstance(located.data, dict) else {}
    problems = _front_matter_fields(meta, located, shown)
    reviewed = meta.get("reviewed")
    if reviewed is None:
        problems.append(Problem(shown, 1, "front matter has no 'reviewed:' (expected 'reviewed: YYYY-MM-DD')"))
    elif not (isinstance(reviewed, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", reviewed) and _real_date(reviewed)):
        problems.append(
            Problem(
                shown,
                located.line(("reviewed",)) + 1,
                f"'reviewed: {reviewed}' is not an ISO date (expected YYYY-MM-DD)",
            )
        )
    elif (today := validate.build_date()) < dt.date.fromisoformat(reviewed):
        problems.append(
            Problem(
                shown,
                located.line(("reviewed",)) + 1,
                f"'reviewed: {reviewed}' is in the future (expected a date up to {today})",
            )
        )
    problems += _description(meta, located, shown)
    return meta, text[m.end() :], body_line, problems


_DESCRIBE = "one sentence on what this page covers, its own, shown by search engines and link previews"


def _description(meta: dict[str, Any], located: Located, shown: str) -> list[Problem]:
    """A page's own description: present and not empty (its form is checked with the other text fields)."""
    if "description" not in meta:
        return [Problem(shown, 1, f"front matter has no 'description:' (expected {_DESCRIBE})")]
    value = meta["description"]
    if value is None or (isinstance(value, str) and not value.strip()):
        line = located.line(("description",)) + 1
        return [Problem(shown, line, f"front matter 'description' is empty (expected {_DESCRIBE})")]
    return []


def check_descriptions(pages: list[Page]) -> list[Problem]:
    """Two pages with the same description: the later one (in path order) is reported at its line."""
    first: dict[str, Page] = {}
    problems: list[Problem] = []
    for page in sorted(pages, key=lambda p: p.shown):
        value = page.meta.get("description")
        if not isinstance(value, str) or not value.strip():
            continue
        key = " ".join(value.split()).casefold()
        if key not in first:
            first[key] = page
            continue
        other = first[key]
        problems.append(
            Problem(
                page.shown,
                _front_line(page.text, "description"),
                f"front matter 'description' is the same as {other.shown}'s (line "
                f"{_front_line(other.text, 'description')}) (expected {_DESCRIBE})",
            )
        )
    return problems


def _front_line(text: str, key: str) -> int:
    """The line of ``key:`` in a page's front matter (1 when it isn't there)."""
    m = _FRONT.match(text)
    found = re.search(rf"^{re.escape(key)}\s*:", m.group(1) or "", re.M) if m else None
    if not m or not found:
        return 1
    return text.count("\n", 0, m.start(1) + found.start()) + 1


# Front matter the site understands. The theme writes title and description into the page head
# without escaping, so they (and the banner's applies_to) must be plain one-line text.
_FRONT_TEXT = ("title", "description", "applies_to")
_FRONT_KEYS = {"reviewed", *_FRONT_TEXT, "hide", "search", "tags"}
_HIDE = {"navigation", "toc", "footer", "path", "tags", "feedback"}
_PLAIN = re.compile(r"[^<>&\x00-\x1f\x7f\u2028\u2029\u202a-\u202e\u2066-\u2069]{1,200}")


def _front_matter_fields(meta: dict[str, object], located: Located, shown: str) -> list[Problem]:
    """Unknown keys, markup in text fields, and odd shapes, each at its line in the file."""
    problems = []
    for key, value in meta.items():
        line = located.line((key,)) + 1
        if key not in _FRONT_KEYS:
            expected = ", ".join(sorted(_FRONT_KEYS))
            problems.append(Problem(shown, line, f"unknown front matter key '{key}' (expected one of: {expected})"))
        elif key == "description" and (value is None or (isinstance(value, str) and not value.strip())):
            continue  # reported as empty by _description
        elif key in _FRONT_TEXT and not (isinstance(value, str) and _PLAIN.fullmatch(value)):
            problems.append(
                Problem(
                    shown,
                    line,
                    f"front matter '{key}' must be plain text on one line, at most 200 characters, "
                    "without < > & or control characters (the theme writes it into the page unescaped)",
                )
            )
        elif key == "hide" and not (isinstance(value, list) and set(map(str, value)) <= _HIDE):
            problems.append(Problem(shown, line, f"front matter 'hide' must list some of: {', '.join(sorted(_HIDE))}"))
    return problems


def _real_date(value: str) -> bool:
    try:
        dt.date.fromisoformat(value)
        return True
    except ValueError:
        return False


def slugify(value: str) -> str:
    """Python-Markdown's toc slug of a heading's text."""
    value = re.sub(r"<[^>]+>", "", value)
    value = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode("ascii")
    value = re.sub(r"[^\w\s-]", "", value).strip().lower()
    return re.sub(r"[-\s]+", "-", value)


def heading_text(raw: str) -> str:
    """The text a heading shows: links, code ticks and emphasis removed."""
    raw = _ATTR_ID.sub("", raw)
    raw = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", raw)
    raw = raw.replace("`", "").replace("**", "").replace("&", "&amp;")
    return raw


def page_anchors(markdown: str) -> set[str]:
    """Anchor ids a page will have: heading slugs (with toc's _1 suffixes), {#id} and raw id=."""
    anchors: set[str] = set()
    for _, line in prose_lines(markdown):
        h = _HEADING.match(line)
        if h:
            title = h.group(2).rstrip().rstrip("#").rstrip()  # a closing run of '#' is not part of the title
            explicit = _ATTR_ID.search(title)
            slug = explicit.group(1) if explicit else slugify(heading_text(title))
            base, n = slug, 1
            while slug in anchors:
                slug = f"{base}_{n}"
                n += 1
            anchors.add(slug)
        else:
            for m2 in re.finditer(r"\{[^}]*#([\w-]+)[^}]*\}", line):
                anchors.add(m2.group(1))
        anchors.update(_RAW_ID.findall(line))
    return anchors


_ANY_ATTR_ID = re.compile(r"\{[^}]*#([\w-]+)[^}]*\}")


def _line_ids(line: str, auto: set[str]) -> list[tuple[str, str]]:
    """The ids one prose line gives its page, each with what gives it (for messages)."""
    found: list[tuple[str, str]] = []
    h = _HEADING.match(line)
    rest = line
    if h:
        title = h.group(2).rstrip().rstrip("#").rstrip()
        explicit = _ATTR_ID.search(title)
        if explicit:
            found.append((explicit.group(1), "the heading's {#id}"))
        else:
            slug = base = slugify(heading_text(title))
            n = 1
            while slug in auto:  # toc numbers repeated heading slugs (_1, _2): those never clash
                slug, n = f"{base}_{n}", n + 1
            auto.add(slug)
            found.append((slug, "the heading's own id"))
        rest = ""
    found += [(m, "an attr_list {#id}") for m in _ANY_ATTR_ID.findall(rest)]
    found += [(m, "an HTML id=") for m in _RAW_ID.findall(line)]
    return found


def duplicate_ids(page: Page) -> list[Problem]:
    """An id given twice on a page (two headings with one {#id}, an attr_list or HTML id equal to
    a heading's), at the line of the second. Shortcode output is left out: its ids are the KB's."""
    first: dict[str, tuple[int, str]] = {}
    auto: set[str] = set()
    problems = []
    for n, line in prose_lines(page.body):
        if "<!--" in line and "kb:" in line:
            continue
        lineno = page.body_line + n
        for value, what in _line_ids(re.sub(r"(`+).+?\1", "", line), auto):
            if value in first:
                at, was = first[value]
                problems.append(
                    Problem(
                        page.shown,
                        lineno,
                        f"id '{value}' ({what}) is already the id of line {at} ({was}) "
                        f"(expected each id once on a page: a link to #{value} reaches only the first)",
                    )
                )
            else:
                first[value] = (lineno, what)
    return problems


_LINK_DEF = re.compile(r"^\s{0,3}\[[^\]]{1,500}\]:\s*<?(\S{1,2000}?)>?(?:\s|$)")
_UNQUOTED = re.compile(r"""\b(?:href|src|action|formaction|xlink:href)\s*=\s*([^\s"'>]+)""", re.I)
_SCRIPT_SCHEME = re.compile(r"^(javascript|vbscript):", re.I)


def script_links(line: str, lineno: int, shown: str) -> list[Problem]:
    """A link that runs script (javascript:, vbscript:, in any case, with entities or whitespace
    inside): a Markdown link, a link definition or an unquoted HTML attribute (quoted ones are
    checked with the other raw HTML links)."""
    targets = [t for _img, t in _MD_LINK.findall(line)] + _LINK_DEF.findall(line) + _UNQUOTED.findall(line)
    problems = []
    for target in targets:
        plain = re.sub(r"[\s\x00-\x20]", "", html.unescape(target))
        m = _SCRIPT_SCHEME.match(plain)
        if m:
            problems.append(
                Problem(
                    shown,
                    lineno,
                    f"link {target!r} runs script (a {m.group(1).lower()}: URL) "
                    "(expected a link to a page, a file or an https source)",
                )
            )
    return problems


def check_pages(pages: list[Page], docs: Path, kb: KB) -> list[Problem]:
    """Links, anchors, images and external URLs of every page, with their lines."""
    by_uri = {p.src_uri: p for p in pages}
    urls = {s.model.url.rstrip("/") for s in kb.rows("sources", Source) if s.model.url}
    problems: list[Problem] = []
    snippets = docs.parent / "snippets"
    for page in pages:
        problems += duplicate_ids(page)
        lines = page.body.split("\n")
        for n, (line, is_code) in enumerate(zip(lines, code_mask(lines), strict=True)):
            lineno = page.body_line + n
            if "8<" in line:
                problems += _snippet(line, lineno, page, snippets)
            problems += _external(line, lineno, page, urls)
            if is_code or ("](" not in line and "<" not in line and "]:" not in line and "=" not in line):
                continue
            code_free = re.sub(r"(`+).+?\1", "", line)
            problems += script_links(code_free, lineno, page.shown)
            for _img, target in _MD_LINK.findall(code_free):
                problems += _internal(target, lineno, page, by_uri, docs)
            for raw in _HTML_REF.findall(code_free):
                target = html.unescape(raw).strip()
                if re.match(
                    r"^[a-z][a-z0-9+.-]*:", re.sub(r"[\s\x00-\x1f]", "", target), re.I
                ) and not target.startswith(("https:", "http:", "mailto:")):
                    problems.append(
                        Problem(
                            page.shown,
                            lineno,
                            f"raw HTML link '{raw}' uses a script or data URL (expected a page or https link)",
                        )
                    )
                elif re.match(r"^[^:#?]+\.md(?:[#?]|$)", target):
                    problems.append(
                        Problem(
                            page.shown,
                            lineno,
                            f"raw HTML link '{target}' to a Markdown file is a 404 in "
                            "the browser (expected a Markdown link [text](page.md), which MkDocs rewrites)",
                        )
                    )
                else:
                    problems += _internal(target, lineno, page, by_uri, docs)
    return problems


def _snippet(line: str, lineno: int, page: Page, base: Path) -> list[Problem]:
    """A ``--8<-- "file"`` include must name a file under snippets/."""
    m = _SNIPPET.match(line)
    if not m:
        return []
    name = m.group(2).split(":")[0]
    path = base / name
    inside = path.resolve().is_relative_to(base.resolve()) and not name.startswith(("/", "\\")) and "://" not in name
    if not inside:
        return [Problem(page.shown, lineno, f"snippet '{name}' is outside snippets/ (expected a file under snippets/)")]
    if not path.is_file():
        return [Problem(page.shown, lineno, f"snippet '{name}' not found (expected snippets/{name} to exist)")]
    return []


def check_nav(config: ConfigFile, pages: list[Page]) -> list[Problem]:
    """Every nav entry in mkdocs.yml names a page, and every page is in the nav (nothing when
    mkdocs.yml is absent or unreadable: kb/core/config.py reports that)."""
    located = config.located
    nav = config.data.get("nav")
    if located is None or nav is None:
        return []
    if nav is None:
        return []
    known = {p.src_uri for p in pages}
    listed: set[str] = set()
    problems: list[Problem] = []

    def walk(node: object, path: KeyPath) -> None:
        if isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, path + (i,))
        elif isinstance(node, dict):
            for key, value in node.items():
                walk(value, path + (key,))
        elif isinstance(node, str) and not re.match(r"^[a-z][a-z0-9+.-]*:", node):
            listed.add(node)
            if node not in known:
                problems.append(
                    Problem(
                        "mkdocs.yml",
                        located.line(path),
                        f"nav entry '{node}' names no page (expected docs/{node} to exist)",
                    )
                )

    walk(nav, ("nav",))
    for page in pages:
        if page.src_uri not in listed:
            problems.append(
                Problem(page.shown, 1, f"page is not in the nav (expected an entry for '{page.src_uri}' in mkdocs.yml)")
            )
    return problems


def _external(line: str, lineno: int, page: Page, urls: set[str]) -> list[Problem]:
    if "http" not in line:
        return []
    problems = []
    for url in _URL.findall(line):
        url = url.rstrip(".,;:")
        if url.startswith("http://"):
            problems.append(
                Problem(
                    page.shown, lineno, f"external URL '{url}' is not https (expected a registered https source URL)"
                )
            )
        elif url.split("#")[0].rstrip("/") not in urls:
            problems.append(
                Problem(
                    page.shown,
                    lineno,
                    f"external URL '{url}' is not a registered source "
                    "(expected a url from docs/data/sources.yml; add the source there first)",
                )
            )
    return problems


def _internal(target: str, lineno: int, page: Page, by_uri: dict[str, Page], docs: Path) -> list[Problem]:
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
        return []  # external or mailto: handled by _external
    path, _, anchor = target.partition("#")
    path = unquote(path.split("?")[0])
    target_page: Page | None
    if not path:
        target_page = page
    else:
        if path.startswith("/"):
            return [Problem(page.shown, lineno, f"absolute link '{target}' (expected a path relative to this page)")]
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(page.src_uri), path))
        if resolved.startswith("../") or resolved == "..":
            return [
                Problem(
                    page.shown, lineno, f"link '{target}' leaves the docs folder (expected a page or file inside docs/)"
                )
            ]
        if resolved.endswith(".md"):
            target_page = by_uri.get(resolved)
            if target_page is None:
                return [
                    Problem(page.shown, lineno, f"link to missing page '{target}' (expected docs/{resolved} to exist)")
                ]
        else:
            if not (docs / resolved).is_file():
                return [
                    Problem(page.shown, lineno, f"link to missing file '{target}' (expected docs/{resolved} to exist)")
                ]
            return []
    if anchor and anchor not in target_page.anchors:
        return [
            Problem(
                page.shown,
                lineno,
                f"link to missing anchor '#{anchor}' in {target_page.src_uri} "
                "(expected a heading or id with that name)",
            )
        ]
    return []


def check_section_links(kb: KB, pages: list[Page]) -> list[Problem]:
    """Every scanner rule's, error entry's and framework's ``page`` is a page and anchor that exist."""
    by_uri = {p.src_uri: p for p in pages}
    problems = []
    rows: list[Record[MigrationRule] | Record[ErrorEntry] | Record[Framework]] = [
        *kb.rows("migration_rules", MigrationRule),
        *kb.rows("errors", ErrorEntry),
        *kb.rows("frameworks", Framework),
    ]
    for rec in rows:
        uri, _, anchor = rec.model.page.partition("#")
        page = by_uri.get(uri)
        if page is None or anchor not in page.anchors:
            what = f"page docs/{uri}" if page is None else f"anchor '#{anchor}' in docs/{uri}"
            problems.append(
                Problem(
                    rec.path, rec.line_of("page"), f"{rec.where('page')}: no {what} (expected the section it explains)"
                )
            )
    return problems
