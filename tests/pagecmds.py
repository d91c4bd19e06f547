"""The commands a page tells the reader to run: fenced blocks marked with a ``data-run`` attribute.

    ```bash {data-run="snippets/port"}
    python train_tpu.py --max_iters=5
    ```

The attribute (pymdownx.superfences with attr_list writes it on the block's ``<div>``) names the
folder, relative to the handbook's root, that the page says to run the command from. Tests run
the block's text exactly as written, with bash, and check the output the page promises.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)$")
_RUN = re.compile(r'\bdata-run="(?P<cwd>[^"]*)"')


class Block(NamedTuple):
    page: Path
    line: int  # 1-based line of the opening fence
    cwd: str  # relative to the handbook's root
    command: str


def marked_blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page`` marked ``data-run``, its indentation removed."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks, n = [], 0
    while n < len(lines):
        m = _FENCE.match(lines[n])
        n += 1
        if not m:
            continue
        indent, fence, start = m["indent"], m["fence"], n
        while n < len(lines) and lines[n].strip() != fence:
            n += 1
        body = [line.removeprefix(indent) for line in lines[start:n]]
        n += 1
        run = _RUN.search(m["info"])
        if run:
            blocks.append(Block(page, start, run["cwd"], "\n".join(body) + "\n"))
    return blocks


def all_marked_blocks(docs: Path) -> list[Block]:
    return [b for page in sorted(docs.rglob("*.md")) for b in marked_blocks(page)]
