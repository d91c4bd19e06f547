"""The built-site check: one pass over each page, then every link, asset and #anchor resolved.

It flags internal links, images and anchors that don't resolve (in Markdown, rendered tables and
raw HTML alike), anything loaded from another origin (scripts, styles, fonts, images, frames,
CSS url(), image-set() and @import, srcset candidates, <base>, meta refresh, form targets),
script-like markup, and shortcodes left unrendered. It reads; it never writes.

Pages are read the way a browser reads them: a small tokenizer shaped on the WHATWG HTML
tokenizer (tags, attributes in any case and quoting, character references, comments, raw-text
elements such as <script>, <style> and <textarea>), and a small CSS tokenizer (comments,
escapes such as ``\\75 rl(``, strings). Python's html.parser is not used: it is several times too
slow for a 1,000-page site, and it reads some markup differently from browsers (``<!-->``,
``<![CDATA[``, ``</style x>``), which would let such markup hide a script from the check. Markup
that browsers might read two ways (an end tag with attributes, a comment that hides an end tag)
is itself reported.

Trust: the content of a page (inside Material's ``<article class="md-content__inner">``) and every
file that is not a page the theme rendered is untrusted. There, no script of any kind is allowed:
no <script>, no on*= handler, no javascript:/vbscript:/data: URL, no <iframe srcdoc>, no
<object>/<embed>, no <base>, no meta refresh. Outside the article, a script must be one of the
inline scripts Material emits (known by hash), a JSON data block, or a same-origin file.
"""

from __future__ import annotations

import gc
import hashlib
import html
import marshal
import os
import posixpath
import re
from collections.abc import Mapping
from itertools import accumulate
from operator import attrgetter
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import unquote

from .errors import Problem
from .sitepaths import built_file
from .sitetypes import XML, XML_MARKUP, document_types

MAX_BYTES = 32 * 1024 * 1024  # a page or stylesheet larger than this is reported, not read
_DOCUMENTS = (".html", ".htm", ".xhtml", ".svg")  # read as markup (an .svg opened directly runs scripts)

# ---- HTML tokens ----------------------------------------------------------------------------

# An attribute: a name (which may start with '=') and an optional value, quoted or not.
_ATTR_SRC = (
    r"[^\t\n\f\r />][^\t\n\f\r /=>]*"
    r"(?:[\t\n\f\r ]*=[\t\n\f\r ]*(?:\"[^\"]*\"|'[^']*'|(?![\"'])[^\t\n\f\r >]*))?"
)
_ATTRS_SRC = rf"(?:[\t\n\f\r ]+|/(?!>)|{_ATTR_SRC})*+"
# The next piece of markup: a start tag, an end tag that has more than its name, a comment, a
# bogus comment or doctype. Clean end tags ('</div>') and text are skipped by the regex engine.
_MARKUP = re.compile(
    r"<(?:"
    rf"([a-zA-Z][^\t\n\f\r />]*)({_ATTRS_SRC})(/?>)?"  # 1 name, 2 attributes, 3 end (None: EOF inside)
    r"|/([a-zA-Z][^\t\n\f\r />]*)(?=[\t\n\f\r /])"  # 4 end tag followed by something
    r"|(!--)"  # 5 comment
    r"|(!|\?|/(?![a-zA-Z>]))"  # 6 doctype, bogus comment
    r")"
)
_END_REST = re.compile(rf"({_ATTRS_SRC})(/?>)?")
_ATTR = re.compile(
    r"([^\t\n\f\r />][^\t\n\f\r /=>]*)"
    r"(?:[\t\n\f\r ]*=[\t\n\f\r ]*(\"[^\"]*\"|'[^']*'|(?![\"'])[^\t\n\f\r >]*))?"
)
_COMMENT_END = re.compile(r"--!?>")
# Elements whose content a browser reads as text, up to the matching end tag.
_RAW = ("script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript", "plaintext")
_RAW_END = {name: re.compile(rf"</{name}(?=[\t\n\f\r />])", re.I) for name in _RAW}
_HIDDEN_END = re.compile(rf"</(?:{'|'.join(_RAW)})(?=[\t\n\f\r />])", re.I)
_SHORTCODE = re.compile(r"<!--\s*kb:")
_LEFTOVER = "shortcode left unrendered (expected the hook to replace every '<!-- kb:' comment)"
_ESC_CHAR = re.compile("\x1b")
_ESC = "an ESC control character (expected plain UTF-8 text: ESC sequences make browsers read the page as ISO-2022-JP)"
_ENTITY = re.compile(r"<!ENTITY", re.I)
_CHARSET = re.compile(r"charset\s*=\s*[\"']?([^\s\"';]*)", re.I)

# ---- URLs -----------------------------------------------------------------------------------

_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:")
_STRIP = "".join(map(chr, range(0x21)))  # C0 controls and space: stripped from both ends by browsers
_DROP_TAB_NL = {9: None, 10: None, 13: None}  # and tab, LF, CR removed anywhere
_SCRIPT_SCHEMES = {"javascript", "vbscript", "livescript", "mocha"}
_HARMLESS = ("mailto:", "tel:", "about:blank")
_NOT_LOADED = {"canonical", "alternate", "author", "help", "license", "next", "prev", "search", "bookmark"}
# Attributes that hold URLs, and what the browser does with them: 'nav' when the reader follows
# it, 'load' when the browser fetches it by itself, 'send' for form targets, 'text' when unused.
_URL_ATTRS = {
    "href": "nav",
    "xlink:href": "nav",
    "src": "load",
    "srcset": "load",
    "imagesrcset": "load",
    "poster": "load",
    "data": "load",
    "background": "load",
    "lowsrc": "load",
    "dynsrc": "load",
    "manifest": "load",
    "codebase": "load",
    "classid": "load",
    "archive": "load",
    "icon": "load",
    "ping": "load",
    "action": "send",
    "formaction": "send",
    "cite": "text",
    "longdesc": "text",
}
_LISTS = {"ping", "archive"}  # space-separated URL lists
_NAV_TAGS = {"a", "area", "link"}
_ANIMATIONS = {"set", "animate", "animatemotion", "animatetransform", "animatecolor"}
_DATA_BLOCKS = {"application/json", "application/ld+json"}

# Material's own inline scripts (mkdocs-material 9.8.1, templates/partials/javascripts/), by the
# SHA-256 of their text with the relative URL literal in `new URL("...")` blanked out.
# tests/test_sitecheck.py re-derives them from the installed theme, so an upgrade that changes
# them fails a test that says so.
THEME_SCRIPTS = {
    "e441dbdde5a0501b99527bb443d86875df7b1a02ed15df77ed97b4c8234e4b70": "announce.html",
    "7eb3684fdacd2881f67b9428983273a29d8774d8bc82622af9b65a8ec1032a90": "base.html",
    "3907d77c1c78f2658c4fefb1c0cb8a4caf9e66479edaeace65c6c1e213f47107": "consent.html",
    "d74bb3b582599bb38b62d1eb15a60a0af4ce0147e3335efe0a811693984b71ce": "content.html (tabs)",
    "ffcc0f7735fdab434d257c80e65cec2e88d716991e69757185b7e450e41a5b2f": "content.html (target)",
    "825a478f6ef2a37cf6bc1140ddb9b0665d08eee69a0635d5e82471fba8e2f73a": "outdated.html",
    "0eb10c249dbdb0beef225a10ce5cbe55418cc4a7014cc208f8e7d6ed8f00906e": "palette.html",
}
_NOOP = "javascript:void(0)"
_URL_LITERAL = re.compile(r'new URL\("([^"\\]*)"')

# ---- messages -------------------------------------------------------------------------------

_NO_SCRIPT = "expected no script in a page: only the theme's own scripts, outside the page content"
_NOSCRIPT = "(expected none: browsers read its content one way with scripts and another without)"
_LOADS = "(expected every script, style, font, image and frame to come from this site)"


class Ref(NamedTuple):
    offset: int  # character offset in its file; turned into a line only when it is reported
    url: str  # as the browser reads it: references decoded, tabs and newlines removed
    loads: bool  # True when the browser fetches it (script, style, image, frame...)


class Event(NamedTuple):
    offset: int
    in_content: str | None  # the problem when this is inside page content (None: fine there)
    in_theme: str | None  # the problem when this is in the theme's markup around it
    needle: str  # text to look for in the Markdown source, to name its line


class _Part(NamedTuple):
    """What one stretch of a file holds, with offsets from its start."""

    ids: set[str]
    refs: list[Ref]
    events: list[Event]
    article: int  # where Material's content <article> starts, or -1
    foreign: bool  # an <svg> or <math> is still open at its end
    complete: bool  # it ends in the data state (see _scan_part)


class _Doc(NamedTuple):
    ids: set[str]
    parts: list[tuple[int, _Bits]]  # (offset in the file, what that stretch holds)
    content: tuple[int, int]  # the untrusted part of the file, as character offsets


def check_site(
    site: Path,
    source_of: dict[str, str] | None = None,
    shown: str | None = None,
    redirects: Mapping[str, str] | None = None,
    workers: int = 2,
    root_path: str = "/",
) -> list[Problem]:
    """Every problem in the built site under ``site``. ``source_of`` maps built file -> docs page.

    ``redirects`` maps a built redirect page (``old/index.html``) to the exact text the redirect
    plugin writes for it from the validated map: such a page may hold the plugin's script and meta
    refresh; any other text there is a problem. Its links are still resolved.

    ``workers``: 2 reads half the files in a second process (when there are enough of them).

    ``root_path``: the URL path the site is served at (site_url's, ``/`` without one): 404.html,
    served at any depth, links root-absolute under it.

    Problems name files as ``SHOWN/<file>``: the folder as the caller names it (default: its name)."""
    prefix = (shown or site.name).rstrip("/") or "."
    site = site.resolve()
    source_of = source_of or {}
    redirects = redirects or {}
    problems: list[Problem] = []
    global _root_path
    _root_path = "/" + root_path.strip("/") + "/" if root_path.strip("/") else "/"
    collecting = gc.isenabled()
    gc.disable()  # the check makes many small objects and no cycles: the cyclic collector only costs time
    try:
        files, readable = _walk(site, problems)
        markup, refused = document_types(site, files, MAX_BYTES)  # XML, sniffed and compressed documents
        problems += refused
        readable += markup
        problems += _parallel(site, files, readable, source_of, redirects, workers)
    finally:
        _root_path = "/"
        if collecting:
            gc.enable()
    return [Problem(prefix + p.path[4:], p.line, p.message) if p.path.startswith("site/") else p for p in problems]


def page_files(docs: Path, directory_urls: bool = True) -> dict[str, str]:
    """Map each built page to its Markdown source (``docs/...``), for error hints; without reading
    or validating the pages, so a site check doesn't pay for the whole knowledge base."""
    if not docs.is_dir():
        return {}
    out = {}
    root = str(docs)
    for folder, _dirs, names in os.walk(root):  # like docs.rglob("*.md"), at a third of the cost
        rel = os.path.relpath(folder, root).replace(os.sep, "/")
        for name in names:
            if name.endswith(".md"):
                uri = name if rel == "." else f"{rel}/{name}"
                out[built_file(uri, directory_urls)] = f"{docs.name}/{uri}"
    return out


# ---- both cores -----------------------------------------------------------------------------

PARALLEL_FROM = 200  # files: below this, a second process costs more than it saves


def _parallel(
    site: Path,
    files: set[str],
    readable: list[str],
    source_of: dict[str, str],
    redirects: Mapping[str, str],
    workers: int,
) -> list[Problem]:
    """Read the first half of the files (by size) in a forked process and the rest here; swap the
    ids of every page (an #anchor may point anywhere), then each checks its own half's links.
    The halves talk through two pipes in ``marshal`` (plain values only: no pickle, no
    multiprocessing to import). Without fork, or on any failure of the child, everything is read
    here."""
    if workers < 2 or len(readable) < PARALLEL_FROM or not hasattr(os, "fork"):
        return _serial(site, files, readable, source_of, redirects)
    half = _half(site, readable)
    up_r, up_w = os.pipe()  # child -> parent
    down_r, down_w = os.pipe()  # parent -> child
    pid = os.fork()
    if pid == 0:  # the child: never returns, never runs the caller's cleanup
        code = 1
        try:
            os.close(up_r)
            os.close(down_w)
            docs, problems = _scan_files(site, readable[:half], source_of, redirects)
            _send(up_w, (_ids(docs), [tuple(p) for p in problems]))
            found = _check_docs(site, docs, files, _receive(down_r), source_of)
            _send(up_w, [tuple(p) for p in found])
            code = 0
        finally:
            os._exit(code)
    os.close(up_w)
    os.close(down_r)
    try:
        docs, problems = _scan_files(site, readable[half:], source_of, redirects)
        their_ids, their_problems = _receive(up_r)
        ids = {**their_ids, **_ids(docs)}
        _send(down_w, ids)
        problems += _check_docs(site, docs, files, ids, source_of)
        their_found = _receive(up_r)
        return [Problem(*p) for p in [*their_problems, *their_found]] + problems
    except (EOFError, OSError, ValueError, TypeError):  # the child died or sent garbage: read it all here
        return _serial(site, files, readable, source_of, redirects)
    finally:
        os.close(up_r)
        os.close(down_w)
        os.waitpid(pid, 0)


def _half(site: Path, readable: list[str]) -> int:
    """Where to split ``readable`` so that each process reads about as many bytes."""
    sizes = []
    for rel in readable:
        try:
            sizes.append(os.stat(os.path.join(site, rel)).st_size)
        except OSError:
            sizes.append(0)
    total = sum(sizes)
    run = 0
    for i, size in enumerate(sizes):
        run += size
        if 2 * run >= total:
            return max(1, min(i + 1, len(readable) - 1))
    return len(readable) // 2


def _send(fd: int, value: Any) -> None:
    data = marshal.dumps(value)
    view = memoryview(len(data).to_bytes(8, "little") + data)
    while view:
        view = view[os.write(fd, view) :]


def _receive(fd: int) -> Any:
    size = int.from_bytes(_read_exactly(fd, 8), "little")
    return marshal.loads(_read_exactly(fd, size))


def _read_exactly(fd: int, size: int) -> bytes:
    chunks = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise EOFError("the other process closed the pipe")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _serial(
    site: Path, files: set[str], readable: list[str], source_of: dict[str, str], redirects: Mapping[str, str]
) -> list[Problem]:
    docs, problems = _scan_files(site, readable, source_of, redirects)
    return problems + _check_docs(site, docs, files, _ids(docs), source_of)


def _ids(docs: dict[str, _Doc]) -> dict[str, set[str]]:
    return {rel: doc.ids for rel, doc in docs.items() if not rel.endswith(".css")}


def _scan_files(
    site: Path, readable: list[str], source_of: dict[str, str], redirects: Mapping[str, str]
) -> tuple[dict[str, _Doc], list[Problem]]:
    problems: list[Problem] = []
    docs: dict[str, _Doc] = {}
    scanner = _Scanner()
    for rel in readable:
        text = _read(site, rel, problems)
        if text is None:
            continue
        if rel.endswith(".css"):
            refs, events = [], []
            for off, url in _css_urls(text, 0):
                in_content, in_theme = _css_url_problem(url, False)
                if in_theme:
                    events.append(Event(off, in_content, in_theme, ""))
                else:
                    refs.append(Ref(off, _clean(url), True))
            docs[rel] = _Doc(set(), [(0, _bits(_Part(set(), refs, events, -1, False, True)))], (0, 0))
        elif rel in redirects:
            stub = scanner.page(text, False)
            why = "redirect page differs from the one the redirects plugin writes for it (expected it unedited)"
            differs = [] if text == redirects[rel] else [Event(0, why, why, "")]
            refs = [
                r._replace(offset=at + lo + r.offset) for at, p in stub.parts for lo, sub in p.links for r in sub.refs
            ]
            docs[rel] = _Doc(stub.ids, [(0, _bits(_Part(stub.ids, refs, differs, -1, False, True)))], stub.content)
        else:
            page = rel in source_of or not source_of or rel == "404.html"
            docs[rel] = scanner.page(text, page)
            entity = _ENTITY.search(text) if rel.lower().endswith((*XML_MARKUP, *XML)) else None
            if entity:  # read as XML, an entity can expand into markup this check never sees
                why = "<!ENTITY> declaration (expected no DTD entities: they expand into unchecked markup)"
                docs[rel].parts.append(
                    (0, _Bits(set(), [], [Event(entity.start(), why, why, "")], -1, False, True, 99))
                )
    return docs, problems


def _check_docs(
    site: Path, docs: dict[str, _Doc], files: set[str], ids: dict[str, set[str]], source_of: dict[str, str]
) -> list[Problem]:
    """Resolve every link of ``docs`` and place every finding at its line.

    A link that climbs out of its page's folder with ../ resolves the same from every page below
    the folder it reaches: answers are remembered under that folder, for each link and for each
    stretch of page (the navigation of a section is the same on each of its pages)."""
    problems: list[Problem] = []
    answers: dict[tuple[str, str, bool], str | None] = {}
    stretches: dict[tuple[int, str], list[tuple[int, str, str]]] = {}
    # By the folders a page climbs to: the stretches with nothing to report from there (no
    # event, and every link climbs to one of those folders and resolves). Most of a page is one.
    quiet: dict[tuple[str, ...], set[int]] = {}
    for rel, doc in docs.items():
        base = posixpath.dirname(rel)
        climbs = _climbs(base)
        known = quiet.setdefault(tuple(climbs[1:]), set())
        found: list[tuple[int, str, str | None]] = []
        lo, hi = doc.content
        for at, bits in doc.parts:
            if id(bits) in known:
                continue
            if bits.links:
                shared = 0 < bits.up < len(climbs)
                where = climbs[bits.up] if shared else rel
                bad = stretches.get((id(bits), where))
                if bad is None:
                    bad = stretches[(id(bits), where)] = []
                    for sub_at, sub in bits.links:
                        for ref in sub.refs:
                            url = ref.url
                            key = (rel, url, ref.loads)
                            if url.startswith("../"):
                                up = _climb(url)
                                if up < len(climbs):
                                    key = (climbs[up], url[3 * up :], ref.loads)
                            msg = answers.get(key, _UNSEEN)
                            if msg is _UNSEEN:
                                msg = answers[key] = _check_ref(ref, rel, base, files, ids)
                            if msg:
                                bad.append((sub_at + ref.offset, msg, url))
                for off, msg, url in bad:
                    off += at
                    found.append((off, msg, url if lo <= off < hi else None))
                if shared and not bad and not bits.events:
                    known.add(id(bits))
            elif not bits.events:
                known.add(id(bits))
            for ev in bits.events:
                off = at + ev.offset
                inside = lo <= off < hi
                msg = ev.in_content if inside else ev.in_theme
                if msg:
                    found.append((off, msg, ev.needle if inside else None))
        if found:
            problems += _locate(site, rel, found, source_of.get(rel), doc.content)
    return problems


# ---- files ----------------------------------------------------------------------------------


def _walk(site: Path, problems: list[Problem]) -> tuple[set[str], list[str]]:
    """Every file under the site (symlinks inside it followed once), and those to read."""
    files: set[str] = set()
    readable: list[str] = []
    root = str(site)
    seen_dirs = {root}
    stack = [("", root)]
    while stack:
        rel_dir, path = stack.pop()
        try:
            entries = sorted(os.scandir(path), key=lambda e: e.name)
        except OSError as exc:
            problems.append(Problem(f"site/{rel_dir}", 1, f"cannot list: {exc.strerror} (expected a readable folder)"))
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_symlink():
                    target = os.path.realpath(entry.path)
                    if os.path.commonpath([root, target]) != root:
                        problems.append(
                            Problem(
                                f"site/{rel}",
                                1,
                                f"symlink to '{os.readlink(entry.path)}', outside the site folder "
                                "(expected a real file inside the site)",
                            )
                        )
                        continue
                    if not os.path.exists(target):
                        problems.append(
                            Problem(f"site/{rel}", 1, f"broken symlink '{os.readlink(entry.path)}' (expected a file)")
                        )
                        continue
                is_dir = entry.is_dir()
                is_file = entry.is_file()
            except OSError as exc:
                problems.append(Problem(f"site/{rel}", 1, f"cannot read: {exc.strerror} (expected a readable file)"))
                continue
            if is_dir:
                real = os.path.realpath(entry.path)
                if real not in seen_dirs:
                    seen_dirs.add(real)
                    stack.append((rel, entry.path))
            elif is_file:
                files.add(rel)
                if rel.endswith(_DOCUMENTS) or rel.endswith(".css"):
                    readable.append(rel)
            else:
                problems.append(Problem(f"site/{rel}", 1, "not a regular file (expected files and folders only)"))
    return files, readable


def _read(site: Path, rel: str, problems: list[Problem]) -> str | None:
    path = site / rel
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            problems.append(
                Problem(
                    f"site/{rel}",
                    1,
                    f"file is {size / 2**20:.0f} MiB (expected at most {MAX_BYTES // 2**20} MiB; "
                    "the check does not read larger pages, so split it)",
                )
            )
            return None
        data = path.read_bytes()
    except OSError as exc:
        problems.append(Problem(f"site/{rel}", 1, f"cannot read: {exc.strerror} (expected a readable file)"))
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problems.append(
            Problem(f"site/{rel}", line, f"bytes that are not UTF-8 at offset {exc.start} (expected UTF-8 text)")
        )
        return data.decode("utf-8", "replace")


def _locate(
    site: Path, rel: str, found: list[tuple[int, str, str | None]], shown: str | None, content: tuple[int, int]
) -> list[Problem]:
    """Problems with their line in the built file, and where possible the line in the source page."""
    text = _read(site, rel, []) or ""
    source = _source_text(site, shown) if shown else None
    lo, hi = content
    out = []
    for off, msg, needle in found:
        hint = ""
        if shown:
            line = _source_line(text[lo:hi], off - lo, source, needle) if needle and source else None
            hint = f" [from {shown}:{line}]" if line else f" [from {shown}]"
        out.append(Problem("site/" + rel, text.count("\n", 0, off) + 1, msg + hint))
    return out


def _source_text(site: Path, shown: str) -> str | None:
    path = site.parent / shown  # pages are named from the project root, which holds site/
    try:
        if path.is_file() and path.stat().st_size <= MAX_BYTES:
            return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        pass
    return None


def _source_line(article: str, off: int, source: str, needle: str) -> int | None:
    """The source line of the n-th ``needle`` in the article: only when both hold it equally often."""
    needle = needle.split("\n", 1)[0][:200]
    if len(needle) < 4 or article.count(needle) != source.count(needle):
        return None
    if off < 0 or article.find(needle, off) < 0:
        return None
    nth = article.count(needle, 0, off) + 1
    pos = -1
    for _ in range(nth):
        pos = source.find(needle, pos + 1)
        if pos < 0:
            return None
    return source.count("\n", 0, pos) + 1


# ---- pages ----------------------------------------------------------------------------------


class _Tag(NamedTuple):
    """What one start tag (by its exact text) contributes, whatever page it is on."""

    ids: tuple[str, ...]
    refs: tuple[tuple[str, bool], ...]
    events: tuple[tuple[str | None, str | None, str], ...]
    article: bool  # Material's content article
    script: tuple[str, bool] | None  # (src or '', inert data block) for a <script>
    name: str  # lower-case
    closed: bool  # written <tag ... />
    eof: bool  # the file ends inside the tag


_PLAIN = _Tag((), (), (), False, None, "", False, False)
_SPECIAL = {*_RAW, "svg", "math"}  # tags that change how what follows is read


def _scan_part(text: str, cache: dict[str, _Tag], foreign: bool) -> _Part:
    """Read ``text`` from the data state; ``foreign``: an <svg> or <math> is open (raw-text
    elements may then be read as markup). ``complete`` is False when the text ends inside a tag,
    comment or raw-text element: what it means then depends on what follows."""
    ids: set[str] = set()
    refs: list[Ref] = []
    events: list[Event] = []
    article = -1
    complete = True
    search = _MARKUP.search
    cache_get = cache.get
    pos = 0
    n = len(text)
    while pos < n:
        m = search(text, pos)
        if not m:
            break
        name = m.group(1)
        if name is not None:
            raw_tag = m.group()
            tag = cache_get(raw_tag)
            if tag is None:
                tag = cache[raw_tag] = _digest(name, m.group(2), m.group(3))
            pos = m.end()
            if tag is _PLAIN:  # most tags: nothing to record, nothing to skip
                continue
            if tag.eof:  # the file ends inside this tag: browsers drop the rest
                complete = False
                break
            start = m.start()
            if tag.ids:
                ids.update(tag.ids)
            for url, loads in tag.refs:
                refs.append(Ref(start, url, loads))
            for ev in tag.events:
                events.append(Event(start, *ev))
            if tag.article and article < 0:
                article = start
            name = tag.name
            if name in _RAW_END:
                if name == "noscript":
                    events.append(Event(start, *_both(f"{_tag_text(raw_tag)} {_NOSCRIPT}"), raw_tag))
                if name == "script":
                    if foreign and tag.closed:  # <svg><script/>: nothing inside
                        events += _script_events(tag.script or ("", False), "", start, raw_tag)
                        continue
                    end = _RAW_END["script"].search(text, pos)
                    body_end = end.start() if end else n
                    complete = complete and end is not None
                    events += _script_events(tag.script or ("", False), text[pos:body_end], start, raw_tag)
                    pos = body_end
                elif name == "style":
                    end = _RAW_END["style"].search(text, pos)
                    body_end = end.start() if end else n
                    complete = complete and end is not None
                    style_refs, style_events = _style_urls(text[pos:body_end], pos, foreign)
                    refs += style_refs
                    events += style_events
                    if not foreign:
                        pos = body_end
                elif not foreign:  # in SVG or MathML these hold markup, read on
                    if name == "plaintext":
                        complete = False
                        break
                    end = _RAW_END[name].search(text, pos)
                    pos = end.start() if end else n
                    complete = complete and end is not None
            elif name == "svg" or name == "math":
                foreign = True
            continue
        start = m.start()
        if m.group(4) is not None:
            rest = _always(_END_REST.match(text, m.end()))
            if rest.group(2) is None:
                complete = False
                break
            pos = rest.end()
            if rest.group(1).strip("\t\n\f\r /"):
                events.append(
                    Event(
                        start,
                        *_both(
                            f"end tag with attributes '{_tag_text(text[start:pos])}' (expected "
                            f"'</{m.group(4)}>': browsers and this check may read what follows differently)"
                        ),
                        text[start:pos],
                    )
                )
        elif m.group(5):
            j = start + 4
            if text.startswith(">", j):
                pos = j + 1
            elif text.startswith("->", j):
                pos = j + 2
            else:
                close = _COMMENT_END.search(text, j)
                stop = close.start() if close else n
                hidden = _HIDDEN_END.search(text, j, stop)
                if hidden:
                    events.append(
                        Event(
                            start,
                            *_both(
                                f"comment hides the end tag '{hidden.group(0)}' (expected comments "
                                "without markup: browsers may end that element inside the comment)"
                            ),
                            text[start : hidden.end()],
                        )
                    )
                pos = close.end() if close else n
                complete = complete and close is not None
        else:
            gt = text.find(">", m.end())
            pos = gt + 1 if gt >= 0 else n
            complete = complete and gt >= 0
    if "\x1b" in text:
        events += [Event(m.start(), _ESC, _ESC, "") for m in _ESC_CHAR.finditer(text)]
    if "kb:" in text:
        events += [Event(m.start(), _LEFTOVER, _LEFTOVER, "") for m in _SHORTCODE.finditer(text)]
    return _Part(ids, refs, events, article, foreign, complete)


_UNSEEN = "\0"  # not a message: the answer for this key is not known yet


def _climbs(base: str) -> list[str]:
    """For each number of ``../`` a link may start with, the folder it reaches from ``base``."""
    parts = base.split("/") if base else []
    return ["/".join(parts[: len(parts) - up]) + f"\0{up}" for up in range(len(parts) + 1)]


class _Bits(NamedTuple):
    """What a stretch of a page holds, offsets from its start; remembered by the stretch's text."""

    ids: set[str]
    links: list[tuple[int, _Part]]  # the parts of it that hold links, each at its offset in the stretch
    events: list[Event]
    article: int  # where Material's content <article> starts, or -1
    foreign: bool  # an <svg> or <math> is still open at its end
    complete: bool  # it ends in the data state (see _scan_part)
    up: int  # every link in it starts with at least this many ../ (see _check_docs)


def _bits(part: _Part, links: list[tuple[int, _Part]] | None = None) -> _Bits:
    """A stretch read in one part, or (``links``) in several: the part then carries the rest."""
    if links is None:
        links = [(0, part)] if part.refs else []
    up = min((_climb(ref.url) for _, sub in links for ref in sub.refs), default=99)
    return _Bits(part.ids, links, part.events, part.article, part.foreign, part.complete, up)


def _climb(url: str) -> int:
    up = 0
    while url.startswith("../", 3 * up):
        up += 1
    return up


_COMPLETE = attrgetter("complete")
_FOREIGN = attrgetter("foreign")


class _Scanner:
    """Reads pages in stretches and remembers each stretch it read, by its exact text.

    Material repeats most of a page on every page (head, header, tabs, navigation, footer), so a
    page is cut before each navigation item and a few landmarks, and a stretch not seen before
    is cut again before common tags: only text never seen before is tokenized. A stretch is read
    alone, from the state the previous one ended in, which gives the same answer as reading the
    whole page only when it ends in the data state: when one doesn't (the cut fell inside a tag,
    comment or script), the whole page is read again in one piece."""

    ITEM = '<li class="md-nav__item'
    COARSE = re.compile(
        r'<(?:header|div class="md-(?:container|header__topic|content)|/article|footer'
        r'|script|link rel="(?:canonical|prev|next)"|title|nav)'
    )
    # block-level tags: a paragraph or list item with a link of its own is read as one bit (cutting
    # before each <a> too costs more in lookups than it saves in tokenizing)
    FINE = re.compile(r"<(?:li|nav|svg|script|footer|header|form|link|meta|title|div|h[1-6]|p|table|pre)\b")

    def __init__(self) -> None:
        self.tags: dict[str, _Tag] = {}
        # stretch text -> what it holds, by the foreign state at its start; and the same for the bits
        # a stretch not seen before is cut into
        self.seen: tuple[dict[str, _Bits], dict[str, _Bits]] = ({}, {})
        self.seen_items: tuple[dict[str, _Bits], dict[str, _Bits]] = ({}, {})  # by the text after ITEM
        self.bits: tuple[dict[str, _Part], dict[str, _Part]] = ({}, {})

    def page(self, text: str, page: bool) -> _Doc:
        # Navigation items, the bulk of a page, are found by a plain split (far cheaper than a
        # regular expression); what comes before the first and after the last is cut at landmarks.
        items = text.split(self.ITEM)
        head = self._landmarks(items[0], 0)
        if head is None:
            return self._whole(text, page)
        if len(items) == 1:
            return self._doc(text, page, head)
        foreign = head[-1][1].foreign if head else False
        middle = items[1:-1]
        starts = list(accumulate(map(len, middle), lambda at, size: at + len(self.ITEM) + size, initial=len(items[0])))
        seen = self.seen_items[foreign]
        found = [seen.get(item) or self._cut(self.ITEM + item, foreign) for item in middle]
        if not all(map(_COMPLETE, found)):
            return self._whole(text, page)
        seen.update(zip(middle, found, strict=True))
        # Each item was read from the state the head ended in: right only if none opened an <svg>
        # (once open, it stays open, so a page whose head opened one needs no look).
        if not foreign and any(map(_FOREIGN, found)):
            return self._whole(text, page)
        tail = self._landmarks(self.ITEM + items[-1], starts[-1], foreign)
        if tail is None:
            return self._whole(text, page)
        return self._doc(text, page, [*head, *zip(starts, found, strict=False), *tail])

    def _landmarks(self, text: str, at: int, foreign: bool = False) -> list[tuple[int, _Bits]] | None:
        """``text`` (at ``at`` in its page) cut before landmarks and read piece by piece; None when
        a cut fell inside a tag, comment or raw text."""
        starts = [0, *(m.start() for m in self.COARSE.finditer(text, 1))]
        out = []
        for lo, hi in zip(starts, [*starts[1:], len(text)], strict=True):
            piece = text[lo:hi]
            bits = self.seen[foreign].get(piece) or self._cut(piece, foreign)
            if not bits.complete:
                return None
            out.append((at + lo, bits))
            foreign = bits.foreign
        return out

    def _whole(self, text: str, page: bool) -> _Doc:
        """A page whose cuts fell inside a tag, comment or raw text: read in one piece."""
        return self._doc(text, page, [(0, _bits(_scan_part(text, self.tags, False)))])

    def _doc(self, text: str, page: bool, pieces: list[tuple[int, _Bits]]) -> _Doc:
        n = len(text)
        ids: set[str] = set().union(*[bits.ids for _, bits in pieces if bits.ids])
        article = next((at + bits.article for at, bits in pieces if bits.article >= 0), -1)
        if page and article >= 0:
            article_end = text.rfind("</article")
            content = (article, article_end if article_end > article else n)
        else:
            content = (0, n + 1)
        return _Doc(ids, pieces, content)

    def _cut(self, piece: str, foreign: bool) -> _Bits:
        """A stretch not seen before: cut again before common tags and read each new bit."""
        cuts = [*(m.start() for m in self.FINE.finditer(piece, 1)), len(piece)]
        if len(cuts) == 1:
            bits = _bits(_scan_part(piece, self.tags, foreign))
            if bits.complete:  # only complete stretches are remembered: a known one needs no check
                self.seen[foreign][piece] = bits
            return bits
        ids: set[str] = set()
        links: list[tuple[int, _Part]] = []
        events: list[Event] = []
        article = -1
        state = foreign
        lo = 0
        for hi in cuts:
            bit = piece[lo:hi]
            sub = self.bits[state].get(bit)
            if sub is None:
                sub = self.bits[state][bit] = _scan_part(bit, self.tags, state)
            if not sub.complete:
                return _bits(sub)  # the caller reads the whole page in one piece
            if sub.ids:
                ids |= sub.ids
            if sub.refs:
                links.append((lo, sub))
            if sub.events:
                events += [e._replace(offset=e.offset + lo) for e in sub.events] if lo else sub.events
            if article < 0 and sub.article >= 0:
                article = sub.article + lo
            state = sub.foreign
            lo = hi
        part = _Part(ids, [], events, article, state, True)
        bits = self.seen[foreign][piece] = _bits(part, links)
        return bits


def _both(msg: str) -> tuple[str, str]:
    return msg, msg


def _tag_text(raw: str) -> str:
    raw = " ".join(raw.split())
    return raw if len(raw) <= 80 else raw[:77] + "..."


# The commonest tags (<a href>, <h2 id>, <img src>, <link rel href>), when every attribute is a
# plain double-quoted value from the lists below: read without the general attribute rules
# (tests/test_sitecheck_stretches.py holds the two readings equal).
_SIMPLE_TAGS = frozenset(
    {"a", "h1", "h2", "h3", "h4", "h5", "h6", "p", "span", "div", "li", "td", "th", "code", "em", "img", "link", "abbr"}
)
_SIMPLE_ATTRS = re.compile(
    r'(?: (?:id|href|src|name|rel)="[^"&<>\\\x00-\x20:]*"'  # ids, relative URLs, one rel token: no space or scheme
    r'| (?:class|title|aria-label|aria-hidden|tabindex|lang|dir|alt|width|height|loading)="[^"<>\x00-\x1f]*")*'
)
_SIMPLE_ATTR = re.compile(r' ([a-z-]+)="([^"]*)"')
_SIMPLE_KEYS = {"a": {"id", "href", "name"}, "img": {"id", "src"}, "link": {"href", "rel"}}  # other tags: id
_ONLY_ID = frozenset({"id"})
_STRICT_KEYS = frozenset({"id", "href", "src", "name", "rel"})


def _digest(name: str, attr_text: str, end: str | None) -> _Tag:
    """The ids, URLs and script-like findings of one start tag."""
    if end is None or name not in _SIMPLE_TAGS or not _SIMPLE_ATTRS.fullmatch(attr_text):
        return _digest_all(name, attr_text, end)
    pairs = _SIMPLE_ATTR.findall(attr_text)
    allowed = _SIMPLE_KEYS.get(name, _ONLY_ID)
    if any(key in _STRICT_KEYS and key not in allowed for key, _ in pairs):
        return _digest_all(name, attr_text, end)
    ids = tuple(value for key, value in pairs if value and (key == "id" or key == "name"))  # name: only on <a>
    if name == "img":
        refs = tuple((value, True) for key, value in pairs if key == "src")
    else:
        rel = next((value for key, value in pairs if key == "rel"), "")  # only on <link>
        loads = name == "link" and not (rel and rel.lower() in _NOT_LOADED)
        refs = tuple((value, loads) for key, value in pairs if key == "href")  # only on <a> and <link>
        if not loads and any(url.startswith("/") for url, _ in refs):
            return _digest_all(name, attr_text, end)  # a protocol-relative link is also reported
    return _Tag(ids, refs, (), False, None, name, end == "/>", False) if ids or refs else _PLAIN


def _digest_all(name: str, attr_text: str, end: str | None) -> _Tag:
    """The ids, URLs and script-like findings of one start tag, by the general rules."""
    name = name.lower()
    if end is None:
        return _Tag((), (), (), False, None, name, False, True)
    attrs: list[tuple[str, str | None, str]] = []
    for m in _ATTR.finditer(attr_text):
        value = m.group(2)
        if value is not None:
            if value[:1] in "\"'" and value != "":
                value = value[1:-1]
            if "&" in value:
                value = html.unescape(value)
        attrs.append((m.group(1).lower(), value, m.group(0)))
    if not attrs and name not in ("base", "object", "embed", "applet", "script") and name not in _SPECIAL:
        return _PLAIN
    first: dict[str, str] = {}
    for key, value, _raw in attrs:
        first.setdefault(key, value or "")
    ids: list[str] = []
    refs: list[tuple[str, bool]] = []
    events: list[tuple[str | None, str | None, str]] = []
    tag = f"<{name}>"
    rel = set(first.get("rel", "").lower().split())
    for key, value, raw in attrs:
        if key == "id" or (key == "name" and name == "a"):
            if value:
                ids.append(value)
        elif key.startswith("on"):
            events.append(_both(f"event handler attribute '{key}' on {tag} (expected no inline script)") + (raw,))
        elif key in _URL_ATTRS and value is not None and name != "base":
            kind = _URL_ATTRS[key]
            if kind == "nav" and name not in _NAV_TAGS:
                kind = "load"  # <use href>, <image href>, <script href> in SVG...
            if key == "data" and name != "object":
                continue
            if kind == "nav" and name == "link":
                kind = "nav" if rel and rel <= _NOT_LOADED else "load"
            urls = _srcset(value) if key in ("srcset", "imagesrcset") else value.split() if key in _LISTS else [value]
            for url in urls:
                url = _clean(url)
                problem = _url_problem(url, key, tag)
                if problem:
                    events.append(problem + (raw,))
                elif kind == "send":
                    if _foreign(url):
                        events.append(_both(f"{tag} sends to '{url}' on another origin (expected this site)") + (raw,))
                elif kind != "text":
                    refs.append((url, kind == "load"))
                    if kind == "nav" and _protocol_relative(url):
                        events.append(
                            _both(
                                f"protocol-relative link '{url}' (expected https://..., so it also works from file://)"
                            )
                            + (raw,)
                        )
        elif key == "style" and value:
            for _off, url in _css_urls(value, 0):
                css_problem = _css_url_problem(url, True)
                if css_problem[0] or css_problem[1]:
                    events.append(css_problem + (raw,))
                else:
                    refs.append((_clean(url), True))
        elif key == "srcdoc":
            events.append(_both(f"{tag} with srcdoc (expected no inline documents: they run scripts)") + (raw,))
        elif key in ("to", "from", "values", "by") and name in _ANIMATIONS and value:
            if first.get("attributename", "").lower() in ("href", "xlink:href"):
                for url in value.split(";"):
                    url = _clean(url)
                    problem = _url_problem(url, key, tag)
                    if problem:
                        events.append(problem + (raw,))
                    elif url:
                        refs.append((url, True))
    if name in ("object", "embed", "applet"):
        events.append(
            _both(f"{tag} element (expected no plugin content: it can run scripts and load from anywhere)")
            + (f"<{name}",)
        )
    elif name == "base":
        href = _clean(first.get("href", "")) if "href" in first else None
        outside = href is not None and (
            _SCHEME.match(href)
            or href.startswith(("/", "\\"))
            or posixpath.normpath(href.replace("\\", "/") or ".").startswith("..")
        )
        events.append(
            (
                "<base> in page content (expected none: it changes where every link and image of the page points)",
                f"<base href='{href}'> points away from the site (expected the site itself)" if outside else None,
                f"<{name}",
            )
        )
    elif name == "meta":
        equiv = first.get("http-equiv", "").strip().lower()
        if equiv == "refresh":
            url = _clean(_refresh_url(first.get("content", "")))
            away = url and (_foreign(url) or _scheme(url) in _SCRIPT_SCHEMES | {"data"})
            events.append(
                (
                    "<meta http-equiv=refresh> in page content (expected none: it navigates away by itself)",
                    f"<meta http-equiv=refresh> sends the reader to '{url}' (expected no redirect off the site)"
                    if away
                    else None,
                    "http-equiv",
                )
            )
        charset = first.get("charset") if "charset" in first else None
        if charset is None and equiv == "content-type":
            declared = _CHARSET.search(first.get("content", ""))
            charset = declared.group(1) if declared else None
        if charset is not None and charset.strip().lower() not in ("utf-8", "utf8"):
            events.append(_both(f"page declares charset '{charset}' (expected utf-8)") + ("charset",))
    article = name == "article" and "md-content__inner" in first.get("class", "").split()
    script = None
    if name == "script":
        src = first.get("src") or first.get("href") or first.get("xlink:href") or ""
        script = (_clean(src), first.get("type", "").strip().lower() in _DATA_BLOCKS)
    if not (ids or refs or events or article or script or name in _SPECIAL):
        return _PLAIN
    return _Tag(tuple(ids), tuple(refs), tuple(events), article, script, name, end == "/>", False)


def _script_events(script: tuple[str, bool], body: str, start: int, raw_tag: str) -> list[Event]:
    src, inert = script
    needle = raw_tag.split(">", 1)[0]
    in_content = f"{_tag_text(raw_tag)} in page content ({_NO_SCRIPT})"
    if src:
        # A src on another origin (or a script URL) is already reported by its attribute.
        foreign = _foreign(src) or _scheme(src) in _SCRIPT_SCHEMES | {"data"}
        return [] if foreign else [Event(start, in_content, None, needle)]
    if inert or _theme_script(body):
        return [Event(start, in_content, None, needle)]
    return [
        Event(start, in_content, f"inline {_tag_text(raw_tag)} that the theme does not emit ({_NO_SCRIPT})", needle)
    ]


def _theme_script(body: str) -> bool:
    def blank(m: re.Match[str]) -> str:
        literal = m.group(1)
        return m.group(0) if _foreign(literal) or _SCHEME.match(literal) else 'new URL(""'

    text = _URL_LITERAL.sub(blank, body.strip())
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest() in THEME_SCRIPTS


def _style_urls(css: str, offset: int, decode: bool) -> tuple[list[Ref], list[Event]]:
    """The URLs of a <style> block; in SVG its text is markup, so references are decoded too."""
    texts = [css]
    if decode and "&" in css:
        texts.append(html.unescape(css))
    refs, events, seen = [], [], set()
    for body in texts:
        for off, url in _css_urls(body, offset):
            if url in seen:
                continue
            seen.add(url)
            in_content, in_theme = _css_url_problem(url, True)
            if in_content or in_theme:
                events.append(Event(off, in_content, in_theme, url))
            else:
                refs.append(Ref(off, _clean(url), True))
    return refs, events


# ---- URL helpers ----------------------------------------------------------------------------


def _clean(url: str) -> str:
    """The URL as a browser reads it: C0 controls and spaces trimmed, tabs and newlines removed."""
    return url.strip(_STRIP).translate(_DROP_TAB_NL)


def _scheme(url: str) -> str:
    m = _SCHEME.match(url)
    return m.group(0)[:-1].lower() if m else ""


def _protocol_relative(url: str) -> bool:
    return len(url) >= 2 and url[0] in "/\\" and url[1] in "/\\"


def _foreign(url: str) -> bool:
    """True when the URL leaves this site (another scheme or host), harmless schemes aside."""
    if _protocol_relative(url):
        return True
    return bool(_SCHEME.match(url)) and not url.lower().startswith(_HARMLESS)


def _url_problem(url: str, attr: str, tag: str) -> tuple[str, str | None] | None:
    name = _scheme(url)
    if name in _SCRIPT_SCHEMES:
        msg = f"{name}: URL in {attr}= of {tag} (expected a link to a page or file, never a script URL)"
        # Material's search "share" button is <a href="javascript:void(0)">: a no-op, allowed outside content.
        return msg, None if url.lower() == _NOOP else msg
    if name == "data":
        return _both(
            f"data: URL in {attr}= of {tag} (expected a file of this site: a data: URL can carry a page or a script)"
        )
    return None


def _css_url_problem(url: str, inline: bool) -> tuple[str | None, str | None]:
    """(in content, in theme) problems of a CSS URL: script URLs anywhere, data: in page content."""
    name = _scheme(_clean(url))
    if name in _SCRIPT_SCHEMES:
        return _both(f"{name}: URL in CSS (expected a file of this site)")
    if name == "data" and inline:
        return "data: URL in CSS inside page content (expected a file of this site)", None
    return None, None


def _srcset(value: str) -> list[str]:
    """Every candidate URL of a srcset, split the way browsers split it (commas may sit in URLs)."""
    out: list[str] = []
    pos, n = 0, len(value)
    while True:  # the gap and the descriptors may be empty; a URL starts where a gap ends before n
        pos = _always(_SRCSET_GAP.match(value, pos)).end()
        if pos >= n:
            return out
        url = _always(_SRCSET_URL.match(value, pos))
        pos = url.end()
        candidate = url.group(0)
        if candidate.endswith(","):
            candidate = candidate.rstrip(",")
        else:
            pos = _always(_SRCSET_DESCRIPTORS.match(value, pos)).end()
        if candidate:
            out.append(candidate)


_SRCSET_GAP = re.compile(r"[\t\n\f\r ,]*")
_SRCSET_URL = re.compile(r"[^\t\n\f\r ]+")
_SRCSET_DESCRIPTORS = re.compile(r"(?:[^,(]|\([^)]*\)?)*")


def _always(m: re.Match[str] | None) -> re.Match[str]:
    """``m``, from a pattern that cannot fail where it is tried."""
    assert m is not None
    return m


def _refresh_url(content: str) -> str:
    m = re.match(
        r"[\t\n\f\r ]*[\d.]*[\t\n\f\r ]*[;,]?[\t\n\f\r ]*(?:url[\t\n\f\r ]*=[\t\n\f\r ]*)?(.*)", content, re.I | re.S
    )
    url = m.group(1) if m else ""
    if url[:1] in ("'", '"'):
        url = url[1:].split(url[0], 1)[0]
    return url


# The site's URL path while check_site runs (set before its second process forks, so both see it).
_root_path = "/"


def _check_ref(ref: Ref, rel: str, base: str, files: set[str], ids: dict[str, set[str]]) -> str | None:
    url = ref.url
    if url.startswith("#"):  # the commonest link of all, to this page's own heading: what the end says
        return _missing_anchor(rel, url[1:], ids)
    if url.lower().startswith(_HARMLESS) or _scheme(url) == "data":  # data: is reported where it is found
        return None
    if _foreign(url):
        if ref.loads:
            return f"loads '{url}' from another origin {_LOADS}"
        return None
    if _SCHEME.match(url):  # data:, javascript: are reported where they are found
        return None
    path, _, fragment = url.partition("#")
    path = path.partition("?")[0].replace("\\", "/")
    if not path:
        target = rel
    else:
        if path.startswith("/") and rel != "404.html":
            return f"root-absolute link '{url}' (expected a relative link, so the site works under any path and from file://)"
        if "%" in path:
            path = unquote(path)
        if path.startswith("/"):  # only on 404.html, which is served from any path
            if not path.startswith(_root_path) and path + "/" != _root_path:
                return f"link '{url}' on 404.html is outside the site's path {_root_path} (expected a link under it)"
            target = posixpath.normpath(path[len(_root_path) :] or ".")
        else:
            target = posixpath.normpath(f"{base}/{path}" if base else path)
        if target.startswith(".."):
            return f"link '{url}' points outside the site (expected a file inside it)"
        target = "" if target == "." else target
        if not target or path.endswith("/") or target not in files:
            index = f"{target}/index.html".lstrip("/")
            if index in files or not target or path.endswith("/"):
                target = index
        if target not in files:
            if target.endswith(".md"):
                return (
                    f"link '{url}' points at a Markdown source (expected the built page; write links to .md "
                    "files in Markdown, not raw HTML)"
                )
            return f"broken link '{url}' (expected {target} in the built site)"
    return _missing_anchor(target, fragment, ids)


def _missing_anchor(target: str, fragment: str, ids: dict[str, set[str]]) -> str | None:
    """The problem with ``#fragment`` on ``target``, if any; an empty fragment names no element."""
    if not fragment:
        return None
    frag = unquote(fragment) if "%" in fragment else fragment
    if target in ids and frag not in ids[target]:
        return f"missing anchor '#{frag}' in {target} (expected an element with id=\"{frag}\")"
    return None


# ---- CSS tokens -----------------------------------------------------------------------------

_CSS_ESC = r"\\(?:[0-9a-fA-F]{1,6}(?:\r\n|[ \t\r\n\f])?|[^\r\n\f0-9a-fA-F])"
# Character classes spelled as "not these ASCII characters": a class that lists the whole non-ASCII
# range (\x80-\U0010ffff) takes the regex compiler a fifth of a second, every run.
_CSS_NAME_START = r"[^\x00-\x40\x5b-\x5e\x60\x7b-\x7f]"  # a letter, '_' or any non-ASCII character
_CSS_NAME_CHAR = r"[^\x00-\x2c\x2e\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]"  # and digits and '-'
# an ASCII character that starts none of the tokens below: not one of "'/@\(){}; a letter, '_' or '-'
_CSS_OTHER = r"[\x00-\x21\x23-\x26\x2a-\x2c\x2e\x30-\x3a\x3c-\x3f\x5b\x5d\x5e\x60\x7c\x7e\x7f]"
_CSS_IDENT = rf"(?:--|-?(?:{_CSS_NAME_START}|{_CSS_ESC}))(?:{_CSS_NAME_CHAR}|{_CSS_ESC})*"
_CSS_TOKEN = re.compile(
    # a run of tokens that can't hold a URL (names not followed by '(', numbers, spaces...),
    # cut exactly where the alternatives below would cut them: skipped in one step
    rf"(?:(?>{_CSS_IDENT})(?!\()|{_CSS_OTHER}+)++"
    r"|(/\*.*?(?:\*/|\Z))"  # 1 comment
    r"|(\"(?:[^\"\\\r\n\f]|\\(?:\r\n|[\s\S]))*\"?|'(?:[^'\\\r\n\f]|\\(?:\r\n|[\s\S]))*'?)"  # 2 string
    rf"|@({_CSS_IDENT})"  # 3 at-keyword
    rf"|({_CSS_IDENT})(\()?"  # 4 identifier, 5 '(' when it names a function
    r"|([(){};])"  # 6
    rf"|{_CSS_OTHER}+|[\s\S]",
    re.S,
)
_CSS_URL_TOKEN = re.compile(
    rf"[ \t\r\n\f]*((?:[^)\"'(\\ \t\r\n\f\x00-\x08\x0b\x0e-\x1f\x7f]|{_CSS_ESC})*)[ \t\r\n\f]*(?:\)|\Z)"
)
_CSS_BAD_URL = re.compile(r"(?:[^)\\]|\\[\s\S])*\)?")
_CSS_UNESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{1,6})(?:\r\n|[ \t\r\n\f])?|(\r\n|[\n\r\f])|([\s\S]))")
_CSS_URL_FUNCTIONS = {"url", "src", "image", "image-set", "-webkit-image-set", "cross-fade", "-webkit-cross-fade"}


def _css_unescape(text: str) -> str:
    if "\\" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        if m.group(1):
            cp = int(m.group(1), 16)
            return chr(cp) if 0 < cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF else "\ufffd"
        return "" if m.group(2) else m.group(3)

    return _CSS_UNESCAPE.sub(one, text)


def _css_urls(css: str, base: int) -> list[tuple[int, str]]:
    """(offset, URL) of every url(), src(), image-set() string and @import in a stylesheet."""
    if "(" not in css and "@" not in css:
        return []
    out: list[tuple[int, str]] = []
    stack: list[str] = []
    importing = False
    match = _CSS_TOKEN.match
    pos, n = 0, len(css)
    while pos < n:
        m = match(css, pos)
        assert m is not None  # the last alternative matches any character
        start, pos = m.start(), m.end()
        group = m.lastindex
        if group is None or group == 1:
            continue
        if group == 2:
            body = m.group(2)
            quote = body[0]
            body = body[1:-1] if len(body) > 1 and body.endswith(quote) else body[1:]
            if (stack and stack[-1] in _CSS_URL_FUNCTIONS) or (importing and not stack):
                out.append((base + start, _css_unescape(body)))
            importing = False
        elif group == 3:
            importing = not stack and _css_unescape(m.group(3)).lower() == "import"
        elif group == 5:
            fn = _css_unescape(m.group(4)).lower()
            if fn == "url":
                skip = pos
                while skip < n and css[skip] in " \t\r\n\f":
                    skip += 1
                if skip < n and css[skip] in "\"'":
                    stack.append(fn)
                    continue
                url = _CSS_URL_TOKEN.match(css, pos)
                if url:
                    out.append((base + start, _css_unescape(url.group(1))))
                    pos = url.end()
                else:  # a bad url: browsers drop it
                    pos = _always(_CSS_BAD_URL.match(css, pos)).end()
                importing = False
            else:
                stack.append(fn)
        elif group == 6:
            ch = m.group(6)
            if ch == "(":
                stack.append("")
            elif ch == ")":
                if stack:
                    stack.pop()
            elif not stack:
                importing = False
    return out
