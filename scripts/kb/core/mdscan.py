"""Which lines of a Markdown page are prose, and which are code or comment.

One answer for every caller: shortcodes render only in prose, and links, anchors and names are
read from prose. Code is a fenced block (``` or ~~~, three or more, closed by the same character
at least as long), an indented block (four columns deeper than its container, after a blank
line), or the inside of a multi-line HTML comment. Containers are list items, admonitions
(``!!!``, ``???``) and content tabs (``===``), whose content sits four columns in, as in
Python-Markdown.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
_OPENER = re.compile(r"^\s*(?:[-*+]\s|\d{1,9}[.)]\s|!!!|\?\?\?\+?|===)")


def _indent(line: str) -> int:
    width = 0
    for ch in line:
        if ch == " ":
            width += 1
        elif ch == "\t":
            width += 4 - width % 4
        else:
            break
    return width


def code_mask(lines: list[str]) -> list[bool]:
    """For each line, True when it is code or comment (not prose)."""
    mask: list[bool] = []
    containers = [0]  # content indents of the open containers
    fence: tuple[str, int] | None = None  # (char, length) of the open fence
    comment = False
    indented = False
    blank_before = True
    for line in lines:
        if fence is not None:
            mask.append(True)
            m = _FENCE.match(line)
            if m and m.group(2)[0] == fence[0] and len(m.group(2)) >= fence[1] and not m.group(3).strip():
                fence = None
            continue
        if comment:
            mask.append(True)
            if "-->" in line:
                comment = False
            continue
        if not line.strip():
            mask.append(indented)
            blank_before = True
            continue
        width = _indent(line)
        while len(containers) > 1 and width < containers[-1]:
            containers.pop()
        base = containers[-1]
        if width >= base + 4 and (indented or blank_before):
            indented = True
            mask.append(True)
            blank_before = False
            continue
        indented = False
        blank_before = False
        m = _FENCE.match(line)
        if m and not (m.group(2)[0] == "`" and "`" in m.group(3)):
            fence = (m.group(2)[0], len(m.group(2)))
            mask.append(True)
            continue
        start = line.find("<!--")
        if start != -1 and "-->" not in line[start + 4 :]:
            comment = True
            mask.append(start == len(line) - len(line.lstrip()))  # prose before the comment still counts
            continue
        if _OPENER.match(line):
            containers.append(width + 4)
        mask.append(False)
    return mask


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """(0-based index, line) for every prose line of ``text``."""
    lines = text.split("\n")
    for i, (line, is_code) in enumerate(zip(lines, code_mask(lines), strict=True)):
        if not is_code:
            yield i, line
