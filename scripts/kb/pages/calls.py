"""The calls the handbook recommends, collected from the KB, the pages and the samples, sorted by
where they can be checked.

A *span* is a piece of Python the handbook writes: an inline code span of a KB record or a page
(`` `torch.accelerator.synchronize()` ``), a scanner rule's fix, or a call in a sample. Each span
is parsed and given a side:

- ``elsewhere``: it names the CUDA, NCCL or PyTorch/XLA side (what the reader migrates away from)
  or a peer's stack (Neuron, OpenXLA);
- ``tpu``: it names TorchTPU (``torch.tpu.*``, ``torch_tpu.*``, a ``'tpu'`` device or the
  ``tpu_dist`` backend), so it needs a TPU: its TorchTPU names are held to the wheel and its
  ``torch.*`` part to torch on the CPU;
- ``torch``: plain PyTorch, so it runs on a CPU with torch installed;
- ``other``: a fragment (``optimizer.step()``) or another library (Ray, JAX).

Spans are either ``call`` (they do something: a call, a ``with`` or an assignment) or ``name``
(a dotted name to look up). ``tests/pages/test_recommended_calls.py`` runs the calls and looks up the
names on torch 2.13 CPU. Nothing here imports torch.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Literal

from ..core.load import KB, Record
from ..core.schema import Model
from .pages import Page

Side = Literal["elsewhere", "tpu", "torch", "other"]
Shape = Literal["call", "name"]

TICK = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
FENCE = re.compile(r"^\s*(```|~~~)")
ENV_SETTING = re.compile(r"^([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)=(\S+)$")
# The import aliases the handbook's samples and prose use (``import torch.distributed as dist``...).
ALIASES = {
    "dist": "torch.distributed",
    "F": "torch.nn.functional",
    "nn": "torch.nn",
    "mp": "torch.multiprocessing",
    "DDP": "torch.nn.parallel.DistributedDataParallel",
    "init_device_mesh": "torch.distributed.device_mesh.init_device_mesh",
    "init_process_group": "torch.distributed.init_process_group",
    "sdpa_kernel": "torch.nn.attention.sdpa_kernel",
    "SDPBackend": "torch.nn.attention.SDPBackend",
    "ProfilerActivity": "torch.profiler.ProfilerActivity",
    "Tensor": "torch.Tensor",
    "Precision": "torch.tpu.Precision",
    "EagerMode": "torch.tpu.EagerMode",
}
CUDA_PREFIXES = ("torch.cuda", "torch.backends.cuda", "torch.backends.cudnn", "torch.version.cuda")
CUDA_ROOTS = {"xm", "xr", "pl", "torch_xla", "triton", "apex", "cupy", "pynvml"}
CUDA_STRINGS = {"cuda", "nccl", "xla", "openxla", "neuron", "hpu"}
PACKAGE_NAME = re.compile(r"^[\w.]+(?:-[\w.]+)+$")  # torch-neuronx: a package, not a subtraction
TPU_PREFIXES = ("torch.tpu", "torch_tpu", "torch.backends.tpu")
TPU_STRINGS = {"tpu", "tpu_dist"}
# Record fields that hold prose with code in it; ids, sources and the CUDA-side `gpu` column are not.
SKIP_FIELDS = {"id", "gpu", "sources", "conflicts", "api", "env", "backend", "elsewhere", "current", "match"}


@dataclass(frozen=True)
class CallShape:
    """One call to a dotted name: how many positional arguments, which keywords (None: ``*args``
    or ``**kwargs``, so the arguments can't be counted)."""

    name: str
    positional: int | None
    keywords: tuple[str, ...] | None


@dataclass
class Span:
    """One piece of code the handbook writes, with where it was written."""

    text: str  # as written
    code: str  # as it will run (placeholders filled, ``with`` bodies added, alternatives split)
    where: str  # "docs/data/api_map.yml:12 (api_map[3].tpu)"
    side: Side
    shape: Shape
    names: list[str] = field(default_factory=list)  # dotted names, aliases expanded
    strings: list[str] = field(default_factory=list)  # string constants it passes
    calls: list[CallShape] = field(default_factory=list)  # the torch.* calls it makes
    elided: bool = False  # written with ``...`` for "your arguments": bound, not run
    sample: bool = False  # a call inside a sample (its variables are the sample's): bound, not run

    @property
    def roots(self) -> set[str]:
        return {n.split(".")[0] for n in self.names}

    @property
    def twin(self) -> str | None:
        """For a span that is TPU-only through its strings alone (``'tpu'``, ``'tpu_dist'``), the
        same code with ``'cpu'`` and ``'gloo'``: its PyTorch part can then run on the CPU."""
        if self.side != "tpu" or any(n.startswith(TPU_PREFIXES) for n in self.names):
            return None
        if any(n.split(".")[-1] in {"tpu", "is_tpu"} for n in self.names):
            return None
        if any(c.name == "torch.compile" for c in self.calls):
            return None  # 'tpu' names a compile backend there, not a device
        swapped = re.sub(r"(['\"])tpu_dist\1", "'gloo'", self.code)
        swapped = re.sub(r"(['\"])tpu\1", "'cpu'", swapped)
        return swapped if swapped != self.code else None


def parse_span(text: str, where: str) -> list[Span]:
    """The spans a piece of inline code stands for: none when it isn't Python (prose, a path, a
    shell line), several when it lists alternatives (``'medium' | 'high'``)."""
    tree = _parse(text)
    if tree is None:
        return []
    elided = any(_is_ellipsis(n) for n in ast.walk(tree) if isinstance(n, ast.expr))
    tree = _drop_ellipses(tree)
    spans = []
    for variant in _alternatives(tree):
        names, strings = _names(variant), _strings(variant)
        if not names:
            continue  # a bare string or number
        shape: Shape = "name" if _is_name(variant) else "call"
        code = ast.unparse(variant)
        side = _side(names, strings)
        spans.append(Span(text, code, where, side, shape, names, strings, _call_shapes(variant), elided))
    return spans


def _call_shapes(tree: ast.AST, aliases: dict[str, str] | None = None) -> list[CallShape]:
    shapes = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _sample_name(node.func, aliases) if aliases is not None else dotted(node.func)
        if not name or not name.startswith("torch."):
            continue
        starred = any(isinstance(a, ast.Starred) for a in node.args)
        keywords = [k.arg for k in node.keywords]
        shapes.append(
            CallShape(
                name,
                None if starred else len(node.args),
                None if None in keywords else tuple(k for k in keywords if k is not None),
            )
        )
    return shapes


def _parse(text: str) -> ast.Module | None:
    body = text.strip()
    if not body or ENV_SETTING.match(body) or PACKAGE_NAME.match(body) or body.startswith(("$", "python ", "pip ")):
        return None
    if body.endswith(":"):
        body += "\n    pass"
    try:
        with warnings.catch_warnings():  # prose such as `\d` is not code: no SyntaxWarning for it
            warnings.simplefilter("ignore")
            tree = ast.parse(body)
    except SyntaxError:
        return None
    if not tree.body or not all(isinstance(s, (ast.Expr, ast.With, ast.Assign)) for s in tree.body):
        return None
    return tree


def _drop_ellipses(tree: ast.Module) -> ast.Module:
    """``f(..., k=v)`` stands for "your arguments": leave them out, keep what the handbook wrote."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            node.args = [a for a in node.args if not _is_ellipsis(a)]
            node.keywords = [k for k in node.keywords if not _is_ellipsis(k.value)]
    return tree


def _is_ellipsis(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is Ellipsis


def _alternatives(tree: ast.Module) -> Iterator[ast.Module]:
    """``f('a' | 'b')``: one tree per string of the alternation (the handbook's way to list choices)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for i, arg in enumerate(node.args):
                choices = _choices(arg)
                if choices:
                    for choice in choices:
                        node.args[i] = ast.Constant(choice)
                        yield ast.parse(ast.unparse(tree))
                    node.args[i] = arg
                    return
    yield tree


def _choices(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _choices(node.left), _choices(node.right)
        return left + right if left and right else []
    return []


def _is_name(tree: ast.Module) -> bool:
    stmt = tree.body[0]
    return len(tree.body) == 1 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, (ast.Name, ast.Attribute))


def dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of attributes on a name (aliases expanded), else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(ALIASES.get(node.id, node.id))
    return ".".join(reversed(parts))


def _names(tree: ast.Module) -> list[str]:
    """The longest dotted names of a tree (``torch.a.b``, not also ``torch.a``)."""
    inner: set[int] = set()
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            inner.add(id(node.value))
            name = dotted(node)
            if name:
                found.append(name)
        elif isinstance(node, ast.Name) and id(node) not in inner:
            found.append(ALIASES.get(node.id, node.id))
    return found


def _strings(tree: ast.Module) -> list[str]:
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _side(names: list[str], strings: list[str]) -> Side:
    if any(n.startswith(CUDA_PREFIXES) or n.split(".")[0] in CUDA_ROOTS for n in names):
        return "elsewhere"
    if any(s in CUDA_STRINGS for s in strings):
        return "elsewhere"
    if any(n.startswith(TPU_PREFIXES) or n.split(".")[-1] in {"tpu", "is_tpu"} for n in names):
        return "tpu"
    if any(s in TPU_STRINGS for s in strings):
        return "tpu"
    if any(n == "torch" or n.startswith("torch.") for n in names):
        return "torch"
    return "other"


# ---- where spans come from ----


def record_spans(kb: KB) -> list[Span]:
    """Every span in the text fields of every KB record, and every scanner fix."""
    spans: list[Span] = []
    for records in kb.tables.values():
        for rec in records:
            spans += _spans_of(rec)
    return spans


def _spans_of(rec: Record[Model]) -> list[Span]:
    spans: list[Span] = []
    data = rec.model.model_dump(exclude=SKIP_FIELDS)
    for key, value in data.items():
        where = f"{rec.path}:{rec.line_of(key)} ({rec.where(key)})"
        if key == "fix" and isinstance(value, dict):
            spans += _fix_spans(value, where)
            continue
        for text in _texts(value):
            for code in TICK.findall(text):
                spans += parse_span(code, where)
    return spans


def _fix_spans(fix: dict[str, object], where: str) -> list[Span]:
    """A scanner fix writes code into the user's file: its expression runs, its rename target resolves."""
    spans: list[Span] = []
    if isinstance(fix.get("expression"), str):
        spans += parse_span(str(fix["expression"]), where)
    if isinstance(fix.get("to"), str):
        spans += parse_span(str(fix["to"]), where)
    return spans


def _texts(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def page_spans(pages: dict[str, Page]) -> list[Span]:
    """Every inline code span of every page's Markdown (fenced blocks are samples: see sample_calls)."""
    spans: list[Span] = []
    for page in pages.values():
        fenced = False
        for number, line in enumerate(page.text.splitlines(), 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if fenced:
                continue
            for code in TICK.findall(line):
                spans += parse_span(code, f"{page.shown}:{number}")
    return spans


def env_settings(texts: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """(name, value, where) for every ``NAME=value`` span in (text, where) pairs."""
    found = []
    for text, where in texts:
        for code in TICK.findall(text):
            m = ENV_SETTING.match(code.strip())
            if m:
                found.append((m.group(1), m.group(2), where))
    return found


def sample_calls(path: Path, shown: str) -> list[Span]:
    """The ``torch.*`` calls of a Python sample, aliases taken from its own imports."""
    try:
        tree = ast.parse(path.read_text("utf-8"))
    except SyntaxError:
        return []  # tests/content/test_samples.py reports a sample that does not compile
    aliases = _imports(tree)
    spans: list[Span] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _sample_name(node.func, aliases)
            if name and name.startswith("torch."):
                strings = _strings(ast.Module(body=[ast.Expr(node)], type_ignores=[]))
                code = ast.unparse(node)
                shapes = [s for s in _call_shapes(node, aliases) if s.name == name]
                side = _side([name], strings)
                where = f"{shown}:{node.lineno}"
                spans.append(Span(code, code, where, side, "call", [name], strings, shapes, sample=True))
    return spans


def _imports(tree: ast.Module) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    return aliases


def _sample_name(node: ast.expr, aliases: dict[str, str] | None) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or aliases is None or node.id not in aliases:
        return None
    parts.append(aliases[node.id])
    return ".".join(reversed(parts))


def compile_arguments(span: Span) -> list[dict[str, object]]:
    """The keyword arguments of each ``torch.compile`` call of a span whose values are literals
    (``backend='tpu'``, ``mode=...``, ``options={...}``, ``dynamic=False``); others are left out."""
    found = []
    for node in ast.walk(ast.parse(span.code)):
        if isinstance(node, ast.Call) and dotted(node.func) == "torch.compile":
            kwargs: dict[str, object] = {}
            for k in node.keywords:
                try:
                    kwargs[str(k.arg)] = ast.literal_eval(k.value)
                except ValueError:
                    continue
            found.append(kwargs)
    return found
