"""Hold the handbook to the wheel: every package name, env var, backend, locator and version range.

Input: the loaded KB, the pages and the samples under ``snippets/``; a ``WheelIndex`` of the pinned
wheel. Output: Problems with the file and line of the record field, page line or sample line.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable, Iterable, Iterator

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ..core.errors import Problem
from ..core.load import KB, Record
from ..core.schema import Checked, EnvVar, ErrorEntry, Model, Names
from ..core.yamlload import KeyPath, normalize
from ..wheel.coverage import API_TOKEN, _strings
from ..wheel.messages import VALUE, found_native, matches
from ..wheel.wheel import ENV_TOKEN, WheelIndex
from .pages import Page

# A stated version constraint: `torch>=2.11.0,<=2.15.0`, `Python >=3.11`, `libtpu>=0.0.50`.
CONSTRAINT = re.compile(
    r"(?i)(?<![\w-])(torch|libtpu|python)\s*((?:===|==|>=|<=|~=|!=|<|>)\s*\d[\w.*]*"
    r"(?:\s*,\s*(?:==|>=|<=|~=|!=|<|>)\s*\d[\w.*]*)*)"
)
PATHLIKE = re.compile(r"[\w./-]+\.(?:py|so|txt|json)\b|\bMETADATA\b")
SHELL_MODULE = re.compile(r"\bpython3?\s+(?:-\w+\s+)*-m\s+([\w.]+)")


@dataclass
class Allowed:
    """Names the handbook states that are not the package's: outdated spellings and other projects'."""

    outdated: set[str] = field(default_factory=set)
    elsewhere: set[str] = field(default_factory=set)

    def __contains__(self, name: str) -> bool:
        return name in self.outdated or name in self.elsewhere


def check_names(
    kb: KB,
    pages: Iterable[Page],
    snippets: Path,
    index: WheelIndex,
    pin: str,
    shown_root: Path,
    others: frozenset[str] = frozenset(),
    reuse: Reuse | None = None,
) -> list[Problem]:
    """Every way the handbook can disagree with the wheel, as Problems. ``others`` are the framework
    pins a record may be checked against instead (``kb.wheel.fwwheels`` holds those records to their wheels).

    ``reuse(parts, make)``: ``make()``'s problems, or a copy of those kept for the same ``parts``,
    which name the page or sample checked and its text; the caller's key adds the KB, the wheel,
    the pin and ``others`` (under serve, kb/mkdocs/project.py)."""
    allowed = allowed_names(kb, index)
    once = reuse or fresh
    problems = list(once(["records"], partial(_check_records, kb, index, pin, allowed, others)))
    for page in pages:
        problems += once(
            ["page", page.shown, page.text], partial(check_text_lines, page.shown, page.text, 1, index, allowed)
        )
    if snippets.is_dir():
        for path in sorted(snippets.rglob("*")):
            if path.suffix in _SAMPLES:
                shown, text = path.relative_to(shown_root).as_posix(), normalize(path.read_text("utf-8", "replace"))
                problems += once(["sample", shown, text], partial(_SAMPLES[path.suffix], shown, text, index, allowed))
    return problems


Reuse = Callable[[list[str], Callable[[], list[Problem]]], list[Problem]]


def fresh(parts: list[str], make: Callable[[], list[Problem]]) -> list[Problem]:
    """The ``Reuse`` that keeps nothing: ``make()`` every time."""
    return make()


def _check_records(kb: KB, index: WheelIndex, pin: str, allowed: Allowed, others: frozenset[str]) -> list[Problem]:
    problems: list[Problem] = []
    for records in kb.tables.values():
        for rec in records:
            problems += check_record(rec, index, pin, allowed, others)
    return problems


def allowed_names(kb: KB, index: WheelIndex) -> Allowed:
    """Outdated spellings (declared by ``spelling: outdated`` records) and names other projects own."""
    allowed = Allowed()
    for records in kb.tables.values():
        for rec in records:
            model = rec.model
            if not isinstance(model, Names):
                continue
            allowed.elsewhere |= set(model.elsewhere)
            if isinstance(model, EnvVar) and model.read_by != "torch-tpu":
                allowed.elsewhere.add(model.name)
            if model.spelling == "outdated":
                for text in _strings(model.model_dump(exclude={"current", "sources", "conflicts"})):
                    allowed.outdated |= {t for t in _tokens(text) if not _known(t, index)}
    return allowed


# ---- records ----


def check_record(
    rec: Record[Model], index: WheelIndex, pin: str, allowed: Allowed, others: frozenset[str] = frozenset()
) -> list[Problem]:
    model = rec.model
    problems: list[Problem] = []
    found = f"in {pin}"
    if isinstance(model, Checked) and model.checked_against != pin and model.checked_against not in others:
        also = f", or a line of frameworks.pin: {', '.join(sorted(others))}" if others else ""
        problems.append(
            _at(
                rec, ("checked_against",), f"'{model.checked_against}' is not the pinned release (expected {pin}{also})"
            )
        )
    if isinstance(model, Names):
        for kind, names in (("api", model.api), ("env", model.env), ("backend", model.backend)):
            for i, name in enumerate(names):
                if not _has(kind, name, index):
                    problems.append(
                        _at(rec, (kind, i), f"'{name}' is not {found} (expected a name the wheel defines{_hint(kind)})")
                    )
        outdated = model.spelling == "outdated"
        if outdated and not model.current:
            problems.append(
                _at(rec, ("spelling",), "spelling: outdated without 'current' (expected the name the package uses)")
            )
        if model.current and not _known(model.current, index):
            problems.append(_at(rec, ("current",), f"current name '{model.current}' is not {found} either"))
        if isinstance(model, EnvVar) and model.read_by == "torch-tpu":
            in_wheel = index.has_env(model.name)
            if outdated and in_wheel:
                problems.append(
                    _at(rec, ("name",), f"'{model.name}' is marked outdated but {pin} has it (expected it current)")
                )
            elif not outdated and not in_wheel:
                problems.append(
                    _at(
                        rec,
                        ("name",),
                        f"'{model.name}' is not {found} (expected a variable the wheel reads, "
                        "or 'spelling: outdated' with 'current:')",
                    )
                )
        if not outdated:
            problems += _prose(rec, index, allowed, found)
    problems += _locators(rec, index)
    problems += _constraints_in_record(rec, index)
    return problems


def _prose(rec: Record[Model], index: WheelIndex, allowed: Allowed, found: str) -> list[Problem]:
    problems = []
    for key, text in _fields(rec.model):
        for token in _tokens(text):
            if token not in allowed and not _known(token, index):
                problems.append(
                    _at(
                        rec,
                        (key,),
                        f"names '{token}', which is not {found} (expected a name the wheel has, or the "
                        "record marked 'spelling: outdated', or the name listed under 'elsewhere')",
                    )
                )
    return problems


def _locators(rec: Record[Model], index: WheelIndex) -> list[Problem]:
    problems = []
    for i, ref in enumerate(getattr(rec.model, "sources", [])):
        if ref.id != "wheel":
            continue
        for token in PATHLIKE.findall(ref.locator):
            if not _wheel_file(token, index):
                problems.append(
                    _at(
                        rec,
                        ("sources", i, "locator"),
                        f"locator names '{token}', which is not a file in the wheel "
                        "(expected a path such as torch_tpu/_internal/..., or a .so file name)",
                    )
                )
    return problems


def _wheel_file(token: str, index: WheelIndex) -> bool:
    if token == "METADATA":
        return True
    if "/" in token:
        return token in index.files
    return any(f.rsplit("/", 1)[-1] == token for f in index.files)


def _constraints_in_record(rec: Record[Model], index: WheelIndex) -> list[Problem]:
    """Ranges the record states; ``conflicts`` and ``corrects`` quote what other sources said."""
    return [
        _at(rec, (key,), message)
        for key, text in _fields(rec.model)
        if key not in ("conflicts", "corrects")
        for message in constraint_problems(text, index)
    ]


def constraint_problems(text: str, index: WheelIndex) -> list[str]:
    """A stated range must equal the wheel's METADATA; a single pin must fall inside it."""
    out = []
    for m in CONSTRAINT.finditer(text):
        what, spec = m.group(1).lower(), re.sub(r"\s+", "", m.group(2))
        wheel_spec = index.requires_python if what == "python" else index.requires.get(what)
        if wheel_spec is None:
            continue
        label = "Requires-Python" if what == "python" else f"Requires-Dist {what}"
        if spec.startswith("==") and "," not in spec:
            try:
                inside = Version(spec[2:]) in SpecifierSet(wheel_spec)
            except (InvalidVersion, InvalidSpecifier):
                inside = False
            if not inside:
                out.append(f"'{m.group(0)}' is outside the wheel's {label} {wheel_spec}")
        elif _spec_set(spec) != _spec_set(wheel_spec):
            out.append(f"states '{m.group(0)}' but the wheel's METADATA says {label} {wheel_spec} (expected the same)")
    return out


def _spec_set(spec: str) -> set[str]:
    return {s for s in spec.replace(" ", "").split(",") if s}


# ---- error messages ----


def check_errors(kb: KB, index: WheelIndex) -> list[Problem]:
    """Every ``errors`` entry's text is in the wheel, in the file it names, raised as it says."""
    release = f"{index.project} {index.version}"
    problems = []
    for rec in kb.rows("errors", ErrorEntry):
        e = rec.model
        suffix = ".py" if e.origin == "python" else ".so"
        if e.file not in index.files or not e.file.endswith(suffix):
            problems.append(
                _at(
                    rec,
                    ("file",),
                    f"'{e.file}' is not a {e.origin} file of {release} "
                    f"(expected the wheel path of the {suffix} file that prints the message)",
                )
            )
            continue
        if e.origin == "native":
            if not found_native(e.message, index.native_texts):
                problems.append(_not_found(rec, release, "a string of the native libraries"))
            continue
        hits = [m for m in index.messages if m.file == e.file and matches(e.message, m.text)]
        if not hits:
            problems.append(_not_found(rec, release, f"a raise or warn of {e.file}"))
        elif e.kind is not None and all(m.kind != e.kind for m in hits):
            raised = ", ".join(sorted({f"{m.kind} (line {m.line})" for m in hits}))
            problems.append(_at(rec, ("kind",), f"{e.file} raises it as {raised}, not {e.kind} (expected the same)"))
    return problems


def _not_found(rec: Record[Model], release: str, where: str) -> Problem:
    return Problem(
        rec.path,
        rec.line_of("message"),
        f"message text not found in {release} (expected the words exactly as {where} has them, "
        f"each value formatted into it written {VALUE})",
    )


# ---- pages and samples ----


def check_text_lines(shown: str, text: str, first_line: int, index: WheelIndex, allowed: Allowed) -> list[Problem]:
    """Names and version ranges on every line of a page (prose and code alike)."""
    problems = []
    for n, line in enumerate(text.splitlines(), first_line):
        for token in _tokens(line):
            if token not in allowed and not _known(token, index):
                problems.append(
                    Problem(
                        shown,
                        n,
                        f"names '{token}', which is not in the pinned wheel "
                        "(expected a name the wheel has, or one a KB record marks outdated)",
                    )
                )
        problems += [Problem(shown, n, msg) for msg in constraint_problems(line, index)]
    return problems


def check_python_sample(shown: str, source: str, index: WheelIndex, allowed: Allowed) -> list[Problem]:
    """Names a Python sample uses, read through ``ast`` (comments and docstrings don't count)."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [Problem(shown, exc.lineno or 1, f"not valid Python ({exc.msg})")]
    aliases: dict[str, str] = {}
    problems: list[Problem] = []

    def bad(node: ast.AST, name: str, what: str) -> None:
        problems.append(
            Problem(shown, getattr(node, "lineno", 1), f"uses {what} '{name}', which is not in the pinned wheel")
        )

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                if _ours(a.name) and not _known(a.name, index) and a.name not in allowed:
                    bad(node, a.name, "module")
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                aliases[a.asname or a.name] = full
                if _ours(full) and not _known(full, index) and full not in allowed:
                    bad(node, full, "name")
    seen: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in seen:
            for inner in ast.walk(node):
                seen.add(id(inner))
            dotted = _chain(node, aliases)
            if dotted and _ours(dotted) and dotted not in allowed and not _known_prefix(dotted, index):
                bad(node, dotted, "name")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            for token in ENV_TOKEN.findall(node.value) if ENV_TOKEN.fullmatch(node.value) else []:
                if token not in allowed and not index.has_env(token):
                    bad(node, token, "env var")
            for mod in SHELL_MODULE.findall(node.value):
                if _ours(mod) and not _known(mod, index):
                    bad(node, mod, "module")
    return problems


def check_shell_sample(shown: str, source: str, index: WheelIndex, allowed: Allowed) -> list[Problem]:
    """Env vars, ``python -m`` modules and package names in a shell sample, comments left out."""
    problems = []
    for n, line in enumerate(source.splitlines(), 1):
        code = _strip_shell_comment(line)
        for token in ENV_TOKEN.findall(code):
            if token not in allowed and not index.has_env(token):
                problems.append(Problem(shown, n, f"uses env var '{token}', which is not in the pinned wheel"))
        for mod in SHELL_MODULE.findall(code):
            if _ours(mod) and not _known(mod, index):
                problems.append(Problem(shown, n, f"runs module '{mod}', which is not in the pinned wheel"))
        for token in API_TOKEN.findall(code):
            if token not in allowed and not _known(token, index) and token not in SHELL_MODULE.findall(code):
                problems.append(Problem(shown, n, f"uses name '{token}', which is not in the pinned wheel"))
        problems += [Problem(shown, n, msg) for msg in constraint_problems(code, index)]
    return problems


def _strip_shell_comment(line: str) -> str:
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


# ---- helpers ----


def _chain(node: ast.expr, aliases: dict[str, str]) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    root = aliases.get(node.id, node.id)
    return ".".join([root, *reversed(parts)])


def _ours(dotted: str) -> bool:
    return dotted == "torch_tpu" or dotted.startswith(("torch.tpu", "torch_tpu."))


def _known(name: str, index: WheelIndex) -> bool:
    if ENV_TOKEN.fullmatch(name) or re.fullmatch(r"[A-Z][A-Z0-9_]*", name):
        return index.has_env(name)
    if name == "torch_tpu":
        return True
    return index.resolve(name)


def _known_prefix(dotted: str, index: WheelIndex) -> bool:
    """A chain the wheel defines, or an enum member's ``.value`` / ``.name`` (run-time attributes)."""
    if index.resolve(dotted):
        return True
    head, _, last = dotted.rpartition(".")
    return last in {"value", "name"} and index.resolve(head)


def _has(kind: str, name: str, index: WheelIndex) -> bool:
    if kind == "env":
        return index.has_env(name)
    if kind == "backend":
        return name in index.backends
    return _known(name, index)


def _hint(kind: str) -> str:
    return {
        "api": ", e.g. torch.tpu.precision",
        "env": " in its code or string tables",
        "backend": ", one of the backend names the wheel registers",
    }[kind]


def _tokens(text: str) -> Iterator[str]:
    yield from API_TOKEN.findall(text)
    yield from ENV_TOKEN.findall(text)


def _fields(model: Model) -> Iterator[tuple[str, str]]:
    """(top-level field, text) for every string in a record, nested ones included.

    Left out: sources (locators are checked apart), the name lists (checked one by one) and an
    env var's own name (checked against what the package reads)."""
    skip = {"sources", "elsewhere", "current", "api", "env", "backend"} | (
        {"name"} if isinstance(model, EnvVar) else set()
    )
    for key, value in model.model_dump(exclude=skip).items():
        for text in _strings(value):
            yield key, text


def _at(rec: Record[Model], path: KeyPath, message: str) -> Problem:
    return Problem(rec.path, rec.line_of(*path), f"{rec.where(*path)}: {message}")


_SAMPLES: dict[str, Callable[[str, str, WheelIndex, Allowed], list[Problem]]] = {
    ".py": check_python_sample,
    ".sh": check_shell_sample,
}
