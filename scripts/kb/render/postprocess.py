"""Small fixes to the theme's HTML output, for accessibility (axe-core).

Material's search dialog has no accessible name, and pymdownx.tasklist renders read-only
checkboxes with no label. Two navigation landmarks have no name either, so axe's
``landmark-unique`` finds two unnamed ``nav`` landmarks on one page: the page's tags
(``nav.md-tags``), and, with ``navigation.indexes``, a section's nav in the sidebar, whose
``aria-labelledby`` points at the empty toggle beside the section's index link (an empty
labelled-by name falls back to ``aria-label``). All of it is theme markup, not page content:
nothing a page author wrote is changed. A nav link's underscored names may wrap after each
underscore, and a source link's text holds no glossary tooltip inside its own. Inline code in
table cells is cut into unbreakable pieces
(the text stays the same), so that Material's styles can't wrap it inside a word (see
keep_code_tokens), and the cells of a wide table carry their column's name for kb.css's cards
(label_wide_tables).
"""

from __future__ import annotations

import itertools
import re

_SEARCH_DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'
_TASK_CHECKBOX = '<input type="checkbox" disabled/>'
_TAGS_NAV = re.compile(r'<nav class="md-tags"(?! aria-label=)')  # once: fix_html may see a page twice
# A section's nav, then its title label (icon, then the section title as escaped text).
_SECTION_NAV = re.compile(
    r'(<nav class="md-nav" data-md-level="\d{1,2}" aria-labelledby="[^"<>]{1,200}"'
    r'(?: aria-expanded="(?:true|false)")?)(>\s*'
    r'<label class="md-nav__title" for="[^"<>]{1,200}">\s*<span class="md-nav__icon md-icon"></span>\s*'
    r"([^<>]{1,300}?)\s*</label>)"
)


def _named(m: re.Match[str]) -> str:
    title = m.group(3).strip().replace('"', "&quot;")  # already escaped text, but a quote ends the attribute
    return f'{m.group(1)} aria-label="{title}"{m.group(2)}'


def fix_html(html: str) -> str:
    """Name the search dialog, the tags and the sections' navs; hide read-only task-list
    checkboxes from assistive technology."""
    html = html.replace(_SEARCH_DIALOG, _SEARCH_DIALOG[:-1] + ' aria-label="Search">', 1)
    html = _TAGS_NAV.sub('<nav class="md-tags" aria-label="Tags"', html, count=1)
    html = _SECTION_NAV.sub(_named, html)
    html = html.replace(_TASK_CHECKBOX, '<input type="checkbox" disabled aria-hidden="true" tabindex="-1"/>')
    html = _NAV_NAME.sub(lambda m: m[1] + m[2].replace("_", "_<wbr>") + m[3], html)
    html = _SOURCE_LINK.sub(lambda m: m[1] + _ABBR_TAG.sub(r"\1", m[2]) + m[3], html)
    return keep_code_tokens(label_wide_tables(html))


# A source link's text (a publication's name) carries the link's own tooltip: a glossary term in
# it stays plain text, so that hovering it does not open two tooltips at once.
_SOURCE_LINK = re.compile(r'(<a class="kb-src" [^>]*>)((?:[^<]|<abbr [^>]*>[^<]*</abbr>)*)(</a>)')
_ABBR_TAG = re.compile(r"<abbr [^>]*>([^<]*)</abbr>")


# A nav link's text with underscored names (the tables of contents of the environment variables
# and execution modes pages): it may wrap after each underscore before kb.css lets it wrap anywhere.
_NAV_NAME = re.compile(r'(<span class="md-ellipsis">)([^<]*_[^<]*)(</span>)')


_CELL = re.compile(r"(<t[dh][ >])(.*?)(?=</t[dh]>)", re.S)
# Inline code whose only markup is abbreviations (the abbr extension marks them inside code too).
_ABBR = r"<abbr[^>]*>[^<]*</abbr>"
_PLAIN_CODE = re.compile(rf"(?<!<pre>)<code>((?:[^<]|{_ABBR})*)</code>")
_TAG = re.compile(rf"({_ABBR})")
# A piece of a code token: up to and including a run of dots, underscores, slashes or opening
# parentheses (the KB's escaping writes ``_`` and ``(`` as ``&#95;`` and ``&#40;``), or to the end.
_PIECE = re.compile(r"(?:[^._/(&]|&(?!#95;|#40;))*(?:(?:[._/(]|&#95;|&#40;)+|$)")


# A piece that is a word (letters, digits, underscores) and at most one dot, slash or opening
# parenthesis after it has no place a line may break inside it (Unicode UAX 14: none before ., /
# or ( after a letter or a digit; Chromium agrees, tests/browser/test_layout.py), so it needs no
# kb-tok span, nor does a single character. Any other piece might break inside (after a flag's
# hyphens, or before a bracket after = or ), as Chromium does) and keeps its span.
_UNBREAKABLE = re.compile(r"(?:[A-Za-z0-9]|_|&#95;)+(?:[./(]|&#40;)?|[^&]|&#?[a-z0-9]+;")


def _pieces(token: str) -> str:
    def piece(p: str) -> str:
        return p if _UNBREAKABLE.fullmatch(p) else f'<span class="kb-tok">{p}</span>'

    return "<wbr>".join(piece(p) for p in _PIECE.findall(token) if p)


WIDE_TABLE = 4  # columns: at 1280 the text is 688 px wide, too narrow for 4 columns of 200 px
_TABLE = re.compile(r"(<table>)(.*?)(</table>)", re.S)
_HEAD_CELL = re.compile(r"<th(?: [^<>]*)?>(.*?)</th>", re.S)
_ROW = re.compile(r"<tr>(.*?)</tr>", re.S)
_BODY_CELL = re.compile(r"<td(?: [^<>]*)?>")


def label_wide_tables(html: str) -> str:
    """A table of ``WIDE_TABLE`` columns or more that has no labels yet (a page's own Markdown
    table, a benchmark table) gets them as render.py's KB tables have them: each body cell after
    the first starts with its column's name in a ``kb-label``, which kb.css shows only where the
    rows become cards (issue 37: no cell under 200 px at 1280)."""

    def row(m: re.Match[str], labels: list[str]) -> str:
        column = itertools.count()
        return "<tr>" + _BODY_CELL.sub(lambda c: _label(c[0], labels, next(column)), m[1]) + "</tr>"

    def table(m: re.Match[str]) -> str:
        head, sep, body = m[2].partition("</thead>")
        labels = _HEAD_CELL.findall(head)
        if not sep or len(labels) < WIDE_TABLE or 'class="kb-label"' in body:
            return m[0]
        return m[1] + head + sep + _ROW.sub(lambda r: row(r, labels), body) + m[3]

    return _TABLE.sub(table, html)


def _label(cell: str, labels: list[str], column: int) -> str:
    if column == 0 or column >= len(labels):
        return cell
    return f'{cell}<span class="kb-label">{labels[column].strip()}:</span> '


def keep_code_tokens(html: str) -> str:
    """Inline code in table cells as pieces joined by ``<wbr>``, each that could break inside it
    a ``kb-tok`` (kb.css keeps it on one line): a name wraps only at a space or after a dot, an
    underscore, a slash or an opening parenthesis, never inside a word or after a flag's hyphens.
    Abbreviations inside are kept whole; code with any other markup inside (highlighted) is left
    alone."""

    def text(part: str) -> str:
        return " ".join(_pieces(t) for t in part.split(" "))

    def code(m: re.Match[str]) -> str:
        parts = _TAG.split(m[1])  # text, abbreviation, text, ...: only the text is cut
        return "<code>" + "".join(p if i % 2 else text(p) for i, p in enumerate(parts)) + "</code>"

    return _CELL.sub(lambda m: m[1] + _PLAIN_CODE.sub(code, m[2]), html)
