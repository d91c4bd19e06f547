"""The abbr extension's tooltips, matched with one pattern shaped as a trie of the terms.

Python-Markdown's abbr extension joins every abbreviation of a page into one alternation,
``\\b(?:K1|K2|...)\\b`` with the longest first, and tries it on each text of the page: where a word
edge is, the regular expression engine tries every alternative in turn, so a page that uses every
term of a 10,000-term glossary (the glossary page) costs seconds. The same matches come from
alternatives nested by common prefix: at each character only the branches that can still match
are tried, deeper (longer) ones first, so a term ending at a word edge is the longest one there,
as in the flat alternation. The tree walk is the extension's, with each child's place in its
parent passed down rather than looked up (a row of a long table was found by a scan of its
siblings)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as etree
from functools import lru_cache
from typing import Any

from markdown.extensions import Extension  # type: ignore[import-untyped]
from markdown.extensions.abbr import AbbrTreeprocessor  # type: ignore[import-untyped]
from markdown.util import AtomicString  # type: ignore[import-untyped]

_END = ""  # the key of a trie node where a term ends (never a character of a term)
MAX_DEPTH = 100  # nested groups deeper than this: the flat alternation (the pattern parser recurses)


def flat_pattern(keys: tuple[str, ...]) -> str:
    """The abbr extension's own pattern for these abbreviations."""
    ordered = sorted(keys, key=len, reverse=True)
    return f"\\b(?:{'|'.join(re.escape(key) for key in ordered)})\\b"


@lru_cache(maxsize=16)
def abbr_pattern(keys: tuple[str, ...]) -> re.Pattern[str]:
    """:func:`trie_pattern`, compiled (once for the same keys: a serve rebuild's pages reuse it)."""
    return re.compile(trie_pattern(keys))


def trie_pattern(keys: tuple[str, ...]) -> str:
    """A pattern with the matches of :func:`flat_pattern` (``finditer`` finds the same spans), in
    the shape of a trie; the flat one when a key is empty or the trie is too deep to nest."""
    if not keys or "" in keys:
        return flat_pattern(keys)
    root: dict[str, Any] = {}
    for key in keys:
        node = root
        for ch in key:
            node = node.setdefault(ch, {})
        node[_END] = True
    if _depth(root) > MAX_DEPTH:
        return flat_pattern(keys)
    return "\\b" + _branches(root)


def _depth(root: dict[str, Any]) -> int:
    """The most groups a path of the trie nests: one per node with more than one way on."""
    deepest, todo = 0, [(root, 0)]
    while todo:
        node, depth = todo.pop()
        depth += len(node) > 1
        deepest = max(deepest, depth)
        todo += [(child, depth) for ch, child in node.items() if ch != _END]
    return deepest


def _branches(node: dict[str, Any]) -> str:
    """The pattern of a node: each child's character then its own pattern, and the end of a
    term (a word edge) last, so the longest term that ends at a word edge is the match."""
    ways = [_chain(ch, child) for ch, child in node.items() if ch != _END]
    if _END in node:
        ways.append("\\b")
    return ways[0] if len(ways) == 1 else f"(?:{'|'.join(ways)})"


def _chain(ch: str, node: dict[str, Any]) -> str:
    """A run of nodes with one way on each, as one literal, then the node where it branches."""
    run = [ch]
    while len(node) == 1 and _END not in node:
        ((ch, node),) = node.items()
        run.append(ch)
    return re.escape("".join(run)) + _branches(node)


class TrieAbbrTreeprocessor(AbbrTreeprocessor):  # type: ignore[misc]
    """The abbr extension's tree processor with :func:`abbr_pattern` for its pattern."""

    def run(self, root: etree.Element) -> etree.Element | None:
        if not self.abbrs:
            return None
        self.RE = abbr_pattern(tuple(sorted(self.abbrs)))
        self._walk(root, None, 0)
        return None

    def _walk(self, el: etree.Element, parent: etree.Element | None, place: int) -> None:
        """The extension's ``iter_element``, told the element's place in ``parent``: the children
        last to first (an abbreviation goes in after the child it came from, never before)."""
        for i in range(len(el) - 1, -1, -1):
            self._walk(el[i], el, i)
        if el.text and not isinstance(el.text, AtomicString):
            el.text = self._wrap(el.text, el, 0)
        if parent is not None and el.tail and not isinstance(el.tail, AtomicString):
            el.tail = self._wrap(el.tail, parent, place + 1)

    def _wrap(self, text: str, into: etree.Element, at: int) -> str:
        """Each abbreviation of ``text``, last first, as an ``abbr`` element put in ``into`` at ``at``
        (with the text after it as its tail); what is left before the first one."""
        assert self.RE is not None
        for m in reversed(list(self.RE.finditer(text))):
            title = self.abbrs[m.group(0)]
            if title:
                into.insert(at, self.create_element(title, m.group(0), text[m.end() :]))
                text = text[: m.start()]
        return text


class TrieAbbrExtension(Extension):  # type: ignore[misc]
    """Puts :class:`TrieAbbrTreeprocessor` in the place of the abbr extension's tree processor,
    sharing its abbreviations; list it after ``abbr``. Its ``repr`` is the same in every build (the
    serve cache keys conversions by the Markdown settings)."""

    def extendMarkdown(self, md: Any) -> None:  # noqa: N802 - Markdown's name
        if "abbr" in md.treeprocessors:
            old = md.treeprocessors["abbr"]
            md.treeprocessors.register(TrieAbbrTreeprocessor(md, old.abbrs), "abbr", 7)

    def __repr__(self) -> str:
        return "kb.render.abbrtrie.TrieAbbrExtension()"
