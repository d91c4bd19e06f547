"""Compiled CUDA extension modules under names no rule knows (``import xentropy_cuda_lib``).

A module imported at the top of a file, neither of the standard library nor of torch, is taken for
a compiled CUDA extension when the code gives evidence of it (a guess on the name alone would report
every unknown package):

- its name has ``cuda`` as one of its words (``xentropy_cuda_lib``, ``fused_layer_norm_cuda``); a
  name imported from a module whose own name doesn't say CUDA counts only when the code uses it as a
  module (``from apex import amp_C_cuda; amp_C_cuda.op(x)``), not when it is a function
  (``from transformers.utils import is_torch_cuda_available``); or
- the ``forward`` or ``backward`` of a ``torch.autograd.Function`` calls it the way a kernel is
  called: for its effect on output tensors passed in (the result dropped), or by a name that says
  which pass it computes (``ext.fwd(...)``, ``ext.backward(...)``); a function imported from it by
  name counts when that name says ``fwd`` or ``bwd`` (``from structured_kernels import
  cauchy_mult_sym_fwd``); or
- a setup.py of the scanned tree builds it as a ``CUDAExtension`` (then any import of it counts); or
- the module itself builds the same name from ``.cu`` sources with ``torch.utils.cpp_extension.load``
  when the import fails (``try: import fast_ext`` then ``fast_ext = load(...)``): the import is the
  prebuilt form of that extension; or
- it is one of the extensions flash-attention's own setup.py files build (``dropout_layer_norm``,
  ``rotary_emb``, ``flash_attn_3``: ``_KNOWN``), imported with a fallback or not.

Each such import is reported (``cuda-extension-import``), its calls are the finding's places, and
the module becomes CUDA-only (kb.scan.scanflow reports where it is imported). The autograd
Functions that call it, the names bound to their ``apply`` and the module-level classes and
functions that call those are CUDA-only too: ``extension_wrappers`` names them, and
``report_extensions`` (once every file is scanned) reports each call of one imported into another
file (``cuda-extension-call``): ``FusedCrossEntropyLoss()``, ``apply_rotary_emb_func(q, ...)``. An
import that names a module of the scanned tree is a Python module after all: its finding is dropped.
"""

from __future__ import annotations

import ast
import re
import sys
from typing import TYPE_CHECKING, Callable

from .scanflow import Flows, file_of, module_tails, reason
from .scannames import Finding, calls_of
from .scanoptional import fallbacks
from .scanrules import RuleSet

if TYPE_CHECKING:
    from ..core.schema import Detector

IMPORT_RULE: Detector = "cuda-extension-import"
CALL_RULE: Detector = "cuda-extension-call"
_WORDS = re.compile(r"[._]")
_PASS_NAMES = ("fwd", "bwd", "forward", "backward")
NOT_EXTENSIONS = frozenset(sys.stdlib_module_names) | {"torch", "__future__"}
# the modules Dao-AILab/flash-attention's setup.py files build as CUDAExtension (csrc/layer_norm,
# csrc/rotary, csrc/fused_dense_lib, csrc/ft_attention, hopper/): source gh-flash-attention
_KNOWN = frozenset({"dropout_layer_norm", "rotary_emb", "fused_dense_lib", "ft_attention", "flash_attn_3"})
_FUNCTION = "torch.autograd.Function"
_BUILDERS = frozenset({"torch.utils.cpp_extension.load", "torch.utils.cpp_extension.load_inline"})
# an indented import of a module whose name says CUDA, torch's own left out (torch.cuda is no extension)
_INDENTED_CUDA_IMPORT = re.compile(r"\n[ \t]+(?:import|from)[ \t]+(?!torch\b)[\w.]*cuda")  # \n: 3x ^ with re.M

Resolve = Callable[[ast.expr], tuple[str | None, str]]


def _candidates(tree: ast.Module, resolve: Resolve | None) -> tuple[dict[str, tuple[ast.stmt, str]], set[str]]:
    """The names the module's own imports (at its top, or in its ``try``/``if`` blocks) bind to modules
    that may be extensions: name -> (statement, module). An optional import, one whose ``except``
    binds the name a fallback (``except ImportError: ext = None``), is not one: the code chooses;
    unless the module is a known extension (``_KNOWN``) or one the module builds from CUDA sources
    under the same name (also returned; looked for only given ``resolve``): the prebuilt form of that
    extension."""
    statements, bound, stack = [], set[str](), list(reversed(tree.body))
    while stack:
        st = stack.pop()
        if isinstance(st, (ast.Try, ast.If)):
            inner = [*st.body, *st.orelse, *getattr(st, "finalbody", ())]
            for h in getattr(st, "handlers", ()):
                inner += h.body
            bound |= fallbacks(getattr(st, "handlers", []))
            stack += reversed(inner)  # in the order written: a later import of a name wins, as it runs later
        else:
            statements.append(st)
    found = _imported(statements)
    built = _built(tree, statements, resolve) if resolve is not None else set()
    return {name: at for name, at in found.items() if name not in bound or _known(at[1]) or name in built}, built


def _built(tree: ast.Module, statements: list[ast.stmt], resolve: Resolve) -> set[str]:
    """The names the module binds at its top to an extension ``torch.utils.cpp_extension`` builds at
    run time (``ext = load(name=..., sources=...)``), when the module names a ``.cu`` source."""
    names = {
        t.id
        for st in statements
        if type(st) is ast.Assign and type(st.value) is ast.Call and resolve(st.value.func)[0] in _BUILDERS
        for t in st.targets
        if type(t) is ast.Name
    }
    cuda = (
        n for n in ast.walk(tree) if type(n) is ast.Constant and isinstance(n.value, str) and n.value.endswith(".cu")
    )
    return names if names and any(cuda) else set()


def _known(module: str) -> bool:
    """A module flash-attention builds as a CUDA extension, or one inside it (``flash_attn_3._C``)."""
    return module.split(".")[0] in _KNOWN


def _nested(tree: ast.Module, lines: set[int]) -> list[tuple[ast.stmt, str, str]]:
    """(statement, name, module) of each import inside a function of a module whose name has ``cuda``
    as a word (``import flash_attn_2_cuda`` where a kernel is called): the name alone is the evidence
    there, as nothing else about a local import is known. Only the functions that hold one of
    ``lines`` (those of an indented import naming CUDA, found in the source) are walked."""
    out = []
    tops = [st for st in tree.body if isinstance(st, ast.ClassDef)]
    functions = [st for st in tree.body if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))]
    functions += [m for cls in tops for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for fn in functions:  # each walked once, the functions nested in it with it
        if not any(fn.lineno <= line <= (fn.end_lineno or fn.lineno) for line in lines):
            continue
        inner: list[ast.stmt] = [st for st in ast.walk(fn) if isinstance(st, (ast.Import, ast.ImportFrom))]
        for one in inner:  # each statement: forward and backward may each import the same extension
            for name, (st, module) in _imported([one]).items():
                if "cuda" in _WORDS.split(module.lower()) and (
                    not isinstance(st, ast.ImportFrom) or "cuda" in _WORDS.split((st.module or "").lower())
                ):
                    out.append((st, name, module))
    return out


def _imported(statements: list[ast.stmt]) -> dict[str, tuple[ast.stmt, str]]:
    out: dict[str, tuple[ast.stmt, str]] = {}
    for st in statements:
        if isinstance(st, ast.Import):
            for a in st.names:
                if a.name.split(".")[0] not in NOT_EXTENSIONS:
                    out[a.asname or a.name.split(".")[0]] = (st, a.name)
        elif isinstance(st, ast.ImportFrom) and not st.level and st.module:
            if st.module.split(".")[0] not in NOT_EXTENSIONS:
                out.update({a.asname or a.name: (st, f"{st.module}.{a.name}") for a in st.names if a.name != "*"})
    return out


def _functions(tree: ast.Module, resolve: Resolve) -> list[ast.ClassDef]:
    """The module's ``torch.autograd.Function`` subclasses."""
    return [
        st for st in tree.body if isinstance(st, ast.ClassDef) and any(resolve(b)[0] == _FUNCTION for b in st.bases)
    ]


def _kernel_calls(cls: ast.ClassDef) -> list[tuple[str, bool, bool]]:
    """(root name, kernel-like, False) of each call in the class's ``forward`` and ``backward``:
    kernel-like when its result is dropped or its name names a pass (``ext.bwd(...)``); and (name,
    True, True) of each call of a plain name that says ``fwd`` or ``bwd`` (``cauchy_mult_sym_fwd(v, z, w)``)."""
    dropped = {
        id(st.value)
        for fn in cls.body
        if isinstance(fn, ast.FunctionDef) and fn.name in ("forward", "backward")
        for st in ast.walk(fn)
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call)
    }
    out = []
    for fn in cls.body:
        if not (isinstance(fn, ast.FunctionDef) and fn.name in ("forward", "backward")):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                root = node.func.value
                if isinstance(root, ast.Name):
                    named = any(p in node.func.attr.lower() for p in _PASS_NAMES)
                    out.append((root.id, named or id(node) in dropped, False))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if any(p in _WORDS.split(node.func.id.lower()) for p in _PASS_NAMES[:2]):
                    out.append((node.func.id, True, True))
    return out


def extension_imports(tree: ast.Module, resolve: Resolve, text: str) -> list[tuple[ast.stmt, str, str]]:
    """(import statement, the name it binds, the module) of each compiled CUDA extension imported at
    the top of the module, on the evidence the module docstring lists, or inside a function under a
    name that says CUDA (``text``, the module's source, must show such an import indented)."""
    candidates, built = _candidates(tree, resolve if "cpp_extension" in text else None)
    lines, line, at = set(), 1, 0
    for m in _INDENTED_CUDA_IMPORT.finditer(text) if "cuda" in text else ():  # line numbers counted on
        line, at = line + text.count("\n", at, m.start() + 1), m.start() + 1
        lines.add(line)
    nested = _nested(tree, lines) if lines else []
    if not candidates:
        return nested
    # kernel-like calls: of a module an import binds (ext.fwd), or of a function a from-import binds (fwd)
    used = {(name, plain) for cls in _functions(tree, resolve) for name, kernel, plain in _kernel_calls(cls) if kernel}
    out = []
    roots: set[str] | None = None  # the names used as a module (``name.attr``), found only when needed
    for name, (st, module) in candidates.items():
        if "cuda" in _WORDS.split(module.lower()):
            if isinstance(st, ast.ImportFrom) and "cuda" not in _WORDS.split(st.module.lower() if st.module else ""):
                # ``from transformers.utils import is_torch_cuda_available``: a function, not a module
                roots = _attribute_roots(tree) if roots is None else roots
                if name not in roots:
                    continue
            out.append((st, name, module))
        elif (name, isinstance(st, ast.ImportFrom)) in used or _known(module) or name in built:
            out.append((st, name, module))
    return out + nested


def _attribute_roots(tree: ast.Module) -> set[str]:
    """The plain names the module uses as the root of an attribute (``ext`` of ``ext.fwd(x)``)."""
    return {n.value.id for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}


def _calls_any(node: ast.AST, names: set[str]) -> bool:
    """``node`` calls one of ``names`` (``F.apply(...)``, ``f(...)``, ``ext.op(...)``)."""
    return next(calls_of(node, names), None) is not None


def extension_wrappers(tree: ast.Module, resolve: Resolve, extensions: set[str]) -> tuple[str, ...]:
    """The module-level names that are CUDA-only because they call an extension: the autograd
    Functions whose passes call one, names bound to them (``f = Fn.apply``), and the classes and
    functions that call any of these."""
    names = {cls.name for cls in _functions(tree, resolve) if _calls_any(cls, extensions)}
    for _ in range(3):  # wrappers of wrappers, a few levels deep
        before = len(names)
        for st in tree.body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and st.name not in names:
                if _calls_any(st, names | extensions):
                    names.add(st.name)
            elif isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                root = st.value
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name) and root.id in names:
                    names.add(st.targets[0].id)
        if len(names) == before:
            break
    return tuple(sorted(names))


def _unknown(flows: list[Flows], tails: dict[tuple[str, ...], list[str]]) -> list[Flows]:
    """The flows, with each "extension" that is a module of the scanned tree (or in a package of it)
    taken back: a Python module after all."""
    out = []
    for fl in flows:
        local = [
            line
            for module, line in fl.extensions
            if any(parts[:k] in tails for parts in [tuple(module.split("."))] for k in range(1, len(parts) + 1))
        ]
        if local:
            why = fl.cuda_only if not any(fl.cuda_only.endswith(reason("", n)) for n in local) else ""
            kept = tuple(e for e in fl.extensions if e[1] not in local)
            fl = fl._replace(extensions=kept, cuda_names=fl.cuda_names if kept else (), cuda_only=why)
            fl = fl._replace(library=fl.library and bool(why))
        out.append(fl)
    return out


def _names(flows: list[Flows], tails: dict[tuple[str, ...], list[str]]) -> dict[str, set[str]]:
    """The CUDA-only names of each file: its own wrappers, and those it imports from another file
    (an ``__init__.py`` that re-exports one)."""
    names = {fl.path: set(fl.cuda_names) for fl in flows if fl.cuda_names}
    every = set().union(*names.values())  # a name no file has can't match: its module is not looked up
    for _ in range(4):  # re-exports of re-exports
        grew = False
        for fl in flows:
            for b in fl.bound:
                if b.name not in every:
                    continue
                there = file_of(tails, fl.path, b.module, b.exact)
                mine = names.setdefault(fl.path, set())
                if there is not None and b.name in names.get(there, ()) and b.bound not in mine:
                    mine.add(b.bound)
                    every.add(b.bound)
                    grew = True
        if not grew:
            break
    return names


def _declared(findings: list[Finding], flows: list[Flows], rules: RuleSet) -> list[Finding]:
    """A finding at each import of a module a setup.py of the tree builds as a ``CUDAExtension``."""
    declared = {tuple(name.split(".")) for fl in flows for name in fl.declared}
    rule = next(iter(rules.detectors.get(IMPORT_RULE, ())), None)
    if rule is None or not declared:
        return []
    why = f"{rule.message} (a setup.py of this project builds it as a CUDAExtension)"
    taken = {(f.path, f.line) for f in findings}
    out = []
    for fl in flows:
        for imp in (*fl.imports, *fl.guarded):  # any import of it, optional or not: no fallback runs on TPU
            if (fl.path, imp.line) not in taken and any(m in declared for m in imp.modules):
                taken.add((fl.path, imp.line))
                place = (fl.path, imp.line, imp.column, rule.id, rule.code, rule.severity, imp.snippet, why)
                out.append(Finding(*place, rule.suggestion, rule.link, "followed", related=imp.uses))  # its calls
    return out


def _loading_declared(flows: list[Flows], declared: list[Finding]) -> list[Flows]:
    """The flows, each file that imports a CUDA extension the tree builds when it loads (at its top)
    made CUDA code itself, as one importing a known extension is (kb.scan.scanflow.local_modules)."""
    at = {(f.path, f.line): f.code for f in declared}
    out = []
    for fl in flows:
        top = next((i.line for i in fl.imports if i.top and (fl.path, i.line) in at), None) if at else None
        if top is not None and not fl.cuda_only:
            fl = fl._replace(cuda_only=reason(at[(fl.path, top)], top), library=True)
        out.append(fl)
    return out


def report_extensions(findings: list[Finding], flows: list[Flows], rules: RuleSet) -> tuple[list[Finding], list[Flows]]:
    """Once every file is scanned: the findings without an extension import that names a module of the
    tree, with one at each call, in another file, of a name that calls a CUDA extension; and the
    flows, corrected the same way."""
    if not any(fl.extensions or fl.declared for fl in flows):
        return findings, flows
    tails = module_tails(flows)
    flows = _unknown(flows, tails)
    kept = {(fl.path, line) for fl in flows for _, line in fl.extensions}
    findings = [f for f in findings if f.rule != IMPORT_RULE or (f.path, f.line) in kept]
    declared = _declared(findings, flows, rules)
    findings += declared
    flows = _loading_declared(flows, declared)
    rule = next(iter(rules.detectors.get(CALL_RULE, ())), None)
    if rule is None:
        return findings, flows
    names = _names(flows, tails)
    every = set().union(*names.values())
    taken = {(f.path, f.line) for f in findings}
    extra = []
    for fl in flows:
        for b in fl.bound:
            if b.name not in every:
                continue  # no file has that name: it calls no extension
            there = file_of(tails, fl.path, b.module, b.exact)
            if there is None or b.name not in names.get(there, ()):
                continue
            why = f"{rule.message} (`{b.name}` of `{there}`)"
            for line, column, code in b.calls:
                if (fl.path, line) not in taken:
                    taken.add((fl.path, line))
                    extra.append(
                        Finding(
                            fl.path,
                            line,
                            column,
                            rule.id,
                            rule.code,
                            rule.severity,
                            code,
                            why,
                            rule.suggestion,
                            rule.link,
                            "followed",
                        )
                    )
    return sorted(findings + extra), flows
