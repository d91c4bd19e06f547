"""A strict YAML reader that keeps the line of every mapping key and list item.

PyYAML's defaults lose data quietly: the last of two duplicate keys wins, ``no`` and ``on``
become booleans, and an impossible date crashes with no line. This reader composes nodes with
libyaml, rejects duplicate keys, reads only ``true``/``false`` as booleans, leaves dates as
strings (the schema checks them) and records where everything came from.

Every input is untrusted, so limits are checked before any node or Python object is built:
the size of the text, its characters (no control, bidi or other invisible format characters,
no tabs, no carriage return but in a CRLF line end, which ``read_text`` reads as LF), then, on
libyaml's event stream (an iterative parser, read with a flat loop), the nesting depth, the
number of nodes, the length of each value, and no anchors, aliases or explicit tags. Only then
does PyYAML's composer (which recurses once per level) build the node tree. Each limit fails
with ``path:line`` and what was expected.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import Problem, escape_text

try:  # libyaml is much faster; fall back to the pure-Python parser where it is missing.
    _Base = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Base = yaml.SafeLoader  # type: ignore[misc, assignment]  # same interface; mypy checks against CSafeLoader

_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")


@dataclass(frozen=True)
class Limits:
    """What one YAML text may hold. The real tables use a small fraction of each (see the comments)."""

    max_bytes: int = 2_000_000  # the largest table is 67 KB; a bigger one is split into parts
    max_depth: int = 32  # tables nest 4 levels, mkdocs.yml 5
    max_nodes: int = 50_000  # the largest table file has about 2,800 nodes
    max_scalar: int = 10_000  # the longest value is under 1,000 characters
    explicit_tags: bool = False  # '!!timestamp 2026-13-45' and friends crash PyYAML's constructors


LIMITS = Limits()

# Characters no YAML text here may contain: C0 controls but the line feed (so tabs and carriage
# returns too), DEL and C1 controls, the Unicode line and paragraph separators (libyaml counts
# them as line breaks, so every later line number would be wrong) and every format character
# (category Cf: bidi overrides and isolates, zero-width spaces and joiners, soft hyphens, a byte
# order mark past the start, tag characters). tests/core/test_yamlload.py checks the Cf ranges
# against unicodedata.
FORBIDDEN = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029"
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)
_BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


class StrictLoader(_Base):
    """SafeLoader without the timestamp and yes/no/on/off resolvers."""

    limits = LIMITS


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

    limits = Limits(explicit_tags=True)


ConfigLoader.add_multi_constructor("", lambda loader, suffix, node: f"{node.tag} {node.value}")


KeyPath = tuple[str | int, ...]  # where a value is in a document: mapping keys and list indexes


@dataclass
class Located:
    """A parsed document plus the 1-based line of each value, keyed by its path."""

    data: Any
    lines: dict[KeyPath, int] = field(default_factory=dict)

    def line(self, path: KeyPath, default: int = 1) -> int:
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


def read_text(path: Path, shown: str, limits: Limits = LIMITS) -> str:
    """Read UTF-8 text from a regular file of at most ``limits.max_bytes``; bad bytes are reported with their line."""
    try:
        if not path.is_file():  # a folder, FIFO or device would fail, block or never end
            raise YAMLProblem(Problem(shown, 1, "not a regular file (expected a YAML file)"))
        with path.open("rb") as handle:
            raw = handle.read(limits.max_bytes + 1)
    except OSError as exc:
        raise YAMLProblem(
            Problem(shown, 1, f"cannot be read: {exc.strerror or exc} (expected a readable file)")
        ) from None
    if len(raw) > limits.max_bytes:
        raise YAMLProblem(Problem(shown, 1, _too_big(limits)))
    return decode(raw, shown)


def decode(raw: bytes, shown: str) -> str:
    """The UTF-8 text of a file as every check reads it (``normalize``); bad bytes are reported with their line."""
    try:
        return normalize(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise YAMLProblem(
            Problem(shown, line, f"byte 0x{raw[exc.start]:02x} is not valid UTF-8 (expected UTF-8 text)")
        ) from None


def normalize(text: str) -> str:
    """``text`` as if saved on Unix: a leading byte order mark dropped and each CRLF read as LF.

    Windows editors write both, and MkDocs reads pages the same way (``utf-8-sig``, universal
    newlines). Line numbers don't move: a CRLF is one line end either way. A carriage return not
    followed by a line feed stays, for ``check_characters`` to refuse at its line. The file itself
    is never rewritten.
    """
    return text.removeprefix("\ufeff").replace("\r\n", "\n")


def _too_big(limits: Limits) -> str:
    return (
        f"YAML text is larger than {limits.max_bytes / 1e6:g} MB (expected at most that; "
        "split a table into <table>.<part>.yml files)"
    )


def check_characters(text: str, shown: str, first_line: int = 1, *, allow: str = "") -> Problem | None:
    """The first forbidden character of ``text`` (see ``FORBIDDEN``) as a Problem, or None.

    ``text`` is as ``read_text`` returns it, its leading byte order mark dropped: one left is a
    second. ``allow`` lists characters to let through (pages allow tabs, which code blocks need).
    ``first_line`` is the line ``text`` starts on in ``shown``.
    """
    match, more = None, 0
    for found in FORBIDDEN.finditer(text):
        if found.group() in allow:
            continue
        if match is None:
            match = found
        else:
            more += 1
    if match is None:
        return None
    line = first_line + text.count("\n", 0, match.start())
    suffix = f"; {more} more in this file" if more else ""
    return Problem(shown, line, describe_character(match.group(), suffix))


def describe_character(ch: str, suffix: str = "") -> str:
    """What a forbidden character is, and what was expected instead."""
    code = f"U+{ord(ch):04X}"
    name = unicodedata.name(ch, "")
    if ch == "\t":
        return f"control character {code} (tab) (expected spaces{suffix})"
    if ch == "\r":
        return f"control character {code} (carriage return) (expected line ends \\n or \\r\\n, not a lone \\r{suffix})"
    if ch == "\ufeff":
        return f"byte order mark {code} after the start of the file (expected one at most, first{suffix})"
    if ch in "\u2028\u2029":
        return f"{name.lower()} {code} (expected a plain line break, \\n{suffix})"
    if ch in _BIDI:
        return (
            f"invisible bidi control {code} ({name}) (expected visible text: it can make a line read "
            f"differently from what it holds{suffix})"
        )
    if unicodedata.category(ch) == "Cf":
        return f"invisible format character {code} ({name}) (expected visible text{suffix})"
    return f"control character {code} (expected printable text{suffix})"


def parse(text: str, shown: str, loader_class: type[StrictLoader] = StrictLoader) -> Located:
    """Parse one YAML document into plain data with line numbers, within ``loader_class.limits``."""
    limits: Limits = getattr(loader_class, "limits", LIMITS)
    if len(text) > limits.max_bytes or len(text.encode("utf-8", "surrogatepass")) > limits.max_bytes:
        raise YAMLProblem(Problem(shown, 1, _too_big(limits)))
    problem = check_characters(text, shown)
    if problem:
        raise YAMLProblem(problem)
    loader = None
    try:
        _check_events(text, shown, loader_class, limits)  # bounded: stops at the first limit
        loader = loader_class(text)
        node = loader.get_single_node()  # recursive, but the depth is known to be small now
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        what = " ".join(str(x) for x in (exc.context, exc.problem) if x)
        raise YAMLProblem(Problem(shown, line, f"malformed YAML: {what} (expected valid YAML)")) from None
    except yaml.YAMLError as exc:
        raise YAMLProblem(Problem(shown, 1, f"malformed YAML: {exc} (expected valid YAML)")) from None
    finally:
        if loader is not None:
            loader.dispose()
    if node is None:
        raise YAMLProblem(Problem(shown, 1, "file is empty (expected a list of records)"))
    located = Located(None)
    located.data = _build(node, (), located, shown, loader)
    return located


def _check_events(text: str, shown: str, loader_class: type[StrictLoader], limits: Limits) -> None:
    """Walk libyaml's event stream once, flat, and raise at the first event past a limit."""
    depth = nodes = 0
    events = yaml.parse(text, Loader=loader_class)
    try:
        for event in events:
            if isinstance(event, (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                line = event.start_mark.line + 1 if event.start_mark else 1
                nodes += 1
                if nodes > limits.max_nodes:
                    raise YAMLProblem(
                        Problem(
                            shown,
                            line,
                            f"more than {limits.max_nodes:,} values in one file (expected fewer; "
                            "split a table into <table>.<part>.yml files)",
                        )
                    )
                if event.anchor is not None:
                    raise YAMLProblem(
                        Problem(
                            shown,
                            line,
                            f"anchor '&{event.anchor}' (expected no anchors or aliases: write each value out)",
                        )
                    )
                if event.tag is not None and not limits.explicit_tags:
                    tag = event.tag.replace("tag:yaml.org,2002:", "!!", 1)
                    raise YAMLProblem(
                        Problem(
                            shown,
                            line,
                            f"explicit tag '{tag}' (expected a plain value without a tag; quote it to make it text)",
                        )
                    )
                if isinstance(event, yaml.ScalarEvent):
                    _check_scalar(event, shown, line, limits)
                else:
                    depth += 1
                    if depth > limits.max_depth:
                        raise YAMLProblem(
                            Problem(
                                shown,
                                line,
                                f"nested more than {limits.max_depth} levels deep "
                                f"(expected at most {limits.max_depth}; the tables need 4)",
                            )
                        )
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
            elif isinstance(event, yaml.AliasEvent):
                raise YAMLProblem(
                    Problem(
                        shown,
                        event.start_mark.line + 1 if event.start_mark else 1,
                        f"alias '*{event.anchor}' (expected no anchors or aliases: write each value out)",
                    )
                )
    finally:
        events.close()  # type: ignore[attr-defined]  # yaml.parse is a generator; its stub says Iterator


def _check_scalar(event: yaml.ScalarEvent, shown: str, line: int, limits: Limits) -> None:
    value = event.value
    if len(value) > limits.max_scalar:
        raise YAMLProblem(
            Problem(
                shown,
                line,
                f"value of {len(value):,} characters (expected at most {limits.max_scalar:,})",
            )
        )
    # The text itself is clean by now, so a bad character here was written as an escape ("\t", "\u202e").
    match = FORBIDDEN.search(value)
    if match:
        raise YAMLProblem(Problem(shown, line, describe_character(match.group(), "; written as an escape")))


def load_file(path: Path, shown: str) -> Located:
    """Read and parse ``path``; ``shown`` is the name used in messages."""
    return parse(read_text(path, shown), shown)


def _build(node: yaml.Node, path: KeyPath, out: Located, shown: str, loader: StrictLoader) -> Any:
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
                        f"duplicate key '{escape_text(key)}' (first defined on line {first}; expected each key once)",
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
    except Exception as exc:  # PyYAML's constructors raise ValueError and others for odd values
        what = escape_text(str(getattr(exc, "problem", None) or exc))
        raise YAMLProblem(
            Problem(shown, node.start_mark.line + 1, f"unreadable value: {what} (expected a plain value)")
        ) from None
