"""Devices that cross files: a value written in one scanned file and used as a device in another.

The scanner reads one file at a time (kb.scan). Each file also yields its ``Flows``: the device
places that read a parameter of one of its module-level functions (``def train_one_epoch(model,
device): x.to(device)``), and the device values its calls pass to a function imported from another
module (``train_one_epoch(model, device)`` with ``device = torch.device("cuda")``). ``join``
matches the two over every scanned file once the scan is done: each use in the other file becomes a
related place of the finding where the value is written, which stays the one line to change.

A module is matched to a scanned file by its dotted name, as the tail of the file's path
(``engine`` matches ``repo/engine.py``, ``util.misc`` matches ``repo/util/misc.py``); a relative
import (``from .engine import f``) names its file exactly. A name that matches no file, or more
than one, is left alone.
"""

from __future__ import annotations

import posixpath
from typing import NamedTuple

from .scannames import Finding

# the detectors whose finding sits where a device value is written (kb.scan device_uses)
DEVICE_RULES = frozenset({"cuda-device-string", "cuda-fstring", "rank-device-index"})


class Export(NamedTuple):
    """A device place in ``function`` that reads its parameter ``param`` (at ``position``, -1 keyword-only)."""

    function: str
    param: str
    position: int
    line: int
    column: int


class Passed(NamedTuple):
    """A call passing a device value (written at ``origin``) to ``function`` of ``module``:
    positional argument ``position``, or ``keyword``. ``module`` is a tuple of names; a relative
    import's starts from the importing file's folder and must match a file exactly."""

    module: tuple[str, ...]
    exact: bool
    function: str
    position: int
    keyword: str | None
    origin: tuple[int, int]


class Flows(NamedTuple):
    path: str
    exports: tuple[Export, ...] = ()
    passed: tuple[Passed, ...] = ()


def module_of(path: str) -> tuple[str, ...]:
    """The names a file is imported by, from its path (``pkg/__init__.py`` is ``pkg``)."""
    parts = tuple(path[:-3].split("/")) if path.endswith(".py") else tuple(path.split("/"))
    return parts[:-1] if parts[-1:] == ("__init__",) else parts


def relative(path: str, level: int, module: str | None) -> tuple[str, ...]:
    """The module a ``from .{level}module import ...`` in the file ``path`` names, as path parts."""
    folder = posixpath.dirname(path)
    for _ in range(level - 1):
        folder = posixpath.dirname(folder)
    parts = tuple(folder.split("/")) if folder else ()
    return parts + tuple(module.split(".")) if module else parts


def join(findings: list[Finding], flows: list[Flows]) -> list[Finding]:
    """The findings, each device value's finding with the uses found in other files added."""
    tails: dict[tuple[str, ...], list[str]] = {}
    exports: dict[tuple[str, str], list[Export]] = {}
    for fl in flows:
        parts = module_of(fl.path)
        for k in range(1, len(parts) + 1):
            tails.setdefault(parts[-k:], []).append(fl.path)
        for e in fl.exports:
            exports.setdefault((fl.path, e.function), []).append(e)
    extra: dict[tuple[str, int, int], set[tuple[str, int, int]]] = {}
    for fl in flows:
        for p in fl.passed:
            files = [f for f in tails.get(p.module, ()) if not p.exact or module_of(f) == p.module]
            if len(files) != 1 or files[0] == fl.path:
                continue
            for e in exports.get((files[0], p.function), ()):
                if (e.param == p.keyword) if p.keyword is not None else (p.position == e.position >= 0):
                    extra.setdefault((fl.path, *p.origin), set()).add((files[0], e.line, e.column))
    if not extra:
        return findings
    out = []
    for f in findings:
        more = extra.get((f.path, f.line, f.column)) if f.rule in DEVICE_RULES else None
        out.append(f._replace(elsewhere=tuple(sorted(more)), how="followed") if more else f)
    return out
