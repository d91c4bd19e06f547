"""Lighter HTML for the same page: markup that the theme and the escaping repeat, and that changes
nothing a reader sees, is written shorter (issue 39, page weight).

- In a highlighted code block, Pygments wraps every name (``n``) and every run of whitespace
  (``w``) in a span of its own; Material colours a name as plain code text (``--md-code-hl-name-
  color`` is the code colour, and kb.css keeps it so) and never styles whitespace, so both spans
  are unwrapped and their text kept.
- The KB's escaping writes characters that mean something to Markdown as numeric references
  (``&#95;`` for ``_``, ``&#40;`` for ``(``); once Markdown is done they are the same text in
  HTML, so the plain character is written, five bytes fewer each. Quotes, ``<``, ``>`` and ``&``
  stay references, and nothing inside a comment, ``<script>``, ``<style>`` or ``<textarea>`` is
  touched (their text is not parsed for references there).
"""

from __future__ import annotations

import re

_PRE = re.compile(r"<pre[\s>].*?</pre>", re.S)
_PLAIN_SPAN = re.compile(r'<span class="[nw]">([^<]*)</span>')
_RAW = re.compile(r"<!--.*?-->|<(script|style|textarea)[\s>].*?</\1\s*>", re.S | re.I)
# Markdown's punctuation: never an attribute's quote, never markup, and never a character that could
# continue a reference before it (``#``, ``;``: ``&&#35;65;`` must not become ``&#65;``).
_SAFE = "()_[]*`=+{}|~^$%:,.?/\\"
_REFERENCE = re.compile("&#(" + "|".join(str(ord(c)) for c in _SAFE) + ");")


def slim_html(html: str) -> str:
    """The page with its repeated markup written shorter, as the browser shows it unchanged."""
    html = _PRE.sub(lambda m: _PLAIN_SPAN.sub(r"\1", m[0]), html)
    out, start = [], 0
    for raw in _RAW.finditer(html):  # comments and raw-text elements: copied as they are
        out += [_plain(html[start : raw.start()]), raw[0]]
        start = raw.end()
    out.append(_plain(html[start:]))
    return "".join(out)


def _plain(text: str) -> str:
    return _REFERENCE.sub(lambda m: chr(int(m[1])), text)
