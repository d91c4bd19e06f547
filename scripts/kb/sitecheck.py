"""The built-site check: one pass over the HTML, then every link, asset and #anchor resolved.

It flags internal links, images and anchors that don't resolve (in Markdown, rendered tables and
raw HTML alike), anything loaded from another origin (scripts, styles, fonts, images, frames,
CSS url() and @import), and shortcodes left unrendered. It reads; it never writes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from .errors import Problem

_TAG = re.compile(rb"<(a|link|script|img|iframe|frame|source|video|audio|embed|object|track|input|use|image)\b([^>]*)>", re.I)
_ATTR = re.compile(rb"""\s(href|src|srcset|data|poster|xlink:href|rel)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.I)
_ID = re.compile(rb"""\s(?:id|name)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_CSS_URL = re.compile(rb"""url\(\s*(?:"([^"]*)"|'([^']*)'|([^)'"]*))\s*\)|@import\s+(?:"([^"]*)"|'([^']*)')""", re.I)
_STYLE_BLOCK = re.compile(rb"<style\b[^>]*>(.*?)</style>|\sstyle\s*=\s*\"([^\"]*)\"", re.I | re.S)
_SHORTCODE = re.compile(rb"<!--\s*kb:")
_NOT_LOADED = {b"canonical", b"alternate", b"author", b"help", b"license", b"next", b"prev", b"search", b"bookmark"}


@dataclass
class Ref:
    line: int
    url: str
    loads: bool  # True when the browser fetches it (script, style, image, frame...)


def check_site(site: Path, source_of: dict[str, str] | None = None) -> list[Problem]:
    """Every problem in the built site under ``site``. ``source_of`` maps built file -> docs page."""
    site = site.resolve()
    source_of = source_of or {}
    ids: dict[str, set[str]] = {}
    refs: dict[str, list[Ref]] = {}
    problems: list[Problem] = []
    for dirpath, _dirs, files in os.walk(site):
        for name in files:
            if not name.endswith((".html", ".css")):
                continue
            path = Path(dirpath, name)
            rel = path.relative_to(site).as_posix()
            data = path.read_bytes()
            if name.endswith(".css"):
                refs[rel] = list(_css_refs(data, 0, data))
                continue
            ids[rel], refs[rel], found = _scan_html(data, rel, source_of.get(rel))
            problems += found
    for rel, page_refs in refs.items():
        shown = "site/" + rel
        hint = f" [from {source_of[rel]}]" if rel in source_of else ""
        for ref in page_refs:
            problem = _check_ref(ref, rel, site, ids)
            if problem:
                problems.append(Problem(shown, ref.line, problem + hint))
    return problems


def _line_at(data: bytes, offset: int, cache: list[int]) -> int:
    """1-based line of ``offset``; ``cache`` holds newline offsets of ``data``."""
    import bisect
    return bisect.bisect_right(cache, offset) + 1


def _scan_html(data: bytes, rel: str, source: str | None) -> tuple[set[str], list[Ref], list[Problem]]:
    newlines = [m.start() for m in re.finditer(rb"\n", data)]
    ids = {(a or b).decode("utf-8", "replace") for a, b in _ID.findall(data)}
    refs: list[Ref] = []
    for m in _TAG.finditer(data):
        tag = m.group(1).lower()
        attrs = {k.lower(): (v1 or v2 or v3) for k, v1, v2, v3 in _ATTR.findall(m.group(2))}
        line = _line_at(data, m.start(), newlines)
        rel_attr = attrs.get(b"rel", b"").lower().split()
        for key in (b"href", b"src", b"data", b"poster", b"xlink:href"):
            if key not in attrs:
                continue
            url = attrs[key].decode("utf-8", "replace")
            loads = tag != b"a" and not (tag == b"link" and set(rel_attr) <= _NOT_LOADED and rel_attr)
            refs.append(Ref(line, url, loads))
        if b"srcset" in attrs:
            for item in attrs[b"srcset"].split(b","):
                if item.strip():
                    refs.append(Ref(line, item.split()[0].decode("utf-8", "replace"), True))
    for m in _STYLE_BLOCK.finditer(data):
        css = m.group(1) if m.group(1) is not None else m.group(2)
        start = m.start(1) if m.group(1) is not None else m.start(2)
        for ref in _css_refs(css, start, data, newlines):
            refs.append(ref)
    problems = []
    for m in _SHORTCODE.finditer(data):
        hint = f" [from {source}]" if source else ""
        problems.append(Problem("site/" + rel, _line_at(data, m.start(), newlines),
                                f"shortcode left unrendered (expected the hook to replace every '<!-- kb:' comment){hint}"))
    return ids, refs, problems


def _css_refs(css: bytes, base: int, data: bytes, newlines: list[int] | None = None):
    if newlines is None:
        newlines = [m.start() for m in re.finditer(rb"\n", data)]
    for m in _CSS_URL.finditer(css):
        url = next((g for g in m.groups() if g), b"").strip()
        if url:
            yield Ref(_line_at(data, base + m.start(), newlines), url.decode("utf-8", "replace"), True)


def _check_ref(ref: Ref, rel: str, site: Path, ids: dict[str, set[str]]) -> str | None:
    url = ref.url.strip()
    parts = urlsplit(url)
    if parts.scheme in ("mailto", "tel", "data", "javascript", "about", "blob"):
        return None
    if parts.scheme or url.startswith("//"):
        if ref.loads:
            return f"loads '{url}' from another origin (expected every script, style, font, image and frame to come from this site)"
        return None
    if url.startswith("#") and not parts.path:
        target = rel
    else:
        if parts.path.startswith("/") and rel != "404.html":
            return f"root-absolute link '{url}' (expected a relative link, so the site works under any path and from file://)"
        base = "" if parts.path.startswith("/") else os.path.dirname(rel)  # 404.html is served from any path
        target = os.path.normpath(os.path.join(base, unquote(parts.path).lstrip("/"))).replace(os.sep, "/")
        if target.startswith(".."):
            return f"link '{url}' points outside the site (expected a file inside it)"
        target = "" if target == "." else target
        if not target or parts.path.endswith("/") or (site / target).is_dir():
            target = f"{target}/index.html".lstrip("/")
        if not (site / target).is_file():
            if target.endswith(".md"):
                return f"link '{url}' points at a Markdown source (expected the built page; write links to .md files in Markdown, not raw HTML)"
            return f"broken link '{url}' (expected {target} in the built site)"
    if parts.fragment:
        frag = unquote(parts.fragment)
        if target in ids and frag not in ids[target]:
            return f"missing anchor '#{frag}' in {target} (expected an element with id=\"{frag}\")"
    return None
