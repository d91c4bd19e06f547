"""A strict YAML reader that keeps the line of every mapping key and list item.

PyYAML's defaults lose data quietly: the last of two duplicate keys wins, ``no`` and ``on``
become booleans, and an impossible date crashes with no line. This reader parses once with
libyaml's node composer, rejects duplicate keys, reads only ``true``/``false`` as booleans,
leaves dates as strings (the schema checks them) and records where everything came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import Problem

try:  # libyaml is much faster; fall back to the pure-Python parser where it is missing.
    _Base = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Base = yaml.SafeLoader

_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")


class StrictLoader(_Base):  # type: ignore[misc, valid-type]
    """SafeLoader without the timestamp and yes/no/on/off resolvers."""


StrictLoader.yaml_implicit_resolvers = {
    first: [
        (tag, regexp)
        for tag, regexp in resolvers
        if tag not in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:bool")
    ]
    for first, resolvers in _Base.yaml_implicit_resolvers.items()
}
StrictLoader.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL, list("tTfF"))


class ConfigLoader(StrictLoader):
    """For mkdocs.yml: its tags (``!ENV``, ``!relative``, ``!!python/name:...``) read as plain text."""


ConfigLoader.add_multi_constructor("", lambda loader, suffix, node: f"{node.tag} {node.value}")


@dataclass
class Located:
    """A parsed document plus the 1-based line of each value, keyed by its path."""

    data: Any
    lines: dict[tuple, int] = field(default_factory=dict)

    def line(self, path: tuple, default: int = 1) -> int:
        """The line of ``path`` or of its nearest ancestor that has one."""
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get((), default)


class YAMLProblem(Exception):
    """A file that cannot be read as the expected YAML, with its location."""

    def __init__(self, problem: Problem):
        self.problem = problem
        super().__init__(str(problem))


def read_text(path: Path, shown: str) -> str:
    """Read UTF-8 text; bad bytes are reported with their line."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise YAMLProblem(
            Problem(shown, line, f"byte 0x{raw[exc.start]:02x} is not valid UTF-8 (expected UTF-8 text)")
        ) from None


def parse(text: str, shown: str, loader_class: type = StrictLoader) -> Located:
    """Parse one YAML document into plain data with line numbers."""
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        what = " ".join(str(x) for x in (exc.context, exc.problem) if x)
        raise YAMLProblem(Problem(shown, line, f"malformed YAML: {what} (expected valid YAML)")) from None
    except yaml.YAMLError as exc:
        raise YAMLProblem(Problem(shown, 1, f"malformed YAML: {exc} (expected valid YAML)")) from None
    finally:
        loader.dispose()
    if node is None:
        raise YAMLProblem(Problem(shown, 1, "file is empty (expected a list of records)"))
    located = Located(None)
    located.data = _build(node, (), located, shown, loader)
    return located


def load_file(path: Path, shown: str) -> Located:
    """Read and parse ``path``; ``shown`` is the name used in messages."""
    return parse(read_text(path, shown), shown)


def _build(node: yaml.Node, path: tuple, out: Located, shown: str, loader: Any) -> Any:
    out.lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise YAMLProblem(Problem(shown, key_node.start_mark.line + 1, "a key must be a plain string"))
            key = key_node.value
            if key == "<<":
                raise YAMLProblem(
                    Problem(
                        shown, key_node.start_mark.line + 1, "merge keys (<<) are not supported; write the fields out"
                    )
                )
            if key in result:
                first = out.lines[path + (key,)]
                raise YAMLProblem(
                    Problem(
                        shown,
                        key_node.start_mark.line + 1,
                        f"duplicate key '{key}' (first defined on line {first}; expected each key once)",
                    )
                )
            out.lines[path + (key,)] = key_node.start_mark.line + 1
            result[key] = _build(value_node, path + (key,), out, shown, loader)
            out.lines[path + (key,)] = key_node.start_mark.line + 1
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_build(item, path + (i,), out, shown, loader) for i, item in enumerate(node.value)]
    try:
        return loader.construct_object(node, deep=True)
    except yaml.YAMLError as exc:
        raise YAMLProblem(Problem(shown, node.start_mark.line + 1, f"unreadable value: {exc}")) from None
