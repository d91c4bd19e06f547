"""Settings whose default is set in one file and read in another (issue 34).

A training script's options often live in a file of their own: ``add_argument("--dist-backend",
default="nccl")`` in params.py, or a dataclass field ``distributed_backend: str = "nccl"`` in a
config module, while ``init_process_group(backend=args.dist_backend)`` sits in distributed.py. The
scanner reports the default where it is written (the line to change); each file also yields
``Setting``s (the defaults that are findings, by the setting's name) and ``Read``s (a keyword a rule
cares about given ``<anything>.<name>``), and ``read_elsewhere`` makes each read in another file a
related place of the default's finding: that is where a TPU run fails.

A config object filled in a function (``config.device = torch.device("cuda:0") if ... else
...``, as ml_collections configs are) is a setting too, named with the object's name
(``config.device``): each ``x.to(config.device)`` in another file is one of its reads.

A name set in more than one scanned file is left alone, unless it names its object: then each file
that sets it is one the run may use (``configs/default_cifar10_configs.py``,
``configs/default_celeba_configs.py``), and a read is a place of each. A read of a name its own
file sets is left to kb.scan.scan, which follows those itself.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from .scannames import FileScan, Finding
from .scanstmts import FUNCS, statements

BACKEND = "backend"  # the keyword a "nccl" default is given to (init_process_group, new_group)
DEVICE = "device"  # where work is put: x.to(config.device), torch.zeros(n, device=config.device)


class Setting(NamedTuple):
    """The default of setting ``name``, a finding of ``rule`` at (``line``, ``column``), given to ``keyword``."""

    name: str
    keyword: str
    line: int
    column: int
    rule: str


class Read(NamedTuple):
    """``keyword=<x>.name`` at (``line``, ``column``), in the call that starts at (``call_line``, ``call_column``)."""

    name: str
    keyword: str
    line: int
    column: int
    call_line: int
    call_column: int


def _defaults(tree: ast.Module, s: FileScan) -> list[tuple[str, ast.expr]]:
    """(name, default) of each argparse option and each class-level field with a literal default
    (``backend: str = "nccl"``, ``backend: str = field(default="nccl")``)."""
    out = list(s.options.items())  # kb.scan.scan reads them from a file that calls add_argument
    for cls in (st for st in tree.body if type(st) is ast.ClassDef):  # a config is a module-level class
        for st in cls.body:
            target: ast.expr | None = None
            value: ast.expr | None = None
            if type(st) is ast.AnnAssign:
                target, value = st.target, st.value
            elif type(st) is ast.Assign and len(st.targets) == 1:
                target, value = st.targets[0], st.value
            if type(value) is ast.Call and type(value.func) is ast.Name and value.func.id == "field":
                value = next((k.value for k in value.keywords if k.arg == "default"), None)
            if type(target) is ast.Name and type(value) is ast.Constant:
                out.append((target.id, value))
    return out


def _config_fields(tree: ast.Module) -> list[tuple[str, ast.expr]]:
    """(object.name, value) of each ``object.name = value`` in a module-level function (not ``self``)."""
    out = []
    spans = [(st.lineno, st.end_lineno or st.lineno) for st in tree.body if isinstance(st, FUNCS)]
    for st, _ in statements(tree) if spans else ():
        if type(st) is ast.Assign and len(st.targets) == 1 and type(t := st.targets[0]) is ast.Attribute:
            if type(t.value) is ast.Name and t.value.id not in ("self", "cls"):
                if any(a <= st.lineno <= b for a, b in spans):
                    out.append((f"{t.value.id}.{t.attr}", st.value))
    return out


def settings(s: FileScan, kept: list[Finding], nccl: frozenset[str], devices: frozenset[str]) -> tuple[Setting, ...]:
    """The defaults in this file that are findings: of a ``nccl`` rule (given to ``backend``), of a
    rule for the keyword the setting is named for (``attn_implementation``), or of a ``cuda`` device
    string in a config object's field (given where work is put)."""
    tree = s.module.node if s.module is not None else None
    named = {r.id for k in s.rules.unbound for r in s.rules.keywords.get(k, ())}
    at = {(f.line, f.column): f.rule for f in kept if f.rule in nccl or f.rule in named or f.rule in devices}
    if not isinstance(tree, ast.Module) or not at:
        return ()
    out = []
    for name, value in _defaults(tree, s):
        line, column, _ = s.position(value)
        if (rule := at.get((line, column))) is not None and rule not in devices:
            keyword = BACKEND if rule in nccl else name if name in s.rules.unbound else None
            if keyword is not None:
                out.append(Setting(name, keyword, line, column, rule))
    for name, value in _config_fields(tree) if devices.intersection(at.values()) else ():
        for node in ast.walk(value):  # the cuda string inside: torch.device("cuda:0") if ... else ...
            where = s.place(node) if type(node) is ast.Constant else None
            if where is not None and at.get(where) in devices:
                out.append(Setting(name, DEVICE, *where, at[where]))
                break
    return tuple(out)


def reads(s: FileScan) -> tuple[Read, ...]:
    """Each keyword a setting may be given to (``backend``, a keyword some rule looks for) whose value
    is an attribute (``args.dist_backend``), and each ``init_process_group(args.backend)``: what the
    walk noted (kb.scan.scan)."""
    return tuple(Read(_read_name(k, v), k, *s.place(v), *s.place(call)) for k, v, call in s.setting_reads)


def _read_name(keyword: str, value: ast.Attribute) -> str:
    """What a read names: the attribute (``args.dist_backend``: dist_backend), or for a device the
    object and the attribute (``config.device``)."""
    if keyword == DEVICE and type(value.value) is ast.Name:
        return f"{value.value.id}.{value.attr}"
    return value.attr


def read_elsewhere(
    findings: list[Finding], flows: list[tuple[str, tuple[Setting, ...], tuple[Read, ...]]]
) -> list[Finding]:
    """The findings, each default's with the reads of its setting in other files as related places."""
    where: dict[tuple[str, str], list[tuple[str, Setting]]] = {}
    for path, made, _ in flows:
        for setting in made:
            where.setdefault((setting.name, setting.keyword), []).append((path, setting))
    extra: dict[tuple[str, int, int, str], set[tuple[str, int, int]]] = {}
    for path, made, used in flows:
        own = {m.name for m in made}
        for r in used:
            found = where.get((r.name, r.keyword), [])
            files = {p for p, _ in found}
            if r.name in own or path in files or not files or (len(files) > 1 and "." not in r.name):
                continue
            for there, setting in found:
                places = extra.setdefault((there, setting.line, setting.column, setting.rule), set())
                places |= {(path, r.line, r.column), (path, r.call_line, r.call_column)}
    if not extra:
        return findings
    out = []
    for f in findings:
        if more := extra.get((f.path, f.line, f.column, f.rule)):
            here = {(line, column) for p, line, column in more if p == f.path}
            elsewhere = tuple(sorted({*f.elsewhere, *(p for p in more if p[0] != f.path)}))
            f = f._replace(related=tuple(sorted(here.union(f.related))), elsewhere=elsewhere, how="followed")
        out.append(f)
    return out
