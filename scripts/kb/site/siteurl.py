"""URLs as a browser reads them, and what the site check says about one."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:")
_STRIP = "".join(map(chr, range(0x21)))  # C0 controls and space: stripped from both ends by browsers
_DROP_TAB_NL = {9: None, 10: None, 13: None}  # and tab, LF, CR removed anywhere
SCRIPT_SCHEMES = {"javascript", "vbscript", "livescript", "mocha"}
HARMLESS = ("mailto:", "tel:", "about:blank")
NOOP = "javascript:void(0)"  # Material's search "share" button: a no-op, allowed outside content
_URL_LITERAL = re.compile(r'new URL\("([^"\\]*)"')
_SRCSET = re.compile(r"[\t\n\f\r ,]*(?:([^\t\n\f\r ]*),(?![^\t\n\f\r ])|([^\t\n\f\r ]+)(?:[^,(]|\([^)]*\)?)*)")
_REFRESH = re.compile(
    r"[\t\n\f\r ]*[\d.]*[\t\n\f\r ]*[;,]?[\t\n\f\r ]*(?:url[\t\n\f\r ]*=[\t\n\f\r ]*)?(.*)", re.I | re.S
)

# Material's own inline scripts (9.8.1, templates/partials/javascripts/) by the SHA-256 of their text
# with the relative URL literal in `new URL("...")` blanked out (tests/site/test_sitecheck.py re-derives them).
THEME_SCRIPTS = {
    "e441dbdde5a0501b99527bb443d86875df7b1a02ed15df77ed97b4c8234e4b70": "announce.html",
    "7eb3684fdacd2881f67b9428983273a29d8774d8bc82622af9b65a8ec1032a90": "base.html",
    "3907d77c1c78f2658c4fefb1c0cb8a4caf9e66479edaeace65c6c1e213f47107": "consent.html",
    "d74bb3b582599bb38b62d1eb15a60a0af4ce0147e3335efe0a811693984b71ce": "content.html (tabs)",
    "ffcc0f7735fdab434d257c80e65cec2e88d716991e69757185b7e450e41a5b2f": "content.html (target)",
    "825a478f6ef2a37cf6bc1140ddb9b0665d08eee69a0635d5e82471fba8e2f73a": "outdated.html",
    "0eb10c249dbdb0beef225a10ce5cbe55418cc4a7014cc208f8e7d6ed8f00906e": "palette.html",
}


@lru_cache(maxsize=256)  # the theme repeats the same few scripts on every page
def theme_script(body: str) -> bool:
    """One of Material's inline scripts, its relative ``new URL("...")`` blanked out."""
    text = _URL_LITERAL.sub(lambda m: m[0] if foreign(m[1]) or _SCHEME.match(m[1]) else 'new URL(""', body.strip())
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest() in THEME_SCRIPTS


def clean(url: str) -> str:
    """The URL as a browser reads it: C0 controls and spaces trimmed, tabs and newlines removed."""
    return url.strip(_STRIP).translate(_DROP_TAB_NL)


def scheme(url: str) -> str:
    m = _SCHEME.match(url)
    return m.group(0)[:-1].lower() if m else ""


def protocol_relative(url: str) -> bool:
    return len(url) >= 2 and url[0] in "/\\" and url[1] in "/\\"


def foreign(url: str) -> bool:
    """True when the URL leaves this site (another scheme or host), harmless schemes aside."""
    return protocol_relative(url) or (bool(_SCHEME.match(url)) and not url.lower().startswith(HARMLESS))


def url_problem(url: str, attr: str, tag: str) -> str | None:
    """The problem with a script or data: URL in an attribute."""
    name = scheme(url)
    if name in SCRIPT_SCHEMES:
        return f"{name}: URL in {attr}= of {tag} (expected a link to a page or file, never a script URL)"
    if name == "data":
        return f"data: URL in {attr}= of {tag} (expected a file of this site: a data: URL can carry a page or a script)"
    return None


def css_url_problem(url: str) -> tuple[str | None, str | None]:
    """(in content, in theme) problems of a CSS URL: script URLs anywhere, data: in page content."""
    name = scheme(clean(url))
    if name in SCRIPT_SCHEMES:
        return (f"{name}: URL in CSS (expected a file of this site)",) * 2
    return ("data: URL in CSS inside page content (expected a file of this site)" if name == "data" else None), None


def srcset(value: str) -> list[str]:
    """Every candidate URL of a srcset, split the way browsers split it (commas may sit in URLs)."""
    return [url.rstrip(",") for m in _SRCSET.finditer(value) if (url := m.group(1) or m.group(2) or "").rstrip(",")]


def refresh_url(content: str) -> str:
    m = _REFRESH.match(content)
    url = m.group(1) if m else ""
    if url[:1] in ("'", '"'):
        url = url[1:].split(url[0], 1)[0]
    return url
