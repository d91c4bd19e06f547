"""The built-site check: one pass over the HTML, then every link, asset and #anchor resolved.

It flags internal links, images and anchors that don't resolve (in Markdown, rendered tables and
raw HTML alike), anything loaded from another origin (scripts, styles, fonts, images, frames,
CSS url() and @import), and shortcodes left unrendered. It reads; it never writes.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote

from .errors import Problem

# Patterns run on the lower-cased page (same offsets, so values are sliced from the original).
# Each starts with a literal, which keeps Python's regex engine fast on large pages.
_A_HREF = re.compile(rb"""<a\s[^>]*?href\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_LOADING_TAG = re.compile(
    rb"<(link|script|img|iframe|frame|source|video|audio|embed|object|track|input|use|image)\b([^>]*)>"
)
_ATTR = re.compile(rb"""\s(href|src|srcset|data|poster|xlink:href|rel)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.I)
_IDS = (re.compile(rb' id="([^"]*)"'), re.compile(rb" id='([^']*)'"), re.compile(rb'<a [^>]*?name="([^"]*)"'))
_CSS_URL = re.compile(rb"""url\(\s*(?:"([^"]*)"|'([^']*)'|([^)'"]*))\s*\)|@import\s+(?:"([^"]*)"|'([^']*)')""", re.I)
_STYLES = (re.compile(rb"<style[^>]*>(.*?)</style>", re.S), re.compile(rb'style\s*=\s*"([^"]*)"'))
_SHORTCODE = re.compile(rb"<!--\s*kb:")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_HARMLESS = ("mailto:", "tel:", "data:", "javascript:", "about:", "blob:")
_NOT_LOADED = {b"canonical", b"alternate", b"author", b"help", b"license", b"next", b"prev", b"search", b"bookmark"}


class Ref(NamedTuple):
    offset: int  # byte offset in its file; turned into a line only when it is reported
    url: str
    loads: bool  # True when the browser fetches it (script, style, image, frame...)


def check_site(site: Path, source_of: dict[str, str] | None = None) -> list[Problem]:
    """Every problem in the built site under ``site``. ``source_of`` maps built file -> docs page."""
    site = site.resolve()
    source_of = source_of or {}
    files: set[str] = set()
    ids: dict[str, set[str]] = {}
    refs: dict[str, list[Ref]] = {}
    leftovers: dict[str, list[int]] = {}
    for dirpath, _dirs, names in os.walk(site):
        rel_dir = os.path.relpath(dirpath, site).replace(os.sep, "/")
        for name in names:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            files.add(rel)
            if name.endswith(".html"):
                data = Path(dirpath, name).read_bytes()
                ids[rel], refs[rel], leftovers[rel] = _scan_html(data)
            elif name.endswith(".css"):
                data = Path(dirpath, name).read_bytes()
                refs[rel] = list(_css_refs(data, 0))
    problems: list[Problem] = []
    for rel, page_refs in refs.items():
        base, seen = posixpath.dirname(rel), {}
        found = []
        for ref in page_refs:
            key = (ref.url, ref.loads)
            msg = seen[key] if key in seen else seen.setdefault(key, _check_ref(ref, rel, base, files, ids))
            if msg:
                found.append((ref.offset, msg))
        found += [
            (off, "shortcode left unrendered (expected the hook to replace every '<!-- kb:' comment)")
            for off in leftovers.get(rel, [])
        ]
        if found:
            data = (site / rel).read_bytes()
            hint = f" [from {source_of[rel]}]" if rel in source_of else ""
            problems += [Problem("site/" + rel, data.count(b"\n", 0, off) + 1, msg + hint) for off, msg in found]
    return problems


def _scan_html(data: bytes) -> tuple[set[str], list[Ref], list[int]]:
    low = data.lower()
    ids = {data[m.start(1) : m.end(1)].decode("utf-8", "replace") for rx in _IDS for m in rx.finditer(low)}
    refs = []
    for m in _A_HREF.finditer(low):
        g = 1 if m.start(1) >= 0 else 2
        refs.append(Ref(m.start(), data[m.start(g) : m.end(g)].decode("utf-8", "replace"), False))
    for m in _LOADING_TAG.finditer(low):
        attrs = {k.lower(): (v1 or v2 or v3) for k, v1, v2, v3 in _ATTR.findall(data[m.start(2) : m.end(2)])}
        rel_attr = set(attrs.get(b"rel", b"").lower().split())
        loads = not (m.group(1) == b"link" and rel_attr and rel_attr <= _NOT_LOADED)
        for key in (b"href", b"src", b"data", b"poster", b"xlink:href"):
            if key in attrs:
                refs.append(Ref(m.start(), attrs[key].decode("utf-8", "replace"), loads))
        for item in attrs.get(b"srcset", b"").split(b","):
            if item.strip():
                refs.append(Ref(m.start(), item.split()[0].decode("utf-8", "replace"), True))
    for rx in _STYLES:
        for m in rx.finditer(low):
            refs += _css_refs(data[m.start(1) : m.end(1)], m.start(1))
    leftovers = [m.start() for m in _SHORTCODE.finditer(data)] if b"kb:" in data else []
    return ids, refs, leftovers


def _css_refs(css: bytes, base: int):
    for m in _CSS_URL.finditer(css):
        url = next((g for g in m.groups() if g), b"").strip()
        if url:
            yield Ref(base + m.start(), url.decode("utf-8", "replace"), True)


def _check_ref(ref: Ref, rel: str, base: str, files: set[str], ids: dict[str, set[str]]) -> str | None:
    url = ref.url.strip()
    if url.startswith(_HARMLESS):
        return None
    if url.startswith("//") or _SCHEME.match(url):
        if ref.loads:
            return (
                f"loads '{url}' from another origin "
                "(expected every script, style, font, image and frame to come from this site)"
            )
        return None
    path, _, fragment = url.partition("#")
    path = path.partition("?")[0]
    if not path:
        target = rel
    else:
        if path.startswith("/") and rel != "404.html":
            return f"root-absolute link '{url}' (expected a relative link, so the site works under any path and from file://)"
        if "%" in path:
            path = unquote(path)
        if path.startswith("/"):  # only on 404.html, which is served from any path
            target = posixpath.normpath(path.lstrip("/"))
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
    if fragment:
        frag = unquote(fragment)
        if target in ids and frag not in ids[target]:
            return f"missing anchor '#{frag}' in {target} (expected an element with id=\"{frag}\")"
    return None
