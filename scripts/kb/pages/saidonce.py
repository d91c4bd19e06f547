"""Said once: no run of more than 40 words typed twice in the pages' prose.

A paragraph needed in two places lives in one source, a snippet (``--8<--``) or a KB record (a
shortcode), and is included where it is needed; text typed into two pages drifts apart the first
time one of them is edited. This check reads the pages as written (code, comments, shortcodes,
includes, headings and table rows are not prose here), so whatever an include or a shortcode
brings in is never counted, and reports each paragraph that shares a run of more than
``MAX_WORDS`` words with an earlier one, on any page, at the later one's line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from ..core.errors import Problem
from ..core.mdscan import code_mask

MAX_WORDS = 40  # a run of MAX_WORDS + 1 words seen twice is a duplicate

_NOT_PROSE = re.compile(r"^\s*(?:#|\||<!--|--8<--|!!!|\?\?\?|===|\{|<)")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+")
_LINK = re.compile(r"\]\([^)]*\)|\]\[[^\]]*\]|\{[^}]*\}")  # link targets and attribute lists
_WORD = re.compile(r"[\w'’.-]+")


class Paragraph(NamedTuple):
    """A paragraph of a page: its source path, first line (1-based) and its words, lowercased."""

    path: str
    line: int
    words: tuple[str, ...]


def paragraphs(path: str, body: str, first_line: int = 1) -> Iterator[Paragraph]:
    """The prose paragraphs of a page's body (``first_line``: the file line the body starts on).
    A list item starts a paragraph of its own; a blank or non-prose line ends one."""
    lines = body.split("\n")
    start, words = 0, list[str]()
    for i, (line, is_code) in enumerate(zip(lines, code_mask(lines), strict=True)):
        prose = not is_code and line.strip() and not _NOT_PROSE.match(line)
        if not prose or _ITEM.match(line):
            if words:
                yield Paragraph(path, first_line + start, tuple(words))
            start, words = i, []
            if not prose:
                continue
        if not words:
            start = i
        words += [w.strip(".'’-").lower() for w in _WORD.findall(_LINK.sub("]", line))]
        words = [w for w in words if w]
    if words:
        yield Paragraph(path, first_line + start, tuple(words))


def duplicates(found: Iterable[Paragraph], max_words: int = MAX_WORDS) -> list[Problem]:
    """A problem at each paragraph that repeats a run of more than ``max_words`` words of an
    earlier paragraph (pages in the order given), naming where that run was first written."""
    seen: dict[tuple[str, ...], Paragraph] = {}
    problems = []
    size = max_words + 1
    for para in found:
        first = None
        runs = {para.words[i : i + size] for i in range(len(para.words) - size + 1)}
        for run in runs:
            earlier = seen.get(run)
            if earlier is not None and earlier is not para and (first is None or earlier < first):
                first = earlier
        for run in runs:
            seen.setdefault(run, para)
        if first is not None:
            problems.append(
                Problem(
                    para.path,
                    para.line,
                    f"this paragraph repeats more than {max_words} words of {first.path}:{first.line}: "
                    "say it once, in a snippet (--8<--) or a KB record, and include it in both places",
                )
            )
    return problems


def check_said_once(pages: Iterable[tuple[str, str, int]], max_words: int = MAX_WORDS) -> list[Problem]:
    """``pages``: (shown path, body, first body line) of each page, in a stable order."""
    return duplicates((p for path, body, line in pages for p in paragraphs(path, body, line)), max_words)
