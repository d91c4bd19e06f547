"""A KB table written straight as the HTML Markdown makes of its Markdown (issue 39: a large glossary).

A KB table is a Markdown table in a ``<div markdown>`` block, and Markdown's inline pass over every
cell is most of what a 10,000-term glossary costs a build. Its cells hold only what the KB's
escaping writes (kb/core/escape.py): plain text in which Markdown finds nothing, numeric
references, raw tags and ``**bold**``. Such a table is written here as the same HTML, glossary
tooltips included: the abbr extension wraps every term a cell's text shows as an ``abbr`` element,
and so does :class:`Tooltips`, term for term (kb/render/abbrtrie.py's pattern). Markdown passes the
result through as a raw HTML block, which a build stores whole (:class:`StashTables`); plain MkDocs
(``kb render``'s output) reads it tag by tag, to the same HTML but for a blank line after the block
when more follows. A cell with anything else gives ``None``, and the caller keeps the Markdown
table. tests/render/test_tablehtml.py holds the two to the same HTML.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from markdown.extensions import Extension  # type: ignore[import-untyped]
from markdown.extensions.abbr import AbbrBlockprocessor  # type: ignore[import-untyped]
from markdown.preprocessors import Preprocessor  # type: ignore[import-untyped]
from markdown.serializers import _escape_attrib_html  # type: ignore[import-untyped]

from .abbrtrie import abbr_pattern

# What a cell may hold besides inert text: a tag of the few the KB's cells write (copied, as
# Markdown's raw-HTML pattern copies it), a numeric reference or &nbsp; (copied), the ** of bold.
_TOKEN = re.compile(r"(</?(?:span|code|small|br|strong|em)(?: [^<>@]*)?>|&#[0-9]+;|&nbsp;|\*\*)")
# Text in which no Markdown pattern, list, reference or tooltip placeholder can start.
_INERT = re.compile("[^\\\\`*_{}\\[\\]()<>#+!|~^=&\"'\t\n\r\x02\x03]*")
_NAME = re.compile(r"[a-z][a-z0-9_-]*")
_W = re.compile(r"\w")


class Tooltips:
    """What the abbr extension does to a text: each term it shows, as an ``abbr`` with its tip.

    ``lines``: the page's abbreviation lines (``*[TERM]: tip``), read as the extension reads
    them; ``found(text)``: a set holding every term the text shows as a word (more is harmless)."""

    def __init__(self, lines: Iterable[str], found: Callable[[str], set[str]]) -> None:
        self.titles: dict[str, str] = {}
        for line in lines:
            m = AbbrBlockprocessor.RE.search(line)
            abbr, title = (m.group("abbr").strip(), m.group("title").strip()) if m else ("", "")
            if title and abbr:
                if title in ("''", '""'):
                    self.titles.pop(abbr, None)
                else:
                    self.titles[abbr] = title
        self.found = found

    def wrap(self, text: str) -> str:
        """``text`` (with no ``&``, ``<`` or ``>``) with each term in an ``abbr`` element."""
        terms = sorted(t for t in self.found(text) if t in self.titles)
        if not terms:
            return text
        if len(terms) == 1 and text == terms[0] and _W.match(text[0]) and _W.match(text[-1]):
            spans = [(0, len(text))]  # the whole text is the one term: its own pattern's one match
        else:
            spans = [m.span() for m in abbr_pattern(tuple(terms)).finditer(text)]
        out, at = [], 0
        for start, end in spans:
            title = _escape_attrib_html(self.titles[text[start:end]])
            out += [text[at:start], f'<abbr title="{title}">{text[start:end]}</abbr>']
            at = end
        return "".join(out) + text[at:]


def cell_html(cell: str, tips: Tooltips) -> str | None:
    """The HTML Markdown makes of one table cell's text; None for anything else than inert text,
    references, tags and ``**bold text**`` (with references, no tags)."""
    parts = _TOKEN.split(cell.strip(" "))
    out: list[str] = []
    close = -1  # the index of the ** that ends the bold text we are in
    for i, part in enumerate(parts):
        if i % 2 == 0:
            if not _INERT.fullmatch(part):
                return None
            out.append(tips.wrap(part) if part else "")
        elif part == "**" and i == close:
            out.append("</strong>")
        elif part == "**":
            close = _bold_end(parts, i)
            if close < 0:
                return None
            out.append("<strong>")
        elif i < close and part.startswith("<"):
            return None  # a tag inside bold text: Markdown's own business
        else:
            out.append(part)
    return "".join(out)


def _bold_end(parts: list[str], i: int) -> int:
    """The index of the ``**`` that closes the one at ``i``, if the text between is plain (not
    empty, no space at either end, no tag); else -1."""
    end = next((k for k in range(i + 2, len(parts), 2) if parts[k] == "**"), -1)
    inner = "".join(parts[i + 1 : end])
    if end < 0 or not inner or inner.strip() != inner or any(p.startswith("<") for p in parts[i + 1 : end : 2][1:]):
        return -1
    return end


def table_html(name: str, header: list[str], rows: list[list[str]], tips: Tooltips) -> str | None:
    """A ``kb-table--cards`` block (render._kb_table's) as HTML, with the rows' cells as Markdown
    writes them (labels added, ``&nbsp;`` for an empty cell); None if a cell is not plain enough."""
    if not _NAME.fullmatch(name):
        return None
    lines = [f'<div class="kb-table kb-table--{name} kb-table--cards">', "<table>", "<thead>", "<tr>"]
    for h in header:
        th = cell_html(h, tips)
        if th is None:
            return None
        lines.append(f"<th>{th}</th>")
    lines += ["</tr>", "</thead>", "<tbody>"]
    for row in rows:
        lines.append("<tr>")
        for cell in row:
            td = cell_html(cell or "&nbsp;", tips)
            if td is None:
                return None
            lines.append(f"<td>{td}</td>")
        lines.append("</tr>")
    lines += ["</tbody>", "</table>", "</div>"]
    return "\n".join(lines)


# A block table_html wrote, where Markdown takes it for raw HTML: after a blank line, to its last line.
_WRITTEN = re.compile(
    r'(?:^|(?<=\n\n))<div class="kb-table kb-table--[a-z][a-z0-9_-]* kb-table--cards">\n<table>\n.*?\n</div>$',
    re.M | re.S,
)


def outside_tables(markdown: str) -> str:
    """The Markdown without the blocks :func:`table_html` wrote (raw HTML, which Markdown passes
    through as it is: the abbr extension never looks into them, so their terms need no tooltip
    line, and the tooltips in them are written already)."""
    return _WRITTEN.sub("", markdown) if 'kb-table--cards">\n<table>' in markdown else markdown


_FIRST = re.compile(r'<div class="kb-table kb-table--[a-z][a-z0-9_-]* kb-table--cards">')


class StashTables(Preprocessor):  # type: ignore[misc]
    """Puts each block :func:`table_html` wrote in Markdown's store of raw HTML, as its raw-HTML
    preprocessor would after reading the block tag by tag (0.8 s for a 10,000-term glossary): the
    same block, found by its first and last lines, comes out as it went in."""

    def run(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        i = 0
        while i < len(lines):
            end = _block_end(lines, i) if lines[i].startswith("<div class=") else None
            if end is None:
                out.append(lines[i])
                i += 1
                continue
            out.append(self.md.htmlStash.store("\n".join(lines[i : end + 1])))
            i = end + 1
        return out


def _block_end(lines: list[str], i: int) -> int | None:
    """The last line of a written block that starts at line ``i`` (after a blank line, followed by
    one), or None."""
    if (i and lines[i - 1]) or not _FIRST.fullmatch(lines[i]) or i + 1 >= len(lines) or lines[i + 1] != "<table>":
        return None
    for end in range(i + 2, len(lines)):
        if lines[end] == "</div>":
            return end if end + 1 == len(lines) or not lines[end + 1] else None
        if not lines[end].startswith(("<t", "</t")) or "div" in lines[end]:  # only rows and cells in between
            return None
    return None


class StashTablesExtension(Extension):  # type: ignore[misc]
    """Registers :class:`StashTables` after the fenced code blocks are stored and before the raw
    HTML preprocessor; its ``repr`` is the same in every build (the serve cache keys conversions by
    the Markdown settings)."""

    def extendMarkdown(self, md: Any) -> None:  # noqa: N802 - Markdown's name
        md.preprocessors.register(StashTables(md), "kb_tables", 21)

    def __repr__(self) -> str:
        return "kb.render.tablehtml.StashTablesExtension()"
