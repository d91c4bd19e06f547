"""What the wheel's backend code decides, read from the wheel (never imported), and the KB records
that state it, held to it.

Three questions the handbook answers from the code rather than from a document:

- which ``options={...}`` keys the ``tpu`` compile backend reads (``TpuBackend.__call__``);
- which ``torch.distributed`` collectives the ``tpu_dist`` process group implements: the methods
  of the native ``torch_tpu::ProcessGroupTpu`` class that override c10d's ``Backend`` (read from
  the symbol names of the torch 2.13 build's library); the others fall back to c10d's default,
  which raises "Backend ... does not support ...";
- which public ``torch.tpu`` APIs are forbidden inside ``torch.compile``
  (``@forbid_in_torch_compile``) and which break the graph (``torch._dynamo.graph_break``).

``FACT_RECORDS`` names the claim that states each answer; ``check_facts`` fails when the names a
claim lists in backticks differ from what the wheel says, so a later wheel that changes the answer
fails ``kb check-wheel``.
"""

from __future__ import annotations

import ast
import re
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import Problem
from ..core.load import KB
from ..core.schema import Claim

BACKEND_FILE = "torch_tpu/_internal/compile/_backend.py"
PG_LIBRARY = "torch_tpu/csrc/common/glue_2_13_0/libpywrap_2_13_0_common.so"
PG_SYMBOL = re.compile(rb"_ZN9torch_tpu15ProcessGroupTpu(\d+)")
# c10d::Backend's collectives (torch 2.13, torch/csrc/distributed/c10d/Backend.hpp) and the
# torch.distributed call that reaches each one.
C10D_COLLECTIVES = {
    "allreduce": "all_reduce",
    "broadcast": "broadcast",
    "allgather": "all_gather",
    "_allgather_base": "all_gather_into_tensor",
    "reduce_scatter": "reduce_scatter",
    "_reduce_scatter_base": "reduce_scatter_tensor",
    "alltoall": "all_to_all",
    "alltoall_base": "all_to_all_single",
    "gather": "gather",
    "scatter": "scatter",
    "barrier": "barrier",
    "send": "send",
    "recv": "recv",
    "reduce": "reduce",
    "allreduce_coalesced": "all_reduce_coalesced",
    "allgather_coalesced": "all_gather_coalesced",
    "recvAnysource": "recvAnysource",  # dist.recv with no src
    "monitoredBarrier": "monitored_barrier",
}
FORBID_DECORATOR = "forbid_in_torch_compile"
TICKED = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class Fact:
    """One answer the wheel gives: its name, where in the wheel it is read, and which backticked
    names of a claim count as naming it (the others are prose)."""

    key: str
    source: str
    universe: str  # "options" | "collectives" | "torch.tpu"


FACTS = {
    "compile-backend-options": Fact("compile-backend-options", BACKEND_FILE, "options"),
    "tpu-dist-implements": Fact("tpu-dist-implements", PG_LIBRARY, "collectives"),
    "tpu-dist-missing": Fact("tpu-dist-missing", PG_LIBRARY, "collectives"),
    "forbidden-in-compile": Fact("forbidden-in-compile", "torch_tpu/_internal/utils/annotations.py", "torch.tpu"),
    "graph-break-in-compile": Fact("graph-break-in-compile", "torch_tpu/_internal/precision/precision.py", "torch.tpu"),
}
# The claim that states each fact.
FACT_RECORDS = {
    "tpu-backend-options": "compile-backend-options",
    "tpu-dist-collectives": "tpu-dist-implements",
    "tpu-dist-missing-collectives": "tpu-dist-missing",
    "tpu-forbidden-in-compile": "forbidden-in-compile",
    "precision-context-graph-break": "graph-break-in-compile",
}


def read_facts(wheel: Path, public: dict[str, str]) -> dict[str, set[str]]:
    """Every fact, from the wheel file and its public table (public name -> ``module:Qual.name``);
    a fact whose source file is missing is an empty set."""
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        sources = {f: zf.read(f) for f in (BACKEND_FILE, PG_LIBRARY) if f in names}
        python = {f: zf.read(f) for f in names if f.endswith(".py") and f.startswith("torch_tpu/")}
    resolver = _Resolver(python)
    methods = process_group_methods(sources.get(PG_LIBRARY, b""))
    implemented = {C10D_COLLECTIVES[m] for m in methods if m in C10D_COLLECTIVES}
    return {
        "compile-backend-options": backend_options(sources.get(BACKEND_FILE, b"")),
        "tpu-dist-implements": implemented,
        "tpu-dist-missing": set(C10D_COLLECTIVES.values()) - implemented if methods else set(),
        "forbidden-in-compile": _public(decorated(python, FORBID_DECORATOR), public, resolver),
        "graph-break-in-compile": _public(graph_breakers(python), public, resolver),
    }


def backend_options(source: bytes) -> set[str]:
    """The keys ``TpuBackend.__call__`` reads from its ``options`` dict (``options.get('key')``)."""
    if not source:
        return set()
    keys: set[str] = set()
    for cls in ast.walk(ast.parse(source)):
        if isinstance(cls, ast.ClassDef) and cls.name == "TpuBackend":
            for node in ast.walk(cls):
                if _is_options_get(node):
                    assert isinstance(node, ast.Call)
                    first = node.args[0]
                    if isinstance(first, ast.Constant) and isinstance(first.value, str):
                        keys.add(first.value)
    return keys


def _is_options_get(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "options"
        and bool(node.args)
    )


def process_group_methods(library: bytes) -> set[str]:
    """The methods of ``torch_tpu::ProcessGroupTpu`` named in a library's symbol table (Itanium
    mangling: ``_ZN9torch_tpu15ProcessGroupTpu`` then the length and the name of the method)."""
    methods = set()
    for m in PG_SYMBOL.finditer(library):
        length = int(m.group(1))
        name = library[m.end() : m.end() + length]
        if len(name) == length and re.fullmatch(rb"[A-Za-z_]\w*", name):
            methods.add(name.decode())
    return methods


def decorated(python: dict[str, bytes], decorator: str) -> set[str]:
    """``module:Qual.name`` of every function or class carrying ``@...decorator(...)``."""
    found: set[str] = set()
    for path, source in python.items():
        if decorator.encode() not in source:
            continue
        module = _module(path)
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and any(
                _decorator_name(d) == decorator for d in node.decorator_list
            ):
                found.add(f"{module}:{node.name}")
    return found


def _decorator_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def graph_breakers(python: dict[str, bytes]) -> set[str]:
    """``module:name`` of every top-level function that calls ``torch._dynamo.graph_break``."""
    found: set[str] = set()
    for path, source in python.items():
        if b"graph_break(" not in source:
            continue
        module = _module(path)
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef) and any(
                isinstance(c, ast.Call) and _decorator_name(c.func) == "graph_break" for c in ast.walk(node)
            ):
                found.add(f"{module}:{node.name}")
    return found


def _public(targets: set[str], public: dict[str, str], resolver: _Resolver) -> set[str]:
    """The public ``torch.tpu`` names whose target is, after following aliases, one of ``targets``
    (internal ones drop out)."""
    return {name for name, target in public.items() if ":" in target and resolver.follow(target) & targets}


class _Resolver:
    """Follows ``module:Qual.name`` through imports, re-exports and class-level aliases
    (``precision = _precision_module.precision``) to where the function or class is defined."""

    def __init__(self, python: dict[str, bytes]):
        self.paths = {_module(path): path for path in python}
        self.python = python
        self.trees: dict[str, ast.Module] = {}

    def tree(self, module: str) -> ast.Module | None:
        if module not in self.trees and module in self.paths:
            self.trees[module] = ast.parse(self.python[self.paths[module]])
        return self.trees.get(module)

    def follow(self, target: str, depth: int = 0) -> set[str]:
        module, _, qual = target.partition(":")
        tree = self.tree(module)
        if tree is None or depth > 8:
            return set()
        owner, _, leaf = qual.rpartition(".")
        cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner), None)
        if owner and cls is None:
            return set()
        for node in cls.body if cls else tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == leaf:
                return {target}
            value = _assigned(node, leaf)
            if value:
                return self.follow(self._split(self._absolute(tree, module, value)), depth + 1)
        if cls is not None:  # inherited from a base class of the same module
            bases = [b.id for b in cls.bases if isinstance(b, ast.Name)]
            return set().union(*(self.follow(f"{module}:{b}.{leaf}", depth + 1) for b in bases))
        imported = _imports(tree, module).get(leaf)
        return self.follow(self._split(imported), depth + 1) if imported else set()

    def _absolute(self, tree: ast.Module, module: str, dotted: str) -> str:
        head, _, rest = dotted.partition(".")
        base = _imports(tree, module).get(head)
        return f"{base}.{rest}" if base and rest else (base or f"{module}.{dotted}")

    def _split(self, dotted: str) -> str:
        """``a.b.c.name`` as ``a.b.c:name`` (the longest prefix that is a module of the wheel)."""
        parts = dotted.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            if ".".join(parts[:cut]) in self.paths:
                return f"{'.'.join(parts[:cut])}:{'.'.join(parts[cut:])}"
        return dotted


def _module(path: str) -> str:
    return path[:-3].removesuffix("/__init__").replace("/", ".")


def _assigned(node: ast.stmt, name: str) -> str | None:
    """The dotted value of ``name = a.b`` (None for anything else)."""
    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
        parts: list[str] = []
        value: ast.expr = node.value
        while isinstance(value, ast.Attribute):
            parts.append(value.attr)
            value = value.value
        if isinstance(value, ast.Name):
            return ".".join([value.id, *reversed(parts)])
    return None


def _imports(tree: ast.Module, module: str) -> dict[str, str]:
    """Local name -> dotted target of a module's top-level imports."""
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                found[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".")[: -node.level] if node.level else []
                base = ".".join([*package, *([base] if base else [])])
            for a in node.names:
                found[a.asname or a.name] = f"{base}.{a.name}"
    return found


def check_facts(kb: KB, wheel_facts: Mapping[str, Iterable[str]]) -> list[Problem]:
    """Each claim of FACT_RECORDS must name, in backticks, exactly what the wheel says (``wheel_facts``:
    a wheel index's ``facts``)."""
    claims = {rec.id: rec for rec in kb.rows("claims", Claim)}
    if not any(rid in claims for rid in FACT_RECORDS):
        return []
    facts = {key: set(names) for key, names in wheel_facts.items()}
    problems = []
    for record_id, key in FACT_RECORDS.items():
        rec = claims.get(record_id)
        if rec is None:
            continue
        fact = FACTS[key]
        stated = stated_names(rec.model.statement, fact.universe)
        found = facts.get(key, set())
        if stated != found:
            missing, extra = sorted(found - stated), sorted(stated - found)
            problems.append(
                Problem(
                    rec.path,
                    rec.line_of("statement"),
                    f"claims {record_id}: the wheel's {fact.source} says {sorted(found) or 'nothing'} "
                    f"(not stated: {missing or 'none'}; stated but not in the wheel: {extra or 'none'})",
                )
            )
    return problems


def stated_names(statement: str, universe: str) -> set[str]:
    """The names of a fact's universe that a statement writes in backticks."""
    ticked = set(TICKED.findall(statement))
    if universe == "options":
        return {t for t in ticked if re.fullmatch(r"[a-z][a-z0-9_]*", t)}
    if universe == "collectives":
        return ticked & set(C10D_COLLECTIVES.values())
    return {m.group(0) for t in ticked if (m := re.match(r"torch\.tpu(?:\.\w+)+", t))}
