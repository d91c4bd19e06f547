"""Devices that cross files: a value written in one scanned file and used as a device in another.

The scanner reads one file at a time (kb.scan.scan). Each file also yields its ``Flows``: the device
places that read a parameter of one of its module-level functions (``def train_one_epoch(model,
device): x.to(device)``), and the device values its calls pass to a function imported from another
module (``train_one_epoch(model, device)`` with ``device = torch.device("cuda")``); and the other
way, the device values its module-level functions return (``def dev(): return th.device("cuda")``)
and the device places that call a function of another module (``model.to(dist_util.dev())``). ``join``
matches the two over every scanned file once the scan is done: each use in the other file becomes a
related place of the finding where the value is written, which stays the one line to change.

A module is matched to a scanned file by its dotted name, as the tail of the file's path
(``engine`` matches ``repo/engine.py``, ``util.misc`` matches ``repo/util/misc.py``); a relative
import (``from .engine import f``) names its file exactly. A name that matches no file, or more
than one, is left alone.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, NamedTuple

from .scannames import Finding
from .scanrules import RuleSet
from .scansettings import Read, Setting

if TYPE_CHECKING:
    from ..core.schema import Detector

# the rules whose must-change finding, in a statement the module runs when it is imported, makes the
# module itself CUDA-only: a GPU-only package imported, or a CUDA extension built, at import time
CUDA_ONLY_RULES = frozenset(
    {"triton-import", "flash-attn-import", "transformer-engine-import", "cupy-import", "liger-kernel", "cuda-sources"}
    | {"sageattention-import"}
    | {"cuda-extension-import"}
)
# of those, the ones that make the module CUDA code itself (a kernel library), not a module that imports a GPU package
LIBRARY_RULES = frozenset({"cuda-sources", "cuda-extension-import"})
RANK_RULE: Detector = "rank-device-index"
LOCAL_MODULE: Detector = "local-cuda-module"  # the detector that reports an import of such a module of the scanned tree


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
    at: tuple[int, int] | None = None  # the argument that passes it, when it is not the origin itself
    rank: str = ""  # the source of a rank passed (``self.rank``): a finding where the callee puts work on it


class Returned(NamedTuple):
    """A module-level ``function`` that may return the device value written at (``line``, ``column``)."""

    function: str
    line: int
    column: int


class Called(NamedTuple):
    """A device place at (``line``, ``column``) whose value is what ``function`` of ``module`` returns
    (``model.to(dist_util.dev())``); ``module`` and ``exact`` as in ``Passed``."""

    module: tuple[str, ...]
    exact: bool
    function: str
    line: int
    column: int


class Imported(NamedTuple):
    """An import statement at (``line``, ``column``) that loads ``module`` (``exact`` as in
    ``Passed``) when it runs: each module it may name, longest first (``from a import b``: ``a.b``, ``a``)."""

    modules: tuple[tuple[str, ...], ...]
    exact: bool
    line: int
    column: int
    snippet: str
    named: tuple[str, ...] = ()  # ``from a.b import c``: a.b, the module the statement names; () for ``import``
    uses: tuple[tuple[int, int], ...] = ()  # the calls of what it binds (``ext.gemv(x)``, ``kernel(x)``)
    top: bool = False  # it runs when the module loads (not in a function)


class Bound(NamedTuple):
    """A name a ``from module import name [as bound]`` binds, and the calls of it: (line, column, code)."""

    module: tuple[str, ...]
    exact: bool  # a relative import: ``module`` names the file exactly
    name: str
    bound: str
    calls: tuple[tuple[int, int, str], ...] = ()
    instances: tuple[tuple[int, int, str], ...] = ()  # the calls of self.attr = name(...): self.attr(x)


class DeviceCall(NamedTuple):
    """An internal device call (``set_device``) at (``line``, ``column``) on ``name`` of ``module``, or
    on what calling it returns; ``module`` and ``exact`` as in ``Passed``."""

    module: tuple[str, ...]
    exact: bool
    name: str
    line: int
    column: int
    snippet: str


class Flows(NamedTuple):
    path: str
    exports: tuple[Export, ...] = ()
    passed: tuple[Passed, ...] = ()
    returns: tuple[Returned, ...] = ()
    calls: tuple[Called, ...] = ()
    imports: tuple[Imported, ...] = ()
    cuda_only: str = ""  # why importing this file needs CUDA ("TPU604 at line 3"), "" when it doesn't
    kernels: bool = False  # the file defines Triton kernels: a kernel library, replaced whole on TPU
    # CUDA-only because it is CUDA code (Triton kernels, a CUDA extension built or imported), not only
    # because it imports a GPU package at the top, which is fixed in the file itself
    library: bool = False
    extensions: tuple[tuple[str, int], ...] = ()  # (module, line) of each CUDA extension it imports (kb.scan.scanext)
    cuda_names: tuple[str, ...] = ()  # its module-level names that call a CUDA extension (kb.scan.scanext)
    bound: tuple[Bound, ...] = ()  # the names its from-imports bind, with their calls
    declared: tuple[str, ...] = ()  # the modules it builds as a CUDAExtension (a setup.py)
    device_modules: tuple[str, ...] = ()  # its module-level names that are the device module picked by name
    device_calls: tuple[DeviceCall, ...] = ()  # internal device calls on a name another module may define
    failing: tuple[tuple[str, int, int, str], ...] = ()  # its functions that fail inside: name, finding's key
    settings: tuple[Setting, ...] = ()  # its defaults of settings that are findings (kb.scan.scansettings)
    reads: tuple[Read, ...] = ()  # the settings it gives to a keyword a rule looks for
    # the imports left out of ``imports``: under an if or a try, or deeper in a function; only an import
    # of a CUDAExtension a setup.py of the tree builds is reported from these (kb.scan.scanext)
    guarded: tuple[Imported, ...] = ()


def reason(code: str, line: int) -> str:
    """Why importing a file needs CUDA, as ``Flows.cuda_only`` holds it: the finding's code and line."""
    return f"{code} at line {line}"


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


def module_names(paths: list[str]) -> frozenset[tuple[str, ...]]:
    """Every name a module of these files is matched by (the keys of ``module_tails``): a call or an
    import whose module is none of them names no scanned file, so ``join`` and ``report_extensions``
    would drop what a worker sends about it."""
    return frozenset(parts[-k:] for path in paths for parts in [module_of(path)] for k in range(1, len(parts) + 1))


def module_tails(flows: list[Flows]) -> dict[tuple[str, ...], list[str]]:
    """The scanned files by each tail of their module name (``misc``, ``util.misc`` for util/misc.py)."""
    tails: dict[tuple[str, ...], list[str]] = {}
    for fl in flows:
        parts = module_of(fl.path)
        for k in range(1, len(parts) + 1):
            tails.setdefault(parts[-k:], []).append(fl.path)
    return tails


def local_modules(findings: list[Finding], flows: list[Flows], rules: RuleSet) -> list[Finding]:
    """The findings, with one at each import of a scanned module that is CUDA code itself (it defines
    Triton kernels, or builds or imports a CUDA extension, when it loads): importing it fails on a TPU
    host, and the port replaces what it provides. Not reported where the import line already has a
    finding, in a file that defines Triton kernels itself (the port replaces it whole), further up a
    chain of imports, for a module that only imports a GPU package at its top (that import, reported
    there, is the line to change), nor for a package the statement passes through without naming it
    (``from pkg.sub import x`` loads ``pkg/__init__.py``; fixing that file fixes the import)."""
    rule = next(iter(rules.detectors.get(LOCAL_MODULE, ())), None)
    only = {fl.path: fl.cuda_only for fl in flows if fl.cuda_only and fl.library}
    if rule is None or not only:
        return findings
    tails = module_tails(flows)
    for fl in flows:  # a package whose __init__ imports one runs it on any import from the package
        if fl.path.endswith("__init__.py") and fl.path not in only:
            inner = [t for imp in fl.imports if (t := _first_file(tails, fl.path, imp)) in only]
            if inner:
                only[fl.path] = f"it imports `{inner[0]}` ({only[inner[0]]})"
    keys = {module_of(p)[-k:] for p in only for k in range(1, len(module_of(p)) + 1)}  # what may name one
    lasts = {module_of(p)[-1] for p in only if module_of(p)}  # each key ends with one: no other import can match
    taken = {(f.path, f.line) for f in findings}
    extra: list[Finding] = []
    for fl in flows:
        for imp in () if fl.kernels else fl.imports:
            if all(lasts.isdisjoint(m) for m in imp.modules):
                continue  # no part of it is the last name of a CUDA-only module: most imports
            if not any(m[:k] in keys for m in imp.modules for k in range(1, len(m) + 1)):
                continue  # names no CUDA-only module nor a package of one: most imports
            there = _first_file(tails, fl.path, imp)
            if there not in only:
                there = next((p for p in _packages(tails, fl.path, imp) if p in only), there)
            if there in only and (fl.path, imp.line) not in taken:
                taken.add((fl.path, imp.line))
                why = f"{rule.message} (`{there}`: {only[there]})"
                extra.append(
                    Finding(
                        fl.path,
                        imp.line,
                        imp.column,
                        rule.id,
                        rule.code,
                        rule.severity,
                        imp.snippet,
                        why,
                        rule.suggestion,
                        rule.link,
                        "followed",
                        related=_calls_of(fl, imp),
                    )
                )
    return sorted(findings + extra) if extra else findings


Places = set[tuple[str, int, int]]  # (path, line, column)
_UP = 2  # how many more imports up a chain the places of a module that fails as it loads are followed


def imported_elsewhere(findings: list[Finding], flows: list[Flows]) -> list[Finding]:
    """The findings, each import of a GPU package at the top of a scanned module (its ``cuda_only``
    reason, when the module is not CUDA code itself) with each import of that module in another scanned
    file, and the calls of what that import binds, as places: loading the module fails there. So too
    for a module's import of a CUDA-only module of the tree (``local-cuda-module``), one step further
    up the chain of imports. A file that imports such a module at its top fails as it loads, too: the
    imports of it are places of the same finding, up to ``_UP`` more steps (score_sde_pytorch's
    run_lib.py imports models/ncsnpp.py, which imports the module that builds CUDA ops)."""
    why = {fl.path: fl.cuda_only for fl in flows if fl.cuda_only and not fl.library}
    for f in findings:  # the first such import of a module that imports a CUDA-only one (local_modules)
        if f.rule == LOCAL_MODULE and f.path not in why:
            why[f.path] = reason(f.code, f.line)
    if not why:
        return findings
    extra = _importers(flows, module_tails(flows), set(why))
    if not extra:
        return findings
    out = []
    for f in findings:
        if f.path in extra and why[f.path] == reason(f.code, f.line):
            f = f._replace(elsewhere=tuple(sorted({*f.elsewhere, *extra.pop(f.path)})), how="followed")
        out.append(f)
    return out


def _importers(flows: list[Flows], tails: dict[tuple[str, ...], list[str]], failing: set[str]) -> dict[str, Places]:
    """For each of the ``failing`` files (each fails as it loads), the imports of it in other files and
    the calls of what they bind; and, up to ``_UP`` more steps, the imports of a file that imports one
    at its top, which fails as it loads too."""
    origin = {p: p for p in failing}  # a file that fails as it loads -> the failing file that says why
    frontier = set(failing)
    extra: dict[str, Places] = {}
    for _ in range(1 + _UP):
        lasts = {module_of(p)[-1] for p in frontier if module_of(p)}
        reached: dict[str, str] = {}
        for fl in flows:
            for imp in fl.imports:
                if all(lasts.isdisjoint(m) for m in imp.modules):
                    continue  # no part of it names one of those modules: most imports
                # each module it loads: ``from . import utils, layerspp`` loads layerspp.py too
                loaded = (file_of(tails, fl.path, m, imp.exact) for m in imp.modules)
                there = next((t for t in loaded if t is not None and t in frontier), None)
                if there is None:
                    continue
                places = {(fl.path, imp.line, imp.column), *((fl.path, ln, col) for ln, col in _calls_of(fl, imp))}
                extra.setdefault(origin[there], set()).update(places)
                if imp.top and fl.path not in origin:
                    reached[fl.path] = origin[there]
        origin.update(reached)
        frontier = set(reached)
        if not frontier:
            break
    return extra


def _calls_of(fl: Flows, imp: Imported) -> tuple[tuple[int, int], ...]:
    """Where the file calls what the import statement ``imp`` binds (``from .ops import kernel``, then
    ``kernel(x)``): each call runs the CUDA-only module's code, a place of the import's finding."""
    places = {
        call[:2]
        for b in fl.bound
        if b.exact == imp.exact and (b.module in imp.modules or (*b.module, b.name) in imp.modules)
        for call in (*b.calls, *b.instances)
    }
    return tuple(sorted(places))


def file_of(tails: dict[tuple[str, ...], list[str]], path: str, module: tuple[str, ...], exact: bool) -> str | None:
    """The one scanned file (not ``path``) that ``module`` names (exactly, for a relative import)."""
    return one_file(_named(tails, module, exact), path)


def _named(tails: dict[tuple[str, ...], list[str]], module: tuple[str, ...], exact: bool) -> list[str]:
    """The scanned files ``module`` may name (exactly the one, for a relative import)."""
    return [f for f in tails.get(module, ()) if not exact or module_of(f) == module]


def one_file(files: list[str], path: str) -> str | None:
    """The file of ``files`` an import in ``path`` loads: the only one, or among several the one beside
    ``path`` (``from utils import x`` in a script loads the script's own utils.py: its folder comes
    first on ``sys.path``); None when that is not known, or it is ``path`` itself."""
    if len(files) > 1:
        folder = posixpath.dirname(path)
        files = [f for f in files if posixpath.dirname(f) == folder]
    return files[0] if len(files) == 1 and files[0] != path else None


def _packages(tails: dict[tuple[str, ...], list[str]], path: str, imp: Imported) -> list[str]:
    """The ``__init__.py`` of the package an import names (``a`` of ``from a import b``), when it loads it
    on its way to a submodule."""
    out = []
    for module in imp.modules:
        for k in range(1, len(module)):
            if module[:k] != imp.named:  # a package the statement only passes through
                continue
            files = [f for f in tails.get(module[:k], ()) if f.endswith("__init__.py")]
            files = [f for f in files if not imp.exact or module_of(f) == module[:k]]
            if len(files) == 1 and files[0] != path:
                out.append(files[0])
    return out


def _first_file(tails: dict[tuple[str, ...], list[str]], path: str, imp: Imported) -> str | None:
    """The one scanned file (not ``path``) that the longest module ``imp`` may name matches."""
    for module in imp.modules:
        if files := _named(tails, module, imp.exact):
            return one_file(files, path)
    return None


def join(findings: list[Finding], flows: list[Flows], rules: RuleSet) -> list[Finding]:
    """The findings, each device value's finding with the uses found in other files added."""
    tails: dict[tuple[str, ...], list[str]] = {}
    exports: dict[tuple[str, str], list[Export]] = {}
    for fl in flows:
        parts = module_of(fl.path)
        for k in range(1, len(parts) + 1):
            tails.setdefault(parts[-k:], []).append(fl.path)
        for e in fl.exports:
            exports.setdefault((fl.path, e.function), []).append(e)
    returns: dict[tuple[str, str], list[Returned]] = {}
    for fl in flows:
        for r in fl.returns:
            returns.setdefault((fl.path, r.function), []).append(r)

    def returning(fl: Flows, c: Called) -> str | None:
        """The file whose ``c.function`` returns a device: the module's own, else the one module of
        that package that defines it (``from timm import utils; utils.f()``, f in timm/utils/dist.py)."""
        there = file_of(tails, fl.path, c.module, c.exact)
        if there is not None and (there, c.function) in returns:
            return there
        inside: list[str] = []
        for path, function in returns:
            package = module_of(path)[:-1]
            named = package if c.exact else package[-len(c.module) :]  # a relative import names it exactly
            if function == c.function and path != fl.path and package and named == c.module:
                inside.append(path)
        return inside[0] if len(inside) == 1 else None

    extra: dict[tuple[str, int, int], set[tuple[str, int, int]]] = {}
    ranks: dict[tuple[str, int, int], str] = {}  # a rank passed where the callee puts work: its source
    for fl in flows:
        for p in fl.passed:
            if (there := file_of(tails, fl.path, p.module, p.exact)) is None:
                continue
            for e in exports.get((there, p.function), ()):
                if (e.param == p.keyword) if p.keyword is not None else (p.position == e.position >= 0):
                    extra.setdefault((fl.path, *p.origin), set()).add((there, e.line, e.column))
                    if p.rank:
                        ranks[(fl.path, *p.origin)] = p.rank
                    if p.at is not None:  # the call that hands it over: a related place in this file
                        extra[(fl.path, *p.origin)].add((fl.path, *p.at))
        for c in fl.calls:
            if (there := returning(fl, c)) is not None:
                for r in returns.get((there, c.function), ()):
                    extra.setdefault((there, r.line, r.column), set()).add((fl.path, c.line, c.column))
    reach = _reached_elsewhere(flows, tails)
    findings = sorted(findings + _passed_ranks(findings, ranks, rules)) if ranks else findings
    return _with_places(findings, extra, reach, rules.device_ids) if extra or reach else findings


def _passed_ranks(findings: list[Finding], ranks: dict[tuple[str, int, int], str], rules: RuleSet) -> list[Finding]:
    """A finding (``rank-device-index``) at each rank passed to another file's function that puts work
    on what it is given (``slice_and_move(batch, self.rank)`` into ``.to(device)``): the index every
    TorchTPU process but the first does not own. Its places there are added by ``_with_places``."""
    rule = next(iter(rules.detectors.get(RANK_RULE, ())), None)
    taken = {(f.path, f.line, f.column) for f in findings}
    if rule is None:
        return []
    return [
        Finding(*at, rule.id, rule.code, rule.severity, code, rule.message, rule.suggestion, rule.link, "followed")
        for at, code in sorted(ranks.items())
        if at not in taken
    ]


def _with_places(
    findings: list[Finding],
    extra: dict[tuple[str, int, int], set[tuple[str, int, int]]],
    reach: dict[tuple[str, int, int, str], set[tuple[str, int, int]]],
    device: frozenset[str],
) -> list[Finding]:
    """The findings, each with the places ``join`` found: the uses of a device value (``extra``, by
    where it is written, for the rules of ``device``) and the calls elsewhere of a function failing
    inside (``reach``)."""
    out = []
    for f in findings:
        more = extra.get((f.path, f.line, f.column)) if f.rule in device else None
        more = (more or set()) | reach.get((f.path, f.line, f.column, f.rule), set())  # a failing call elsewhere
        if more:  # a call in the finding's own file that hands the value over is one of its places there
            here = {(line, column) for path, line, column in more if path == f.path}
            related = tuple(sorted(here.union(f.related)))
            elsewhere = tuple(sorted({*f.elsewhere, *(p for p in more if p[0] != f.path)}))  # and those found before
            f = f._replace(related=related, elsewhere=elsewhere, how="followed")
        out.append(f)
    return out


def _reached_elsewhere(
    flows: list[Flows], tails: dict[tuple[str, ...], list[str]]
) -> dict[tuple[str, int, int, str], set[tuple[str, int, int]]]:
    """Each call in one file of a function another file defines (``from .utils import setup``, then
    ``setup(cfg)``) that fails inside (kb.scan.scanreach): a place of that failure's finding. A name
    a package's ``__init__.py`` imports from one of its modules is followed there, one step."""
    failing = {(fl.path, name): (line, column, rule) for fl in flows for name, line, column, rule in fl.failing}
    out: dict[tuple[str, int, int, str], set[tuple[str, int, int]]] = {}
    if not failing:
        return out
    inits = {fl.path: fl for fl in flows if fl.path.endswith("__init__.py") and fl.bound}
    for fl in flows:
        for b in fl.bound:
            if not b.calls or (there := file_of(tails, fl.path, b.module, b.exact)) is None:
                continue
            name = b.name
            if (there, name) not in failing and there in inits:  # a package that imports it from one of its modules
                init = inits[there]
                again = next((a for a in init.bound if a.bound == name), None)
                if again is not None and (inner := file_of(tails, init.path, again.module, again.exact)) is not None:
                    there, name = inner, again.name
            if (key := failing.get((there, name))) is not None:
                line, column, rule = key
                out.setdefault((there, line, column, rule), set()).update((fl.path, *call[:2]) for call in b.calls)
    return out


def own_package_imports(findings: list[Finding], flows: list[Flows], rules: RuleSet) -> list[Finding]:
    """The findings without those of a package's rule (``imports: liger_kernel``) at an import of a
    module of the scanned tree itself: scanning Liger's own code, ``from liger_kernel.ops.utils
    import x`` loads a file the scan reads, whose own findings show what in it needs CUDA. A file's
    module name is Python's: its folders up to the first one without an ``__init__.py``. A file left
    with no such import finding keeps no ``kernel-package-call`` either (its calls are the package's own)."""
    packaged = {rule.id for found in rules.import_index.values() for rule in found}
    if not any(f.rule in packaged for f in findings):
        return findings
    packages = {posixpath.dirname(fl.path) for fl in flows if fl.path.endswith("__init__.py")}
    names = {_package_name(fl.path, packages) for fl in flows}
    own = {
        (fl.path, imp.line)
        for fl in flows
        for imp in fl.imports
        if not imp.exact and (imp.named in names if imp.named else all(m in names for m in imp.modules))
    }
    kept = [f for f in findings if f.rule not in packaged or (f.path, f.line) not in own]
    spoken = {f.path for f in kept if f.rule in packaged}  # a kernel call stands on an import still reported
    return [f for f in kept if f.rule != "kernel-package-call" or f.path in spoken]


def _package_name(path: str, packages: set[str]) -> tuple[str, ...]:
    """The dotted name Python imports the file ``path`` by, given the folders that are packages."""
    folder, name = posixpath.split(path[:-3] if path.endswith(".py") else path)
    if name == "__init__":
        folder, name = posixpath.split(folder)
    parts = [name]
    while folder and folder in packages:  # "": the scanned folder itself (./dev scan . inside a package)
        folder, name = posixpath.split(folder)
        parts.append(name)
    return tuple(reversed(parts))


def device_module_calls(findings: list[Finding], flows: list[Flows], rules: RuleSet) -> list[Finding]:
    """The findings, with one at each internal device call on the device module another scanned file
    picks by name (``from .misc import get_torch_device; get_torch_device().set_device(rank)``)."""
    rule = next(iter(rules.detectors.get("device-module-call", ())), None)
    modules = {fl.path: set(fl.device_modules) for fl in flows if fl.device_modules}
    if rule is None or not modules:
        return findings
    tails = module_tails(flows)
    taken = {(f.path, f.line, f.column) for f in findings}
    extra = []
    for fl in flows:
        for c in fl.device_calls:
            there = file_of(tails, fl.path, c.module, c.exact)
            if there is not None and c.name in modules.get(there, ()) and (fl.path, c.line, c.column) not in taken:
                why = f"{rule.message} (`{c.name}` of `{there}`)"
                place = (fl.path, c.line, c.column, rule.id, rule.code, rule.severity, c.snippet, why)
                extra.append(Finding(*place, rule.suggestion, rule.link, "followed"))
    return sorted(findings + extra) if extra else findings
