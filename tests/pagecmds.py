"""The commands a page tells the reader to run: fenced blocks marked with a ``data-run`` attribute.

    ```bash {data-run="snippets/port"}
    python train_tpu.py --max_iters=5
    ```

The attribute (pymdownx.superfences with attr_list writes it on the block's ``<div>``) names the
folder, relative to the handbook's root, that the page says to run the command from. Tests run
the block's text exactly as written, with bash, and check the output the page promises.

A shell block that cannot run in the tests says why instead, with ``data-norun``:

    ```{.bash title="launch_tpu.sh" data-norun="needs a TPU VM"}
    --8<-- "distributed/launch_tpu.sh"
    ```

(with a title or ``hl_lines``, superfences takes attributes only in the all-braces form). Every
shell block of the docs carries one of the two (``shell_blocks``, tests/content/test_pagecmds.py).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)$")
_RUN = re.compile(r'\bdata-run="(?P<cwd>[^"]*)"')
_NORUN = re.compile(r'\bdata-norun="(?P<why>[^"]*)"')
_BRACE_LANG = re.compile(r"^\{\s*\.(?P<lang>[\w+-]+)")
_INCLUDE = re.compile(r'^--8<-- "(?P<path>[^":]+)"$')
SNIPPETS = Path(__file__).resolve().parents[1] / "snippets"  # pymdownx.snippets' base_path
SHELL = frozenset({"bash", "sh", "shell", "console", "zsh", "shell-session"})


class Block(NamedTuple):
    page: Path
    line: int  # 1-based line of the opening fence
    cwd: str  # relative to the handbook's root
    command: str


class Fence(NamedTuple):
    page: Path
    line: int  # 1-based line of the opening fence
    info: str  # what follows the opening backticks
    body: str  # the block's text, its indentation removed

    @property
    def lang(self) -> str:
        info = self.info.strip()
        brace = _BRACE_LANG.match(info)
        return brace["lang"] if brace else (info.split()[0] if info else "")

    @property
    def run(self) -> str | None:
        """The folder of a ``data-run`` block, else None."""
        m = _RUN.search(self.info)
        return m["cwd"] if m else None

    @property
    def norun(self) -> str | None:
        """The reason of a ``data-norun`` block, else None."""
        m = _NORUN.search(self.info)
        return m["why"] if m else None


def fences(page: Path) -> list[Fence]:
    """Every fenced block of ``page``, in order."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found, n = [], 0
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
        found.append(Fence(page, start, m["info"], "\n".join(body) + "\n"))
    return found


def shell_blocks(page: Path) -> list[Fence]:
    """The fenced blocks of ``page`` in a shell language."""
    return [f for f in fences(page) if f.lang in SHELL]


def included(body: str) -> str:
    """``body`` with each whole-file include (``--8<-- "path"``) replaced by the file, as the page shows it."""
    lines = []
    for line in body.splitlines():
        m = _INCLUDE.match(line.strip())
        lines.append((SNIPPETS / m["path"]).read_text(encoding="utf-8").rstrip("\n") if m else line)
    return "\n".join(lines) + "\n"


def marked_blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page`` marked ``data-run``, its indentation removed and its
    includes resolved."""
    return [Block(page, f.line, f.run, included(f.body)) for f in fences(page) if f.run is not None]


def all_marked_blocks(docs: Path) -> list[Block]:
    return [b for page in sorted(docs.rglob("*.md")) for b in marked_blocks(page)]


def run_block(
    block: Block, cwd: Path, home: Path | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """The block's text, unchanged, through bash in ``cwd``, with this interpreter as ``python``
    (and ``HOME`` set to ``home``, where a page's ``~/...`` names a reader's own folder)."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    env = dict(os.environ, PATH=path, CUDA_VISIBLE_DEVICES="", PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    if home is not None:
        env["HOME"] = str(home)
    return subprocess.run(
        ["bash", "-c", block.command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
