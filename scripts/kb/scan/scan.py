"""The migration scanner's engine: what in one Python file ties it to CUDA, NCCL or PyTorch-XLA.

Detection walks the syntax tree (``ast``), never the text, so strings, comments and docstrings
never match. Names and values are resolved by ``scannames`` (imports, aliases, followed values);
this module walks the tree once, applies the call, attribute, keyword and imports rules at each
node, and runs the fixed detectors:

- ``cuda-device-string``: a "cuda" or "cuda:N" string literal written anywhere but in a comparison
  (assigned, defaulted, passed): the line to change. Its uses as a device (``torch.device``,
  ``.to``, ``device=``, ``device_type=``, ``autocast``, ``torch.set_default_device``), followed
  through names, become the finding's related places;
- ``cuda-compare``: a comparison with a "cuda" literal (``device.type == "cuda"``,
  ``"cuda" in device``, ``device.startswith("cuda")``): false on a TPU, so a feature switches off;
- ``cuda-fstring``: an f-string (or ``+``, ``%``, ``.format``) that builds ``cuda:{...}``;
- ``nccl-string``: a "nccl" string literal (a backend argument, an argparse default, a variable);
- ``rank-device-index``: a device index taken from the rank (``.to(local_rank)``,
  ``torch.device(f"{kind}:{rank}")``, ``device_ids=[rank]``, ``set_device_index(rank)``): each
  TorchTPU process owns device 0 and any other index raises. One computed into a name
  (``device = rank % torch.cuda.device_count()``) is reported there, its uses related;
- ``init-without-backend``: ``init_process_group()`` with no backend, in a file that uses CUDA;
- ``load-without-map-location``: ``torch.load(path)`` with no ``map_location``, in a file that uses
  CUDA: a checkpoint saved from a GPU puts its tensors back on a GPU;
- ``nonzero``: ``.nonzero()`` or ``torch.nonzero`` (not NumPy's);
- ``bool-mask-index``: reading ``x[mask]`` where the index is a comparison (``x[x > 0]``, ``&``,
  ``|``, ``~`` of one), or a name bound to one;
- ``item-in-loop``: ``.item()`` or ``.tolist()`` in the body of a for or while loop or comprehension;
- ``dataloader-fork``: ``DataLoader(num_workers=N)`` with N > 0 or not a constant, in a file
  that moves things to a device (``.to``, ``.cuda``, ``torch.device``, ``device=``);
- ``compile-cudagraph-mode`` and ``fullgraph``: ``torch.compile`` (or ``module.compile``) with
  ``mode="reduce-overhead"``/``"max-autotune"``, or ``fullgraph=True``;
- ``cuda-only-guard``: a ``torch.cuda.is_available()`` that only lets CUDA-only code run, reported
  instead of its call rule (kb.scan.scanguard);
- ``cuda-tensor-type``: a legacy CUDA tensor type (``torch.cuda.FloatTensor``), by name or as the
  string ``"torch.cuda.HalfTensor"`` (``.type()``, ``torch.set_default_tensor_type()``);
- ``cuda-visible-devices``: the string ``"CUDA_VISIBLE_DEVICES"`` (set or read in ``os.environ``, or
  a key of a child's environment), which TorchTPU never reads;
- ``device-dispatch-no-tpu``: the ``raise`` a ``tpu`` device reaches in code that branches on the
  device's name over CUDA and other backends (kb.scan.scandispatch, which also keeps such arms'
  ``cuda`` comparisons quiet).

``scan_file`` reports a file that can't be read, isn't UTF-8 or doesn't parse as a ``Problem``
(path:line: reason) and never raises for bad input.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import stat
import sys
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..core.errors import Problem
from .scandefault import default_device_calls
from .scandevtest import DEVICE_TESTS, cuda_asserts, device_tests
from .scandispatch import candidate_lines, dispatches, quiet_places, tpu_lands_on
from .scanext import NOT_EXTENSIONS, extension_imports, extension_wrappers
from .scanflow import (
    CUDA_ONLY_RULES,
    LIBRARY_RULES,
    Bound,
    Called,
    DeviceCall,
    Export,
    Flows,
    Imported,
    Passed,
    Returned,
    reason,
    relative,
)
from .scanguard import (
    apply_guards,
    drop_logging_guards,
    mark_unguarded,
    soften_cuda_guards,
    soften_logged,
    soften_short_circuited,
)
from .scanhost import on_host
from .scannames import (
    ACCELERATOR_NAME,
    AUTOCAST,
    CUDAGRAPH_MODES,
    DEVICE_MODULE,
    POSITIONAL,
    RANK_FORMATTED,
    RANK_INDEX,
    FileScan,
    Finding,
    Scope,
    Values,
    argparse_options,
    builds_cuda,
    is_cuda,
    method_of,
    plain_fstring,
    rank_expr,
    rank_fstring,
    ranky,
)
from .scanoptional import optional_imports, required
from .scanray import gpu_resources, mentions_gpus
from .scanreach import reached
from .scanrules import RuleSet, ScanRule
from .scansettings import BACKEND, DEVICE, reads, settings
from .scanstmts import statements
from .scantriton import kernels, launches

if TYPE_CHECKING:
    from ..core.schema import Detector

MAX_BYTES = 5_000_000
Scanned = frozenset[tuple[str, ...]] | None  # the module names of the scanned files (kb.scan.scanflow.module_names)
_SKIP_FIELDS = frozenset({"ctx", "op", "ops", "type_comment", "annotation", "returns"})
_FIELDS: dict[type, tuple[str, ...]] = {}
_LEAVES = frozenset({ast.Name, ast.Constant, ast.Pass, ast.Break, ast.Continue, ast.Global, ast.Nonlocal, type(None)})
_CUDA_PATHS = ("torch.cuda", "torch.backends.cuda", "torch.backends.cudnn")
_DEVICE_CALLS = frozenset({"to", "autocast"})  # device_strings looks at these calls' first argument
_SET_INDEX = frozenset({"torch.accelerator.set_device_index", "torch.accelerator.set_device_idx", "torch.cuda.device"})
# device_strings reads these calls' first argument as a device (set_device(args.gpu): a rank index kept there)
_DEVICE_PATHS = frozenset({"torch.device", "torch.set_default_device", *AUTOCAST, *_SET_INDEX, "torch.cuda.set_device"})
# The functions of a device module that torch-tpu 0.2.0 keeps internal: called from user code on
# torch.tpu they raise (docs/data/errors.yml, legacy-device-api; tests/scan/test_scan_round5.py holds the two equal).
_INTERNAL_DEVICE_CALLS = frozenset(
    {"device_count", "is_available", "current_device", "set_device", "synchronize", "current_stream", "set_stream"}
    | {"device", "initial_seed", "get_rng_state"}
)
_LITERAL_DETECTORS: tuple[Detector, ...] = (
    "cuda-device-string",
    "cuda-compare",
    "nccl-string",
    "cuda-tensor-type",
    "cuda-visible-devices",
)
_LITERAL_WORDS = ("cuda", "nccl", "NCCL", "CUDA_VISIBLE_DEVICES")  # a file without these words has no literal to report
_LITERAL_STARTS = ("cuda", "torch.cuda.", "CUDA_", "NCCL")  # a literal that may be reported starts so or holds nccl
_RANK_KEYWORDS = frozenset({"output_device", "device_id"})
_NVCC_KEYWORDS = frozenset({"extra_cuda_cflags", "cuda_sources"})  # of cpp_extension.load and load_inline
_DEFAULT_SETTERS = frozenset({"torch.set_default_device", "torch.device"})  # kb.scan.scandefault
_PLACE_KEYWORDS = frozenset({"device", "device_type", "map_location", "device_id"})  # where a device goes
# str methods: a "cuda" literal given to one is text being taken apart (device.replace("cuda:", "")), not a device
_TEXT_METHODS = frozenset({"replace", "split", "rsplit", "strip", "lstrip", "rstrip", "removeprefix", "removesuffix"})
_TEXT_METHODS |= {"find", "rfind", "index", "rindex", "count", "partition", "rpartition"}
# torch.cuda's legacy tensor types (torch 2.13): without CUDA each raises TypeError when built or named
_TENSOR_TYPES = frozenset(f"torch.cuda.{t}Tensor" for t in ("BFloat16", "Bool", "Byte", "Char", "Double"))
_TENSOR_TYPES |= {f"torch.cuda.{t}Tensor" for t in ("Float", "Half", "Int", "Long", "Short")}
_OWN_DEVICE = frozenset({"current_device", "current_device_index", "current_device_idx"})


def _node_types(kind: type) -> set[type]:
    out = {kind}
    sub: type
    for sub in kind.__subclasses__():
        out |= _node_types(sub)
    return out


# Every node type worth visiting: a type-set lookup is cheaper than isinstance() on each field.
_WALK = frozenset(_node_types(ast.AST) - _LEAVES)
_CONSTANT = ast.Constant


def is_nccl(value: object) -> bool:
    """ "nccl", or a per-device backend string that names it ("cpu:gloo,cuda:nccl")."""
    if not isinstance(value, str) or "nccl" not in value.lower():
        return False
    value = value.lower()  # torch.distributed.Backend takes a name in any case ("NCCL")
    return value == "nccl" or any(part.rpartition(":")[2].strip() == "nccl" for part in value.split(","))


# the rules of CUDA objects whose every use fails with them (an Event's record, a GradScaler's step,
# a CUDAGraph's replay)
_CUDA_OBJECTS = frozenset({"cuda-events", "cuda-streams", "cuda-amp-calls", "cuda-graph-class"})
# the checkpoint loaders, each with the position of its map_location argument
_LOADS = {"torch.load": 1, "torch.hub.load_state_dict_from_url": 2, "torch.utils.model_zoo.load_url": 2}
# Lightning's entry points, whose accelerator= defaults to "auto" (the CPU on a TorchTPU host)
_LIGHTNING_ENTRIES = frozenset(
    {"lightning.Fabric", "lightning.fabric.Fabric", "lightning.fabric.fabric.Fabric", "lightning.Trainer"}
    | {"lightning.pytorch.Trainer", "lightning.pytorch.trainer.trainer.Trainer", "pytorch_lightning.Trainer"}
)
_EXTENSION_BUILDS = frozenset({"torch.utils.cpp_extension.load", "torch.utils.cpp_extension.load_inline"})
_SHELL_CALLS = frozenset(
    {f"subprocess.{f}" for f in ("run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput")}
    | {"os.system", "os.popen"}
)
_RANK_NAMES, _RANK_PATHS = frozenset({"to", "cuda"}), frozenset({"torch.device", *_SET_INDEX})  # rank_index's
# the names and paths of the calls Visitor.named_call looks at: the rest of the calls skip it
_CALL_NAMES = _TEXT_METHODS | _INTERNAL_DEVICE_CALLS | {"startswith", "init_process_group", "nonzero", "item", "tolist"}
_CALL_NAMES |= {"DataLoader", "compile", "save_state", "load_state", "format"}
_CALL_PATHS = frozenset(_LOADS) | _LIGHTNING_ENTRIES | _EXTENSION_BUILDS | _SHELL_CALLS
_CALL_PATHS |= {"torch.utils.cpp_extension.CUDAExtension"}


def _string_parts(nodes: list[ast.expr]) -> list[tuple[ast.Constant, str]]:
    """The string literals of ``nodes`` and of the lists and tuples among them (a command or sources),
    each with its text."""
    out: list[tuple[ast.Constant, str]] = []
    for node in nodes:
        if isinstance(node, (ast.List, ast.Tuple)):
            out += _string_parts(node.elts)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append((node, node.value))
    return out


def _every_n(test: ast.expr) -> bool:
    """A test with ``%`` in it (``step % 10 == 0``, ``i % n and verbose``): true every N steps."""
    t = type(test)
    if t is ast.BinOp:
        return isinstance(test.op, ast.Mod)  # type: ignore[attr-defined]
    if t is ast.Compare:
        return any(_every_n(x) for x in (test.left, *test.comparators))  # type: ignore[attr-defined]
    if t is ast.BoolOp:
        return any(_every_n(x) for x in test.values)  # type: ignore[attr-defined]
    if t is ast.UnaryOp:
        return _every_n(test.operand)  # type: ignore[attr-defined]
    return False


def _ids_like(call: ast.Call, value: ast.expr) -> bool:
    """``output_device=args.device_id`` beside ``device_ids=[args.device_id]``: the same index."""
    dumped = ast.dump(value)
    ids = (e for kw in call.keywords if kw.arg == "device_ids" for e in getattr(kw.value, "elts", ()))
    return any(ast.dump(e) == dumped for e in ids)


def _keyed_device_ids(node: ast.Dict | ast.Assign | ast.AnnAssign) -> ast.expr | None:
    """The rank-indexed value of a ``device_ids`` set before the call: ``kwargs["device_ids"] =
    [local_rank]`` or ``{"device_ids": [rank]}`` (then ``DistributedDataParallel(model, **kwargs)``);
    or the rank in a ``device_map`` set so: ``kwargs["device_map"] = {"": int(os.environ["LOCAL_RANK"])}``."""
    values: list[tuple[str, ast.expr]] = []
    keys = ("device_ids", "device_map")
    if isinstance(node, ast.Dict):
        values = [(k.value, v) for k, v in zip(node.keys, node.values, strict=True) if _is_key(k, *keys)]  # type: ignore[union-attr]
    elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
        key = node.targets[0].slice
        values = [(key.value, node.value)] if _is_key(key, *keys) else []  # type: ignore[attr-defined]
    for name, v in values:
        if name == "device_map":
            entries = v.values if isinstance(v, ast.Dict) else [v]
            if (rank := next((e for e in entries if rank_expr(e)), None)) is not None:
                return rank
        elif isinstance(v, (ast.List, ast.Tuple)) and any(_not_zero(e) for e in v.elts) or ranky(v):
            return v
    return None


def _is_key(node: ast.expr | None, *keys: str) -> bool:
    return isinstance(node, ast.Constant) and node.value in keys


def _not_zero(node: ast.expr) -> bool:
    """An index that may be other than 0: anything but the constant 0 or the process's own device
    (``current_device()``, ``current_device_index()``: 0 in every TorchTPU process)."""
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        return name not in _OWN_DEVICE
    return not (isinstance(node, ast.Constant) and node.value == 0 and not isinstance(node.value, bool))


def _fields(kind: type) -> tuple[str, ...]:
    found = _FIELDS.get(kind)
    if found is None:
        found = _FIELDS[kind] = tuple(f for f in getattr(kind, "_fields", ()) if f not in _SKIP_FIELDS)
    return found


class Visitor:
    """One walk over a module; the state (aliases, findings, file-wide facts) lives in ``FileScan``."""

    def __init__(self, state: FileScan):
        self.s = state
        self.det = state.rules.detectors
        self.devices = "cuda-device-string" in self.det or "init-without-backend" in self.det
        self.masks = "bool-mask-index" in self.det
        self.ranks = "rank-device-index" in self.det
        self.call_rules_on, self.keywords_on = bool(state.rules.calls), bool(state.rules.keywords)
        # a device_ids or a device_map set before its call
        self.keyed_ids = self.ranks and ("device_ids" in state.text or "device_map" in state.text)
        # A string literal is a leaf: looked at in place (no dispatch), and only in a file that has the words.
        self.lits = any(d in self.det for d in _LITERAL_DETECTORS) and any(w in state.text for w in _LITERAL_WORDS)
        # what calls pass to another module's functions is followed only where a device value can be written
        self.flows = self.devices and ("cuda" in state.text or "rank" in state.text)
        self.backends = self.devices and "backend" in state.text  # a backend= that may carry an nccl string
        self.placed: set[int] = set()  # ids of the expressions read as a device place
        self.methods: list[tuple[ast.Call, ast.AST]] = []  # self.f(...) calls, each with the function it is in
        self.handed: list[tuple[ast.Call, ast.AST, ast.expr]] = []  # calls given a name or an attribute
        self.dotted_names: set[str] = set()  # the names an assignment seen so far gives a dotted name (keyed)
        self.setting_keys = state.rules.unbound | {BACKEND}  # keywords a setting read elsewhere may be given to
        # a keyword rule's argument that is a parameter (the rule, its name, where, the function)
        self.pending_keywords: list[tuple[ScanRule, str, ast.AST, Scope]] = []
        # the keywords a rule with a value and no call path matches that the file names: they may be
        # set in a mapping or an attribute before the call (keyed)
        self.named = {k for k in state.rules.unbound if k in state.text}

    def run(self, tree: ast.Module) -> None:
        stack: list[ast.stmt] = list(tree.body)  # module-level imports first, for functions defined above them
        while stack:
            st = stack.pop()
            if isinstance(st, (ast.Import, ast.ImportFrom)):
                self.s.imports(st)
            elif isinstance(st, (ast.If, ast.Try, ast.With)):
                stack += [*st.body, *getattr(st, "orelse", ()), *getattr(st, "finalbody", ())]
                stack += [s for h in getattr(st, "handlers", ()) for s in h.body]
        self.s.module = Scope(tree, None)
        if "cuda-extension-import" in self.det:
            self.extensions(tree)
        self.visit(tree, self.s.module, False)
        s = self.s
        for name in self.named.intersection(s.options):  # add_argument("--name", default=v): set before the call
            self.keyword_value(name, s.options[name], s.options[name], None, Scope(tree, None))
        for rule, name, where, function in self.pending_keywords:  # matmul(..., use_fast_accum=True)
            for arg, scope, _ in self.arguments(function, name):
                self.keyword_match(rule, None, where, s.values(arg, scope))
        if s.default_devices:  # each tensor and module made on a default device set to cuda
            for origin, call in default_device_calls(tree, s.default_devices, s.resolve):
                for rule in s.rules.detectors.get("cuda-device-string", ()):
                    s.use(origin, call, rule)
        direct = len(s.links)  # the links so far: of values a function holds itself, not one its callers pass
        for use, name, function in s.pending_params:  # every call is known now
            for arg, scope, via in self.arguments(function, name):
                v = s.values(arg, scope)
                self.device_uses(use, None, v)
                if ranky(arg) and not _devices(v):  # step(batch, self.rank) into def step(batch, device): .to(device)
                    for rule in s.rules.detectors.get("rank-device-index", ()):
                        s.use(arg, use, rule)
                for at in (arg, *via):  # and each call that hands it on (unless a device place already)
                    if id(at) not in self.placed:
                        self.device_uses(at, None, v)
        if s.uses_cuda:
            for call in s.pending_init:
                s.detect("init-without-backend", call)
            for call in s.pending_load:
                s.detect("load-without-map-location", call)
        for call in s.pending_nonzero if s.moves_to_device or s.uses_cuda else ():
            s.detect("nonzero", call)
        for call, scope in s.pending_fullgraph:
            if any(_breaks_graph(fn) for fn in _compiled(s, call, scope)):
                s.detect("fullgraph", call)
        if s.moves_to_device:
            for call, followed in s.pending_loader:
                s.detect("dataloader-fork", call, followed)
        self.kernels_and_resources(tree)
        self.imports_used(tree)
        if s.device_tests and "assert-is-cuda" in self.det:
            _cuda_asserts(s, tree)
        raising = sorted(k for k in s.findings if k[2] in s.rules.raising)  # kb.scan.scanreach
        uses = _import_uses(s) if s.imported_uses else []
        uses = sorted(uses + _device_moves(s, s.links[:direct])) if direct or s.moves else uses
        uses = sorted(uses + _nccl_inits(s)) if s.nccl_inits else uses
        if raising or uses:
            calls = [(call, scope.node) for made in s.calls.values() for call, scope in made]
            # the calls of a function failing inside, and the module's functions that do (for other files)
            s.reached = reached(tree, raising, calls + self.methods, uses, s.failed, self.handed)

    def imports_used(self, tree: ast.Module) -> None:
        """The uses of what a reported import binds: subclasses, instances' calls, an optional import's
        calls (before the failures are followed: they fail, not the import) and a kernel package's calls."""
        s = self.s
        if s.imported:
            _subclass_uses(s, tree)
        for names in s.instances.values() if s.imported else ():
            for name in dict.fromkeys(n for n in names if n in s.imported):
                for call in instance_calls(s, name):
                    s.imported_use(name, call)
        optional_imports(s, tree)
        if s.imported_uses and "kernel-package-call" in self.det:
            _kernel_calls(s)

    def kernels_and_resources(self, tree: ast.Module) -> None:
        """Triton kernels and their launches (kb.scan.scantriton), and Ray's GPU resource (kb.scan.scanray)."""
        s, roots = self.s, {m.split(".")[0] for m in self.s.aliases.values()}
        if "triton" in roots and ("triton-kernel" in self.det or "triton-launch" in self.det):
            defined = kernels(tree, s.resolve)
            for fn in defined:
                s.detect("triton-kernel", fn.decorator_list[0])  # the decorator: the line that says Triton
            for call in launches(tree, s.text, {fn.name for fn in defined}, {*s.aliases, *s.relative}):
                s.detect("triton-launch", call)
        if "ray-gpu-resource" in self.det and mentions_gpus(s.text, "ray" in roots):
            for node in gpu_resources(tree, "ray" in roots):
                s.detect("ray-gpu-resource", node)

    def extensions(self, tree: ast.Module) -> None:
        """Each compiled CUDA extension the module imports (kb.scan.scanext), unless a rule already
        reports that import: a finding, each use of the name it binds one of its places."""
        s = self.s
        taken = {key[0] for key in s.findings}
        first: ast.stmt | None = None
        for st, name, module in extension_imports(tree, s.resolve, s.text):
            if st.lineno not in taken:
                s.detect("cuda-extension-import", st)
                s.imported[name] = st
                s.extensions[(name, st.lineno)] = module  # each import: forward and backward may each import it
                first = first or st
        if first is not None:  # dynamicconvFunction.apply(x, w) in this file is a place of the import too
            for st in tree.body:  # ext_c = exllamav2_ext: its uses are the import's places too
                if type(st) is ast.Assign and type(st.value) is ast.Name and st.value.id in s.imported:
                    s.imported.update({t.id: s.imported[st.value.id] for t in st.targets if type(t) is ast.Name})
            s.wrappers = extension_wrappers(tree, s.resolve, {name for name, _ in s.extensions})
            for name in s.wrappers:
                s.imported.setdefault(name, first)

    def arguments(
        self, function: Scope, name: str, depth: int = 0, via: tuple[ast.expr, ...] = ()
    ) -> list[tuple[ast.expr, Scope, tuple[ast.expr, ...]]]:
        """What this file's calls pass as ``function``'s parameter ``name``, and where a call passes
        its own caller's parameter on (``make_noise(n, device)`` inside ``train(..., device)``), what
        the calls of that caller pass, up to three calls away; each with the arguments it went
        through (``via``: ``device`` of the ``make_noise`` call)."""
        out = []
        for arg, scope in self.s.passed(function, name):
            out.append((arg, scope, via))
            if depth < 2 and type(arg) is ast.Name and (caller := self.s.parameter(arg.id, scope)) is not None:
                out += self.arguments(caller, arg.id, depth + 1, (*via, arg))
        return out

    def visit(self, node: ast.AST, scope: Scope, loop: bool) -> None:
        handler = _HANDLERS.get(type(node))
        if handler is None:
            self.children(node, scope, loop)
        else:
            handler(self, node, scope, loop)

    def children(self, node: ast.AST, scope: Scope, loop: bool) -> None:
        kind = type(node)
        fields = _FIELDS.get(kind) or _fields(kind)
        dispatch = _DISPATCH  # what visit() would call, looked up here: no call of visit() per child
        lits = self.lits
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    t = type(item)
                    if (handler := dispatch.get(t)) is not None:
                        handler(self, item, scope, loop)
                    elif lits and t is _CONSTANT:
                        self.literal(item)
            elif (handler := dispatch.get(type(value))) is not None:
                handler(self, value, scope, loop)
            elif lits and type(value) is _CONSTANT:
                self.literal(value)

    def attribute_node(self, node: ast.Attribute, scope: Scope, loop: bool) -> None:
        if node.attr in ("is_cuda", "is_cpu"):
            self.s.device_tests.append(node)
        self.attribute(node, *self.s.resolve(node))
        root = node.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if type(root) is ast.Name and root.id in self.s.imported:  # amp.normalization.FusedLayerNorm
            self.s.imported_use(root.id, node)
        if type(root) not in _LEAVES:
            self.visit(root, scope, loop)

    def call_node(self, node: ast.Call, scope: Scope, loop: bool) -> None:
        func = node.func
        if type(func) is ast.Name:
            self.s.calls.setdefault(func.id, []).append((node, scope))
        elif type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id in ("self", "cls"):
            self.methods.append((node, scope.node))
            self.s.self_calls.setdefault(func.attr, []).append(node)
            self.s.method_calls.setdefault(func.attr, []).append((node, scope))
        elif type(func) is ast.Attribute and type(func.value) is ast.Name:
            root = func.value.id
            if root in self.s.aliases or root in self.s.relative:  # import ext / from . import ext; ext.gemv(x)
                self.s.module_calls.setdefault(root, []).append(node)  # runs the module's code
            elif root[:1].isupper():  # Base.__init__(self, ...): maybe a method of a class of the module
                self.methods.append((node, scope.node))
        elif type(func) is ast.Attribute and type(func.value) is ast.Call and type(func.value.func) is ast.Name:
            self.s.loaded_calls.setdefault(func.value.func.id, []).append(node)  # get_backend().op(x)
        path, chain = self.s.resolve(func)
        if self.flows and (node.args or node.keywords):
            if path is not None and not path.startswith("torch"):
                self.s.outgoing.append((node, scope, path))
            elif path is None and _relative_callee(self.s, func):
                self.s.outgoing.append((node, scope, ""))
        self.call(node, path, chain, scope, loop)
        if isinstance(func, ast.Attribute):  # the callee, resolved once
            self.attribute(func, path, chain)
            while isinstance(func, ast.Attribute):
                func = func.value
        if type(func) is ast.Name and func.id in self.s.imported:  # FusedAdam(...), apex.amp.initialize(...)
            self.s.imported_use(func.id, node)
        if type(func) not in _LEAVES:
            self.visit(func, scope, loop)
        lits = self.lits
        for arg in node.args:
            t = type(arg)
            if t is ast.Name or t is ast.Attribute:  # f(worker), timer.start(self.sync): may run it later
                self.handed.append((node, scope.node, arg))
            if t not in _LEAVES:
                self.visit(arg, scope, loop)
            elif lits and t is _CONSTANT:
                self.literal(arg)  # type: ignore[arg-type]  # a Constant
                callee = node.func  # handle.flat_param_to("cuda"): a function making this call fails
                if type(callee) is ast.Attribute and _moves_to(callee.attr) and is_cuda(arg.value):  # type: ignore[attr-defined]
                    self.s.moves.append((arg, node))
        for kw in node.keywords:
            v = kw.value
            t = type(v)
            if t is ast.Name or t is ast.Attribute:
                self.handed.append((node, scope.node, v))
                if t is ast.Attribute and kw.arg in self.setting_keys:
                    self.s.setting_reads.append((kw.arg, v, node))  # type: ignore[arg-type]  # an Attribute
            if t not in _LEAVES:
                self.visit(v, scope, loop)
            elif lits and t is _CONSTANT:
                self.literal(v)  # type: ignore[arg-type]  # a Constant

    def constant_node(self, node: ast.Constant, scope: Scope, loop: bool) -> None:
        """A literal reached by a direct visit (a default, a loop's test): as in ``children``."""
        if self.lits:
            self.literal(node)

    def literal(self, node: ast.Constant) -> None:
        value = node.value
        if type(value) is not str or not value.startswith(_LITERAL_STARTS) and "nccl" not in value:
            return  # no is_cuda, is_nccl, tensor type or CUDA_VISIBLE_DEVICES
        if id(node) in self.s.quiet:
            return
        if is_cuda(value):
            self.s.detect("cuda-device-string", node)
        elif is_nccl(value):
            self.s.detect("nccl-string", node)
        elif value in _TENSOR_TYPES:
            self.s.detect("cuda-tensor-type", node)
        elif value == "CUDA_VISIBLE_DEVICES":
            self.s.detect("cuda-visible-devices", node)

    def expression_statement(self, node: ast.Expr, scope: Scope, loop: bool) -> None:
        if not isinstance(node.value, ast.Constant):  # a bare string is a docstring or a comment
            self.visit(node.value, scope, loop)

    def compare(self, node: ast.Compare, scope: Scope, loop: bool) -> None:
        for operand in (node.left, *node.comparators):
            if isinstance(operand, ast.Constant) and is_cuda(operand.value):  # not "cudagraph_pass"
                if id(node) not in self.s.arms:  # an arm of a device dispatch (kb.scan.scandispatch)
                    self.s.detect("cuda-compare", node)
                    self.s.device_tests.append(node)  # assert x.device.type == "cuda" (kb.scan.scandevtest)
                self.s.quiet.add(id(operand))
            elif isinstance(operand, ast.Constant) and operand.value == "cpu":
                self.s.device_tests.append(node)
        for op, listed in zip(node.ops, node.comparators, strict=True):  # kind in ("cuda", "xpu"), impl in [...]
            if type(op) in (ast.In, ast.NotIn) and type(listed) in (ast.List, ast.Tuple, ast.Set):
                cudas = [e for e in listed.elts if type(e) is ast.Constant and is_cuda(e.value)]  # type: ignore[attr-defined]
                self.s.quiet.update(id(e) for e in cudas)  # a choice checked, not a device written
                if cudas and _device_like(node.left) and id(node) not in self.s.arms:
                    self.s.detect("cuda-compare", node)
        if self.ranks and len(node.comparators) == 1 and _index_is_rank(node.left, node.comparators[0]):
            self.s.detect("rank-device-index", node)  # device.index != local_rank: expects index = rank
        self.children(node, scope, loop)

    def joined(self, node: ast.JoinedStr, scope: Scope, loop: bool) -> None:
        if self.lits and (text := plain_fstring(node)):  # f"cuda": a literal written as an f-string
            self.literal(text)
        elif builds_cuda(node):
            self.s.detect("cuda-fstring", node)
        elif self.ranks and rank_fstring(node):
            self.s.detect("rank-device-index", node)
        for part in node.values:  # the literal parts are text, not values
            if isinstance(part, ast.FormattedValue):
                self.visit(part, scope, loop)

    def subscript(self, node: ast.Subscript, scope: Scope, loop: bool) -> None:
        if self.masks and isinstance(node.ctx, ast.Load):
            mask, followed = self.s.is_mask(node.slice, scope)
            if mask:
                self.s.detect("bool-mask-index", node, followed)
        key = node.slice
        if type(key) is ast.Constant and is_cuda(key.value):  # rng_state["cuda"]: a key, not a device
            self.s.quiet.add(id(key))
        self.children(node, scope, loop)

    def formatted(self, node: ast.BinOp, scope: Scope, loop: bool) -> None:
        if type(node.op) is ast.Mod and type(node.right) is ast.Call and ranky(node.left):
            self.s.rank_counts.append(node.right)  # rank % torch.cuda.device_count(): a per-rank index
        if builds_cuda(node):
            self.s.detect("cuda-fstring", node)
            self.s.quiet.add(id(node.left))
        self.children(node, scope, loop)

    def if_node(self, node: ast.If, scope: Scope, loop: bool) -> None:
        """The body of ``if step % N == 0:`` runs every N steps, not every one: a host read there
        (logging the loss) is not an ``item-in-loop``."""
        self.visit(node.test, scope, loop)
        if not node.orelse and type(node.test) is ast.Compare:
            self.s.plain_ifs.append(node)  # one a cuda-compare may guard (kb.scan.scanguard.soften_cuda_guards)
        every_n = _every_n(node.test)
        for st in node.body:
            self.visit(st, scope, loop and not every_n)
        if node.orelse and self._has_accelerator(node.test):
            self._quiet_strings(node.orelse)
        for st in node.orelse:
            self.visit(st, scope, loop)

    def if_expression(self, node: ast.IfExp, scope: Scope, loop: bool) -> None:
        """``accel if hasattr(torch, "accelerator") else "cuda"``: see :meth:`_has_accelerator`."""
        if self._has_accelerator(node.test):
            self._quiet_strings([node.orelse])
        self.children(node, scope, loop)

    def _has_accelerator(self, test: ast.expr) -> bool:
        """``hasattr(torch, "accelerator")``: true on every TorchTPU host (torch 2.13 has
        ``torch.accelerator``), so the other branch, a fallback for an older torch, never runs there."""
        return (
            type(test) is ast.Call
            and type(test.func) is ast.Name
            and test.func.id == "hasattr"
            and len(test.args) == 2
            and type(test.args[1]) is ast.Constant
            and test.args[1].value == "accelerator"
            and self.s.resolve(test.args[0])[0] == "torch"
        )

    def _quiet_strings(self, nodes: list[ast.stmt] | list[ast.expr]) -> None:
        """The "cuda" literals of a branch that never runs on a TorchTPU host are not reported."""
        for node in nodes:
            for inner in ast.walk(node):
                if type(inner) is ast.Constant and is_cuda(inner.value):
                    self.s.quiet.add(id(inner))
                    self.s.fallbacks.add(id(inner))

    def raise_node(self, node: ast.Raise, scope: Scope, loop: bool) -> None:
        """What a ``raise`` builds runs once, on the way out: no ``item-in-loop`` there."""
        self.children(node, scope, False)

    def loop_node(self, node: ast.For | ast.AsyncFor | ast.While, scope: Scope, loop: bool) -> None:
        if isinstance(node, ast.While):
            self.visit(node.test, scope, True)
        else:
            self.visit(node.target, scope, loop)
            self.visit(node.iter, scope, loop)
        for st in node.body:
            self.visit(st, scope, True)
        for st in node.orelse:
            self.visit(st, scope, loop)

    def comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp, scope: Scope, loop: bool
    ) -> None:
        for i, gen in enumerate(node.generators):
            self.visit(gen.iter, scope, loop if i == 0 else True)
            for cond in gen.ifs:
                self.visit(cond, scope, True)
        for part in (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,):
            self.visit(part, scope, True)

    def import_node(self, node: ast.Import | ast.ImportFrom, scope: Scope, loop: bool) -> None:
        self.s.imports(node)
        if not _standard(node):  # may load an extension the tree builds (_guarded_imports)
            self.s.import_nodes.append(node)
        if type(node) is ast.ImportFrom and node.module == "torch.cuda" and not node.level:  # the name's one source
            if any(f"torch.cuda.{a.name}" in _TENSOR_TYPES for a in node.names):
                self.s.detect("cuda-tensor-type", node)

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, scope: Scope, loop: bool) -> None:
        for dec in getattr(node, "decorator_list", ()):
            if type(dec) is ast.Call:
                self.s.decorated[id(dec)] = node  # type: ignore[assignment]  # a def: lambdas have no decorators
            self.visit(dec, scope, loop)
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is None:
                continue
            if (
                type(default) is ast.Constant
                and is_cuda(default.value)
                and _only_compared(node, _param(node.args, default))
            ):
                self.s.quiet.add(id(default))  # impl="cuda", only ever compared: an option, not a device
            self.visit(default, scope, loop)
        inner = Scope(node, scope)
        for st in node.body if isinstance(node.body, list) else [node.body]:
            self.visit(st, inner, False)

    def attribute(self, node: ast.Attribute, path: str | None, chain: str) -> None:
        """The outermost attribute of a chain: each prefix of it is matched (same line and column)."""
        s = self.s
        memo = s.rules.prefixes
        hit = memo.get((path, chain))
        if hit is None:
            if len(memo) > 100_000:
                memo.clear()
            hit = memo[(path, chain)] = _prefix_rules(s.rules, path, chain)
        cuda, rules = hit
        if cuda:
            s.uses_cuda = True
            if path and ".".join(path.split(".", 3)[:3]) in _TENSOR_TYPES:  # reported instead of torch.cuda.*
                s.detect("cuda-tensor-type", node)
        for rule in rules:
            s.add(node, rule)

    def call(self, node: ast.Call, path: str | None, chain: str, scope: Scope, loop: bool) -> None:
        s = self.s
        func = node.func
        method = type(func) is ast.Attribute
        name = chain.rpartition(".")[2]
        if self.call_rules_on:
            if path is None and type(func) is ast.Name and func.id not in self.s.aliases:
                path, chain = self.alias(func.id, scope, path, chain)  # runner = mp.start_processes; runner(...)
            self.call_rules(node, path, chain, scope)
        if self.keywords_on and (node.keywords or path in POSITIONAL):
            self.keywords(node, path, chain, scope)
        if (method and name in ("to", "cuda")) or path == "torch.device":
            s.moves_to_device = True
        if not self.det:
            return
        if self.ranks and (node.keywords or node.args and (name in _RANK_NAMES or path in _RANK_PATHS)):
            self.rank_index(node, path, name, method)
            if node.keywords:
                self.held_ranks(node, scope)
        if self.devices and (node.keywords or (node.args and (name in _DEVICE_CALLS or path in _DEVICE_PATHS))):
            self.device_strings(node, path, name, method, scope)
        if self.backends and node.keywords and name != "init_process_group":  # a library's own process-group setup
            self.backend_uses(node, scope, positional=False)
        if name in _CALL_NAMES or path in _CALL_PATHS:  # what the rest looks for: most calls are none of it
            self.named_call(node, path, name, method, scope, loop)

    def named_call(self, node: ast.Call, path: str | None, name: str, method: bool, scope: Scope, loop: bool) -> None:
        """The calls some detector knows by name or path (``_CALL_NAMES``, ``_CALL_PATHS``)."""
        s, func = self.s, node.func
        if method and name in _TEXT_METHODS:  # what replace() puts in may still become a device
            s.quiet.update(id(a) for a in node.args[: 1 if name == "replace" else None] if type(a) is ast.Constant)
        if method and name == "startswith" and node.args and isinstance(node.args[0], ast.Constant):
            self.startswith_cuda(node, node.args[0])
        if name == "init_process_group" and (path is None or path.startswith("torch.distributed")):
            if not node.args and all(k.arg not in ("backend", None) for k in node.keywords):
                s.pending_init.append(node)
            if node.args and type(node.args[0]) is ast.Attribute:  # init_process_group(args.dist_backend)
                s.setting_reads.append((BACKEND, node.args[0], node))
            self.backend_uses(node, scope)
        elif name == "nonzero" and (path.startswith("torch") if path else method):
            self.nonzero(node, func, method, scope)
        elif name in ("item", "tolist") and loop and method and not node.args and not node.keywords:
            if not on_host(func.value, scope.node, s.resolve):  # type: ignore[attr-defined]  # a method: an Attribute
                s.detect("item-in-loop", node)
        elif name == "DataLoader":
            self.dataloader(node, scope)
        elif (
            path in _LOADS
            and len(node.args) <= _LOADS[path]
            and all(k.arg not in ("map_location", None) for k in node.keywords)
        ):
            s.pending_load.append(node)
        elif name == "compile" and (path == "torch.compile" or (path is None and method)):
            self.compile_call(node, scope)
        elif name in ("save_state", "load_state") and method and self.accelerator(func.value, scope):  # type: ignore[attr-defined]
            s.detect("accelerate-rng-state", node)
        elif name == "format" and builds_cuda(node):
            s.detect("cuda-fstring", node)
            s.quiet.add(id(func.value))  # type: ignore[attr-defined]  # builds_cuda saw an attribute
        elif path in _LIGHTNING_ENTRIES and all(k.arg not in ("accelerator", None) for k in node.keywords):
            s.detect("lightning-default-accelerator", node)  # no accelerator=, no **kwargs: "auto"
        elif path in _EXTENSION_BUILDS:
            self.extension_build(node, scope)
        elif path == "torch.utils.cpp_extension.CUDAExtension":  # the module it builds (kb.scan.scanext)
            s.declared += _built(node)
        elif path in _SHELL_CALLS:
            self.shell_command(node)
        elif method and name in _INTERNAL_DEVICE_CALLS and "device-module-call" in self.det:
            self.device_module_call(node, scope)

    def compile_call(self, node: ast.Call, scope: Scope) -> None:
        """``torch.compile(..., mode="reduce-overhead")`` or ``fullgraph=True``, values followed."""
        s = self.s
        for kw in node.keywords:
            v = s.values(kw.value, scope) if kw.arg in ("mode", "fullgraph") else None
            if v is None:
                continue
            if kw.arg == "mode" and any(x in CUDAGRAPH_MODES for x in v.known):
                s.detect("compile-cudagraph-mode", node, v.followed)
            elif kw.arg == "fullgraph" and any(x is True for x in v.known):
                s.pending_fullgraph.append((node, scope))  # reported where a graph break is in sight

    def accelerator(self, node: ast.expr, scope: Scope) -> bool:
        """``node`` holds an Accelerate ``Accelerator``: a name or attribute bound to ``Accelerator(...)``
        (``self.accelerator`` set in another method too), or spelled ``accelerator`` in a file that
        imports Accelerate."""
        s = self.s
        spelled = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
        if spelled == "accelerator" and any(p.split(".")[0] == "accelerate" for p in s.aliases.values()):
            return True
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            found = s.exprs(f"{node.value.id}.{node.attr}", scope) or s.members(node, scope)
        else:
            found = s.exprs(node.id, scope) if isinstance(node, ast.Name) else []
        return any(
            isinstance(e, ast.Call)
            and (s.resolve(e.func)[0] or "").startswith("accelerate.")
            and (s.resolve(e.func)[0] or "").endswith(".Accelerator")
            for e, _ in found
        )

    def alias(self, name: str, scope: Scope, path: str | None, chain: str) -> tuple[str | None, str]:
        """What a plain name called in ``scope`` holds when its one assignment there is a dotted
        name (``runner = torch.multiprocessing.start_processes``); else ``path`` and ``chain`` unchanged."""
        held = scope.assigned.get(name) if name in self.dotted_names else None
        if held is not None and len(held) == 1 and type(held[0]) is ast.Attribute:
            found, dotted = self.s.resolve(held[0])
            if found is not None:
                return found, dotted
        return path, chain

    def call_rules(self, node: ast.Call, path: str | None, chain: str, scope: Scope) -> None:
        s = self.s
        for rule in s.rules.calls.match(path, chain):
            s.add(node, rule)
            if rule.id in _CUDA_OBJECTS and (bound := _bound_name(scope, node)) is not None:
                s.imported[bound] = node  # timer = torch.cuda.Event(...): each use of timer is a place

    def shell_command(self, node: ast.Call) -> None:
        """``subprocess.run(["nvidia-smi", ...])`` or ``os.system("nvidia-smi ...")``: NVIDIA's tool."""
        command = node.args[:1]
        if command and isinstance(command[0], (ast.List, ast.Tuple)):
            command = command[0].elts[:1]  # the program; later items are its arguments
        for part, text in _string_parts(command):
            if text.split(maxsplit=1)[:1] == ["nvidia-smi"]:
                self.s.detect("nvidia-smi", part)

    def extension_build(self, node: ast.Call, scope: Scope) -> None:
        """``cpp_extension.load(sources=[... .cu])`` (a name anywhere in the sources, as in
        ``os.path.join(here, "k.cu")``) or with nvcc's flags (``extra_cuda_cflags=``, ``cuda_sources=``
        of ``load_inline``), reported at the call, or ``with_cuda=True``, at the keyword: a
        CUDA build at run time. A module-level name bound to the result (``fused = load(...)``) is a
        CUDA extension: each use of it is a place of that finding."""
        sources = [k.value for k in node.keywords if k.arg == "sources"] + node.args[1:2]
        cuda = any(
            isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value.endswith((".cu", ".cuh"))
            for expr in sources
            for c in ast.walk(expr)
        )
        flag = [
            k for k in node.keywords if k.arg == "with_cuda" and type(k.value) is ast.Constant and k.value.value is True
        ]
        cuda = cuda or any(k.arg in _NVCC_KEYWORDS for k in node.keywords)  # nvcc's flags, load_inline's CUDA code
        if cuda or flag:
            self.s.detect("cuda-sources", node if cuda else flag[0])
            if (name := _bound_name(scope, node)) is not None:
                self.s.imported[name] = node

    def startswith_cuda(self, node: ast.Call, first: ast.Constant) -> None:
        """``device.startswith("cuda")``: a comparison with cuda, the string its finding speaks for."""
        if is_cuda(first.value) and id(node) not in self.s.arms:  # not an arm of a device dispatch
            self.s.detect("cuda-compare", node)
            self.s.quiet.add(id(first))

    def device_module_call(self, node: ast.Call, scope: Scope) -> None:
        """``module.current_device()`` where ``module`` is the device module picked by name."""
        if DEVICE_MODULE in self.s.values(node.func.value, scope).known:  # type: ignore[attr-defined]  # a method
            self.s.detect("device-module-call", node)
        else:  # ``get_torch_device().set_device(i)``: the module may come from another file (kb.scan.scanflow)
            self.s.device_calls.append(node)

    def keywords(self, node: ast.Call, path: str | None, chain: str, scope: Scope) -> None:
        # (name, value, where): a finding is reported at the argument itself, the part to edit, which
        # in a call over several lines is not on the call's first line
        pairs: list[tuple[str, ast.expr, ast.AST]] = [(k.arg, k.value, k) for k in node.keywords if k.arg]
        if path in POSITIONAL:
            pairs += [(name, arg, arg) for name, arg in zip(POSITIONAL[path], node.args, strict=False)]
        for kname, expr, where in pairs:
            self.keyword_value(kname, expr, where, (path, chain), scope)

    def keyword_value(
        self, kname: str, expr: ast.expr, where: ast.AST, call: tuple[str | None, str] | None, scope: Scope
    ) -> None:
        """``kname=expr`` given at ``where`` to ``call`` (its path and chain; None: set in a mapping
        or an attribute, a call's arguments to be, which only rules with no call path match)."""
        s = self.s
        for rule in s.rules.keywords.get(_SPELLINGS.get(kname, kname), ()):
            if rule.call is not None and (call is None or not rule.call.matches(*call)):
                continue
            if not rule.value:
                if call is not None:
                    s.add(where, rule)
                continue
            for item in expr.elts if isinstance(expr, (ast.Tuple, ast.List)) else (expr,):  # device_types=("cuda",)
                if type(item) is ast.Compare and True in rule.value:  # load_in_4bit=args.bits == 4: true in some runs
                    s.add(where, rule)
                    continue
                self.keyword_match(rule, item, where, s.values(item, scope))
                if type(item) is ast.Name and (function := s.parameter(item.id, scope)) is not None:
                    self.pending_keywords.append((rule, item.id, where, function))  # what the calls pass

    def keyword_match(self, rule: ScanRule, item: ast.expr | None, where: ast.AST, v: Values) -> None:
        """A keyword rule's value among what ``item`` (None: a value a call passes) holds: a finding
        where it is written, used at ``where``."""
        s = self.s
        for value, origin in zip(v.known, v.origins, strict=True):
            if value in rule.value:
                if origin is item:
                    s.add(where, rule)
                    s.quiet.add(id(item))  # the rule speaks for the literal: not a device string too
                else:  # used at the argument, which in a call over several lines has its own line
                    s.use(origin, where, rule)

    def keyed(self, node: ast.Dict | ast.Assign | ast.AnnAssign, scope: Scope, loop: bool) -> None:
        """A keyword set before the call: ``{"attn_implementation": v}``, ``kwargs["name"] = v``,
        ``config.name = v``, a dataclass field ``name: str = "v"`` (or ``field(default="v")``)."""
        if self.named:
            pairs: list[tuple[str, ast.expr, ast.AST]] = []
            if isinstance(node, ast.Dict):
                pairs = [
                    (k.value, v, v)
                    for k, v in zip(node.keys, node.values, strict=True)
                    if isinstance(k, ast.Constant) and type(k.value) is str
                ]
            elif node.value is not None:
                value = _field_default(node.value)
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    name = _target_name(target, isinstance(node, ast.AnnAssign))
                    pairs += [(name, value, value)] if name else []
            for kname, expr, where in pairs:
                if kname in self.named:
                    self.keyword_value(kname, expr, where, None, scope)
        if self.keyed_ids and (ids := _keyed_device_ids(node)) is not None:  # kwargs["device_ids"] = [local_rank]
            self.s.detect("rank-device-index", ids)
        if type(node) is ast.Assign and type(node.value) is ast.Attribute and type(node.targets[0]) is ast.Name:
            self.dotted_names.add(node.targets[0].id)  # runner = mp.start_processes: a call of runner is one of it
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and (attr := _self_attr(node.targets[0])):
            made = [_made_by(v) for v in _branches(node.value) if _made_by(v)]
            if made:  # self.norm = RMSNorm(...), self.fill = fill_kv_cache: each self.norm(...) runs what it is
                self.s.instances.setdefault(attr, []).extend(made)
        self.children(node, scope, loop)

    def device_strings(self, node: ast.Call, path: str | None, name: str, method: bool, scope: Scope) -> None:
        s = self.s
        places: list[ast.expr] = []
        if node.args and (path in _DEVICE_PATHS or (method and name == "to") or (path is None and name == "autocast")):
            places.append(node.args[0])
        for kw in node.keywords:
            if kw.arg in _PLACE_KEYWORDS or (kw.arg == "type" and path == "torch.device"):
                places.append(kw.value)
                s.moves_to_device = True
            elif kw.arg == "device_map" and isinstance(kw.value, ast.Dict):  # {"": device}: where weights go
                for v in kw.value.values:  # used where the map names it, the line to read
                    if type(v) is ast.Name:
                        self.device_uses(v, v, s.values(v, scope))
        if path in _DEFAULT_SETTERS and node.args and is_cuda(getattr(node.args[0], "value", None)):
            s.default_devices[id(node)] = node.args[0]
        for expr in places:
            self.placed.add(id(expr))
            self.device_uses(node, expr, s.values(expr, scope))
            if type(expr) is ast.Call:  # what another module's function returns, maybe (file_flows)
                s.returned_uses.append((node, expr))
            elif type(expr) is ast.Name:  # device = utils.init_device(args), then x.to(device)
                s.returned_uses += [(node, e) for e, _ in s.exprs(expr.id, scope) if type(e) is ast.Call]
            # a parameter holds what the calls pass it; one named for the rank is reported where it is used
            if type(expr) is ast.Name and not ranky(expr) and (function := s.parameter(expr.id, scope)) is not None:
                s.pending_params.append((node, expr.id, function))
            elif type(expr) is ast.Attribute:  # self.device, set from a parameter: self.device = device in __init__
                if type(expr.value) is ast.Name and expr.value.id not in ("self", "cls"):
                    s.setting_reads.append((DEVICE, expr, node))  # config.device, set in another file
                members = s.members(expr, scope)
                for e, inner in members:
                    if type(e) is ast.Name and not ranky(e) and (function := s.parameter(e.id, inner)) is not None:
                        s.pending_params.append((node, e.id, function))
                if not members and type(expr.value) is ast.Name and expr.value.id == "self":
                    s.inherited_uses.append((node, expr, scope))  # set by a base class of another file, maybe

    def device_uses(self, node: ast.AST, expr: ast.expr | None, v: Values) -> None:
        """``node`` puts work on the device ``expr`` holds (None: a value passed from a call site): a
        use of each cuda string it was written as."""
        s = self.s
        for value, origin in zip(v.known, v.origins, strict=True):
            if id(origin) in s.fallbacks:  # written in a branch a TorchTPU host never takes
                continue
            if is_cuda(value):
                s.uses_cuda = True
            if origin is expr:  # a literal in place is reported where it is written
                if is_cuda(value):
                    s.moves.append((origin, node))
                continue
            if is_cuda(value):
                for name in ("cuda-device-string", "cuda-fstring"):
                    for rule in s.rules.detectors.get(name, ()):
                        s.use(origin, node, rule)
            elif value in (RANK_FORMATTED, RANK_INDEX):
                for rule in s.rules.detectors.get("rank-device-index", ()):
                    s.use(origin, node, rule)
            elif value == ACCELERATOR_NAME and type(origin) is ast.Call:  # DeepSpeed's CPU accelerator's device
                for rule in s.rules.calls.match(*s.resolve(origin.func)):
                    s.use(origin, node, rule)

    def backend_uses(self, node: ast.Call, scope: Scope, positional: bool = True) -> None:
        """A backend argument that holds a "nccl" written elsewhere: a use of that literal (the first
        positional argument too, when ``positional``: ``init_process_group("nccl")``)."""
        s = self.s
        given: list[tuple[ast.expr, ast.keyword | ast.Call]] = [
            (k.value, k) for k in node.keywords if k.arg == "backend"
        ]
        given += [(a, node) for a in node.args[:1]] if positional else []
        for expr, at in given:
            v = s.values(expr, scope)
            for value, origin in zip(v.known, v.origins, strict=True):
                if is_nccl(value) and _called(node) in _GROUP_STARTS:
                    s.nccl_inits.append((origin, node))  # the call raises on a TPU host (kb.scan.scanreach)
                if origin is not expr and is_nccl(value):
                    for rule in s.rules.detectors.get("nccl-string", ()):
                        s.use(origin, node, rule)
                        if at.lineno != node.lineno:  # and the keyword, on its own line: the part to edit
                            s.use(origin, at, rule)
                elif is_nccl(value) and origin.lineno != node.lineno:  # init_process_group(\n backend="nccl")
                    for rule in s.rules.detectors.get("nccl-string", ()):
                        s.use(origin, node, rule)  # the call's own line, where it raises, is a place

    def rank_index(self, node: ast.Call, path: str | None, name: str, method: bool) -> None:
        """A device index taken from the rank: each TorchTPU process owns device 0 only."""
        s = self.s
        args = node.args
        if method and name in ("to", "cuda") and args and rank_expr(args[0]):
            s.detect("rank-device-index", node)
        elif path == "torch.device" and (len(args) > 1 and _not_zero(args[1]) or len(args) == 1 and rank_expr(args[0])):
            s.detect("rank-device-index", node)
        elif path in _SET_INDEX and args and _not_zero(args[0]):
            s.detect("rank-device-index", node)
        for kw in node.keywords:
            if kw.arg == "device_ids" and isinstance(kw.value, (ast.List, ast.Tuple)):
                if any(_not_zero(e) for e in kw.value.elts):
                    s.detect("rank-device-index", kw)  # the argument: the part to edit
            elif kw.arg == "device_ids" and ranky(kw.value):
                s.detect("rank-device-index", kw)  # the argument: the part to edit
            elif kw.arg == "output_device" and _not_zero(kw.value) and _ids_like(node, kw.value):
                s.detect("rank-device-index", kw)  # the index device_ids= has: the part to edit too
            elif kw.arg in _RANK_KEYWORDS and ranky(kw.value) or kw.arg == "device" and rank_expr(kw.value):
                s.detect("rank-device-index", kw)  # the argument: the part to edit
            elif kw.arg == "index" and path == "torch.device" and _not_zero(kw.value):
                s.detect("rank-device-index", kw)  # the argument: the part to edit
            elif kw.arg == "device_map" and _maps_to_rank(kw.value):
                s.detect("rank-device-index", kw)  # from_pretrained(device_map={"": local_rank})

    def held_ranks(self, node: ast.Call, scope: Scope) -> None:
        """A ``device=`` or ``device_map=`` argument that is a name holding the rank: ``device = int(
        os.environ["LOCAL_RANK"])`` then ``pipeline(..., device=device)``, reported at the argument;
        ``device_map = {"": local_rank}`` then ``from_pretrained(..., device_map=device_map)``, reported
        where the map is written, the argument one of its uses."""
        s = self.s
        for kw in node.keywords:
            if kw.arg not in ("device", "device_map") or type(kw.value) is not ast.Name or ranky(kw.value):
                continue
            held = [e for e, _ in s.exprs(kw.value.id, scope) if e is not None]
            held += [b for e in held if type(e) is ast.IfExp for b in (e.body, e.orelse)]  # {...} if ddp else ...
            if kw.arg == "device" and any(ranky(e) for e in held):
                s.detect("rank-device-index", kw)
            for e in held if kw.arg == "device_map" else ():
                if isinstance(e, ast.Dict) and _maps_to_rank(e):
                    for rule in s.rules.detectors.get("rank-device-index", ()):
                        s.use(e, kw, rule)

    def nonzero(self, node: ast.Call, func: ast.expr, method: bool, scope: Scope) -> None:
        """Reported where the file puts work on a device; never on a NumPy array (``arr.nonzero()``)."""
        if not (method and on_host(func.value, scope.node, self.s.resolve)):  # type: ignore[attr-defined]
            self.s.pending_nonzero.append(node)

    def dataloader(self, node: ast.Call, scope: Scope) -> None:
        """Workers that fork: not when the loader names a start method other than ``"fork"``
        (``multiprocessing_context="spawn"``, as the rule advises, or one the user configures)."""
        for k in node.keywords:
            forks = type(k.value) is ast.Constant and k.value.value in (None, "fork")
            if k.arg == "multiprocessing_context" and not forks:
                return
        workers = [k.value for k in node.keywords if k.arg == "num_workers"] + node.args[5:6]
        for expr in workers:
            v = self.s.values(expr, scope)
            many = any(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in v.known)
            if many or v.unknown:
                self.s.pending_loader.append((node, v.followed))


def _self_attr(target: ast.expr) -> str | None:
    """``attr`` of ``self.attr``."""
    if type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == "self":
        return target.attr
    return None


def _branches(value: ast.expr) -> list[ast.expr]:
    """Either value of a conditional expression, or the value itself."""
    return [*_branches(value.body), *_branches(value.orelse)] if type(value) is ast.IfExp else [value]


def _made_by(value: ast.expr) -> str:
    """The name an attribute's value is made by: ``RMSNorm`` of ``RMSNorm(dim)``, ``fill`` of ``fill``."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        return value.func.id
    return value.id if isinstance(value, ast.Name) else ""


def _subclass_uses(s: FileScan, tree: ast.Module) -> None:
    """A class of the module derived from a name an import a rule reports binds (``class AdamW8bit(
    Optimizer2State)``, from bitsandbytes): each ``super().m()`` call in it, and each ``self.m()`` of a
    method it does not define, runs the package's code, a use of that import."""
    for cls, base, own in _derived(tree.body, s.imported.keys()):
        for call in (n for n in ast.walk(cls) if type(n) is ast.Call and type(n.func) is ast.Attribute):
            owner = call.func.value  # type: ignore[attr-defined]  # an Attribute
            inherited = type(owner) is ast.Name and owner.id == "self" and call.func.attr not in own  # type: ignore[attr-defined]
            up = type(owner) is ast.Call and type(owner.func) is ast.Name and owner.func.id == "super"
            if inherited or up:
                s.imported_use(base, call)


def _derived(body: list[ast.stmt], names: Collection[str]) -> Iterator[tuple[ast.ClassDef, str, set[str]]]:
    """Each class of ``body`` derived from one of ``names``: the class, that name and the methods it defines."""
    for cls in body:
        if type(cls) is ast.ClassDef and (bases := [b.id for b in cls.bases if type(b) is ast.Name and b.id in names]):
            yield cls, bases[0], {st.name for st in cls.body if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))}


def instance_calls(s: FileScan, name: str) -> list[ast.Call]:
    """The ``self.attr(...)`` calls of each attribute made by calling ``name``."""
    return [call for attr, names in s.instances.items() if name in names for call in s.self_calls.get(attr, ())]


def _cuda_asserts(s: FileScan, tree: ast.Module) -> None:
    """``assert x.is_cuda``, ``assert x.device.type == "cuda"``: findings (kb.scan.scandevtest), each in
    place of the comparison's own ``cuda-compare``."""
    compares = [r.id for r in s.rules.detectors.get("cuda-compare", ())]
    for node in cuda_asserts(tree, s.device_tests):
        s.detect("assert-is-cuda", node)
        for rule in compares:
            s.findings.pop((*s.place(node), rule), None)


# the imports of GPU kernel packages (attention and the fused ops beside it): each call of what they
# bind is a line to change, to SDPA or the plain PyTorch op
_KERNEL_IMPORTS = frozenset(
    {"flash-attn-import", "flash-attn-interface-import", "ring-flash-attn-import", "flashinfer-import"}
    | {"sageattention-import", "xformers-import"}
)


def _kernel_calls(s: FileScan) -> None:
    """Each call of a name a kernel package's import binds (``flash_attn_func(q, k, v)``,
    ``xops.memory_efficient_attention(...)``, ``RMSNorm(dim)``) is a finding of its own: the line to
    rewrite. A call through an instance (``self.norm(x)``) stays a place of the import's finding, and
    a line that already holds a must-change finding (an optional import's call) keeps that one."""
    spoke = {key[:2] for key in s.findings if key[2] in _KERNEL_IMPORTS}
    taken = {key[0] for key, f in s.findings.items() if f.severity == "must-change"}
    for statement, use in s.imported_uses:
        if type(use) is not ast.Call or s.place(statement) not in spoke or use.lineno in taken:
            continue
        root = use.func
        while type(root) is ast.Attribute:
            root = root.value
        if type(root) is ast.Name and root.id in s.imported:
            s.detect("kernel-package-call", use)


def _import_uses(s: FileScan) -> list[tuple[int, tuple[int, int, str]]]:
    """(line, finding key) of each use of a name that a must-change import binds (``flash_attn_func``),
    or that a failing call made (``starter = torch.cuda.Event()``, then ``starter.record()``)."""
    failing = s.rules.raising_imports | s.rules.raising
    at: dict[tuple[int, int], tuple[int, int, str]] = {}
    for key in s.findings:  # a catch-all rule (torch.cuda.*) gives way to one for the name, as in the report
        if key[2] in failing and (key[:2] not in at or at[key[:2]][2] in s.rules.broad):
            at[key[:2]] = key
    out = []
    for spoke, use in s.imported_uses:
        if (spoken := at.get(s.place(spoke))) is not None:
            out.append((s.position(use)[0], spoken))
    return sorted(out)


_GROUP_STARTS = frozenset({"init_process_group", "new_group"})  # calls that start a process group
# other spellings of a keyword some rule looks for: transformers hands from_pretrained's leftover keywords to
# the config, whose ``_attn_implementation`` property sets what ``attn_implementation=`` does (whl-transformers)
_SPELLINGS = {"_attn_implementation": "attn_implementation"}


def _called(call: ast.Call) -> str:
    """The last name of what ``call`` calls (``dist.init_process_group(...)``: init_process_group)."""
    func = call.func
    return func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else ""


def _nccl_inits(s: FileScan) -> list[tuple[int, tuple[int, int, str]]]:
    """(line, finding key) of each call that starts a process group on a "nccl" written in the file
    (``init_process_group(backend="nccl")``): it raises on a TPU host, so a function making it fails
    where it is called (kb.scan.scanreach)."""
    out = []
    for origin, call in s.nccl_inits:
        line, column, _ = s.position(origin)
        for rule in s.rules.detectors.get("nccl-string", ()):
            if (line, column, rule.id) in s.findings:
                out.append((s.position(call)[0], (line, column, rule.id)))
    return out


_NOT_MOVES = frozenset({"torch.device", "dict"})  # calls that hold a device without putting work on it


def _moves_to(name: str) -> bool:
    """A method named for moving something to a place (``flat_param_to``, ``to_device``), or for
    building devices (``build_device_mesh("cuda")``); ``to`` itself is read as a device place
    (device_strings)."""
    return name.endswith("_to") or name.startswith("to_") or "device_mesh" in name


def _device_moves(
    s: FileScan, links: list[tuple[ast.expr, ast.AST, ScanRule]]
) -> list[tuple[int, tuple[int, int, str]]]:
    """(line, finding key) of each call that puts work on a ``cuda`` device written elsewhere
    (``x.to(device)``, ``torch.zeros(n, device=d)``; not the making of a ``torch.device`` or a dict): a
    function that makes one fails where it is called (kb.scan.scanreach), as ``x.to("cuda")`` raises
    on a TPU host; one that only returns the device does not, nor one that is passed it (``links``:
    those of values written in the function or the module, not of what its callers pass)."""
    strings = s.rules.detectors.get("cuda-device-string", ())
    made = [(origin, node, rule) for origin, node, rule in links if rule in strings]
    made += [(origin, node, rule) for origin, node in s.moves for rule in strings]
    out = []
    for origin, node, rule in made:
        if type(node) is not ast.Call:
            continue
        path, chain = s.resolve(node.func)
        if (path or chain) not in _NOT_MOVES:
            line, column, _ = s.position(origin)
            out.append((s.position(node)[0], (line, column, rule.id)))
    return out


def _index_is_rank(left: ast.expr, right: ast.expr) -> bool:
    """``device.index`` compared with a rank (either way round)."""
    return any(type(a) is ast.Attribute and a.attr == "index" and ranky(b) for a, b in ((left, right), (right, left)))


def _built(call: ast.Call) -> list[str]:
    """The module name a ``CUDAExtension("pkg.ext", ...)`` (or ``name="pkg.ext"``) builds."""
    given = [*call.args[:1], *(k.value for k in call.keywords if k.arg == "name")]
    return [a.value for a in given if isinstance(a, ast.Constant) and isinstance(a.value, str)]


def _maps_to_rank(value: ast.expr) -> bool:
    """A ``device_map`` that places weights on the rank's device index: ``local_rank`` itself, or a
    dict with one (``{"": local_rank}``); every TorchTPU process owns index 0 only."""
    if isinstance(value, ast.Dict):
        return any(v is not None and rank_expr(v) for v in value.values)
    return rank_expr(value)


def _cuda_only(s: FileScan, kept: list[Finding]) -> tuple[str, bool]:
    """Why importing this file needs CUDA: a finding of a CUDA-only rule in a statement the module
    runs when it loads (not in a function, a class, an ``if`` or a ``try``, unless every handler of the
    ``try`` raises again); "" when there is none.
    And whether that makes the file CUDA code itself (a kernel library): one that builds or imports a
    CUDA extension (that reason comes first) or defines Triton kernels."""
    if not any(f.rule in CUDA_ONLY_RULES for f in kept):
        return "", False
    plain = (ast.Try, ast.If, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    body = _body(s)
    body += [inner for st in body if type(st) is ast.Try and required(st) for inner in st.body]  # re-raised
    spans = [(st.lineno, st.end_lineno or st.lineno) for st in body if not isinstance(st, plain)]
    found = [
        f
        for f in kept
        if f.rule in CUDA_ONLY_RULES and f.severity == "must-change" and any(a <= f.line <= b for a, b in spans)
    ]
    built = _fallback_builds(body)
    found += [f for f in kept if f.rule in LIBRARY_RULES and any(a <= f.line <= b for a, b in built)]
    found.sort(key=lambda f: f.rule not in LIBRARY_RULES)
    if not found:
        return "", False
    return reason(found[0].code, found[0].line), found[0].rule in LIBRARY_RULES or _kernels(s)


def _fallback_builds(body: list[ast.stmt]) -> list[tuple[int, int]]:
    """The spans of the module's top level that run when an import in a ``try`` fails, as it does on a
    TPU host for a prebuilt CUDA extension: the ``except`` handlers, and each ``if FLAG:`` whose flag a
    handler sets true (``except ImportError: build_jit = True``). A CUDA extension built there
    (``cpp_extension.load`` of ``.cu`` sources) is what the module loads on a TPU host."""
    tries = [
        st for st in body if type(st) is ast.Try and any(isinstance(x, (ast.Import, ast.ImportFrom)) for x in st.body)
    ]
    handlers = [h for st in tries for h in st.handlers]
    flags = {
        t.id
        for h in handlers
        for x in h.body
        if type(x) is ast.Assign and type(x.value) is ast.Constant and x.value.value is True
        for t in x.targets
        if type(t) is ast.Name
    }
    ifs = [st for st in body if type(st) is ast.If and type(st.test) is ast.Name and st.test.id in flags]
    spans = [(h.lineno, h.end_lineno or h.lineno) for h in handlers]
    return spans + [(st.lineno, st.end_lineno or st.lineno) for st in ifs]


def _bound_name(scope: Scope, call: ast.Call) -> str | None:
    """The name ``name = call(...)`` binds in ``scope`` (looked up only for the rare calls that need it)."""
    for name, exprs in scope.assigned.items():
        if any(e is call for e in exprs):
            return name
    return None


def _compiled(s: FileScan, call: ast.Call, scope: Scope) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The functions of this file a ``torch.compile(...)`` call compiles: the one it decorates
    (``@torch.compile(fullgraph=True)``) or the one it names (``torch.compile(step, ...)``)."""
    if (fn := s.decorated.get(id(call))) is not None:
        return [fn]
    target = call.args[0] if call.args else None
    found: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    where: Scope | None = scope
    while type(target) is ast.Name and where is not None and not found:
        found, where = where.defined(target.id), where.parent
    return found


def _breaks_graph(fn: ast.AST) -> bool:
    """``.item()``, ``.tolist()``, ``print(...)`` or a ``precision`` block in ``fn``: a graph break."""
    for node in ast.walk(fn):
        if type(node) is ast.Call:
            f = node.func
            name = f.attr if type(f) is ast.Attribute else f.id if type(f) is ast.Name else ""
            if name in ("item", "tolist", "print", "precision"):
                return True
    return False


def _param(args: ast.arguments, default: ast.expr) -> str:
    """The name of the parameter whose default is ``default``."""
    positional = [*args.posonlyargs, *args.args]
    pairs = zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)
    return next(a.arg for a, d in (*pairs, *zip(args.kwonlyargs, args.kw_defaults, strict=True)) if d is default)


def _only_compared(fn: ast.AST, name: str) -> bool:
    """``name`` is read in ``fn`` and only ever as an operand of a comparison (``impl == "cuda"``)."""
    compared = {id(o) for n in ast.walk(fn) if type(n) is ast.Compare for o in (n.left, *n.comparators)}
    reads = [n for n in ast.walk(fn) if type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Load]
    return bool(reads) and all(id(n) in compared for n in reads)


def _device_like(node: ast.expr) -> bool:
    """An expression that reads as a device or its kind: ``x.device.type``, ``device``, ``self.device_type``."""
    text = node.attr if type(node) is ast.Attribute else node.id if type(node) is ast.Name else ""
    return text == "type" or "device" in text.lower()


def _body(s: FileScan) -> list[ast.stmt]:
    """The statements of the module's top level."""
    node = s.module.node if s.module is not None else None
    return list(node.body) if isinstance(node, ast.Module) else []


def _spelled(st: ast.Import | ast.ImportFrom) -> str:
    """An import statement as one line of text, from its tree (the file's lines are not split for it)."""
    names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in st.names)
    if isinstance(st, ast.Import):
        return f"import {names}"
    return f"from {'.' * st.level}{st.module or ''} import {names}"


def _kernels(s: FileScan) -> bool:
    """The module defines Triton kernels (a function decorated ``@triton.jit`` or ``@triton.autotune(...)``)."""
    for st in _body(s):
        for dec in st.decorator_list if isinstance(st, ast.FunctionDef) else ():
            path = s.resolve(dec.func if isinstance(dec, ast.Call) else dec)[0]
            if path is not None and path.startswith("triton."):
                return True
    return False


def _imports(s: FileScan) -> tuple[Imported, ...]:
    """The import statements that run when the module loads or a function or method of it runs (not
    those under an ``if`` or a ``try``, which choose), with the modules each may name, longest first."""
    body = _body(s)
    functions = [st for st in body if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))]
    functions += [
        fn
        for cls in body
        if isinstance(cls, ast.ClassDef)
        for fn in cls.body
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    top = len(body)  # the module's own statements come first
    body += [st for fn in functions for st in fn.body]
    return tuple(_import_of(s, st, i < top) for i, st in enumerate(body) if isinstance(st, _IMPORTS))


_IMPORTS = (ast.Import, ast.ImportFrom)


def _guarded_imports(s: FileScan, plain: tuple[Imported, ...]) -> tuple[Imported, ...]:
    """The import statements ``_imports`` leaves out: under an ``if`` or a ``try``, or deeper in a
    function (``def get_backend(): ... try: import _ext``). Only an import of a module a setup.py of
    the tree builds as a CUDAExtension is reported from these (kb.scan.scanext), and not one in a
    ``try`` whose handlers import nothing: the code carries on without it. A module-level
    function that holds one and returns a value is a lazy loader: each ``get_backend().op(...)`` is
    one of the import's uses."""
    tree = s.module.node if s.module is not None else None
    if not isinstance(tree, ast.Module) or not s.import_nodes:
        return ()
    taken = {(imp.line, imp.column) for imp in plain}
    guarded = [st for st in s.import_nodes if (st.lineno, st.col_offset + 1) not in taken]
    if not guarded:
        return ()
    every = statements(tree)
    optional = {  # try: import ext / except ImportError: ext = None: the code carries on without it
        id(x)
        for st, _ in every
        if type(st) is ast.Try and not any(isinstance(x, _IMPORTS) for h in st.handlers for x in h.body)
        for x in st.body
    }
    guarded = [st for st in guarded if id(st) not in optional]
    if not guarded:
        return ()
    returns = [st.lineno for st, _ in every if type(st) is ast.Return and type(st.value) is ast.Name]
    loaders = {  # the module-level functions that return a name
        (st.lineno, st.end_lineno or st.lineno): st.name
        for st in tree.body
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(st.lineno <= n <= (st.end_lineno or st.lineno) for n in returns)
    }
    out = []
    for st in guarded:
        imp = _import_of(s, st, False)
        loader = next((name for (a, b), name in loaders.items() if a <= st.lineno <= b), None)
        if loader is not None:  # get_backend().near_far(...): the extension's calls
            uses = {s.place(c) for c in s.loaded_calls.get(loader, ())}
            imp = imp._replace(uses=tuple(sorted(uses.union(imp.uses))))
        out.append(imp)
    return tuple(out)


def _standard(st: ast.Import | ast.ImportFrom) -> bool:
    """An import that names no extension a setup.py may build: of torch or the standard library, or
    a relative one (a module of the package; a setup.py names an extension by its full name)."""
    if isinstance(st, ast.ImportFrom):
        return bool(st.level) or (st.module or "").split(".")[0] in NOT_EXTENSIONS
    return all(a.name.split(".")[0] in NOT_EXTENSIONS for a in st.names)


def _import_of(s: FileScan, st: ast.Import | ast.ImportFrom, top: bool) -> Imported:
    """One import statement as ``Imported``: the modules it may name, longest first, and the calls
    of what it binds."""
    if isinstance(st, ast.Import):
        modules = [tuple(a.name.split(".")) for a in st.names]
        exact = False
        named: tuple[str, ...] = ()
    else:
        base = relative(s.shown, st.level, st.module) if st.level else tuple((st.module or "").split("."))
        modules = [(*base, a.name) for a in st.names if a.name != "*"] + [base]
        exact, named = st.level > 0, base
    found = tuple(m for m in modules if any(m))
    bound = [a.asname or (a.name.split(".")[0] if isinstance(st, ast.Import) else a.name) for a in st.names]
    calls = [c for n in bound for c in s.module_calls.get(n, ())]
    calls += [c for n in bound for c, _ in s.calls.get(n, ())]
    uses = sorted({s.place(c) for c in calls})  # ext.gemv(x), kernel(x): what runs the module's code
    return Imported(found, exact, st.lineno, st.col_offset + 1, _spelled(st), named, tuple(uses), top)


def file_flows(s: FileScan, kept: list[Finding] | None = None, scanned: Scanned = None) -> Flows:
    """What this file exports and passes of device values across modules (kb.scan.scanflow), the imports
    it makes and whether it is CUDA-only itself (judged on ``kept``, the findings it reports). Given
    ``scanned`` (every module name of a scanned file), calls and from-imports of other modules are left out."""
    s.settled = {}  # the walk and its passes are over: the names and values read below no longer change
    exports = _exports(s)
    passed: list[Passed] = []
    written = any(rule in s.rules.device_ids for _, _, rule in s.findings)  # a device value is written here
    for call, scope, path in s.outgoing if written or "rank" in s.text else ():
        where, exact, function = _callee(s, call, path)
        if scanned is not None and where not in scanned:
            continue  # no scanned file: join() would drop what it is passed
        given: list[tuple[int, str | None, ast.expr]] = [(i, None, a) for i, a in enumerate(call.args)]
        if any(isinstance(a, ast.Starred) for a in call.args):  # *args: where the rest land is unknown
            given = given[: next(i for i, a in enumerate(call.args) if isinstance(a, ast.Starred))]
        given += [(-1, k.arg, k.value) for k in call.keywords if k.arg]
        for position, keyword, expr in given:
            v = s.values(expr, scope)
            if ranky(expr) and not _devices(v):  # a rank handed to another file's function: a device there, maybe
                rank = s.position(expr)
                passed.append(Passed(where, exact, function, position, keyword, rank[:2], None, rank[2]))
            for value, origin in zip(v.known, v.origins, strict=True):
                if is_cuda(value) or value in (RANK_FORMATTED, RANK_INDEX):
                    # the argument that hands it over, unless the value itself or a device= (a place already)
                    hands = s.place(expr) if origin is not expr and keyword not in _PLACE_KEYWORDS else None
                    passed.append(Passed(where, exact, function, position, keyword, s.place(origin), hands))
    returns = _returns(s) + _class_attributes(s) if written and s.module is not None else []
    calls = []
    for use, call in s.returned_uses:
        callee = s.resolve(call.func)[0]
        if callee is not None and not callee.startswith("torch") or callee is None and _relative_callee(s, call.func):
            calls.append(Called(*_callee(s, call, callee or ""), *s.place(use)))
    calls += _inherited(s, scanned)
    only, library = _cuda_only(s, kept if kept is not None else [])
    extensions = tuple((module, line) for (_, line), module in s.extensions.items())
    tree = s.module.node if s.module is not None else None
    names = s.wrappers if extensions and isinstance(tree, ast.Module) else ()
    return Flows(
        s.shown,
        (*exports,),
        (*passed,),
        (*returns,),
        (*calls,),
        plain := _imports(s),
        only,
        _kernels(s),
        library,
        extensions,
        names,
        _bound(s, scanned),
        (*s.declared,),
        _device_modules(s) if s.module is not None and _picks_device_module(s) else (),
        _device_calls(s, scanned),
        tuple((name, *key) for name, key in s.failed.items()),
        settings(s, kept or [], _rule_ids(s, "nccl-string"), _rule_ids(s, "cuda-device-string", "cuda-fstring")),
        reads(s),
        _guarded_imports(s, plain),
    )


def _rule_ids(s: FileScan, *detectors: Detector) -> frozenset[str]:
    """The ids of the rules of ``detectors``."""
    return frozenset(r.id for d in detectors for r in s.rules.detectors.get(d, ()))


def _exports(s: FileScan) -> list[Export]:
    """The device places that read a parameter of a module-level function or of a class's
    ``__init__`` (named by the class, counted after ``self``), which other files' calls may fill."""
    exports = []
    for use, name, where_read in s.pending_params:
        fn = where_read.node
        if (
            isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
            and where_read.parent
            and not where_read.parent.parent
        ):
            plain = [a.arg for a in fn.args.posonlyargs + fn.args.args]
            at, named = plain.index(name) if name in plain else -1, fn.name
            if named == "__init__" and (cls := s.owner(fn)) is not None:  # Model(..., device): after self
                at, named = at - 1 if at > 0 else -1, cls.name
            exports.append(Export(named, name, at, *s.place(use)))
    return exports


def _picks_device_module(s: FileScan) -> bool:
    """A cheap test on the source: the file may pick the device module by name
    (``torch.get_device_module``, or ``getattr`` on a name torch is imported as)."""
    if "get_device_module" in s.text:
        return True
    names = [name for name, path in s.aliases.items() if path == "torch"]
    return bool(names) and re.search(rf"getattr\(\s*(?:{'|'.join(map(re.escape, names))})\s*,", s.text) is not None


def _device_modules(s: FileScan) -> tuple[str, ...]:
    """The module-level names that are the device module picked by name: functions that return it
    (``def get_torch_device(): return getattr(torch, name)``) and variables set to it."""
    module = s.module
    assert module is not None and isinstance(module.node, ast.Module)
    out = []
    for st in module.node.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(DEVICE_MODULE in s.values(e, inner).known for e, inner in s.returned(st.name, module)):
                out.append(st.name)
        elif isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            if DEVICE_MODULE in s.values(st.value, module).known:
                out.append(st.targets[0].id)
    return tuple(out)


def _device_calls(s: FileScan, scanned: Scanned = None) -> tuple[DeviceCall, ...]:
    """Each internal device call on a name a from-import binds, or on what calling one returns."""
    out = []
    for call in s.device_calls:
        receiver = call.func.value  # type: ignore[attr-defined]  # a method call
        if isinstance(receiver, ast.Call) and not receiver.args and not receiver.keywords:
            receiver = receiver.func
        if not isinstance(receiver, ast.Name):
            continue
        if (found := _imported_from(s, receiver.id)) is None:
            continue
        where, exact, imported = found
        if scanned is None or where in scanned:
            line, column = s.place(call)
            out.append(DeviceCall(where, exact, imported, line, column, s.line(line).strip()))
    return tuple(out)


def _imported_from(s: FileScan, name: str) -> tuple[tuple[str, ...], bool, str] | None:
    """The module a from-import of ``name`` names (as path parts; exact for a relative import) and
    the name it imports there; None when no from-import binds it."""
    if name in s.relative:
        level, module, imported = s.relative[name]
        return relative(s.shown, level, module), True, imported
    if "." in s.aliases.get(name, ""):
        *parts, imported = s.aliases[name].split(".")
        return tuple(parts), False, imported
    return None


def _bound(s: FileScan, scanned: Scanned = None) -> tuple[Bound, ...]:
    """The names the file's from-imports bind (``from .rope import apply_rope``), each with its calls;
    given ``scanned``, only those from a module it holds (a scanned file: report_extensions reads no other)."""
    out = []
    for name, (level, module, imported) in s.relative.items():
        parts = relative(s.shown, level, module)
        if scanned is None or parts in scanned:
            calls = tuple(s.position(c) for c, _ in s.calls.get(name, ()))
            made = tuple(s.position(c) for c in instance_calls(s, name))
            out.append(Bound(parts, True, imported, name, calls, made))
        out += _submodule_calls(s, name, (*parts, imported), True, scanned)  # from . import du; du.setup()
    for name, path in s.aliases.items():
        module, _, imported = path.rpartition(".")
        if not module and name == path and name in s.module_calls:  # import utils; utils.setup(args)
            out += _module_calls(s, name, scanned)
        if not module or module.startswith("torch"):
            continue
        parts = tuple(module.split("."))
        if scanned is None or parts in scanned:
            calls = tuple(s.position(c) for c, _ in s.calls.get(name, ()))
            calls += tuple(s.position(c) for c in s.module_calls.get(name, ()))  # ext_c.gemm(x): a module's
            made = tuple(s.position(c) for c in instance_calls(s, name))
            out.append(Bound(parts, False, imported, name, calls, made))
        out += _submodule_calls(s, name, (*parts, imported), False, scanned)  # from pkg import du; du.setup()
    inherited = _inherited_calls(s, {b.bound for b in out}) if s.self_calls and out else {}
    for b in list(out):  # class Dist(OptLM): self.sync() calls OptLM.sync, which another file defines
        for method, found in inherited.get(b.bound, {}).items():
            out.append(Bound(b.module, b.exact, f"{b.name}.{method}", b.bound, tuple(found)))
    return tuple(out)


def _module_calls(s: FileScan, name: str, scanned: Scanned) -> list[Bound]:
    """The functions of the module ``import name`` binds that the file calls as ``name.function(...)``,
    each as a from-import of it would bind them (torch and the standard library left out)."""
    if name in sys.stdlib_module_names or name == "torch" or (scanned is not None and (name,) not in scanned):
        return []
    return [Bound((name,), False, attr, name, found) for attr, found in _attribute_calls(s, name).items()]


def _submodule_calls(s: FileScan, name: str, module: tuple[str, ...], exact: bool, scanned: Scanned) -> list[Bound]:
    """For ``from pkg import du`` (``module`` is pkg.du; ``exact`` for a relative import), the
    functions the file calls as ``du.setup(...)``, each as ``from pkg.du import setup`` would bind
    them; none when ``du`` is no scanned module (a name of pkg itself: join finds no file for it)."""
    if name not in s.module_calls or (scanned is not None and module not in scanned):
        return []
    return [Bound(module, exact, attr, name, found) for attr, found in _attribute_calls(s, name).items()]


def _attribute_calls(s: FileScan, name: str) -> dict[str, tuple[tuple[int, int, str], ...]]:
    """The calls ``name.function(...)`` of the file, by function."""
    calls: dict[str, list[tuple[int, int, str]]] = {}
    for call in s.module_calls[name]:
        if type(call.func) is ast.Attribute:
            calls.setdefault(call.func.attr, []).append(s.position(call))
    return {attr: tuple(found) for attr, found in calls.items()}


def _inherited_calls(s: FileScan, bases: set[str]) -> dict[str, dict[str, list[tuple[int, int, str]]]]:
    """For each imported name a class of the module derives from: the ``self.method()`` calls in that
    class of a method it does not define itself, by the method's name."""
    out: dict[str, dict[str, list[tuple[int, int, str]]]] = {}
    for cls, base, own in _derived(_body(s), bases):
        first, last = cls.lineno, cls.end_lineno or cls.lineno
        for method, calls in s.self_calls.items():
            if method not in own:
                inside = [s.position(c) for c in calls if first <= c.lineno <= last]
                if inside:
                    out.setdefault(base, {}).setdefault(method, []).extend(inside)
    return out


def _returns(s: FileScan) -> list[Returned]:
    """The device values the module-level functions of the file return (``def dev(): return th.device("cuda")``)."""
    module = s.module
    assert module is not None and isinstance(module.node, ast.Module)
    out = []
    for st in module.node.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for expr, inner in s.returned(st.name, module):
                v = s.values(expr, inner)
                for value, origin in zip(v.known, v.origins, strict=True):
                    if is_cuda(value) or value in (RANK_FORMATTED, RANK_INDEX):
                        out.append(Returned(st.name, *s.place(origin)))
    return out


def _devices(v: Values) -> bool:
    """Whether a value may be a device written as one (a ``cuda`` string, a device built from the
    rank): a rank that may hold an int default (``rank=0``) is none."""
    return any(is_cuda(x) or x in (RANK_FORMATTED, RANK_INDEX) for x in v.known)


def _class_attributes(s: FileScan) -> list[Returned]:
    """The device values the module-level classes' methods set as ``self.attr``, each named
    ``Class.attr``: what a subclass in another file reads as ``self.attr`` (kb.scan.scanflow)."""
    module = s.module
    assert module is not None and isinstance(module.node, ast.Module)
    out = []
    for cls in (st for st in module.node.body if type(st) is ast.ClassDef):
        for fn in (st for st in cls.body if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))):
            first = fn.args.posonlyargs + fn.args.args
            if not first:
                continue
            inner, prefix = s.function_scope(fn, module), f"{first[0].arg}."
            for name, exprs in inner.assigned.items():
                if not name.startswith(prefix) or "." in name[len(prefix) :]:
                    continue
                for expr in exprs:
                    v = s.values(expr, inner)
                    for value, origin in zip(v.known, v.origins, strict=True):
                        if is_cuda(value) or value in (RANK_FORMATTED, RANK_INDEX):
                            out.append(Returned(f"{cls.name}.{name[len(prefix) :]}", *s.place(origin)))
    return out


def _inherited(s: FileScan, scanned: Scanned = None) -> list[Called]:
    """The device places reading a ``self.attr`` no method of their class sets, as reads of that
    attribute of each base class the file imports from another module: ``Called`` of ``Base.attr``."""
    out = []
    for use, expr, scope in s.inherited_uses:
        method = method_of(expr.value, scope)
        cls = s.owner(method.node) if method is not None else None
        for base in cls.bases if cls is not None else ():
            if type(base) is not ast.Name or (found := _imported_from(s, base.id)) is None:
                continue
            where, exact, imported = found
            if scanned is None or where in scanned:
                out.append(Called(where, exact, f"{imported}.{expr.attr}", *s.place(use)))
    return out


def _callee(s: FileScan, call: ast.Call, path: str) -> tuple[tuple[str, ...], bool, str]:
    """The module a call's function comes from (as path parts; exact for a relative import) and its name."""
    if path:
        module, _, function = path.rpartition(".")
        return tuple(module.split(".")), False, function
    func = call.func
    if isinstance(func, ast.Attribute):  # from . import dist_util; dist_util.dev()
        level, module_name, name = s.relative[func.value.id]  # type: ignore[attr-defined]  # a Name
        return (*relative(s.shown, level, module_name), name), True, func.attr
    level, module_name, function = s.relative[func.id]  # type: ignore[attr-defined]  # a Name
    return relative(s.shown, level, module_name), True, function


def _relative_callee(s: FileScan, func: ast.expr) -> bool:
    """``f`` or ``m.f`` where a relative import bound ``f`` or the module ``m``."""
    if type(func) is ast.Attribute:
        func = func.value
        return type(func) is ast.Name and func.id in s.relative and s.relative[func.id][1] is None
    return type(func) is ast.Name and func.id in s.relative


def _prefix_rules(rules: RuleSet, path: str | None, chain: str) -> tuple[bool, tuple[ScanRule, ...]]:
    """Whether an attribute chain touches CUDA, and the attribute rules its prefixes match."""
    cuda = bool((path and path.startswith(_CUDA_PATHS)) or chain.endswith(".cuda"))
    found: list[ScanRule] = []
    index = rules.attributes
    while index:
        found += index.match(path, chain)
        cut = chain.rfind(".")
        chain = chain[: max(cut, 0)]
        if cut <= 0 or "." not in chain:  # the root name (or expression) is no attribute
            break
        path = path[: path.rfind(".")] if path else None
    return cuda, tuple(found)


def _target_name(target: ast.expr, field: bool) -> str | None:
    """The keyword an assignment target names: ``kw["name"]``, ``obj.name``, and when ``field`` (an
    annotated one) a dataclass field ``name``; a plain variable is followed where it is passed."""
    if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
        return target.slice.value if type(target.slice.value) is str else None
    if isinstance(target, ast.Attribute):
        return target.attr
    return target.id if field and isinstance(target, ast.Name) else None


def _field_default(value: ast.expr) -> ast.expr:
    """``field(default=v)`` (a dataclass field) holds ``v``; anything else is itself."""
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name == "field":
            return next((k.value for k in value.keywords if k.arg == "default"), value)
    return value


# Node type -> handler; a class-level table, so a Visitor holds no reference cycle to itself.
_HANDLERS: dict[type, Callable[[Visitor, Any, Scope, bool], None]] = {
    ast.Dict: Visitor.keyed,
    ast.Assign: Visitor.keyed,
    ast.AnnAssign: Visitor.keyed,
    ast.Attribute: Visitor.attribute_node,
    ast.Call: Visitor.call_node,
    ast.Subscript: Visitor.subscript,
    ast.JoinedStr: Visitor.joined,
    ast.Expr: Visitor.expression_statement,
    ast.Constant: Visitor.constant_node,
    ast.Compare: Visitor.compare,
    ast.BinOp: Visitor.formatted,
    ast.FunctionDef: Visitor.function,
    ast.AsyncFunctionDef: Visitor.function,
    ast.Lambda: Visitor.function,
    ast.If: Visitor.if_node,
    ast.IfExp: Visitor.if_expression,
    ast.Raise: Visitor.raise_node,
    ast.For: Visitor.loop_node,
    ast.AsyncFor: Visitor.loop_node,
    ast.While: Visitor.loop_node,
    ast.ListComp: Visitor.comprehension,
    ast.SetComp: Visitor.comprehension,
    ast.GeneratorExp: Visitor.comprehension,
    ast.DictComp: Visitor.comprehension,
    ast.Import: Visitor.import_node,
    ast.ImportFrom: Visitor.import_node,
}
# Every node type worth visiting -> what visit() calls for it (children() when it has no handler).
_DISPATCH: dict[type, Callable[[Visitor, Any, Scope, bool], None]] = {
    t: _HANDLERS.get(t, Visitor.children) for t in _WALK
}


_NOQA = re.compile(r"#\s*noqa(?::[ \t]*(?P<codes>[A-Z]+[0-9]+(?:[ \t]*,[ \t]*[A-Z]+[0-9]+)*))?", re.IGNORECASE)


def silenced(line: str, code: str) -> bool:
    """Whether a ``# noqa: CODE[, CODE]`` on this line names ``code``. A bare ``# noqa`` silences
    nothing here: code written before the port carries many, for other linters (nanotron's
    ``import transformer_engine as te  # noqa`` quiets flake8's unused import, not this)."""
    if "noqa" not in line and "NOQA" not in line.upper():
        return False
    for m in _NOQA.finditer(line):
        codes = m.group("codes")
        if codes is not None and code in {c.strip().upper() for c in codes.split(",")}:
            return True
    return False


def scan_source(text: str, shown: str, rules: RuleSet, before: str | None = None) -> list[Finding]:
    """Every finding in one file's text; SyntaxError, ValueError or RecursionError when it can't be read.

    ``before`` is the text a fix was made from: the file-wide gates (does the file use CUDA, does it
    move work to a device) are decided on it, so a fix of one CUDA call can't hide an unfixed
    ``torch.load`` that was reported only because the file used CUDA."""
    if before is None:
        return _scan(text, shown, rules)[0]
    was = _scan(before, shown, rules)[1]
    return _scan(text, shown, rules, (was.uses_cuda, was.moves_to_device))[0]


def scan_flows(text: str, shown: str, rules: RuleSet, scanned: Scanned = None) -> tuple[list[Finding], Flows]:
    """scan_source, and what the file passes to or reads from other modules as a device (only to the
    modules ``scanned`` holds, when given: kb.scan.scanflow.module_names of the scanned files)."""
    kept, state = _scan(text, shown, rules)
    return kept, file_flows(state, kept, scanned)


def _scan(
    text: str, shown: str, rules: RuleSet, gates: tuple[bool, bool] = (False, False)
) -> tuple[list[Finding], FileScan]:
    tree = ast.parse(text, shown)
    state = FileScan(shown, text, rules)
    state.uses_cuda, state.moves_to_device = gates  # the visit only ever sets them
    if "add_argument" in text:
        state.options = argparse_options(tree)
    lands = _dispatch_arms(tree, state, lines) if (lines := candidate_lines(text)) else []
    Visitor(state).run(tree)
    for land in lands:
        state.detect("device-dispatch-no-tpu", land)
    if state.device_tests and rules.detectors.keys() & DEVICE_TESTS:
        cuda = [(f.line, f.column) for f in state.findings.values() if f.severity == "must-change"]
        must = set(cuda)  # and the uses of a name a must-change finding binds (ext = load(... .cu); ext.op(x))
        cuda += [
            place[:2]
            for spoke, use in state.imported_uses
            if state.place(spoke) in must
            for place in [state.position(use)]
        ]
        for name, node, uses in device_tests(tree, state.device_tests, cuda, state.line):
            state.detect(name, node)
            for use in uses:  # the call the TPU reaches on the CUDA path: a place of the test's finding
                for rule in rules.detectors.get(name, ()):
                    state.use(node, use, rule)
    findings = state.finish()
    # A catch-all rule (`torch.cuda.*`) stays quiet where a narrower one (`torch.cuda.amp.*`), or a
    # rule for that very name, already spoke.
    broad, narrowest = rules.broad, dict[tuple[int, int], int]()
    for f in findings:
        place = (f.line, f.column)
        narrowest[place] = max(narrowest.get(place, -1), broad.get(f.rule, 1 << 30))
    kept = [f for f in findings if f.rule not in broad or broad[f.rule] >= narrowest[(f.line, f.column)]]
    if not kept:  # the passes below only change or drop findings (most files have none: no text search)
        return kept, state
    if "is_available" in text:
        kept = apply_guards(tree, kept, rules, state.line)
        kept = soften_short_circuited(tree, kept, state.resolve, state.line)
    if "print" in text or "log" in text:  # and torch.cuda.is_available(), which only answers, in a message
        kept = soften_logged(tree, kept, rules.attribute_ids | rules.probes, state.line)
    if "noqa" in text.lower():
        kept = [f for f in kept if not silenced(state.line(f.line), f.code)]
    if rules.guarded and any(f.rule in rules.guarded for f in kept):
        kept = mark_unguarded(tree, kept, rules, state.resolve, state.line)
    if state.plain_ifs:
        kept = soften_cuda_guards(state.plain_ifs, kept, state.line)
        kept = drop_logging_guards(state.plain_ifs, kept, state.line)
    if state.rank_counts:
        kept = _rank_modulo(kept, state)
    return _no_half_fixes(kept, rules), state


def _dispatch_arms(tree: ast.Module, state: FileScan, lines: list[int]) -> list[ast.AST]:
    """Marks the comparisons and ``cuda`` literals in the tests of each device dispatch (they are
    arms, not findings) and returns the ``raise`` statements a ``tpu`` device lands on (or the list
    of names a refusal checks it against)."""
    lands = []
    for found in dispatches(tree, lines):
        for node in quiet_places(found):
            (state.quiet if type(node) is ast.Constant else state.arms).add(id(node))
        if (land := tpu_lands_on(found)) is not None:
            lands.append(land)
    return lands


def _rank_modulo(findings: list[Finding], state: FileScan) -> list[Finding]:
    """``rank % torch.cuda.device_count()`` picks a device by rank: renaming the count to
    ``torch.accelerator`` would keep a per-rank index, so its finding is left to a person."""
    places = {state.place(call) for call in state.rank_counts}
    return [f._replace(manual=True) if (f.line, f.column) in places else f for f in findings]


def _no_half_fixes(findings: list[Finding], rules: RuleSet) -> list[Finding]:
    """A line that also holds a must-change finding no fix rewrites is left to a person whole: fixing
    the rest of it would be a half-fix (``torch.device('cuda', local_rank)`` rewritten to the
    accelerator's type still names the rank), so its fixable findings are marked ``manual`` and the
    line keeps all its findings, as written."""
    fixes = {r.id for r in rules.rules if r.fix is not None}
    unfixed = {f.line for f in findings if f.severity == "must-change" and (f.rule not in fixes or f.manual)}
    if not unfixed:
        return findings
    return [f._replace(manual=True) if f.rule in fixes and f.line in unfixed else f for f in findings]


def read_source(path: Path, shown: str) -> tuple[bytes, str | None, list[Problem]]:
    """A file's bytes and its text (None, with the problem, when it is too large, unreadable, not
    UTF-8 or holds a NUL byte)."""
    try:  # opened without blocking and checked after opening: a file swapped for a FIFO can't hang the scan
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return b"", None, [Problem(shown, 1, "is not a regular file (expected a .py file); skipped")]
            raw = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        return b"", None, [Problem(shown, 1, f"can't be read: {exc.strerror or exc}; skipped")]
    if len(raw) > MAX_BYTES:
        return raw, None, [Problem(shown, 1, f"larger than {MAX_BYTES // 1_000_000} MB; skipped")]
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        byte = raw[exc.start : exc.start + 1].hex()
        return raw, None, [Problem(shown, line, f"is not UTF-8 (byte 0x{byte}); skipped")]
    if "\0" in text:  # Python refuses the whole file (a ValueError or a SyntaxError with no line)
        return raw, None, [Problem(shown, text[: text.find("\0")].count("\n") + 1, "contains a NUL byte; skipped")]
    return raw, text, []


def scan_file(path: Path, shown: str, rules: RuleSet) -> tuple[list[Finding], list[Problem]]:
    """Scan one file; a file that can't be read, isn't UTF-8 or doesn't parse is a problem."""
    findings, problems, _, _ = scan_file_flows(path, shown, rules)
    return findings, problems


def scan_file_flows(
    path: Path, shown: str, rules: RuleSet, scanned: Scanned = None
) -> tuple[list[Finding], list[Problem], Flows, str]:
    """scan_file, the file's flows across modules (none when it was skipped; ``scanned`` as in
    scan_flows) and the SHA-256 of the bytes scanned (what ``--fix`` checks before it writes)."""
    raw, text, problems = read_source(path, shown)
    if text is None:
        return [], problems, Flows(shown), ""
    sha = hashlib.sha256(raw).hexdigest()
    try:
        findings, flows = scan_flows(text, shown, rules, scanned)
        return findings, [], flows, sha
    except SyntaxError as exc:
        return [], [Problem(shown, exc.lineno or 1, f"does not parse: {exc.msg}; skipped")], Flows(shown), sha
    except (RecursionError, MemoryError):
        return [], [Problem(shown, 1, "is nested too deeply to scan; skipped")], Flows(shown), sha
