"""Read a torch-tpu wheel as a zip, never installing or importing it: its names, env vars and metadata.

The index built here is what ``kb check-wheel`` holds the handbook to. Python sources are read
through ``ast``; native libraries through their string tables; ``METADATA`` through the email parser.
"""

from __future__ import annotations

import ast
import email.parser
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from .messages import NATIVE_BUILD, Message, native_texts, python_messages, reads_native

# A torch-tpu env var name: in a string table, a Python literal, a shell line or prose (the one
# pattern, also for kb.wheel.coverage and kb.pages.namecheck). Not inside a longer word; a '$'
# before it is a shell reading it ($TPU_NAME, ${TPU_NAME}), so that counts too.
ENV_TOKEN = re.compile(r"(?<!\w)(?:TORCH_TPU|TPU)_[A-Z0-9]+(?:_[A-Z0-9]+)*(?!\w)")
# Any upper-case name with an underscore: what other env vars look like in a string table.
UPPER_TOKEN = re.compile(rb"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
IDENT_TOKEN = re.compile(rb"(?<![A-Za-z0-9_])[A-Za-z_][A-Za-z0-9_]{2,63}(?![A-Za-z0-9_])")
# Calls whose first string argument is an env var name.
ENV_CALLS = re.compile(r"(?:^|_)(?:getenv|env|env_once|environ)$|get_\w*env\w*|set_\w*env\w*")
# The native libraries of one torch build are enough: every build ships the same strings,
# and libxla_base.so (200+ MB) holds the compiler, not TorchTPU's own names.
SKIP_NATIVE = re.compile(r"libxla_base\.so$")
VERSIONED_SO = re.compile(r"_\d+_\d+_\d+(?:_common)?\.so$")


class WheelError(Exception):
    """The file is not a readable wheel; the message says why."""


@dataclass
class ClassInfo:
    module: str
    name: str
    members: set[str] = field(default_factory=set)
    bases: list[str] = field(default_factory=list)


@dataclass
class ModuleInfo:
    name: str
    path: str
    names: set[str] = field(default_factory=set)
    aliases: dict[str, str] = field(default_factory=dict)  # local name -> dotted target
    native: bool = False


@dataclass
class WheelIndex:
    """Everything the handbook may name, as the wheel declares it."""

    path: str
    project: str
    version: str
    files: set[str]
    modules: dict[str, ModuleInfo]
    classes: dict[str, list[ClassInfo]]
    public: dict[str, str]  # public dotted name -> "module" or "module:Qual.name" target
    env: set[str]  # env var names the package's code or string tables contain
    env_read: set[str]  # names the Python code reads through an env helper
    attrs: set[str]  # upper-case names the Python code uses as attributes (constants, not env vars)
    backends: set[str]
    requires_python: str
    requires: dict[str, str]  # distribution name -> specifier text
    strings: set[str]  # upper-case tokens of the native string tables
    problems: list[str] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)  # every raise and warn of the Python code
    native_texts: dict[str, str] = field(default_factory=dict)  # sentence-like native string -> its file
    facts: dict[str, list[str]] = field(default_factory=dict)  # what the backend code decides (wheelfacts)

    # ---- name resolution ----

    def has_env(self, name: str) -> bool:
        return name in self.env_read or (name in self.env and name not in self.attrs)

    def resolve(self, dotted: str) -> bool:
        """True when ``dotted`` (``torch.tpu.X.Y`` or ``torch_tpu.mod.X.Y``) names something in the wheel."""
        parts = dotted.split(".")
        if parts[:2] == ["torch", "tpu"]:
            return self._resolve_public(parts)
        if parts[0] == "torch_tpu":
            return self._resolve_internal(parts, depth=0)
        return False

    def _resolve_public(self, parts: list[str]) -> bool:
        for cut in range(len(parts), 1, -1):
            head = ".".join(parts[:cut])
            if head in self.public:
                rest = parts[cut:]
                if not rest:
                    return True
                return self._members_of_target(self.public[head], parts[cut - 1], rest)
        return False

    def _members_of_target(self, target: str, leaf: str, rest: list[str]) -> bool:
        """Whether ``rest`` are nested members of what ``target`` points at."""
        if ":" in target:
            mod, qual = target.split(":", 1)
            if self._resolve_internal([*mod.split("."), *qual.split("."), *rest], depth=0):
                return True
            leaf = qual.split(".")[-1]
        elif target in self.modules:
            return self._resolve_internal([*target.split("."), *rest], depth=0)
        # Fall back to a class or alias of that name anywhere in the wheel (targets resolved at run time).
        if self._class_chain(leaf, rest):
            return True
        return any(
            self._resolve_internal([*_expand(info, info.aliases[leaf]).split("."), *rest], depth=1)
            for info in self.modules.values()
            if leaf in info.aliases
        )

    def _class_chain(self, class_name: str, rest: list[str]) -> bool:
        candidates = self.classes.get(class_name, [])
        if not rest:
            return bool(candidates)
        for cls in candidates:
            if rest[0] in self._all_members(cls, set()):
                if len(rest) == 1 or self._class_chain(rest[0], rest[1:]):
                    return True
        return False

    def _all_members(self, cls: ClassInfo, seen: set[str]) -> set[str]:
        key = f"{cls.module}:{cls.name}"
        if key in seen:
            return set()
        seen.add(key)
        out = set(cls.members)
        for base in cls.bases:
            for other in self.classes.get(base.split(".")[-1], []):
                out |= self._all_members(other, seen)
        return out

    def _resolve_internal(self, parts: list[str], depth: int) -> bool:
        if depth > 8:
            return False
        for cut in range(len(parts), 0, -1):
            mod = ".".join(parts[:cut])
            info = self.modules.get(mod)
            if info is None:
                continue
            rest = parts[cut:]
            if not rest:
                return True
            first = rest[0]
            if info.native:
                return all(part in info.names for part in rest)
            if first in info.aliases:
                target = _expand(info, info.aliases[first]).split(".")
                return self._resolve_internal([*target, *rest[1:]], depth + 1) or (
                    len(rest) > 1 and self._class_chain(target[-1], rest[1:])
                )
            if first not in info.names:
                return False
            if len(rest) == 1:
                return True
            return any(c.module == mod and self._chain_in(c, rest[1:]) for c in self.classes.get(first, []))
        return False

    def _chain_in(self, cls: ClassInfo, rest: list[str]) -> bool:
        if rest[0] not in self._all_members(cls, set()):
            return False
        return len(rest) == 1 or self._class_chain(rest[0], rest[1:])

    def public_names(self) -> list[str]:
        """Every public ``torch.tpu`` name, with the members of public enum-like classes."""
        return sorted(self.public)


def _expand(info: ModuleInfo, target: str) -> str:
    """``precision_impl.Precision`` in a module that imported precision_impl: the full dotted path."""
    head, _, tail = target.partition(".")
    full = info.aliases.get(head)
    if full and full != target and head != full:
        return f"{full}.{tail}" if tail else full
    return target


# ---- reading ----


def read_wheel(path: Path) -> WheelIndex:
    """Index a wheel file. Raises WheelError with a plain message when it can't be read."""
    try:
        zf = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise WheelError(f"{path}: not a readable wheel ({exc})") from None
    with zf:
        files = {i.filename for i in zf.infolist() if not i.is_dir()}
        meta_name = next((f for f in files if f.endswith(".dist-info/METADATA")), None)
        if meta_name is None:
            raise WheelError(f"{path}: no *.dist-info/METADATA (expected a wheel)")
        meta = email.parser.Parser().parsestr(zf.read(meta_name).decode("utf-8", "replace"))
        requires: dict[str, str] = {}
        for req in meta.get_all("Requires-Dist") or []:
            m = re.match(r"\s*([A-Za-z0-9_.-]+)\s*(\[[^\]]*\])?\s*([^;]*)", req)
            if m:
                requires[_norm(m.group(1))] = m.group(3).replace(" ", "")
        index = WheelIndex(
            path=str(path),
            project=_norm(meta.get("Name", "")),
            version=meta.get("Version", ""),
            files=files,
            modules={},
            classes={},
            public={},
            env=set(),
            env_read=set(),
            attrs=set(),
            backends=set(),
            requires_python=(meta.get("Requires-Python") or "").replace(" ", ""),
            requires=requires,
            strings=set(),
        )
        for name in sorted(files, key=lambda f: (f.endswith(".so"), f)):
            if name.endswith(".py"):
                _read_python(index, name, zf.read(name))
            elif name.endswith(".so") and not SKIP_NATIVE.search(name):
                _read_native(index, name, zf.read(name))
    for mod in list(index.modules):  # folders without __init__.py are namespace packages
        parts = mod.split(".")
        for cut in range(1, len(parts)):
            parent = ".".join(parts[:cut])
            index.modules.setdefault(parent, ModuleInfo(parent, parent.replace(".", "/")))
            index.modules[parent].names.add(parts[cut])
    from .wheelfacts import read_facts  # it reads the public table built above

    index.facts = {key: sorted(names) for key, names in read_facts(path, index.public).items()}
    return index


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _module_name(path: str) -> str:
    stem = path[:-3] if path.endswith(".py") else VERSIONED_SO.sub("", path)
    if stem.endswith("/__init__"):
        stem = stem[: -len("/__init__")]
    return stem.replace("/", ".")


def _read_native(index: WheelIndex, name: str, data: bytes) -> None:
    """One build of each native module: its identifiers (as attributes) and upper-case tokens."""
    if reads_native(name):
        for text in native_texts(data):
            if text not in index.native_texts or NATIVE_BUILD in name:
                index.native_texts[text] = name
    mod = _module_name(name)
    if mod in index.modules:
        return
    index.modules[mod] = ModuleInfo(mod, name, names={t.decode() for t in IDENT_TOKEN.findall(data)}, native=True)
    tokens = set(UPPER_TOKEN.findall(data))
    index.strings |= {t.decode() for t in tokens}
    index.env |= {t.decode() for t in tokens if ENV_TOKEN.fullmatch(t.decode())}


def _read_python(index: WheelIndex, name: str, data: bytes) -> None:
    try:
        tree = ast.parse(data.decode("utf-8", "replace"), filename=name)
    except SyntaxError as exc:
        index.problems.append(f"{name}:{exc.lineno}: not valid Python ({exc.msg})")
        return
    mod = _module_name(name)
    info = ModuleInfo(mod, name)
    index.modules[mod] = info
    index.messages += python_messages(name, tree)
    package = mod if name.endswith("__init__.py") else mod.rpartition(".")[0]
    for stmt in tree.body:
        _top_level(index, info, stmt, package)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            _call(index, node)
        elif isinstance(node, ast.Subscript) and _dotted(node.value) in {"os.environ", "environ"}:
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                index.env_read.add(key.value)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if ENV_TOKEN.fullmatch(node.value):
                index.env.add(node.value)
        elif isinstance(node, ast.Attribute) and ENV_TOKEN.fullmatch(node.attr):
            index.attrs.add(node.attr)
    if name == "torch_tpu/_internal/public_api.py":
        _read_public_api(index, tree)


def _top_level(index: WheelIndex, info: ModuleInfo, node: ast.stmt, package: str) -> None:
    if isinstance(node, ast.ClassDef):
        info.names.add(node.name)
        cls = ClassInfo(info.name, node.name, bases=[_dotted(b) for b in node.bases if _dotted(b)])
        _class_members(index, cls, node)
        index.classes.setdefault(node.name, []).append(cls)
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        info.names.add(node.name)
    elif isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for t in targets:
            if isinstance(t, ast.Name):
                info.names.add(t.id)
                target = _alias_of(node.value) if node.value is not None else ""
                if target:
                    info.aliases[t.id] = target
    elif isinstance(node, ast.Import):
        for a in node.names:
            local = a.asname or a.name.split(".")[0]
            info.aliases[local] = a.name if a.asname else a.name.split(".")[0]
    elif isinstance(node, ast.ImportFrom):
        base = _absolute(node, package)
        for a in node.names:
            if a.name != "*":
                info.aliases[a.asname or a.name] = f"{base}.{a.name}" if base else a.name
    elif isinstance(node, (ast.If, ast.Try)):
        for child in [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", [])]:
            _top_level(index, info, child, package)


def _class_members(index: WheelIndex, cls: ClassInfo, node: ast.ClassDef) -> None:
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            cls.members.add(item.name)
            if isinstance(item, ast.ClassDef):
                inner = ClassInfo(cls.module, item.name, bases=[_dotted(b) for b in item.bases if _dotted(b)])
                _class_members(index, inner, item)
                index.classes.setdefault(item.name, []).append(inner)
        elif isinstance(item, ast.Assign):
            cls.members |= {t.id for t in item.targets if isinstance(t, ast.Name)}
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            cls.members.add(item.target.id)


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
    return ".".join([*base, *([node.module] if node.module else [])])


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def _alias_of(value: ast.expr) -> str:
    """``x = a.b`` or ``x = wrap(...)(a.b)``: the dotted name a value stands for, if any."""
    if _dotted(value):
        return _dotted(value)
    if isinstance(value, ast.Call) and len(value.args) == 1:
        return _alias_of(value.args[0])
    return ""


def _call(index: WheelIndex, node: ast.Call) -> None:
    func = _dotted(node.func)
    leaf = func.rpartition(".")[2]
    first = node.args[0] if node.args else None
    name_kw = next((k.value for k in node.keywords if k.arg == "name"), None)
    literal = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
    if leaf == "register_backend":
        for cand in (first, name_kw):
            if isinstance(cand, ast.Constant) and isinstance(cand.value, str):
                index.backends.add(cand.value)
    elif leaf in {"rename_privateuse1_backend", "_init_device"} and literal is not None:
        index.backends.add(literal)
    elif literal is not None and (ENV_CALLS.search(leaf) or func in {"os.getenv", "os.environ.get"}):
        if re.fullmatch(r"[A-Z][A-Z0-9_]*", literal):
            index.env_read.add(literal)


# ---- the public API table (public_api.py) ----


def _read_public_api(index: WheelIndex, tree: ast.Module) -> None:
    """Evaluate ``_PUBLIC_MODULES``: string constants, f-strings and one-line helper functions."""
    consts: dict[str, str] = {}
    helpers: dict[str, tuple[str, ast.expr]] = {}
    table: ast.expr | None = None
    for node in tree.body:
        target, value = _assignment(node)
        if target == "_PUBLIC_MODULES":
            table = value
        elif target and value is not None:
            text = _fold(value, consts)
            if text is not None:
                consts[target] = text
        if isinstance(node, ast.FunctionDef) and len(node.args.args) == 1:
            ret = node.body[-1]
            if isinstance(ret, ast.Return) and ret.value is not None:
                helpers[node.name] = (node.args.args[0].arg, ret.value)
    if not isinstance(table, ast.Dict):
        index.problems.append("torch_tpu/_internal/public_api.py:1: no _PUBLIC_MODULES table (expected a dict)")
        return
    for key, spec in zip(table.keys, table.values, strict=True):
        module = _fold(key, consts) if key is not None else None
        if module is None or not isinstance(spec, ast.Call):
            continue
        index.public[module] = module
        for kw in spec.keywords:
            if kw.arg == "main":
                main = _fold(kw.value, consts)
                if main:
                    index.public[module] = main
            if kw.arg == "exports" and isinstance(kw.value, ast.Dict):
                for k, v in zip(kw.value.keys, kw.value.values, strict=True):
                    name = _fold(k, consts) if k is not None else None
                    if name:
                        index.public[f"{module}.{name}"] = _export_target(v, consts, helpers) or ""


def _assignment(node: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id, node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id, node.value
    return None, None


def _export_target(node: ast.expr, consts: dict[str, str], helpers: dict[str, tuple[str, ast.expr]]) -> str | None:
    if isinstance(node, ast.Call):
        func = _dotted(node.func)
        if func in helpers and node.args:
            arg = _fold(node.args[0], consts)
            if arg is not None:
                param, body = helpers[func]
                return _fold(body, {**consts, param: arg})
        if func == "Property" and node.args:
            return _fold(node.args[0], consts)
        return None
    return _fold(node, consts)


def _fold(node: ast.expr, consts: dict[str, str]) -> str | None:
    """The string value of a constant expression, or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return consts.get(node.id)
    if isinstance(node, ast.JoinedStr):
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(str(part.value))
            elif isinstance(part, ast.FormattedValue):
                inner = _fold(part.value, consts)
                if inner is None:
                    return None
                out.append(inner)
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _fold(node.left, consts), _fold(node.right, consts)
        return left + right if left is not None and right is not None else None
    return None
