"""The printable handbook: every page's rendered HTML in nav order, on a few print pages.

The handbook prints in parts (``PARTS``), each a page that holds the pages of some folders, so that
no print page is heavier than a browser prints in a few seconds (issue 37: 1 MB of HTML); the
landing page (``PRINT_PAGE``) links them. Each page becomes a ``<section>`` whose ids carry the
page's prefix (``migrate_device-code__step-1``), so ids stay unique; a link to a page of the
handbook becomes a link to its section (or to the prefixed anchor in it), on this part or another,
and a link to any other file is made relative to the print page. Only the attributes that name an
id or a URL are rewritten, and what paper can't show (tooltips, permalinks) is left out; every
other byte of a page is copied as is.

A part prints at most ``PRINT_BUDGET`` characters of page HTML: once its pages in nav order reach
that, the rest of them are listed at its end, each linked to its own page, and every link to one of
them goes there (``over_budget``). A site of thousands of pages then still builds, with print pages
a browser can open.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from html import unescape
from urllib.parse import urljoin, urlsplit

from ..core.errors import Problem
from ..core.escape import html_attr, md_text

Reuse = Callable[[list[str], Callable[[], tuple[str, list[str]]]], tuple[str, list[str]]]
PRINT_PAGE = "about/print.md"  # the page that lists the parts of the printable handbook


@dataclass(frozen=True)
class Part:
    """One print page: its source path and what it holds (a page's path, or a folder's, ending in /)."""

    src_uri: str
    holds: tuple[str, ...]


# In nav order; a page goes to the part that names the longest start of its path.
PARTS: tuple[Part, ...] = (
    Part("about/print/part-1.md", ("index.md", "migrate/")),
    Part("about/print/part-2.md", ("migrate/errors/",)),
    Part("about/print/part-3.md", ("frameworks/", "understand/", "limits/", "figures/")),
    Part("about/print/part-4.md", ("reference/", "about/")),
)
PRINT_PARTS = frozenset(p.src_uri for p in PARTS)
PRINT_BUDGET = 1_200_000  # characters of page HTML a part prints (its largest holds 0.9 M): a print page near 1 MB
PRINT_PAGES = PRINT_PARTS | {PRINT_PAGE}


def part_of(src_uri: str) -> Part | None:
    """The part that prints the page ``src_uri`` (None: no part holds it)."""
    best: Part | None = None
    length = -1
    for part in PARTS:
        for start in part.holds:
            if (src_uri == start or (start.endswith("/") and src_uri.startswith(start))) and len(start) > length:
                best, length = part, len(start)
    return best


def over_budget(sizes: list[tuple[str, int]], budget: int = PRINT_BUDGET) -> frozenset[str]:
    """The pages no part prints (``sizes``: each page's source path and HTML size, in nav order):
    in each part, every page from the first that would take it past ``budget`` characters."""
    used: dict[str, int] = {}
    full: set[str] = set()
    out = []
    for src_uri, size in sizes:
        part = part_of(src_uri)
        if part is None:
            continue
        if part.src_uri not in full and used.get(part.src_uri, 0) + size <= budget:
            used[part.src_uri] = used.get(part.src_uri, 0) + size
        else:
            full.add(part.src_uri)
            out.append(src_uri)
    return frozenset(out)


_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:|^//", re.I)
_ID_ATTRS = {"id", "for"}  # attributes holding one id
_ID_LISTS = {"aria-labelledby", "aria-describedby", "aria-controls", "aria-owns"}  # space-separated ids
_URL_ATTRS = {"href", "src", "xlink:href"}


@dataclass(frozen=True)
class Section:
    """One page of the handbook: its source path, URL (site-relative, '' for the home page), title, HTML."""

    src_uri: str
    url: str
    title: str
    html: str


def prefix_of(src_uri: str) -> str:
    """The id of a page's section: its source path without '.md', '/' as '_' (file names are kebab-case)."""
    return re.sub(r"[^A-Za-z0-9-]", "_", src_uri.removesuffix(".md"))


def build_print(
    sections: list[Section],
    print_url: str,
    own_html: str = "",
    elsewhere: dict[str, str] | None = None,
    own_src: str = PRINT_PAGE,
    reuse: Reuse | None = None,
    skipped: frozenset[str] = frozenset(),
) -> tuple[str, list[Problem]]:
    """The sections as one HTML fragment, and a problem for each id it would repeat: a section's
    id or an id in it that is already an id of the print page (``own_html``) or of an earlier
    section. The problem is at the page whose section repeats it (line 1: its file name or a
    heading of it makes the id). ``elsewhere``: the pages printed on another print page, each
    with that page's URL (site-relative); links to them go there (their HTML is not read).
    ``reuse(parts, make)``: ``make()``'s result for a section, or one kept for the same ``parts``
    (every input of ``make``), as under serve (kb/mkdocs/build.py). ``skipped``: the pages no part
    prints (``over_budget``): those of this part are listed at its end, and links to any go to the page."""
    elsewhere = elsewhere or {}
    prefixes: dict[str, str] = {}
    targets: dict[str, tuple[str, str]] = {}  # a page URL (each spelling) -> its print page's URL, prefix
    for section in sections:
        if section.src_uri in skipped:
            continue  # not printed anywhere: a link to it stays a link to its page
        prefix = base = prefix_of(section.src_uri)
        n = 1
        while prefix in prefixes.values():
            prefix, n = f"{base}-{n}", n + 1
        prefixes[section.src_uri] = prefix
        for spelling in _spellings(section.url):
            targets.setdefault(spelling, (elsewhere.get(section.src_uri, print_url), prefix))
    parts = []
    owners = {value: own_src for value in _OWN_ID.findall(own_html)}
    problems: list[Problem] = []
    every_target = repr(sorted(targets.items()))  # what a section's links are rewritten against
    linked = []
    for section in sections:
        if section.src_uri in elsewhere:
            continue
        if section.src_uri in skipped:
            linked.append(section)
            continue
        prefix = prefixes[section.src_uri]
        make = partial(_printed, section, prefix, print_url, targets)
        key = ["print section", print_url, prefix, every_target, section.src_uri, section.url, section.title]
        html, ids = make() if reuse is None else reuse([*key, section.html], make)
        parts.append(html)
        problems += _repeated(section.src_uri, [prefix, *ids], owners, own_src)
    if linked:
        parts.append(_linked(linked, print_url))
    return "\n".join(parts), problems


def _linked(sections: list[Section], print_url: str) -> str:
    """The pages of a part that it does not print, each linked to its own page."""
    items = "".join(
        f'<li><a href="{html_attr(relative_url(s.url, print_url))}">{md_text(s.title)}</a></li>\n' for s in sections
    )
    return (
        '<section class="kb-print-page" id="kb-print-linked">\n<h1>Printed from their own pages</h1>\n'
        f"<p>This part reached its size limit ({PRINT_BUDGET // 1000:,} KB of page HTML), so these "
        f"{len(sections)} pages are not printed here: print each from its own page.</p>\n<ul>\n{items}</ul>\n</section>"
    )


def _printed(
    section: Section, prefix: str, print_url: str, targets: dict[str, tuple[str, str]]
) -> tuple[str, list[str]]:
    """One page as a section of the print page, and the ids written in it, in order."""
    rewriter = _Rewriter(prefix, section.url, print_url, targets)
    body = rewriter.rewrite(for_paper(section.html))
    heading = "" if re.match(r"\s*<h1[\s>]", body) else f"<h1>{md_text(section.title)}</h1>\n"
    return f'<section class="kb-print-page" id="{html_attr(prefix)}">\n{heading}{body}\n</section>', rewriter.ids


# What a sheet of paper can't show: a glossary term's or a source link's tooltip, a heading's
# permalink. The print page leaves them out (the text and the links stay).
_TOOLTIP = re.compile(r'<abbr title="[^"<>]*">([^<]*)</abbr>|(<a class="kb-src" href="[^"<>]*") title="[^"<>]*"')
_PERMALINK = re.compile(r'<a class="headerlink" href="[^"<>]*" title="Permanent link">(?:&para;|¶)</a>')


def for_paper(html: str) -> str:
    """A page's HTML without its tooltips and permalinks."""
    html = _TOOLTIP.sub(lambda m: m[1] if m[1] is not None else m[2], html)
    return _PERMALINK.sub("", html)


_OWN_ID = re.compile(r"""\sid\s*=\s*["']([^"']+)["']""")


def _repeated(src_uri: str, ids: list[str], owners: dict[str, str], own_src: str) -> list[Problem]:
    """The ids of one section that an earlier part of the print page already has (once each)."""
    problems = []
    for value in dict.fromkeys(ids):
        if value in owners:
            problems.append(
                Problem(
                    f"docs/{src_uri}",
                    1,
                    f"on the printable page ({own_src}), id '{value}' of this page's section is also an id "
                    f"of docs/{owners[value]} (expected unique ids: rename this page or the heading that makes it)",
                )
            )
        else:
            owners[value] = src_uri
    return problems


def _spellings(url: str) -> list[str]:
    """The ways a link can name a page: 'a/b/' and 'a/b/index.html'; '' and 'index.html'."""
    if url == "" or url.endswith("/"):
        return [url, url + "index.html"]
    return [url]


def relative_url(target: str, start_page: str) -> str:
    """``target`` (site-relative) as a link from the page at ``start_page`` (site-relative)."""
    start = posixpath.dirname("/" + start_page) if not start_page.endswith("/") else "/" + start_page.rstrip("/")
    rel = posixpath.relpath("/" + target, start or "/")
    if target.endswith("/") or target == "":
        rel = rel.rstrip("/") + "/"
    return rel


# A start tag with attributes, as the HTML the site's Markdown extensions write (and raw HTML a
# page holds) spells them. Everything outside the matched attributes is copied byte for byte; an odd
# construct this does not see as a tag is copied too, and the built-site check reads the result. A
# tag without attributes (<tr>, <td>: most of a long table's) has nothing to rewrite, so it is not
# matched at all.
_START_TAG = re.compile(
    r"""<([A-Za-z][^\s/>]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)+)(\s*/?>)"""
)
_ATTR = re.compile(r"""(\s+)([^\s"'>/=]+)(?:(\s*=\s*)("[^"]*"|'[^']*'|[^\s"'=<>`]+))?""")
_WATCHED = _ID_ATTRS | _ID_LISTS | _URL_ATTRS | {"name"}


class _Rewriter:
    """Copies HTML through, rewriting the id and URL attributes of start tags."""

    def __init__(self, prefix: str, url: str, print_url: str, targets: dict[str, tuple[str, str]]) -> None:
        self.prefix, self.url, self.print_url, self.targets = prefix, url, print_url, targets
        self.ids: list[str] = []  # the id attributes written, in order

    def rewrite(self, html: str) -> str:
        return _START_TAG.sub(self._tag, html)

    def _tag(self, match: re.Match[str]) -> str:
        tag, attrs = match.group(1).lower(), match.group(2)
        if not any(name in attrs for name in ("id", "for", "aria-", "href", "src", "name")):
            return match.group(0)
        return f"<{match.group(1)}{_ATTR.sub(lambda m: self._attr(tag, m), attrs)}{match.group(3)}"

    def _attr(self, tag: str, m: re.Match[str]) -> str:
        name, raw = m.group(2).lower(), m.group(4)
        if raw is None or name not in _WATCHED or (name == "name" and tag != "input"):
            return m.group(0)
        value = unescape(raw[1:-1] if raw[0] in "\"'" else raw)
        if name in _ID_ATTRS or name == "name":
            value = self._id(value)
            if name == "id":
                self.ids.append(value)
        elif name in _ID_LISTS:
            value = " ".join(self._id(v) for v in value.split())
        else:
            value = self._link(value)
        return f'{m.group(1)}{m.group(2)}="{html_attr(value)}"'

    def _id(self, value: str) -> str:
        return f"{self.prefix}__{value}"

    def _link(self, value: str) -> str:
        """A link of this page, as a link on the print page."""
        if _SCHEME.match(value.strip()):
            return value
        path, hashmark, fragment = value.partition("#")
        if not path:
            return f"#{self._id(fragment)}" if fragment else f"#{self.prefix}"
        target = urlsplit(urljoin("https://site.invalid/" + self.url, path))
        site_path = target.path.lstrip("/")
        printed = self.targets.get(site_path)
        if printed is not None and not target.query:
            where, prefix = printed
            page = "" if where == self.print_url else relative_url(where, self.print_url)
            return f"{page}#{prefix}__{fragment}" if fragment else f"{page}#{prefix}"
        query = f"?{target.query}" if target.query else ""
        return relative_url(site_path, self.print_url) + query + hashmark + fragment
