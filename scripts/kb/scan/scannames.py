"""The migration scanner's names and values: imports and aliases, scopes, followed values, findings.

Names are resolved through the file's imports (``import torch.distributed as dist`` makes
``dist.init_process_group`` mean ``torch.distributed.init_process_group``; ``from torch.cuda
import amp`` makes ``amp.autocast`` mean ``torch.cuda.amp.autocast``). Imports form one table per
file, whatever the scope they appear in. A value is followed when it is a module-level assignment,
a simple assignment in the same function or a parameter's default (``device = "cuda"`` then
``x.to(device)``); a name assigned several times may hold any of its values, and a value that
can't be known (a loop target, a call) is ``unknown``. A finding made through a followed value
says ``followed``, any other ``direct``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, Union

from .scanreach import module_bases
from .scanrules import RuleSet, ScanRule

if TYPE_CHECKING:
    from ..core.schema import Detector
    from .scanreach import Reached

CODE_WIDTH = 100
MAX_FOLLOW = 6  # how many names deep a value is followed
_ANY = object()  # a mapping key that is not a constant, or a lookup by one
_NEWLINE = re.compile(r"\r\n|\r|\n")  # the line breaks Python's tokenizer counts (str.splitlines counts more)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_BLOCKS = ("body", "orelse", "finalbody", "handlers")
_OPAQUE = (*_FUNCS, ast.ClassDef)  # statements whose blocks are another scope's
# each statement type -> the fields of _BLOCKS it has (most have none: no getattr per statement)
_STATEMENT_BLOCKS = {kind: tuple(n for n in _BLOCKS if n in kind._fields) for kind in ast.stmt.__subclasses__()}
CUDA_FORMATTED = "cuda:?"  # the value of f"cuda:{n}", "cuda:" + str(n), "cuda:{}".format(n)
RANK_FORMATTED = "?:rank"  # the value of f"{kind}:{rank}"
RANK_INDEX = "?rank"  # the value of a device index computed from the rank (rank % n)
DEVICE_MODULE = "?module"  # the value of getattr(torch, device_type) or torch.get_device_module(...)
ACCELERATOR_NAME = "?accelerator"  # get_accelerator().device_name(): DeepSpeed's, "cpu" on a TorchTPU host
_ACCELERATORS = frozenset({"deepspeed.get_accelerator", "deepspeed.accelerator.get_accelerator"})
CUDAGRAPH_MODES = ("reduce-overhead", "max-autotune")
# Positional arguments that count as a keyword for ``keyword`` rules.
POSITIONAL: dict[str, tuple[str, ...]] = {
    "torch.distributed.init_process_group": ("backend",),
    "torch.device": ("type",),
    "torch.autocast": ("device_type",),
    "torch.amp.autocast": ("device_type",),
}
AUTOCAST = ("torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast")
Scoped = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module]


class Finding(NamedTuple):
    """One root cause: where it is (the line to change), which rule (id and code), what the code
    says there, whether a value was followed to it, and the places that use it (a tuple: sorts by
    path, line, column and rule, and pickles cheaply out of worker processes)."""

    path: str
    line: int
    column: int  # 1-based, in characters
    rule: str
    code: str  # the rule's stable code (TPU101)
    severity: str
    snippet: str  # the source at the finding, on one line, at most CODE_WIDTH characters
    message: str
    suggestion: str
    link: str
    how: str  # direct | followed
    related: tuple[tuple[int, int], ...] = ()  # (line, column) of each use of this root cause
    elsewhere: tuple[tuple[str, int, int], ...] = ()  # (path, line, column) of each use in another file
    manual: bool = False  # its rule has a fix, but not for here (a guard rename outside an is_available() test)


@dataclass(frozen=True)
class Values:
    """What an expression may hold: known constants, whether something is unknown, whether followed."""

    known: tuple[object, ...] = ()
    unknown: bool = False
    followed: bool = False
    origins: tuple[ast.expr, ...] = ()  # the expression each known value was read from (same order)


def is_cuda(value: object) -> bool:
    """ "cuda", "cuda:N", or the start of one ("cuda:" + rank, "cuda:{}"); not "cuda:nccl,cpu:gloo"."""
    if not isinstance(value, str) or not value.startswith("cuda") or value != "cuda" and value[4] != ":":
        return False
    index = value[5:]
    return index.isdigit() or index[:1] in ("", "?", "{", "%")  # "?": CUDA_FORMATTED


class Scope:
    """A function (or the module) and the simple assignments in it, collected when first needed."""

    def __init__(self, node: Scoped, parent: Scope | None):
        self.node = node
        self.parent = parent
        self._assigned: dict[str, list[ast.expr | None]] | None = None
        self._defined: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] | None = None
        self._params: dict[str, ast.expr | None] | None = None
        self._returns: list[ast.expr | None] | None = None

    @property
    def params(self) -> dict[str, ast.expr | None]:
        """The function's parameters and their defaults (None: no default), read when first asked:
        most functions a scan enters never have a name looked up in them."""
        if self._params is None:
            self._params = _parameters(self.node)
        return self._params

    @property
    def assigned(self) -> dict[str, list[ast.expr | None]]:
        if self._assigned is None:
            self._assigned = _assignments(self.node)
        return self._assigned

    @property
    def returns(self) -> list[ast.expr | None]:
        """What each ``return`` of the function gives (None for a bare one), read once."""
        if self._returns is None:
            self._returns = [st.value for st in _statements(self.node) if isinstance(st, ast.Return)]
        return self._returns

    def defined(self, name: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        """The functions this scope defines as ``name`` (empty when it is no function here)."""
        if self._defined is None:
            self._defined = {}
            for st in _statements(self.node):
                if isinstance(st, _FUNCS):
                    self._defined.setdefault(st.name, []).append(st)
        return self._defined.get(name, [])


def _parameters(node: Scoped) -> dict[str, ast.expr | None]:
    """A function's parameters, each with its default (None when it has none); none for a module."""
    if isinstance(node, ast.Module):
        return {}
    a = node.args
    plain = a.posonlyargs + a.args
    defaults: list[ast.expr | None] = [None] * (len(plain) - len(a.defaults)) + list(a.defaults)
    params = {p.arg: d for p, d in zip(plain, defaults, strict=True)}
    params.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)})
    for extra in (a.vararg, a.kwarg):
        if extra is not None:
            params[extra.arg] = None
    return params


def _statements(node: Scoped) -> list[ast.stmt]:
    """The statements of this scope, in nested blocks too, but not inside nested functions or classes."""
    if isinstance(node, ast.Lambda):
        return []
    out, stack = list[ast.stmt](), list(node.body)
    while stack:
        st = stack.pop()
        out.append(st)
        if not isinstance(st, _OPAQUE):
            for name in _STATEMENT_BLOCKS.get(type(st), ()):
                if name == "handlers":  # each except clause's body
                    for handler in st.handlers:  # type: ignore[attr-defined]  # a try: its type has the field
                        stack.extend(handler.body)
                else:
                    stack.extend(getattr(st, name))
    return out


def _assignments(node: Scoped) -> dict[str, list[ast.expr | None]]:
    """Names bound by statements in this scope (not nested ones): their values, None when unknowable."""
    out: dict[str, list[ast.expr | None]] = {}
    for st in _statements(node):
        if isinstance(st, ast.Assign):
            for target in st.targets:
                _bind(target, st.value, out)
        elif isinstance(st, ast.AnnAssign) and st.value is not None:
            _bind(st.target, st.value, out)
        elif isinstance(st, ast.AugAssign):
            _bind(st.target, None, out)
        elif isinstance(st, (ast.For, ast.AsyncFor)):
            _bind(st.target, None, out)
        elif isinstance(st, (ast.With, ast.AsyncWith)):
            for item in st.items:
                if item.optional_vars is not None:
                    _bind(item.optional_vars, None, out)
        elif isinstance(st, (*_FUNCS, ast.ClassDef)):
            out.setdefault(st.name, []).append(None)
    return out


def _bind(target: ast.expr, value: ast.expr | None, out: dict[str, list[ast.expr | None]]) -> None:
    if isinstance(target, ast.Name):
        out.setdefault(target.id, []).append(value)
    elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):  # args.backend = "nccl"
        out.setdefault(f"{target.value.id}.{target.attr}", []).append(value)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            _bind(elt.value if isinstance(elt, ast.Starred) else elt, None, out)


@dataclass
class FileScan:
    """The state of scanning one parsed file."""

    shown: str
    text: str
    rules: RuleSet
    aliases: dict[str, str] = field(default_factory=dict)
    findings: dict[tuple[int, int, str], Finding] = field(default_factory=dict)
    uses_cuda: bool = False
    moves_to_device: bool = False
    pending_init: list[ast.Call] = field(default_factory=list)
    pending_load: list[ast.Call] = field(default_factory=list)
    pending_nonzero: list[ast.Call] = field(default_factory=list)
    rank_counts: list[ast.Call] = field(default_factory=list)  # the call of each `rank % call(...)`
    plain_ifs: list[ast.If] = field(default_factory=list)  # the `if <comparison>:` with no else
    pending_fullgraph: list[tuple[ast.Call, Scope]] = field(default_factory=list)
    decorated: dict[int, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)  # id(decorator call)
    device_tests: list[ast.expr] = field(default_factory=list)  # is_cuda, is_cpu, device.type compares (scandevtest)
    pending_loader: list[tuple[ast.Call, bool]] = field(default_factory=list)
    # (where the value was written, where it is used, the rule the use matched): resolved in finish()
    links: list[tuple[ast.expr, ast.AST, ScanRule]] = field(default_factory=list)
    moves: list[tuple[ast.expr, ast.AST]] = field(default_factory=list)  # a cuda literal, the call it is given to
    # argparse options and their defaults (``add_argument("--device", default="cuda")``): ``args.device``
    options: dict[str, ast.expr] = field(default_factory=dict)
    quiet: set[int] = field(default_factory=set)  # ids of literals another detector already reported
    # ids of "cuda" literals in a branch a TorchTPU host never takes (``... if hasattr(torch,
    # "accelerator") else "cuda"``): neither reported nor followed to their uses
    fallbacks: set[int] = field(default_factory=set)
    arms: set[int] = field(default_factory=set)  # ids of comparisons that are arms of a device dispatch (scandispatch)
    # a device place that is a parameter (its use, the name, the function's scope), and the calls by
    # plain name (with the scope each is in): a parameter holds what this file's calls pass it
    pending_params: list[tuple[ast.Call, str, Scope]] = field(default_factory=list)
    calls: dict[str, list[tuple[ast.Call, Scope]]] = field(default_factory=dict)
    # calls of a function another module defines (its dotted path), and names bound by relative imports
    # (name -> level, module, imported name): what they pass may be used as a device there (kb.scan.scanflow)
    outgoing: list[tuple[ast.Call, Scope, str]] = field(default_factory=list)
    # a "nccl" (where it is written) that a call starting a process group is given: kb.scan.scan._nccl_inits
    nccl_inits: list[tuple[ast.expr, ast.Call]] = field(default_factory=list)
    # torch.set_default_device("cuda"), torch.device("cuda"): id of the call -> its string (kb.scan.scandefault)
    default_devices: dict[int, ast.expr] = field(default_factory=dict)
    # the calls of an attribute of an imported name (``ext.gemv(x)`` after ``import ext``), by that name
    module_calls: dict[str, list[ast.Call]] = field(default_factory=dict)
    # keyword=<x>.name given to a keyword a setting may be for (backend=args.dist_backend): kb.scan.scansettings
    setting_reads: list[tuple[str, ast.Attribute, ast.Call]] = field(default_factory=list)
    relative: dict[str, tuple[int, str | None, str]] = field(default_factory=dict)
    # device places whose value is what a call returns (``x.to(dist_util.dev())``), and the module's scope:
    # the call may be of another module's function that returns a device (kb.scan.scanflow)
    returned_uses: list[tuple[ast.Call, ast.Call]] = field(default_factory=list)
    # device places reading ``self.attr`` that no method of the class (or a base of this file) sets: a
    # base class imported from another module may (``class Exp(Exp_Basic)``, kb.scan.scanflow)
    inherited_uses: list[tuple[ast.Call, ast.Attribute, Scope]] = field(default_factory=list)
    # calls of a method of what a plain-named call returns (``get_backend().op(x)``), by that name
    loaded_calls: dict[str, list[ast.Call]] = field(default_factory=dict)
    import_nodes: list[ast.Import | ast.ImportFrom] = field(default_factory=list)  # of neither torch nor the stdlib
    # names bound by an import a rule reports (FusedAdam of 'from apex.optimizers import FusedAdam'): the
    # import; each use of the name is one of that finding's places, unless a finding itself
    imported: dict[str, ast.AST] = field(default_factory=dict)
    imported_uses: list[tuple[ast.AST, ast.AST]] = field(default_factory=list)
    # self.attr = Name(...) (either branch of a conditional): attr -> the names; and each self.attr(...) call
    instances: dict[str, list[str]] = field(default_factory=dict)
    self_calls: dict[str, list[ast.Call]] = field(default_factory=dict)
    method_calls: dict[str, list[tuple[ast.Call, Scope]]] = field(default_factory=dict)  # the same, with scopes
    # the CUDA extensions it imports (kb.scan.scanext): (bound name, line) -> module
    extensions: dict[tuple[str, int], str] = field(default_factory=dict)
    wrappers: tuple[str, ...] = ()  # the module's names that call an extension (kb.scan.scanext.extension_wrappers)
    declared: list[str] = field(default_factory=list)  # the module names CUDAExtension(...) calls build
    # internal device calls (``m.set_device(i)``) on a receiver this file can't tell: another module's may be one
    device_calls: list[ast.Call] = field(default_factory=list)
    # calls of a function whose body has a failing finding (kb.scan.scanreach): places of that finding
    reached: list[Reached] = field(default_factory=list)
    failed: dict[str, tuple[int, int, str]] = field(default_factory=dict)  # module functions that fail inside
    module: Scope | None = None
    _lines: list[str] | None = None
    # id(method) -> its class, and the class's methods
    _methods: dict[int, tuple[ast.ClassDef, list[ast.FunctionDef | ast.AsyncFunctionDef]]] | None = None
    _scopes: dict[int, Scope] = field(default_factory=dict)  # id(function) -> its scope (_scope)
    # values() answers by (node, scope, depth), kept once nothing the answers read can change (None: not yet)
    settled: dict[tuple[ast.expr | None, Scope, int], Values] | None = None

    # -- findings -------------------------------------------------------------------------------

    def position(self, node: ast.AST) -> tuple[int, int, str]:
        """The 1-based line and character column of a node, and its source on one line. A method
        call whose receiver spans lines is placed at the method (``).cuda()``), the part to edit."""
        if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.end_lineno != node.lineno:
            node = self._method(node, node.func)
        line_no: int = getattr(node, "lineno", 1)
        line = self.line(line_no)
        raw = line.encode("utf-8")
        start: int = getattr(node, "col_offset", 0)
        end_col = getattr(node, "end_col_offset", None)
        end = end_col if getattr(node, "end_lineno", None) == line_no and end_col is not None else len(raw)
        column = start + 1 if line.isascii() else len(raw[:start].decode("utf-8", "replace")) + 1
        code = " ".join(raw[start:end].decode("utf-8", "replace").split())
        if len(code) > CODE_WIDTH:
            code = code[: CODE_WIDTH - 1] + "…"
        return line_no, column, code

    def place(self, node: ast.AST) -> tuple[int, int]:
        """``position(node)[:2]``, the line and column only: without the source text, which costs most."""
        if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.end_lineno != node.lineno:
            node = self._method(node, node.func)
        line_no: int = getattr(node, "lineno", 1)
        start: int = getattr(node, "col_offset", 0)
        line = self.line(line_no)
        if line.isascii():
            return line_no, start + 1
        return line_no, len(line.encode("utf-8")[:start].decode("utf-8", "replace")) + 1

    def _method(self, call: ast.Call, func: ast.Attribute) -> ast.AST:
        """Where ``.name(...)`` of ``call`` is written: from its dot (or its name, when the dot ends
        the line before) to the call's end; ``call`` itself when the text doesn't spell the name."""
        line_no, end = func.end_lineno or call.lineno, func.end_col_offset or 0
        raw = self.line(line_no).encode("utf-8")
        name = func.attr.encode("utf-8")
        start = end - len(name)
        if start < 0 or raw[start:end] != name:
            return call
        start -= raw[start - 1 : start] == b"."
        last = call.end_lineno if call.end_lineno == line_no else None
        return ast.Pass(lineno=line_no, col_offset=start, end_lineno=last, end_col_offset=call.end_col_offset)

    def add(self, node: ast.AST, rule: ScanRule, followed: bool = False) -> None:
        line_no, column, code = self.position(node)
        key = (line_no, column, rule.id)
        if key in self.findings:
            return
        how = "followed" if followed else "direct"
        # A replace fix rewrites one exact literal: a finding on another string ("cuda:nccl,cpu:gloo")
        # is left to a person, so it is not offered as fixable.
        fix = rule.fix
        other = fix is not None and fix.kind == "replace" and getattr(node, "value", fix.literal) != fix.literal
        self.findings[key] = Finding(
            self.shown,
            line_no,
            column,
            rule.id,
            rule.code,
            rule.severity,
            code,
            rule.message,
            rule.suggestion,
            rule.link,
            how,
            manual=other,
        )

    def use(self, origin: ast.expr, node: ast.AST, rule: ScanRule) -> None:
        """``node`` matched ``rule`` through a value written at ``origin``: the finding goes to the
        origin, the line to change, and ``node`` becomes one of its uses."""
        self.links.append((origin, node, rule))

    def imported_use(self, name: str, node: ast.AST) -> None:
        """``node`` uses ``name``, which an import a rule reports bound."""
        self.imported_uses.append((self.imported[name], node))

    def finish(self) -> list[Finding]:
        """The findings, sorted, each with the uses that were traced back to it."""
        at: dict[tuple[int, int], tuple[int, int, str]] = {}
        for key in sorted(self.findings):
            at.setdefault(key[:2], key)
        uses: dict[tuple[int, int, str], list[tuple[int, int]]] = {}
        for statement, use in self.imported_uses:  # a use that is a finding of its own speaks for itself
            spoke = at.get(self.place(statement))
            if spoke is not None and (place := self.place(use)) not in at and place != spoke[:2]:
                uses.setdefault(spoke, []).append(place)
        for origin, node, rule in self.links:
            line_no, column, _ = self.position(origin)
            found = at.get((line_no, column))
            if found is None:
                self.add(origin, rule, followed=True)
                found = at[(line_no, column)] = (line_no, column, rule.id)
            key = found
            place = self.place(node)
            if place != key[:2]:
                uses.setdefault(key, []).append(place)
        for key, call in self.reached:
            if key in self.findings and (place := self.place(call)) not in at:
                uses.setdefault(key, []).append(place)
        out = []
        for where, finding in sorted(self.findings.items()):
            if where in uses:
                finding = finding._replace(related=tuple(sorted(set(uses[where]))), how="followed")
            out.append(finding)
        return out

    def line(self, number: int) -> str:
        if self._lines is None:  # str.split is some 3x faster than the pattern, and the same without a \r
            text = self.text
            self._lines = text.split("\n") if "\r" not in text else _NEWLINE.split(text)
        return self._lines[number - 1] if 0 < number <= len(self._lines) else ""

    def detect(self, name: Detector, node: ast.AST, followed: bool = False) -> None:
        """Report ``node`` under each rule of the detector ``name`` (a name the schema's ``Detector``
        lists: mypy holds every call to it)."""
        for rule in self.rules.detectors.get(name, ()):
            self.add(node, rule, followed)

    # -- names and values -----------------------------------------------------------------------

    def resolve(self, node: ast.expr) -> tuple[str | None, str]:
        """The dotted path ``node`` names after imports (None when its root is no import) and the
        access as written (``model.cuda``; ``.cuda`` when the root is an expression)."""
        if type(node) is ast.Name:  # the most common callee, looked up at once
            return self.aliases.get(node.id) or None, node.id
        attrs: list[str] = []
        while type(node) is ast.Attribute:
            attrs.append(node.attr)
            node = node.value
        attrs.reverse()
        tail = ".".join(attrs)
        if isinstance(node, ast.Name):
            chain = f"{node.id}.{tail}" if tail else node.id
            base = self.aliases.get(node.id)
            return (f"{base}.{tail}" if tail else base) if base else None, chain
        return None, "." + tail if tail else ""

    def imports(self, node: ast.Import | ast.ImportFrom) -> None:
        modules: list[str] = []
        if isinstance(node, ast.Import):
            for a in node.names:
                modules.append(a.name)
                if a.asname:
                    self.aliases[a.asname] = a.name
                else:
                    first = a.name.split(".")[0]
                    self.aliases[first] = first
        elif node.level > 0:
            self.relative.update({a.asname or a.name: (node.level, node.module, a.name) for a in node.names})
        elif node.level == 0 and node.module:
            modules.append(node.module)
            for a in node.names:
                full = f"{node.module}.{a.name}"
                modules.append(full)
                if a.name != "*":
                    self.aliases[a.asname or a.name] = full
        index = self.rules.import_index
        hit: list[ScanRule] = []
        named: set[str] = set()  # the modules the rules name
        for m in modules:  # a rule for `a.b` matches `a.b` and `a.b.c`: look up each prefix of the name
            cut = len(m)
            while cut > 0:
                if found := index.get(m[:cut], ()):
                    hit += found
                    named.add(m[:cut])
                cut = m.rfind(".", 0, cut)
        for rule in dict.fromkeys(hit):
            self.add(node, rule)
        for a in node.names if hit else ():  # the names it binds, each use of which is a place of it
            root = a.name.split(".")[0]
            if a.asname or isinstance(node, ast.ImportFrom) and a.name != "*":
                self.imported[a.asname or a.name] = node
            elif isinstance(node, ast.Import) and root in named:  # not torch of 'import torch.cuda.amp'
                self.imported[root] = node
        if any(m.startswith(("torch.cuda", "torch.backends.cud")) for m in modules):
            self.uses_cuda = True

    def exprs(self, name: str, scope: Scope | None) -> list[tuple[ast.expr | None, Scope]]:
        """The expressions a name may be bound to, each with the scope to read it in."""
        found = _binding(name, scope)
        if found is None:
            return []
        where, is_param = found
        if is_param:
            return [(where.params[name], where.parent or where)]
        return [(e, where) for e in where.assigned[name]]

    def parameter(self, name: str, scope: Scope | None) -> Scope | None:
        """The scope of the function whose parameter ``name`` is, as read in ``scope``; None if not one."""
        found = _binding(name, scope)
        return found[0] if found and found[1] else None

    def passed(self, function: Scope, name: str) -> list[tuple[ast.expr, Scope]]:
        """What this file's calls of ``function`` by its plain name pass as its parameter ``name``; for
        a class's ``__init__``, what the calls of the class by its name pass (after ``self``); for
        another method, what its calls through ``self`` pass (``self.step(batch, self.rank)``)."""
        fn = function.node
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return []
        plain = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        at = plain.index(name) if name in plain else -1
        calls = self.calls.get(fn.name, [])
        if (cls := self.owner(fn)) is not None and not _static(fn):
            at = at - 1 if at > 0 else -1  # after self
            calls = self.calls.get(cls.name, []) if fn.name == "__init__" else self.method_calls.get(fn.name, [])
        out = []
        for call, scope in calls:
            if any(isinstance(a, ast.Starred) for a in call.args[: at + 1]):
                continue  # *args: which one lands there is unknown
            given = [k.value for k in call.keywords if k.arg == name]
            given += call.args[at : at + 1] if 0 <= at < len(call.args) else []
            out += [(e, scope) for e in given[:1]]
        return out

    def values(self, node: ast.expr | None, scope: Scope, depth: int = 0) -> Values:
        """What ``node`` may hold, read in ``scope`` with ``depth`` names followed so far. Once the
        state is settled (``settled`` set, by file_flows) each answer is kept: what is passed across
        modules follows the same names again and again."""
        memo = self.settled
        if memo is None:
            return self._values(node, scope, depth)
        key = (node, scope, depth)
        found = memo.get(key)
        if found is None:
            found = memo[key] = self._values(node, scope, depth)
        return found

    def _values(self, node: ast.expr | None, scope: Scope, depth: int) -> Values:
        if node is None:
            return Values(unknown=True)
        if isinstance(node, ast.Constant):
            return Values((node.value,), origins=(node,))
        if isinstance(node, ast.JoinedStr) and (text := plain_fstring(node)):
            return Values((text.value,), origins=(text,))
        if isinstance(node, ast.Call) and self.device_module(node):  # getattr(torch, device_type)
            return Values((DEVICE_MODULE,), origins=(node,))
        if (accelerator := self.accelerator_name(node)) is not None:  # get_accelerator().device_name()
            return Values((ACCELERATOR_NAME,), origins=(accelerator,))
        if isinstance(node, ast.BinOp) and rank_expr(node):  # device = rank % torch.cuda.device_count()
            return Values((RANK_INDEX,), origins=(node,))
        if builds_cuda(node):
            return Values((CUDA_FORMATTED,), origins=(node,))
        if isinstance(node, ast.JoinedStr) and rank_fstring(node):
            return Values((RANK_FORMATTED,), origins=(node,))
        if isinstance(node, ast.Call) and node.args and len(node.args) <= 2:
            if self.resolve(node.func)[0] == "torch.device":  # torch.device(x), torch.device(x, i): x's type
                return self.values(node.args[0], scope, depth)
        if returns := self._returned_by(node, scope, depth):  # device = pick_device(), a function of this file
            v = _union([self.values(e, s, depth + 1) for e, s in returns])
            return Values(v.known, v.unknown, True, v.origins)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and depth < MAX_FOLLOW:
            # set in this function (args.x = ...), or for self.x in a method, in any method of its class
            if found := self.exprs(f"{node.value.id}.{node.attr}", scope) or self.members(node, scope):
                v = _union([self.values(e, s, depth + 1) for e, s in found])
                return Values(v.known, v.unknown, True, v.origins)
        if isinstance(node, ast.Attribute) and node.attr in self.options and isinstance(node.value, ast.Name):
            if depth < MAX_FOLLOW:  # args.device: the option's default
                v = self.values(self.options[node.attr], scope, depth + 1)
                return Values(v.known, True, True, v.origins)
        if isinstance(node, (ast.IfExp, ast.BoolOp)):
            parts = [node.body, node.orelse] if isinstance(node, ast.IfExp) else node.values
            return _union([self.values(p, scope, depth) for p in parts])
        if isinstance(node, ast.Call) and len(node.args) == 2 and self.resolve(node.func)[0] in _ENV_READS:
            v = self.values(node.args[1], scope, depth + 1)  # os.environ.get("X", "inductor"): the default runs
            return Values(v.known, True, True, v.origins)  # unless the variable is set
        if (looked := _lookup(node)) and depth < MAX_FOLLOW:  # TABLE[key], TABLE.get(key, default)
            table, defaults, key = looked
            held = self.entries(table, scope, depth + 1, key)
            v = _union([self.values(e, scope, depth + 1) for e in defaults] + held)
            return Values(v.known, v.unknown, True, v.origins)
        if isinstance(node, ast.Name) and depth < MAX_FOLLOW:
            found = self.exprs(node.id, scope)
            if self.settled is not None and (function := self.parameter(node.id, scope)) is not None:
                found += self.passed(function, node.id)  # every call is known: a parameter holds what they pass
            if not found:
                return Values(unknown=True)
            v = _union([self.values(e, s, depth + 1) for e, s in found])
            return Values(v.known, v.unknown, True, v.origins)
        return Values(unknown=True)

    def accelerator_name(self, node: ast.expr) -> ast.Call | None:
        """The ``get_accelerator()`` call of DeepSpeed's ``get_accelerator().device_name(...)``: the
        device DeepSpeed's accelerator names, its CPU one on a TorchTPU host."""
        if type(node) is not ast.Call or type(node.func) is not ast.Attribute or node.func.attr != "device_name":
            return None
        inner = node.func.value
        return inner if type(inner) is ast.Call and self.resolve(inner.func)[0] in _ACCELERATORS else None

    def device_module(self, node: ast.Call) -> bool:
        """``getattr(torch, name)`` with a name not written out, or ``torch.get_device_module(...)``: the
        module of whichever device type the code runs on (torch.cuda on a GPU, torch.tpu on a TPU)."""
        if isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) >= 2:
            return self.resolve(node.args[0])[0] == "torch" and not isinstance(node.args[1], ast.Constant)
        return self.resolve(node.func)[0] == "torch.get_device_module"

    def members(self, node: ast.Attribute, scope: Scope) -> list[tuple[ast.expr | None, Scope]]:
        """What ``self.attr`` is set to in the methods of the class whose method reads it (``self``
        being that method's first parameter), or of its bases in this module: ``self.device = ...``
        in ``__init__``, read in ``run``."""
        method = method_of(node.value, scope)
        if method is None:
            return []
        out: list[tuple[ast.expr | None, Scope]] = []
        for fn in self.siblings(method.node):
            inner = self.function_scope(fn, method.parent)
            out += [(e, inner) for e in inner.assigned.get(f"{_first(fn)}.{node.attr}", ())]
        return out

    def siblings(self, method: Scoped) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        """The methods of the class ``method`` is one of, then those of its bases that this module
        defines (``class Continuous(Base)``: what ``Base.__init__`` sets); none for a function that
        is no method."""
        found = self._owners().get(id(method))
        if found is None:
            return []
        methods = {id(cls): fns for cls, fns in self._owners().values()}
        named = {cls.name: cls for cls, _ in self._owners().values()}
        return found[1] + [fn for base in module_bases(found[0], named) for fn in methods[id(base)]]

    def self_returned(self, e: ast.expr, scope: Scope) -> list[tuple[ast.expr | None, Scope]]:
        """What ``self.pick()`` may return: the returns of the method of that name in the class of the
        method that calls it (or a base this module defines)."""
        if type(e) is not ast.Call or type(e.func) is not ast.Attribute:
            return []
        method = method_of(e.func.value, scope)
        if method is None:
            return []
        out: list[tuple[ast.expr | None, Scope]] = []
        for fn in self.siblings(method.node):
            if fn.name == e.func.attr:
                inner = self.function_scope(fn, method.parent)
                out += [(value, inner) for value in inner.returns]
                break  # the first found: the class's own, else the nearest base's
        return out

    def owner(self, method: Scoped) -> ast.ClassDef | None:
        """The class whose method ``method`` is (a class of the module, or nested in one); None if none."""
        found = self._owners().get(id(method))
        return found[0] if found else None

    def _owners(self) -> dict[int, tuple[ast.ClassDef, list[ast.FunctionDef | ast.AsyncFunctionDef]]]:
        if self._methods is None:
            tree = self.module.node if self.module is not None else ast.Module(body=[], type_ignores=[])
            self._methods = {id(fn): (cls, fns) for cls, fns in _class_methods(tree) for fn in fns}
        return self._methods

    def returned(self, name: str, where: Scope) -> list[tuple[ast.expr | None, Scope]]:
        """What the functions ``where`` defines as ``name`` may return (a bare return: None), each
        with the function's own scope."""
        out: list[tuple[ast.expr | None, Scope]] = []
        for fn in where.defined(name):
            inner = self.function_scope(fn, where)
            out += [(value, inner) for value in inner.returns]
        return out

    def function_scope(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, parent: Scope | None) -> Scope:
        """One scope per function reached by members() or returned(), its assignments read once."""
        return self._scopes.get(id(fn)) or self._scopes.setdefault(id(fn), Scope(fn, parent))

    def entries(self, table: ast.expr, scope: Scope, depth: int, key: object = _ANY) -> list[Values]:
        """What a mapping's values may hold: a dict literal's (or ``dict(k=v)``'s), those of the dicts a
        name is bound to, or of the dicts this file's function returns (``result = f(); result["device"]``).
        A constant ``key`` picks its entry, when a mapping spells it."""
        found = self._mappings(table, scope, depth)
        if not found:
            return [Values(unknown=True)]
        out: list[Values] = []
        for e, s in found:
            if (pairs := _mapping(e)) is None:
                return [Values(unknown=True)]
            picked = [v for k, v in pairs if k is _ANY or k == key] if key is not _ANY else []
            out += [self.values(v, s, depth) for v in picked or [v for _, v in pairs]]  # no match: any entry
        return out

    def _mappings(self, table: ast.expr, scope: Scope, depth: int) -> list[tuple[ast.expr | None, Scope]]:
        """The expressions ``table`` may be: what a name is bound to, what this file's function returns,
        and for ``CONFIG["misc"]`` (a config dict nested in a dict) the entries the outer mapping holds
        under that constant key; an entry that is no mapping is kept, and read as unknown."""
        found: list[tuple[ast.expr | None, Scope]] = [(table, scope)]
        if isinstance(table, ast.Name):
            found = self.exprs(table.id, scope)
        elif isinstance(table, ast.Subscript) and isinstance(table.slice, ast.Constant) and depth < MAX_FOLLOW:
            outer = self._mappings(table.value, scope, depth + 1)
            found = []
            for e, s in outer:
                pairs = _mapping(e)
                found += [(None, s)] if pairs is None else [(v, s) for k, v in pairs if k == table.slice.value]
        return [r for e, s in found for r in self._returned_by(e, s, depth) or [(e, s)]]

    def _returned_by(self, e: ast.expr | None, scope: Scope, depth: int) -> list[tuple[ast.expr | None, Scope]]:
        """What the function of this file that ``e`` calls by its plain name may return; [] if none."""
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and depth < MAX_FOLLOW:
            bound = _binding(e.func.id, scope)
            if bound and not bound[1]:
                return self.returned(e.func.id, bound[0])
        if depth < MAX_FOLLOW:
            return self.self_returned(e, scope) if isinstance(e, ast.Call) else []
        return []

    def is_mask(self, node: ast.expr, scope: Scope, depth: int = 0) -> tuple[bool, bool]:
        """Whether an index is a boolean mask (a comparison, or a name bound to one); and followed."""
        if isinstance(node, ast.Compare):
            return True, False
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
            return self.is_mask(node.operand, scope, depth)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            left = self.is_mask(node.left, scope, depth)
            return left if left[0] else self.is_mask(node.right, scope, depth)
        if isinstance(node, ast.Tuple):
            for elt in node.elts:
                found = self.is_mask(elt, scope, depth)
                if found[0]:
                    return found
        if isinstance(node, ast.Name) and depth < MAX_FOLLOW:
            for e, s in self.exprs(node.id, scope):
                if e is not None and self.is_mask(e, s, depth + 1)[0]:
                    return True, True
        return False, False


def _static(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A ``@staticmethod``: its first parameter is no ``self``."""
    return any(type(d) is ast.Name and d.id == "staticmethod" for d in fn.decorator_list)


def method_of(receiver: ast.expr, scope: Scope) -> Scope | None:
    """The method whose first parameter ``receiver`` is (``self`` read inside it); None if it isn't."""
    method: Scope | None = scope
    while method is not None and not isinstance(method.node, _FUNCS):
        method = method.parent
    if method is None or not isinstance(receiver, ast.Name) or _first(method.node) != receiver.id:
        return None
    return method


def _first(fn: Scoped) -> str | None:
    """A function's first positional parameter (``self`` in a method), or None."""
    plain = fn.args.posonlyargs + fn.args.args if not isinstance(fn, ast.Module) else []
    return plain[0].arg if plain else None


def _class_methods(module: Scoped) -> list[tuple[ast.ClassDef, list[ast.FunctionDef | ast.AsyncFunctionDef]]]:
    """Each class of the module and its methods (nested classes too; not classes inside functions)."""
    out, stack = [], [st for st in _statements(module) if isinstance(st, ast.ClassDef)]
    while stack:
        cls = stack.pop()
        out.append((cls, [st for st in cls.body if isinstance(st, _FUNCS)]))
        stack += [st for st in cls.body if isinstance(st, ast.ClassDef)]
    return out


def _binding(name: str, scope: Scope | None) -> tuple[Scope, bool] | None:
    """The scope that binds ``name`` as read in ``scope``, and whether as a parameter; None if none."""
    while scope is not None:
        if name in scope.assigned:
            return scope, False
        if name in scope.params:
            return scope, True
        scope = scope.parent
    return None


def _union(parts: list[Values]) -> Values:
    return Values(
        tuple(v for p in parts for v in p.known),
        any(p.unknown for p in parts),
        any(p.followed for p in parts),
        tuple(o for p in parts for o in p.origins),
    )


def _lookup(node: ast.expr) -> tuple[ast.expr, list[ast.expr | None], object] | None:
    """(the mapping, the defaults, the key if a constant else _ANY) of ``M[key]`` or ``M.get(key[,
    default])``, else None. ``M`` is a name, a dict literal, a call (``f()["device"]``) or a nested
    lookup (``hyp["misc"]["device"]``)."""
    if isinstance(node, ast.Subscript) and _keyed(node.value, ast.Name, ast.Dict, ast.Call):
        return node.value, [], _key(node.slice)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        if _keyed(node.func.value, ast.Name, ast.Dict) and 1 <= len(node.args) <= 2 and not node.keywords:
            defaults: list[ast.expr | None] = [*node.args[1:]] or [None]  # no default: None when the key is missing
            return node.func.value, defaults, _key(node.args[0])
    return None


def _keyed(node: ast.expr, *kinds: type[ast.expr]) -> bool:
    """``node`` is one of ``kinds``, or a name looked up by constant keys (``CONFIG["misc"]``, a
    config dict nested in another)."""
    if isinstance(node, kinds):
        return True
    while isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        node = node.value
    return isinstance(node, ast.Name)


def _key(node: ast.expr) -> object:
    return node.value if isinstance(node, ast.Constant) else _ANY


def _mapping(e: ast.expr | None) -> list[tuple[object, ast.expr]] | None:
    """(key, value) of each entry of a dict literal or a ``dict(k=v, ...)`` call (a key that is no
    constant, or ``**more``, is _ANY); None for anything else."""
    if isinstance(e, ast.Dict):
        return [(k.value if isinstance(k, ast.Constant) else _ANY, v) for k, v in zip(e.keys, e.values, strict=True)]
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "dict" and not e.args:
        return [(k.arg if k.arg else _ANY, k.value) for k in e.keywords]
    return None


def plain_fstring(node: ast.JoinedStr) -> ast.Constant | None:
    """The text of an f-string with no placeholder (``f"cuda"``), which is a plain string."""
    parts = node.values
    return parts[0] if len(parts) == 1 and isinstance(parts[0], ast.Constant) else None


def rank_fstring(node: ast.JoinedStr) -> bool:
    """``f"{kind}:{rank}"``: a device name whose index is a rank."""
    parts = node.values
    if len(parts) != 3 or not isinstance(parts[1], ast.Constant) or parts[1].value != ":":
        return False
    first, last = parts[0], parts[2]
    return isinstance(first, ast.FormattedValue) and isinstance(last, ast.FormattedValue) and ranky(last.value)


def rank_expr(node: ast.expr) -> bool:
    """A device index taken from the rank: a rank name, or one modulo the device count (``rank % n``)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        node = node.left
    return ranky(node)


_ENV_READS = frozenset({"os.environ.get", "os.getenv"})


def ranky(node: ast.expr) -> bool:
    """A name or attribute that holds a rank (``local_rank``, ``args.rank``, ``self.gpu_id``), a call
    of a function named so with no arguments (``get_local_rank()``), or a rank read from the
    launcher's environment (``int(os.environ["LOCAL_RANK"])``)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "int" and node.args:
        return _environ_rank(node.args[0])
    if isinstance(node, ast.Call) and not node.args and not node.keywords:  # get_local_rank(), dist.get_rank()
        node = node.func
    if isinstance(node, ast.Attribute):
        name = node.attr
    elif isinstance(node, ast.Name):
        name = node.id
    else:
        return False
    low = name.lower()
    return "rank" in low or low in ("gpu", "gpu_id", "local_gpu") or low.endswith("process_index")  # Accelerate's


def _environ_rank(node: ast.expr) -> bool:
    """``os.environ["LOCAL_RANK"]``, ``os.environ.get("RANK")`` or ``os.getenv("LOCAL_RANK", ...)``."""
    key: ast.expr | None
    holder: ast.expr | None
    if isinstance(node, ast.BoolOp):  # os.environ.get("LOCAL_RANK") or 0
        return any(_environ_rank(v) for v in node.values)
    if isinstance(node, ast.Subscript):
        key, holder = node.slice, node.value
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "getenv"):
        key, holder = (node.args[0] if node.args else None), node.func.value if node.func.attr == "get" else None
    else:
        return False
    if holder is not None and not (isinstance(holder, ast.Attribute) and holder.attr == "environ"):
        return False
    return isinstance(key, ast.Constant) and isinstance(key.value, str) and "RANK" in key.value.upper()


def argparse_options(tree: ast.Module) -> dict[str, ast.expr]:
    """``dest -> default`` of every ``add_argument(..., default=...)`` in the file."""
    out: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"
        ):
            continue
        kws = {k.arg: k.value for k in node.keywords if k.arg}
        if "default" not in kws:
            continue
        dest = kws.get("dest")
        name = dest.value if isinstance(dest, ast.Constant) and isinstance(dest.value, str) else None
        if name is None:
            flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            longs = [f for f in flags if f.startswith("--")] or [f for f in flags if not f.startswith("-")] or flags
            name = longs[0].lstrip("-").replace("-", "_") if longs else None
        if name:
            out[name] = kws["default"]
    return out


def builds_cuda(node: ast.expr) -> bool:
    """An f-string, concatenation, ``.format`` or ``%`` that builds ``cuda:<something>``: the whole
    string is the device name (``f"cuda:{rank}"``), not a message that names one (``"Use GPU:
    cuda:{}".format(i)``)."""
    if isinstance(node, ast.JoinedStr):
        parts = node.values
        return len(parts) >= 2 and _text(parts[0]) == "cuda:" and isinstance(parts[1], ast.FormattedValue)
    if isinstance(node, ast.BinOp) and (text := _text(node.left)):
        return (isinstance(node.op, ast.Add) and text == "cuda:") or (
            isinstance(node.op, ast.Mod) and text.startswith("cuda:%")
        )
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return (_text(node.func.value) or "").startswith("cuda:{")
    return False


def _text(node: ast.AST | None) -> str | None:
    """A string constant's text, stripped of surrounding blanks; None if ``node`` is no string."""
    return node.value.strip() if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def calls_of(node: ast.AST, names: set[str] | frozenset[str]) -> Iterator[ast.Call]:
    """The calls under ``node`` whose callee starts with one of ``names`` (``f(x)``, ``F.apply(x)``,
    ``ext.op(x)``), in ``ast.walk`` order."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            root = n.func
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in names:
                yield n
