"""Every value from data reaches Markdown or HTML through one of these, chosen by where it lands.

The contexts: Markdown text (table cells, link text, paragraphs), an HTML attribute, a link target
(parsed and re-serialised, never pasted), a Markdown link title, an abbreviation line, SVG text,
and a number. Markdown text is escaped with numeric character references, which Markdown leaves
alone and the browser shows as the character: no emphasis, link, attribute list (``{: ...}``),
table pipe, abbreviation, snippet include or raw HTML can come out of a value.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache
from urllib.parse import quote, urlsplit, urlunsplit

# Characters Python-Markdown or its extensions give meaning to anywhere in a line ...
_MARKDOWN = set("\\`*_{}[]()<>#+!|~^=&\"'")
_MARKDOWN_REFS = {ord(c): f"&#{ord(c)};" for c in _MARKDOWN}
# ... and the ones that matter only where a block starts: a list, a rule, a definition.
_LEADING = re.compile(r"^(?:\d+(?=[.)](?:\s|$))|(?=[-:]))")
# Anything that could end a line or hide text: controls, line/paragraph separators, bidi controls.
_BREAKING = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
# What may stay as-is in a re-serialised URL path, query or fragment.
_URL_SAFE = "/:@!$&*+,;=~-._%?#"


class UnsafeValue(ValueError):
    """A value that cannot be written safely in its context (the caller adds where it came from)."""


_SPACES = re.compile(r"\s+")


def one_line(value: object) -> str:
    """Turn every line break, control and bidi character into a space, and runs of spaces into one."""
    return _SPACES.sub(" ", _BREAKING.sub(" ", str(value)))


def md_text(value: object) -> str:
    """Plain text in Markdown: every character with a meaning becomes a numeric reference."""
    return _md_text(str(value))


@lru_cache(maxsize=16384)  # the same cells recur on every page that shows a table: escape each once
def _md_text(value: str) -> str:
    text = one_line(value)
    start = len(text) - len(text.lstrip())
    lead = _LEADING.match(text[start:])
    head = ""
    if lead is not None and start + lead.end() < len(text):  # '1.' / '-' / ':' that would open a block
        cut = start + lead.end()
        head, text = text[:cut] + f"&#{ord(text[cut])};", text[cut + 1 :]
    return head + text.translate(_MARKDOWN_REFS)


def clear_caches() -> None:
    """Forget every escaped value remembered so far."""
    _md_text.cache_clear()
    _md_rich.cache_clear()


def md_code(value: object) -> str:
    """Inline code: ``<code>`` with the text escaped (Markdown does not see a code span)."""
    return f"<code>{md_text(value)}</code>"


def md_rich(value: object) -> str:
    """Text where a pair of backticks marks inline code, as KB prose writes it: `name`."""
    return _md_rich(str(value))


@lru_cache(maxsize=16384)
def _md_rich(value: str) -> str:
    parts = one_line(value).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick is literal
        parts[-2:] = [parts[-2] + "`" + parts[-1]]
    return "".join(md_code(p) if i % 2 else md_text(p) for i, p in enumerate(parts))


def attr(value: object) -> str:
    """A value for a double-quoted HTML attribute written into Markdown. Markdown still runs its
    inline patterns over raw HTML, so every character with a meaning to either is a reference."""
    return one_line(value).translate(_MARKDOWN_REFS)


def html_attr(value: object) -> str:
    """A value for a double-quoted attribute in finished HTML, which no Markdown reads any more."""
    return html.escape(str(value), quote=True)


def svg_text(value: object) -> str:
    """Text content of an SVG element: the same references, which SVG decodes like HTML."""
    return one_line(value).translate(_MARKDOWN_REFS)


def link_title(value: object) -> str:
    """A Markdown link title, written inside double quotes: no quote, bracket or parenthesis survives."""
    return one_line(value).translate(_MARKDOWN_REFS)


def https_url(value: object) -> str:
    """An external link target: must parse as https://host/..., and is re-serialised percent-encoded."""
    raw = str(value)
    if raw != raw.strip() or _BREAKING.search(raw):
        raise UnsafeValue("a URL may not contain spaces or control characters")
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError as exc:
        raise UnsafeValue(f"not a URL ({exc})") from None
    host = parts.hostname or ""
    if parts.scheme.lower() != "https" or not re.fullmatch(r"[a-z0-9.-]+\.[a-z0-9-]+", host):
        raise UnsafeValue("expected https://host/... with a plain host name")
    if parts.username is not None or parts.password is not None:
        raise UnsafeValue("a URL may not carry a user name or password")
    netloc = host + (f":{port}" if port is not None else "")
    path = quote(parts.path, safe=_URL_SAFE) or "/"
    query, fragment = quote(parts.query, safe=_URL_SAFE), quote(parts.fragment, safe=_URL_SAFE)
    return urlunsplit(("https", netloc, path, query, fragment))


def abbr_line(term: object, tip: object) -> str:
    """``*[TERM]: tip`` for the abbr extension: one line, no bracket in the term, no markup in the tip."""
    t = one_line(term).strip()
    if not t or any(c in t for c in "[]\\") or t.startswith(("*", "#", "-", "<", ">", "=", "!", "`")):
        raise UnsafeValue("a glossary term for a tooltip may not contain [ ] \\ or start with markup")
    # The abbr extension puts the tip into a title attribute through ElementTree, which escapes it:
    # one line is all it needs (a line break would start a new block).
    return f"*[{t.strip()}]: {one_line(tip).replace('`', '').strip()}"


def number(value: float) -> str:
    """Lossless: 25700 -> '25,700'; 2.5 -> '2.5'; 0.016 -> '0.016' (never rounded)."""
    v = float(value)
    if v.is_integer() and abs(v) < 1e16:
        return f"{int(v):,}"
    return f"{v:,}"
