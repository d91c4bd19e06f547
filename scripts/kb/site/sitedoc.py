"""One built file read as a browser reads it: HTML by lexbor's HTML5 parser (selectolax), CSS by
tinycss2. It finds the ids, every URL (a ``Ref``) and every finding (a ``Finding``: a message for
each side of the page, page content and the theme's markup). A place is an offset in the text, or
``-1 - n`` for the page's n-th element, located only if reported."""

from __future__ import annotations

import html
import posixpath
import re
from enum import Enum
from functools import lru_cache
from typing import NamedTuple

import tinycss2  # type: ignore[import-untyped]
from selectolax.lexbor import LexborHTMLParser, LexborNode

from . import siteurl as u

_KIND = dict.fromkeys(("href", "xlink:href"), "nav") | {"action": "send", "formaction": "send"}
_KIND |= dict.fromkeys(("src", "srcset", "imagesrcset", "poster", "data", "background", "lowsrc", "dynsrc"), "load")
_KIND |= dict.fromkeys(("manifest", "codebase", "classid", "archive", "icon", "ping"), "load")
_KIND |= {"cite": "text", "longdesc": "text", "style": "css", "srcdoc": "doc"}  # text: never followed
_NOT_LOADED = {"canonical", "alternate", "author", "help", "license", "next", "prev", "search", "bookmark"}
_SPECIAL = {"script", "style", "object", "embed", "applet", "noscript", "base", "meta", "set", "animate", "xmp"}
_SPECIAL |= {"animateMotion", "animateTransform", "animateColor", "iframe", "noembed", "noframes", "plaintext"}
_RAW = ("style", "xmp", "iframe", "noembed", "noframes", "plaintext")  # innerHTML turns their text into markup
_END_ATTRS = re.compile(r"</[a-zA-Z][^\t\n\f\r />]*+[\t\n\f\r /]+[^\t\n\f\r />][^>]*>?")
_RAW_TEXT = "script|style|textarea|title|xmp|iframe|noembed|noframes|noscript|plaintext"
_HIDDEN = re.compile(rf"</(?:{_RAW_TEXT})(?=[\t\n\f\r />])", re.I)
_COMMENT = re.compile(r"<!---?>|<!--(.*?)(?:--!?>|\Z)", re.S)  # '<!-->' ends at once; others at --> or the file's end
_ATTR = re.compile(
    r"([^\t\n\f\r />][^\t\n\f\r /=>]*)(?:[\t\n\f\r ]*=[\t\n\f\r ]*(\"[^\"]*\"|'[^']*'|(?![\"'])[^\t\n\f\r >]*))?"
)
_START_TAG = re.compile(rf"<[^\t\n\f\r />]+((?:[\t\n\f\r ]+|/(?!>)|{_ATTR.pattern})*)")
_CHARSET = re.compile(r"charset\s*=\s*[\"']?([^\s\"';]*)", re.I)
_LEFTOVER = "shortcode left unrendered (expected the hook to replace every '<!-- kb:' comment)"
_ESC = "an ESC control character (expected plain UTF-8 text: ESC sequences make browsers read the page as ISO-2022-JP)"
_NO_SCRIPT = "expected no script in a page: only the theme's own scripts, outside the page content"
_NOSCRIPT = "(expected none: browsers read its content one way with scripts and another without)"
_BASE = "<base> in page content (expected none: it changes where every link and image of the page points)"
_REFRESH = "<meta http-equiv=refresh> in page content (expected none: it navigates away by itself)"
_TWO_WAYS = "browsers and this check may read what follows differently"
_CSS_FUNCTIONS = {"url", "src", "image", "image-set", "-webkit-image-set", "cross-fade", "-webkit-cross-fade"}


class Finding(NamedTuple):
    """Something at one place of a file that is wrong in page content, in the theme's markup, or both."""

    place: int
    """An offset in the file's text, or ``-1 - n`` for the page's n-th element."""
    in_content: str | None
    """The message when the place is in page content (the untrusted part); None: fine there."""
    in_theme: str | None
    """The message when the place is outside page content, in the theme's markup; None: fine there."""
    needle: str
    """The text at the place, to find its line in the Markdown source; "" when there is none to look for."""


class Ref(NamedTuple):
    """A URL in a file, which the check resolves."""

    place: int
    """As in ``Finding``."""
    url: str
    """As the browser reads it (entities decoded, spaces trimmed)."""
    loads: bool
    """Fetched by the browser by itself (a script, style, image, frame); False: followed when clicked."""


class AttrProblem(NamedTuple):
    """What is wrong with one attribute's value (kept per value: the theme's attributes repeat)."""

    in_content: str | None
    """The message in page content; None: fine there."""
    in_theme: str | None
    """The message in the theme's markup; None: fine there."""
    noop: bool
    """A no-op link (``javascript:void(0)``), which the theme's share buttons use: fine outside page content."""


class Same(Enum):
    """``Page.finding``'s default for the theme's message: the same as the one in page content."""

    AS_CONTENT = "as in content"


SAME = Same.AS_CONTENT


class Doc(NamedTuple):
    ids: set[str]
    refs: list[Ref]
    findings: list[Finding]
    content: tuple[int, int]  # the untrusted part of the file, as offsets


class Page:
    """One parsed HTML file, and the offsets of its elements, found when asked for."""

    def __init__(self, text: str, whole_is_content: bool) -> None:
        self.text, self.at, self.named = text, dict[int, int](), dict[str, bool]()
        self.root = LexborHTMLParser(text)  # a whole document: css() from its <html>, always there
        article = None if whole_is_content else self.root.css_first("article.md-content__inner")
        self.article = article.mem_id if article else -1
        lo, hi = (self.offset(article), text.rfind("</article")) if article else (0, len(text) + 1)
        self.content = (lo, hi if hi > lo else len(text))

    def offset(self, node: LexborNode) -> int:
        """Where ``node``'s start tag is: the elements of its name, in order, matched to the start
        tags of that name in the text carrying the same attributes (and for scripts and styles the
        same text). One in a comment, a script or an attribute value matches no element."""
        if node.mem_id not in self.at:
            tag, pos, seen = node.tag or "", 0, dict[int, dict[str, str]]()
            raw = [m.start() for m in re.finditer(rf"<{re.escape(tag)}(?=[\t\n\f\r />])", self.text, re.I)]
            if len(raw) <= 1:  # every element of the name has that one start tag: nothing to match
                return raw[0] if raw else 0
            for el in self.root.css(tag) if tag.isalnum() else [node]:
                want = {k: v or "" for k, v in el.attributes.items()}
                want |= {"\0": el.text()} if tag in ("script", "style") else {}
                ahead = range(pos, min(pos + 64, len(raw)))
                j = next(
                    (j for j in ahead if (seen.get(j) or seen.setdefault(j, self._attrs(raw[j], want))) == want), pos
                )
                self.at[el.mem_id], pos = raw[min(j, len(raw) - 1)], j + 1
        return self.at.get(node.mem_id, 0)

    def _attrs(self, at: int, want: dict[str, str]) -> dict[str, str]:
        tag = _START_TAG.match(self.text, at, at + 8192)
        end = tag.end() + 1 if tag else at
        out = {"\0": self.text[end : end + len(want["\0"])]} if "\0" in want else {}
        for m in _ATTR.finditer(tag.group(1) if tag else ""):
            value = m.group(2) or ""
            value = value[1:-1] if value[:1] in "\"'" and len(value) > 1 else value
            value = html.unescape(value).replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
            out.setdefault(m.group(1).lower(), value)
        return out

    def in_article(self, node: LexborNode) -> bool:
        parent = node.parent
        while parent is not None and parent.mem_id != self.article:
            parent = parent.parent
        return parent is not None

    def in_content(self, node: LexborNode) -> bool:
        """In the article, or with its start tag in the article's text (looked for only when its name is)."""
        (lo, hi), tag = self.content, node.tag or ""
        if tag not in self.named:
            self.named[tag] = re.compile(rf"<{re.escape(tag)}", re.I).search(self.text, lo, hi) is not None
        return self.in_article(node) or self.named[tag] and lo <= self.offset(node) < hi

    def finding(self, node: LexborNode, in_content: str | None, in_theme: str | None | Same = SAME) -> Finding:
        at = self.offset(node)
        theme = in_content if in_theme is SAME else in_theme
        return Finding(at, in_content, theme, self.text[at : self.text.find(">", at) + 1])

    def noop_findings(self, noops: list[tuple[LexborNode, str]]) -> list[Finding]:
        """Material's no-op share links are fine outside page content: found there without the
        locator when the text spells each one plainly, before the content."""
        spelt = [m.start() for m in re.finditer(re.escape(u.NOOP), self.text)]
        plain = len(spelt) == len(noops) and all(at < self.content[0] for at in spelt)
        return [self.finding(n, msg) for n, msg in noops if (self.in_article(n) if plain else self.in_content(n))]


def read_html(text: str, whole_is_content: bool) -> Doc:
    page = Page(text, whole_is_content)
    findings = _text_findings(text)
    nodes = page.root.css("*")
    attrs = [node.attributes for node in nodes]
    keys = set().union(*attrs)  # every attribute name in the page: a prefilter
    ids = {a["id"] or "" for a in attrs if "id" in a} | {n.attributes["name"] or "" for n in page.root.css("a[name]")}
    refs, noops = list[Ref](), list[tuple[LexborNode, str]]()
    wanted = keys & _KIND.keys() | {key for key in keys if key.startswith("on")}
    for n in [n for n, a in enumerate(attrs) if not wanted.isdisjoint(a)] if wanted else ():
        node, found = nodes[n], attrs[n]
        tag = node.tag or ""
        rel = (found.get("rel") or "").lower() if tag == "link" else ""
        for key, value in found.items():
            if key.startswith("on"):
                msg = f"event handler attribute '{key}' on <{tag}> (expected no inline script)"
                findings.append(page.finding(node, msg))
            elif key in wanted and value is not None and tag != "base" and (key != "data" or tag == "object"):
                urls, problems = _attr(tag, key, value, rel)
                for url, loads in urls:  # tuple.__new__ skips Ref's __new__, a Python call: this runs per URL
                    refs.append(tuple.__new__(Ref, (-1 - n, url, loads)))
                if problems:
                    findings += [page.finding(node, c, t) for c, t, noop in problems if not noop]
                    noops += [(node, c) for c, t, noop in problems if noop and c]
    findings += page.noop_findings(noops) if noops else []
    for node in [node for node in nodes if node.tag in _SPECIAL]:  # faster than lexbor's selector list
        _special(page, node, refs, findings)
    return Doc(ids - {""}, refs, findings, page.content)


@lru_cache(maxsize=1 << 16)
def _attr(tag: str, key: str, value: str, rel: str) -> tuple[tuple[tuple[str, bool], ...], tuple[AttrProblem, ...]]:
    """The URLs of one attribute (with whether each is fetched), and its problems."""
    shown, kind = f"<{tag}>", _KIND[key]
    if kind == "css":
        found = [(u.clean(url), u.css_url_problem(url)) for _, url in css_urls(value)]
        bad = tuple(AttrProblem(*p, noop=False) for _, p in found if any(p))
        return tuple((url, True) for url, p in found if not any(p)), bad
    if kind == "doc":
        return (), (_everywhere(f"{shown} with srcdoc (expected no inline documents: they run scripts)"),)
    loaded = tag not in ("a", "area", "link") or tag == "link" and not (rel and set(rel.split()) <= _NOT_LOADED)
    kind = "load" if kind == "nav" and loaded else kind  # <use href>, <script href> in SVG, <link rel=stylesheet>...
    many = u.srcset(value) if key.endswith("srcset") else value.split() if key in ("ping", "archive") else [value]
    urls, problems = list[tuple[str, bool]](), list[AttrProblem]()
    for url in map(u.clean, many):
        if problem := u.url_problem(url, key, shown):
            problems.append(_everywhere(problem, noop=url.lower() == u.NOOP))
        elif kind == "send" and u.foreign(url):
            problems.append(_everywhere(f"{shown} sends to '{url}' on another origin (expected this site)"))
        elif kind in ("nav", "load"):
            urls.append((url, kind == "load"))
            if kind == "nav" and u.protocol_relative(url):
                why = "expected https://..., so it also works from file://"
                problems.append(_everywhere(f"protocol-relative link '{url}' ({why})"))
    return tuple(urls), tuple(problems)


def _everywhere(message: str, noop: bool = False) -> AttrProblem:
    return AttrProblem(message, message, noop)


def _special(page: Page, node: LexborNode, refs: list[Ref], out: list[Finding]) -> None:
    """Scripts, styles, plugins, <noscript>, <base>, <meta>, SVG animations and raw text."""
    tag, attrs = node.tag or "", node.attributes
    if tag == "script":
        src = u.clean(attrs.get("src") or attrs.get("href") or attrs.get("xlink:href") or "")
        if src and (u.foreign(src) or u.scheme(src) in u.SCRIPT_SCHEMES | {"data"}):
            return  # reported by its attribute
        inside = page.in_content(node)
        data = (attrs.get("type") or "").strip().lower() in ("application/json", "application/ld+json")
        if inside or not (src or data or u.theme_script(node.text())):
            raw = _short(page.finding(node, None).needle)
            msg = f"{raw} in page content" if inside else f"inline {raw} that the theme does not emit"
            out.append(page.finding(node, f"{msg} ({_NO_SCRIPT})"))
    elif tag == "style":
        if urls := css_urls(body := node.text()):  # placed only when it holds a URL
            css = read_css(body, page.text.find(">", page.offset(node)) + 1, page.in_content(node), urls)
            refs += css.refs
            out += css.findings
    elif tag in ("object", "embed", "applet", "noscript"):
        why = f"<{tag}> element (expected no plugin content: it can run scripts and load from anywhere)"
        why = f"{_short(page.finding(node, None).needle)} {_NOSCRIPT}" if tag == "noscript" else why
        out.append(page.finding(node, why))
    elif tag == "base":
        href = u.clean(attrs.get("href") or "")
        up = posixpath.normpath(href.replace("\\", "/") or ".").startswith("..")
        away = "href" in attrs and (bool(u.scheme(href)) or href.startswith(("/", "\\")) or up)
        theme = f"<base href='{href}'> points away from the site (expected the site itself)" if away else None
        out.append(page.finding(node, _BASE, _BASE if page.in_content(node) else theme))
    elif tag == "meta":
        _meta(page, node, {k.lower(): v or "" for k, v in attrs.items()}, out)
    elif tag.startswith(("set", "animate")):
        _animation(page, node, {k.lower(): v or "" for k, v in attrs.items()}, refs, out)
    if tag in _RAW and "<" in (inner := node.text()):  # a copy through innerHTML makes this markup (mutation XSS)
        out += [f._replace(place=page.offset(node), needle="") for f in read_html(inner, True).findings]


def _animation(page: Page, node: LexborNode, attrs: dict[str, str], refs: list[Ref], out: list[Finding]) -> None:
    """SVG <set>/<animate> that change a link's href to one of their values."""
    if attrs.get("attributename", "").lower() in ("href", "xlink:href"):
        for key in ("to", "from", "values", "by"):
            for url in map(u.clean, attrs.get(key, "").split(";")):
                if problem := u.url_problem(url, key, f"<{node.tag}>"):
                    out.append(page.finding(node, problem))
                elif url:
                    refs.append(Ref(page.offset(node), url, True))


def _meta(page: Page, node: LexborNode, attrs: dict[str, str], out: list[Finding]) -> None:
    equiv = attrs.get("http-equiv", "").strip().lower()
    if equiv == "refresh":
        url = u.clean(u.refresh_url(attrs.get("content", "")))
        away = bool(url) and (u.foreign(url) or u.scheme(url) in u.SCRIPT_SCHEMES | {"data"})
        theme = f"<meta http-equiv=refresh> sends the reader to '{url}' (expected no redirect off the site)"
        out.append(page.finding(node, _REFRESH, _REFRESH if page.in_content(node) else theme if away else None))
    charset = attrs.get("charset")
    if charset is None and equiv == "content-type" and (declared := _CHARSET.search(attrs.get("content", ""))):
        charset = declared.group(1)
    if charset is not None and charset.strip().lower() not in ("utf-8", "utf8"):
        out.append(page.finding(node, f"page declares charset '{charset}' (expected utf-8)"))


def _text_findings(text: str) -> list[Finding]:
    """Findings read off the text itself: leftovers, ESC, and markup that tools may read two ways."""
    out = [Finding(m.start(), _ESC, _ESC, "") for m in re.finditer("\x1b", text)] if "\x1b" in text else []
    comments = "<!--" in text  # one search, as most pages hold no comment: the regexes below need one
    out += [Finding(m.start(), _LEFTOVER, _LEFTOVER, "") for m in re.finditer(r"<!--\s*kb:", text)] if comments else []
    for m in _END_ATTRS.finditer(text):
        name = m.group().split()[0].rstrip("/")
        msg = f"end tag with attributes '{_short(m.group())}' (expected '{name}>': {_TWO_WAYS})"
        out.append(Finding(m.start(), msg, msg, m.group()))
    for m in _COMMENT.finditer(text) if comments else ():
        if m[1] is not None and (hidden := _HIDDEN.search(text, m.start(1), m.end(1))):
            why = "expected comments without markup: browsers may end that element inside the comment"
            msg = f"comment hides the end tag '{hidden.group()}' ({why})"
            out.append(Finding(m.start(), msg, msg, text[m.start() : hidden.end()]))
    return out


def css_urls(css: str) -> list[tuple[int, str]]:
    """(line, URL) of every url(), src(), image-set() string and @import in CSS text."""
    out: list[tuple[int, str]] = []
    if "(" in css or "@" in css:  # no function, url() or @import: nothing to tokenize
        _walk_css(tinycss2.parse_component_value_list(css, skip_comments=True), False, out)
    return out


def _walk_css(tokens: list[tinycss2.ast.Node], in_function: bool, out: list[tuple[int, str]]) -> None:
    importing = False
    for token in tokens:
        kind = token.type
        if kind == "url" or kind == "string" and (in_function or importing):
            out.append((token.source_line, token.value))
        elif kind == "function":
            _walk_css(token.arguments, token.lower_name in _CSS_FUNCTIONS, out)
        elif kind in ("() block", "[] block", "{} block"):
            _walk_css(token.content, False, out)
        if kind not in ("whitespace", "comment"):
            importing = kind == "at-keyword" and token.lower_value == "import"


def read_css(text: str, at: int = 0, in_content: bool = False, urls: list[tuple[int, str]] | None = None) -> Doc:
    """A stylesheet, or the text of a <style> element that starts at offset ``at`` of its page
    (``urls``: its css_urls, when already found)."""
    starts = [0, *(m.end() for m in re.finditer("\n", text))]
    refs, findings = list[Ref](), list[Finding]()
    for line, url in css_urls(text) if urls is None else urls:
        off = at + starts[min(line, len(starts)) - 1]
        if why := u.css_url_problem(url)[0 if in_content else 1]:
            findings.append(Finding(off, why, why, url))
        else:
            refs.append(Ref(off, u.clean(url), True))
    return Doc(set(), refs, findings, (0, 0))


def _short(raw: str) -> str:
    raw = " ".join(raw.split())
    return raw if len(raw) <= 80 else raw[:77] + "..."
