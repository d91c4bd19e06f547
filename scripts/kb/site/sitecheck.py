"""The built-site check: every file read once (kb.site.sitedoc), then every link, asset and #anchor resolved.

It flags links and anchors that don't resolve, anything loaded from another origin, script-like
markup and shortcodes left unrendered; it never writes. Which files a browser runs as documents
whatever their name is kb.site.sitetypes' answer; an XML one may declare no entity. A page's
content (Material's ``<article class="md-content__inner">``) and every file the theme did not
render may hold no script at all; the theme's scripts must be Material's (by hash), JSON data
blocks or same-origin files."""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote

from ..core.errors import Problem
from .sitedoc import Doc, Finding, Page, read_css, read_html
from .sitepaths import built_file
from .sitetypes import XML, XML_MARKUP, document_types
from .siteurl import HARMLESS, THEME_SCRIPTS, foreign, scheme
from .siteurl import theme_script as _theme_script

__all__ = ["MAX_BYTES", "PARALLEL_FROM", "THEME_SCRIPTS", "_theme_script", "check_site", "page_files"]
MAX_BYTES = 32 * 1024 * 1024  # a page or stylesheet larger than this is reported, not read
PARALLEL_FROM = 200  # files: below this, a second process costs more than it saves
_DOCUMENTS = (".html", ".htm", ".css", *XML_MARKUP)  # read (an .svg opened directly runs scripts)
_ENTITY = "<!ENTITY> declaration (expected no DTD entities: they expand into unchecked markup)"
_CLIMB = re.compile(r"(?:\.\./)+")
# Material's own stylesheets (9.8.1, templates/assets/stylesheets/) by SHA-256: not read, as tinycss2
# takes half a second over main.css. tests/site/test_sitecheck_parallel.py re-derives them from the theme.
THEME_STYLES = {
    "57a0d79d880c51fe0fa86e34640429eefc664e85f1906c885beed544fd00a9ed": "main.57a0d79d.min.css",
    "fb2fffe2c525a359e29ee030c77ffdead459d9d73888c34213d4773262a832ab": "palette.fb2fffe2.min.css",
}


class Answer(NamedTuple):
    """What a link resolves to, as far as the files alone tell (its #anchor waits for every file's ids)."""

    problem: str | None
    """What is wrong with the link; None: nothing."""
    target: str
    """The built file whose ids the fragment must name; "" when no id is looked up (a problem, another origin)."""
    fragment: str
    """The fragment, decoded; "" for none (an empty '#' names no element, so it is never looked up)."""


_UNASKED = Answer("not asked yet", "", "")  # answers.get's default: compared by identity


class Link(NamedTuple):
    """A link of a file that is a problem or names a fragment: the rest are settled when read."""

    place: int
    """As in ``kb.site.sitedoc.Finding``."""
    url: str
    answer: Answer


class Job(NamedTuple):
    """What reading any file of one site needs (sent as is to the second process)."""

    site: Path
    """The site's folder, resolved."""
    source_of: dict[str, str]
    """Built page -> its Markdown source. Empty: unknown, and every page is taken as the theme's, with page
    content in its article; otherwise a page without a source (and not 404.html) is page content throughout."""
    redirects: dict[str, str]
    """Redirect page -> the exact text the redirects plugin writes for it."""
    files: set[str]
    """Every file of the site, site-relative."""
    root: str
    """The site's URL path, between slashes ("/" at the top of a host)."""


def check_site(
    site: Path,
    source_of: dict[str, str] | None = None,
    shown: str | None = None,
    redirects: Mapping[str, str] | None = None,
    workers: int = 2,
    root_path: str = "/",
) -> list[Problem]:
    """Every problem in the built site under ``site``, files named ``SHOWN/<file>`` (default: its
    name). ``source_of`` maps built file -> docs page. ``redirects`` maps a redirect page to the
    exact text the redirects plugin writes for it. ``workers``: 2 reads half the files in a second
    process. ``root_path``: the site's URL path; 404.html, served at any depth, links under it."""
    prefix = (shown or site.name).rstrip("/") or "."
    site = site.resolve()
    files, readable, problems = _walk(site)
    markup, refused = document_types(site, files, MAX_BYTES)  # XML, sniffed and compressed documents
    problems, readable = problems + refused, readable + markup
    root = posixpath.join("/", root_path.strip("/"), "")
    job = Job(site, source_of or {}, dict(redirects or {}), files, root)
    if workers >= 2 and len(readable) >= PARALLEL_FROM and hasattr(os, "fork"):
        from concurrent.futures import ProcessPoolExecutor  # imported here: 15 ms that a small site does not pay
        from multiprocessing import get_context

        half = readable[: len(readable) // 2]
        with ProcessPoolExecutor(1, mp_context=get_context("fork")) as pool:
            theirs = pool.submit(_read_all, job, half)
            docs, found = _read_all(job, readable[len(half) :])
            try:
                their_docs, their_found = theirs.result()
            except Exception:  # noqa: BLE001 - whatever broke there, the files are read here
                their_docs, their_found = _read_all(job, half)
        docs, found = {**their_docs, **docs}, their_found + found
    else:
        docs, found = _read_all(job, readable)
    problems += found + _resolve(site, docs, job.source_of)
    return [p._replace(path=prefix + p.path[4:]) for p in problems]  # each named site/<file>


def page_files(docs: Path, directory_urls: bool = True) -> dict[str, str]:
    """Map each built page to its Markdown source (``docs/...``), for error hints, without reading
    the pages (a site check doesn't pay for the whole knowledge base)."""
    walk = ((os.path.relpath(folder, docs).replace(os.sep, "/"), names) for folder, _, names in os.walk(docs))
    uris = [name if rel == "." else f"{rel}/{name}" for rel, names in walk for name in names if name.endswith(".md")]
    return {built_file(uri, directory_urls): f"{docs.name}/{uri}" for uri in uris}


def _read_all(job: Job, readable: list[str]) -> tuple[dict[str, tuple[Doc, list[Link]]], list[Problem]]:
    """Read each file, and resolve its links as far as the files alone tell (anchors wait for every id)."""
    docs, problems = dict[str, tuple[Doc, list[Link]]](), list[Problem]()
    answers: dict[tuple[str, str, bool], Answer | None] = {}
    for rel in readable:
        if (text := _read(job.site, rel, problems)) is not None:
            doc = _doc(job, rel, text)
            docs[rel] = (doc._replace(refs=[]), _links(job, rel, doc, answers))  # sent back without what is settled
    return docs, problems


def _doc(job: Job, rel: str, text: str) -> Doc:
    source_of, redirects = job.source_of, job.redirects
    if rel.endswith(".css"):  # Material's own stylesheets are read as empty ones
        return read_css("" if hashlib.sha256(text.encode()).hexdigest() in THEME_STYLES else text)
    if rel in redirects:
        why = "redirect page differs from the one the redirects plugin writes for it (expected it unedited)"
        return read_html(text, True)._replace(findings=[] if text == redirects[rel] else [Finding(0, why, why, "")])
    doc = read_html(text, not (rel in source_of or not source_of or rel == "404.html"))
    if rel.lower().endswith((*XML_MARKUP, *XML)) and (entity := re.search("<!entity", text, re.I)):
        doc.findings.append(Finding(entity.start(), _ENTITY, _ENTITY, ""))  # read as XML, it expands into unseen markup
    return doc


def _links(job: Job, rel: str, doc: Doc, answers: dict[tuple[str, str, bool], Answer | None]) -> list[Link]:
    """The links of ``rel`` that are a problem or name a fragment. A link climbing k folders from the
    page's folder means what the rest of it means from that folder's k-th parent: answered once, and
    remembered in ``answers`` unless it is a problem (its message names the URL); None there: nothing
    to keep (no problem, no fragment), which most links are."""
    base, links, parts = posixpath.dirname(rel), list[Link](), rel.split("/")[:-1]
    ups = ["/".join(parts[:i]) for i in range(len(parts), -1, -1)]  # base, its parent, ... ""
    top = -1 if rel == "404.html" else len(ups)  # 404.html is served at any depth: its links are its own
    for where, url, loads in doc.refs:
        up, rest = _climb(url)
        key = (ups[up], rest, loads) if 0 <= up < top else (rel, url, loads)
        if (answer := answers.get(key, _UNASKED)) is _UNASKED:
            answer = _link(url, loads, rel, base, job.files, job.root)
            if answer.problem is None:
                answer = answers[key] = answer if answer.fragment else None
        if answer is not None:
            links.append(Link(where, url, answer))
    return links


@lru_cache(maxsize=1 << 16)  # a URL's leading ../ counted once: the theme's links repeat on every page
def _climb(url: str) -> tuple[int, str]:  # (folders climbed, -1 for a '#' or '?' of the page itself; the rest)
    up = -1 if url[:1] in "#?" else len(m.group()) // 3 if (m := _CLIMB.match(url)) else 0
    return up, url[3 * up :] if up > 0 else url


def _resolve(site: Path, docs: dict[str, tuple[Doc, list[Link]]], source_of: dict[str, str]) -> list[Problem]:
    """Check every #anchor left (an empty one names no element) and place every problem at its line."""
    ids = {rel: doc.ids for rel, (doc, _) in docs.items() if not rel.endswith(".css")}
    problems: list[Problem] = []
    missing = "missing anchor '#{1}' in {0} (expected an element with id=\"{1}\")"
    for rel, (doc, links) in docs.items():
        found = [
            (at, why or missing.format(to, frag), url)
            for at, url, (why, to, frag) in links
            if why or frag and to in ids and frag not in ids[to]
        ]
        inside = range(*doc.content)
        found += [(off, msg, needle) for off, c, t, needle in doc.findings if (msg := c if off in inside else t)]
        if found:
            problems += _locate(site, rel, found, source_of.get(rel), doc)
    return problems


def _link(url: str, loads: bool, rel: str, base: str, files: set[str], root: str) -> Answer:
    """The ``Answer`` for a link on ``rel``."""
    path, _, fragment = url.partition("#")
    path = path.partition("?")[0].replace("\\", "/")
    if url.lower().startswith(HARMLESS) or scheme(url) == "data":  # data: is reported where it is found
        return Answer(None, "", "")
    if foreign(url):
        why = "expected every script, style, font, image and frame to come from this site"
        return Answer((f"loads '{url}' from another origin ({why})" if loads else None), "", "")
    if not path:  # past foreign(), a URL has no scheme
        return Answer(None, rel, unquote(fragment))
    if path.startswith("/") and rel != "404.html":
        why = "expected a relative link, so the site works under any path and from file://"
        return Answer(f"root-absolute link '{url}' ({why})", "", "")
    path = unquote(path)
    if path.startswith("/") and not path.startswith(root) and path + "/" != root:
        return Answer(f"link '{url}' on 404.html is outside the site's path {root} (expected a link under it)", "", "")
    target = posixpath.normpath(path[len(root) :] or "." if path.startswith("/") else f"{base}/{path}".lstrip("/"))
    if target.startswith(".."):
        return Answer(f"link '{url}' points outside the site (expected a file inside it)", "", "")
    index = "index.html" if target == "." else f"{target}/index.html".lstrip("/")
    folder = target == "." or path.endswith("/")
    target = index if folder or target not in files and index in files else target
    if target in files:
        return Answer(None, target, unquote(fragment))
    if target.endswith(".md"):
        why = "expected the built page; write links to .md files in Markdown, not raw HTML"
        return Answer(f"link '{url}' points at a Markdown source ({why})", "", "")
    return Answer(f"broken link '{url}' (expected {target} in the built site)", "", "")


def _walk(site: Path) -> tuple[set[str], list[str], list[Problem]]:
    """Every file under the site (symlinks inside it followed once), those to read, and problems."""
    files, problems, root = set[str](), list[Problem](), str(site)
    seen_dirs, stack = {root}, [("", root)]
    while stack:
        rel_dir, path = stack.pop()
        try:
            entries = sorted(os.scandir(path), key=lambda e: e.name)
        except OSError as exc:
            problems.append(Problem(f"site/{rel_dir}", 1, f"cannot list: {exc.strerror} (expected a readable folder)"))
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if why := _bad_entry(root, entry):
                problems.append(Problem(f"site/{rel}", 1, why))
            elif entry.is_dir():  # listed by its real path: its parent's and its name, but for a symlink
                if (real := os.path.realpath(entry.path) if entry.is_symlink() else entry.path) not in seen_dirs:
                    seen_dirs.add(real)
                    stack.append((rel, real))
            else:
                files.add(rel)
    return files, sorted(rel for rel in files if rel.endswith(_DOCUMENTS)), problems


def _bad_entry(root: str, entry: os.DirEntry[str]) -> str | None:
    try:
        if entry.is_symlink():
            target = os.path.realpath(entry.path)
            if os.path.commonpath([root, target]) != root:
                why = "expected a real file inside the site"
                return f"symlink to '{os.readlink(entry.path)}', outside the site folder ({why})"
            if not os.path.exists(target):
                return f"broken symlink '{os.readlink(entry.path)}' (expected a file)"
        if entry.is_dir() or entry.is_file():
            return None
    except OSError as exc:
        return f"cannot read: {exc.strerror} (expected a readable file)"
    return "not a regular file (expected files and folders only)"


def _read(site: Path, rel: str, problems: list[Problem]) -> str | None:
    try:
        data = b"" if (size := (site / rel).stat().st_size) > MAX_BYTES else (site / rel).read_bytes()
    except OSError as exc:
        problems.append(Problem(f"site/{rel}", 1, f"cannot read: {exc.strerror} (expected a readable file)"))
        return None
    if size > MAX_BYTES:
        why = f"expected at most {MAX_BYTES:,} bytes; the check does not read larger pages, so split it"
        problems.append(Problem(f"site/{rel}", 1, f"file is {size:,} bytes ({why})"))  # whole MiB said 32 for 32.4
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        why = f"bytes that are not UTF-8 at offset {exc.start} (expected UTF-8 text)"
        problems.append(Problem(f"site/{rel}", data.count(b"\n", 0, exc.start) + 1, why))
        return data.decode("utf-8", "replace")


def _locate(site: Path, rel: str, found: list[tuple[int, str, str]], shown: str | None, doc: Doc) -> list[Problem]:
    """Problems with their line in the built file, and where possible the line in the source page.
    A link kept by its element's place in the page (a negative offset) is found in a second parse."""
    text = _read(site, rel, []) or ""
    if any(off < 0 for off, _, _ in found):
        page = Page(text, True)
        picked = page.root.css("*")
        found = [(page.offset(picked[-1 - off]) if off < 0 else off, msg, needle) for off, msg, needle in found]
    source = _read(site.parent, shown, []) if shown else None  # named from the project root, which holds site/
    lo, hi = doc.content
    out = []
    for off, msg, needle in found:
        line = _source_line(text[lo:hi], off - lo, source, needle) if needle and source and lo <= off < hi else None
        hint = (f" [from {shown}:{line}]" if line else f" [from {shown}]") if shown else ""
        out.append(Problem("site/" + rel, text.count("\n", 0, off) + 1, msg + hint))
    return out


def _source_line(article: str, off: int, source: str, needle: str) -> int | None:
    """The source line of the n-th ``needle`` in the article: only when both hold it equally often."""
    needle = needle.split("\n", 1)[0][:200]
    if len(needle) < 4 or article.count(needle) != source.count(needle) or article.find(needle, off) < 0:
        return None
    pos = -1
    for _ in range(article.count(needle, 0, off) + 1):
        pos = source.find(needle, pos + 1)
    return source.count("\n", 0, pos) + 1 if pos >= 0 else None
