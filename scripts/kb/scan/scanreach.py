"""Where a failure inside a function surfaces: at each call of that function (issue 34).

A must-change finding inside a function (``torch.cuda.synchronize()``, a Triton launch, a call of
``flash_attn_func`` that a GPU package's import binds) fails only when the function runs, and a
reader porting the file meets it at the calls: ``barrier()`` in the training loop,
``get_peak_stats()`` in the logger. Each call of a function of the module by its name, of a method
of the same class through ``self`` (one it inherits from a class of the module too), or of a method
of a class of the module by the class's name (``Base.__init__(self, ...)``) becomes one of the
places of the first such finding in the function's body; so does each call of a function that
calls one, two calls deep. The finding stays the one line to change.
"""

from __future__ import annotations

import ast
from typing import Iterator, NamedTuple, Sequence

Function = ast.FunctionDef | ast.AsyncFunctionDef
_MADE = ("__init__", "__post_init__", "__enter__", "__exit__")  # run when the class is made, or used in a with
_DEPTH = 3  # a function that calls a function that calls one: how many calls away a failure is followed


class Reached(NamedTuple):
    """A call at ``node`` of a function whose body reaches the finding keyed ``key``."""

    key: tuple[int, int, str]
    node: ast.Call


def _functions(tree: ast.Module) -> Iterator[tuple[Function, ast.ClassDef | None]]:
    """The module's functions, the functions defined in their bodies (a helper local to one, as
    ``def _load_helper(name, sources)`` inside ``load()``) and the methods of its classes, each with
    its class (None for a function)."""
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield st, None
            yield from ((f, None) for f in st.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)))
        elif isinstance(st, ast.ClassDef):
            yield from ((m, st) for m in st.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)))


Key = tuple[int, int, str]
Callee = tuple[str, ast.ClassDef | None]


def _first_failure(fn: Function, keys: list[Key], uses: Sequence[tuple[int, Key]]) -> Key | None:
    """The first finding key inside ``fn``'s body (keys sorted), else the key of the first use there
    (uses sorted by line): of a name a failing import binds, or of a ``cuda`` device work is put on."""
    start = fn.body[0].lineno if fn.body else fn.lineno
    end = fn.end_lineno or fn.lineno
    found = next((k for k in keys if start <= k[0] <= end), None)
    return found or next((k for line, k in uses if start <= line <= end), None)


def _callee(call: ast.Call, owner: ast.ClassDef | None, classes: dict[str, ast.ClassDef]) -> Callee | None:
    """What a call names: a plain function (``f()``), a method of the class it sits in (``self.f()``),
    or a method of a class of the module named (``Base.__init__(self, ...)``)."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id, None
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        if func.value.id in ("self", "cls"):
            return (func.attr, owner) if owner is not None else None
        if func.value.id in classes:
            return func.attr, classes[func.value.id]
    return None


def _inherited(classes: list[ast.ClassDef], failing: dict[tuple[str, ast.ClassDef | None], Key]) -> None:
    """A method a class inherits from a base of the module (``self.play_steps()`` in a subclass) fails
    as the base's does, unless the class defines its own."""
    named = {cls.name: cls for cls in classes}
    for cls in classes:
        own = {m.name for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for base in module_bases(cls, named):
            for (name, owner), key in list(failing.items()):
                if owner is base and name not in own:
                    failing.setdefault((name, cls), key)


def module_bases(cls: ast.ClassDef, named: dict[str, ast.ClassDef]) -> list[ast.ClassDef]:
    """The bases of ``cls`` among ``named`` (the module's classes by name), theirs in turn, nearest
    first: ``class Continuous(A2CBase)`` -> [A2CBase]."""
    out: list[ast.ClassDef] = []
    seen, todo = {cls.name}, [cls]
    while todo:
        for base in todo.pop(0).bases:
            if type(base) is ast.Name and base.id in named and base.id not in seen:
                seen.add(base.id)
                out.append(named[base.id])
                todo.append(named[base.id])
    return out


def reached(
    tree: ast.Module,
    keys: list[Key],
    calls: list[tuple[ast.Call, ast.AST]],
    uses: Sequence[tuple[int, Key]] = (),
    failed: dict[str, Key] | None = None,
    handed: Sequence[tuple[ast.Call, ast.AST, ast.expr]] = (),
) -> list[Reached]:
    """Each of ``calls`` (a call of a plain name or of ``self.name``, with the function or module it
    is in) of a function of ``tree`` whose body has one of the findings ``keys`` (sorted, those of
    failing rules) or one of ``uses`` (line, key: a use of a name a failing import binds, or a call
    that puts work on a ``cuda`` device written in the file, kb.scan.scan._device_moves), or calls
    such a function, up to ``_DEPTH`` calls away; so is each of ``handed`` (a call given a name or an
    attribute, with where it is) that is handed such a function to run. Given ``failed``, it is filled
    with the module's functions and classes that fail, and the methods of its classes that do
    (``Class.method``), each with its finding's key: other files' calls of them fail too
    (kb.scan.scanflow.join)."""
    functions = list(_functions(tree))
    failing: dict[tuple[str, ast.ClassDef | None], Key] = {}
    for fn, owner in functions:
        if (key := _first_failure(fn, keys, uses)) is not None:
            failing.setdefault((fn.name, owner), key)
    if not failing:
        return []
    owners = {id(fn): owner for fn, owner in functions}
    classes = [st for st in tree.body if isinstance(st, ast.ClassDef)]
    # each call with what it calls: its callee, or a function handed to it to run (a callback, a thread's target)
    by_name = {cls.name: cls for cls in classes}
    named = [(call, where, _callee(call, owners.get(id(where)), by_name)) for call, where in calls]
    named += [(call, where, callee) for call, where, arg in handed if (callee := _handed(arg, where, owners))]
    out: dict[int, Reached] = {}
    for _ in range(_DEPTH):
        _constructors(classes, failing)
        _inherited(classes, failing)
        grew = False
        for call, where, callee in named:
            key = failing.get(callee) if callee is not None else None
            if key is None or id(call) in out:
                continue
            out[id(call)] = Reached(key, call)
            if isinstance(where, (ast.FunctionDef, ast.AsyncFunctionDef)) and id(where) in owners:
                owner = owners[id(where)]
                if (where.name, owner) not in failing:  # a function that calls one fails where it is called too
                    failing[(where.name, owner)] = key
                    grew = True
        if not grew:
            break
    _constructors(classes, failing)
    if failed is not None:  # what another file can import: not a function local to one
        top = {st.name for st in tree.body if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        failed.update((name, key) for (name, owner), key in failing.items() if owner is None and name in top)
        # a method of a module-level class, which a class in another file may inherit: Class.method
        failed.update((f"{owner.name}.{name}", key) for (name, owner), key in failing.items() if owner in classes)
    return list(out.values())


def _constructors(classes: list[ast.ClassDef], failing: dict[tuple[str, ast.ClassDef | None], Key]) -> None:
    """A class whose ``__init__`` fails fails where it is made: ``CifarLoader(...)`` is a call of it;
    so does a context manager whose ``__enter__`` or ``__exit__`` fails (``with Timer("sort"):``)."""
    for cls in classes:
        key = next((k for m in _MADE if (k := failing.get((m, cls))) is not None), None)
        if key is not None:
            failing.setdefault((cls.name, None), key)


def _handed(arg: ast.expr, where: ast.AST, owners: dict[int, ast.ClassDef | None]) -> Callee | None:
    """The function of the module or method of the class that ``arg``, given to a call in ``where``,
    names (``timer.start(self.sync)``, ``Thread(target=copy_worker)``): the call may run it later. A
    parameter of ``where`` holds what its caller gives, and a function handing itself on is not a call."""
    if type(arg) is ast.Name:
        if isinstance(where, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = where.args
            if arg.id == where.name or any(p.arg == arg.id for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)):
                return None
        return arg.id, None
    if type(arg) is ast.Attribute and type(arg.value) is ast.Name and arg.value.id in ("self", "cls"):
        owner = owners.get(id(where))
        return (arg.attr, owner) if owner is not None else None
    return None
