"""The messages torch-tpu can print, read from the wheel as a zip (never imported or run).

Python: the first argument of every ``raise X(...)`` and every ``warn(...)`` call, read through
``ast``: string constants, f-strings, ``+``, ``.format(...)``, ``%`` and module-level string
constants. A value the code formats into a message is written ``…``. Native: the printable strings
of the native libraries (of one torch build) that read like words of a sentence.

``user_facing`` picks what a migrating user can meet: the Python messages of the public, loader,
device, compile and distributed modules, and the native strings with a distinctive phrase.
``matches`` and ``covers`` compare a message as a reader pastes it with what the wheel holds.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

VALUE = "…"  # stands for a value formatted into a message
# The native libraries of the torch build the handbook is held to (torch==2.13.0); the other
# builds ship the same messages. Files without a torch build in their name are read too.
NATIVE_BUILD = "_2_13_0"
_ANY_BUILD = re.compile(r"_2_\d+_0")
# Python modules whose messages a user of the public API meets: the public table, the loaders,
# the device module, torch.compile's backend and torch.distributed's, and the stage annotations
# (which raise for internal APIs such as the legacy torch.tpu device calls).
USER_FACING = (
    "torch_tpu/__init__.py",
    "torch_tpu/_loader.py",
    "torch_tpu/_versioned_so_loader.py",
    "torch_tpu/_tcmalloc_check.py",
    "torch_tpu/_internal/public_api.py",
    "torch_tpu/_internal/device/",
    "torch_tpu/_internal/compile/",
    "torch_tpu/_internal/distributed/",
    "torch_tpu/_internal/utils/annotations.py",
)
# Native strings that tell a user what TorchTPU does not do, or why it stopped.
DISTINCTIVE = re.compile(
    r"Unlike |not supported|not yet supported|does not support|doesn't support|"
    r"already opened by another process|forked subprocess"
)
_PRINTABLE = re.compile(rb"[\x20-\x7e]{12,}")
_SENTENCE = re.compile(r"[A-Za-z]{2,} [a-z]{2,}")
_PERCENT = re.compile(r"%[-#0 +]*\d*(?:\.\d+)?[sdrifgxX]")
_BRACES = re.compile(r"\{[^{}]*\}")


@dataclass(frozen=True)
class Message:
    """One message: its text (values written …), the wheel file, the line (0: native) and what
    raises it (an exception class, ``warning``, or ``native``)."""

    text: str
    file: str
    line: int
    kind: str

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


# ---- Python ----


def python_messages(path: str, tree: ast.Module) -> list[Message]:
    """Every raise and warn of a module whose message has words of its own. A message kept in a
    name is followed to the module's constants and the enclosing function's earlier assignments."""
    consts = _constants(tree.body, {})
    found: dict[tuple[int, str], Message] = {}
    scopes: list[tuple[list[ast.stmt], dict[str, str]]] = [(tree.body, consts)]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scopes.append((node.body, consts))
    for body, outer in scopes:
        for stmt in body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                    call, kind = node.exc, _leaf(node.exc.func)
                elif isinstance(node, ast.Call) and _leaf(node.func) == "warn":
                    call, kind = node, "warning"
                else:
                    continue
                local = _constants(list(_assignments(body, node.lineno)), outer)
                text = _template(call.args[0], local) if call.args else None
                if text is not None and _has_words(text):
                    found.setdefault((node.lineno, text), Message(text, path, node.lineno, kind))
    return sorted(found.values(), key=lambda m: m.line)


def _assignments(body: list[ast.stmt], before: int) -> list[ast.stmt]:
    """The assignments of a function body (nested blocks included) that come before a line."""
    found = [
        node
        for stmt in body
        for node in ast.walk(stmt)
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.lineno < before
    ]
    return sorted(found, key=lambda n: n.lineno)


def _constants(body: list[ast.stmt], outer: dict[str, str]) -> dict[str, str]:
    """Names assigned a message text in ``body`` (in order), on top of ``outer``."""
    consts = dict(outer)
    for node in body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(node, ast.AnnAssign):
            target = node.target
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and isinstance(value, ast.expr):
            text = _template(value, consts)
            if text is None:
                consts.pop(target.id, None)  # no longer a message text from here on
            else:
                consts[target.id] = text
    return consts


def _template(node: ast.expr, consts: dict[str, str]) -> str | None:
    """The text of a message expression, each formatted value as …; None when it is not one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return consts.get(node.id)
    if isinstance(node, ast.JoinedStr):
        return "".join(_part(p, consts) for p in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _template(node.left, consts), _template(node.right, consts)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        left = _template(node.left, consts)
        return _PERCENT.sub(VALUE, left) if left is not None else None
    if isinstance(node, ast.IfExp):  # `f"{msg} {reason}" if reason else msg`: the fuller one
        return _template(node.body, consts) or _template(node.orelse, consts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        base = _template(node.func.value, consts)
        return _BRACES.sub(VALUE, base) if base is not None else None
    return None


def _part(node: ast.expr, consts: dict[str, str]) -> str:
    """One part of an f-string: its text, a message kept in a name, or a value (…)."""
    if isinstance(node, ast.Constant):
        return str(node.value)
    if isinstance(node, ast.FormattedValue) and node.conversion == -1 and node.format_spec is None:
        if isinstance(node.value, ast.Name) and node.value.id in consts:
            return consts[node.value.id]
    return VALUE


def _leaf(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _has_words(text: str) -> bool:
    return len(re.sub(r"[^A-Za-z]", "", text.replace(VALUE, ""))) >= 8


# ---- Native ----


def reads_native(path: str) -> bool:
    """Whether the sentence-like strings of this native library are harvested (one torch build)."""
    return NATIVE_BUILD in path or not _ANY_BUILD.search(path)


def native_texts(data: bytes) -> list[str]:
    """The printable runs of a native library that read like words of a sentence."""
    out = []
    for run in _PRINTABLE.findall(data):
        text = run.decode("ascii")
        if _SENTENCE.search(text):
            out.append(text)
    return out


# ---- What a user can meet ----


def user_facing(messages: Iterable[Message], native: dict[str, str]) -> list[Message]:
    """The Python messages of the user-facing modules and the distinctive native strings, one per text."""
    seen: set[str] = set()
    out = []
    python = [m for m in messages if m.file.startswith(USER_FACING) and m.kind != "AssertionError"]
    strings = [
        Message(t.strip(), f, 0, "native") for t, f in native.items() if DISTINCTIVE.search(t) and "PYBIND11" not in t
    ]
    for msg in sorted(python, key=lambda m: (m.file, m.line)) + sorted(strings, key=lambda m: m.text):
        if msg.text not in seen:
            seen.add(msg.text)
            out.append(msg)
    return out


# ---- Comparing a pasted message with the wheel's ----


@lru_cache(maxsize=4096)  # the error index compares every entry with every harvested message
def pattern(text: str) -> re.Pattern[str]:
    """A message as a pattern: its words exactly, each … any value."""
    return re.compile(".*?".join(re.escape(piece) for piece in text.split(VALUE)), re.S)


def matches(entry: str, text: str) -> bool:
    """Whether a message written as an entry (values as …) is found in the wheel's ``text``."""
    return pattern(entry).search(text) is not None


def found_native(entry: str, texts: Iterable[str]) -> bool:
    """Every stretch of words between values in some native string (a value splits them)."""
    pieces = [p.strip() for p in entry.split(VALUE) if p.strip()]
    pool = list(texts)
    return bool(pieces) and all(any(p in t for t in pool) for p in pieces)


def covers(entry: str, text: str) -> bool:
    """Whether an entry documents a harvested message: the entry is in it, or (a native fragment
    of four words or more) it is in the entry."""
    if matches(entry, text):
        return True
    inner = text.strip()
    return len(inner.replace(VALUE, " ").split()) >= 4 and pattern(inner).search(entry) is not None
