"""The migration scanner's rules: read from the ``migration_rules`` table and indexed for matching.

A rule's ``match`` names one pattern (see ``schema.Match``). Call and attribute paths match the
dotted path the code resolves to after following its imports and aliases:

- ``torch.cuda.synchronize`` matches exactly that path;
- ``torch.cuda.*`` matches any path under ``torch.cuda`` (not ``torch.cuda`` itself);
- ``*.cuda`` matches a method or attribute named ``cuda`` on any object (``model.cuda()``), and
  ``*.a.b`` an access ending in ``.a.b``.

Rules are compiled once into plain frozen dataclasses (cheap to pickle into worker processes) and
indexed by kind, so matching a call costs a dict lookup plus the few wildcard rules. A compiled rule
holds no pydantic model, and this module imports the table's schema only to read a table: a scan
whose rules come from kb.scan.rulecache never imports pydantic.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..core.errors import KBError, Problem
from ..core.yamlload import ConfigLoader, YAMLProblem, parse

if TYPE_CHECKING:
    from ..core.schema import Detector, Fix, MigrationRule

TABLE = "migration_rules"
SEVERITIES = ("must-change", "review", "info")


@dataclass(frozen=True)
class PathPattern:
    """A dotted path pattern: ``exact``, ``prefix`` (``a.b.*``) or ``suffix`` (``*.a.b``)."""

    mode: str
    text: str  # the path without its wildcard

    @classmethod
    def parse(cls, pattern: str) -> PathPattern:
        if pattern.startswith("*."):
            return cls("suffix", pattern[2:])
        if pattern.endswith(".*"):
            return cls("prefix", pattern[:-2])
        return cls("exact", pattern)

    def matches(self, path: str | None, chain: str) -> bool:
        """``path`` is the resolved dotted path (None when the root is not an import); ``chain``
        is the access as written (``model.cuda``, or ``.cuda`` when the root is an expression)."""
        if self.mode == "suffix":
            tail = "." + self.text
            return chain.endswith(tail) or (path is not None and path.endswith(tail))
        if path is None:
            return False
        if self.mode == "prefix":
            return path.startswith(self.text + ".")
        return path == self.text


@dataclass(frozen=True)
class RuleFix:
    """A rule's mechanical rewrite, as the table's ``fix:`` declares it (checked by ``schema.Fix``)."""

    kind: str  # one of schema.FIX_KINDS
    to: str | None = None
    expression: str | None = None
    literal: str | None = None
    guard: bool = False

    @classmethod
    def of(cls, fix: Fix) -> RuleFix:
        return cls(fix.kind, fix.to, fix.expression, fix.literal, fix.guard)


@dataclass(frozen=True)
class ScanRule:
    """One compiled rule: what it matches and what a finding says."""

    id: str
    code: str  # the stable code users select, ignore and silence with noqa (TPU101)
    kind: str  # call | attribute | keyword | imports | detector
    pattern: str  # the path, module prefix or detector name; for keyword, the keyword name
    severity: str
    message: str
    suggestion: str
    page: str
    link: str
    value: tuple[str | bool, ...] = ()  # keyword: the values it matches (none: any value)
    call: PathPattern | None = None  # keyword: only on calls matching this
    path: PathPattern | None = None  # call and attribute
    fix: RuleFix | None = None  # the mechanical rewrite, when there is one


@dataclass
class PatternIndex:
    """Rules over dotted paths: exact ones by path, ``*.a.b`` ones by their last name, ``a.b.*`` in a list."""

    exact: dict[str, list[ScanRule]] = field(default_factory=dict)
    suffix: dict[str, list[ScanRule]] = field(default_factory=dict)
    prefix: list[ScanRule] = field(default_factory=list)
    any_rule: bool = False
    # The same (path, chain) recurs across a repository (`x.to`, `torch.zeros`): remember the answer.
    _memo: dict[tuple[str | None, str], tuple[ScanRule, ...]] = field(default_factory=dict, repr=False, compare=False)

    def add(self, rule: ScanRule) -> None:
        assert rule.path is not None
        self.any_rule = True
        self._memo.clear()
        if rule.path.mode == "exact":
            self.exact.setdefault(rule.path.text, []).append(rule)
        elif rule.path.mode == "suffix":
            self.suffix.setdefault(rule.path.text.rpartition(".")[2], []).append(rule)
        else:
            self.prefix.append(rule)

    def match(self, path: str | None, chain: str) -> tuple[ScanRule, ...]:
        key = (path, chain)
        hit = self._memo.get(key)
        if hit is None:
            if len(self._memo) > 100_000:
                self._memo.clear()
            hit = self._memo[key] = tuple(self._match(path, chain))
        return hit

    def _match(self, path: str | None, chain: str) -> list[ScanRule]:
        found: list[ScanRule] = []
        if path is not None:
            found += self.exact.get(path, ())
            found += [r for r in self.prefix if r.path is not None and r.path.matches(path, chain)]
        last = chain.rpartition(".")[2]
        if last in self.suffix:
            found += [r for r in self.suffix[last] if r.path is not None and r.path.matches(path, chain)]
        elif path is not None and path.rpartition(".")[2] in self.suffix:
            found += [r for r in self.suffix[path.rpartition(".")[2]] if r.path and r.path.matches(path, chain)]
        return found

    def __bool__(self) -> bool:
        return self.any_rule


PROBE = "torch.cuda.is_available"  # the CUDA probe: a guard's test, and only an answer in a log line
# the detectors whose finding sits where a device value is written (kb.scan.scan device_uses)
DEVICE_RULES: frozenset[Detector] = frozenset({"cuda-device-string", "cuda-fstring", "rank-device-index"})
_RAISING_DETECTORS = frozenset(
    {"triton-launch", "cuda-extension-call", "optional-import-call", "cuda-sources", "cuda-extension-import"}
    | {"rank-device-index", "assert-is-cuda"}
)


@dataclass
class RuleSet:
    """Every rule, indexed by what it matches."""

    rules: list[ScanRule] = field(default_factory=list)
    calls: PatternIndex = field(default_factory=PatternIndex)
    attributes: PatternIndex = field(default_factory=PatternIndex)
    keywords: dict[str, list[ScanRule]] = field(default_factory=dict)
    imports: list[ScanRule] = field(default_factory=list)
    import_index: dict[str, list[ScanRule]] = field(default_factory=dict)  # module -> its imports rules
    detectors: dict[Detector, list[ScanRule]] = field(default_factory=dict)
    # catch-all rules (``a.b.*``) by id, with the length of their prefix: quiet where a rule with a
    # longer prefix, or a rule for one name, spoke at the same place
    broad: dict[str, int] = field(default_factory=dict)
    guarded: frozenset[str] = frozenset()  # rules whose rename is made only under an is_available() test
    cuda_only: frozenset[str] = frozenset()  # torch.cuda rules with no fix: what a cuda-only-guard guards
    attribute_ids: frozenset[str] = frozenset()  # rules that match an attribute read (torch.version.cuda)
    # must-change rules for a call or a read that fails when it runs, or a kernel launch: a function
    # that reaches one fails where it is called (kb.scan.scanreach)
    raising: frozenset[str] = frozenset()
    # must-change rules for an import of a GPU package: a function that uses a name it binds
    # (flash_attn_func) fails where it is called too
    raising_imports: frozenset[str] = frozenset()
    # the rules of DEVICE_RULES' detectors (f"cuda:{i}" is detector cuda-fstring, rule cuda-fstring-device)
    device_ids: frozenset[str] = frozenset()
    probes: frozenset[str] = frozenset()  # the rules that report a call of PROBE
    # the keywords some rule looks for with a value on any call: they may be set before the call
    # (a dict entry, an attribute, a dataclass field), which kb.scan.scan reads as the keyword
    unbound: frozenset[str] = frozenset()
    # (path, chain) of an attribute -> whether it touches CUDA, and what its prefixes match (scan.py):
    # the same chains recur across a repository.
    prefixes: dict[tuple[str | None, str], tuple[bool, tuple[ScanRule, ...]]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @classmethod
    def of(cls, rules: list[ScanRule]) -> RuleSet:
        broad = {r.id: len(r.path.text) for r in rules if r.path is not None and r.path.mode == "prefix"}
        guarded = frozenset(r.id for r in rules if r.fix is not None and r.fix.guard)
        cuda = frozenset(r.id for r in rules if r.kind in ("call", "attribute") and r.pattern.startswith("torch.cuda."))
        cuda |= {r.id for r in rules if r.kind == "detector" and r.pattern == "cuda-tensor-type"}  # torch.cuda's too
        unfixed = cuda - {r.id for r in rules if r.fix is not None}
        attribute_ids = frozenset(r.id for r in rules if r.kind == "attribute")
        raising = frozenset(
            r.id
            for r in rules
            if r.severity == "must-change"
            and (r.kind in ("call", "attribute") or r.kind == "detector" and r.pattern in _RAISING_DETECTORS)
        )
        raising_imports = frozenset(r.id for r in rules if r.kind == "imports" and r.severity == "must-change")
        unbound = frozenset(r.pattern for r in rules if r.kind == "keyword" and r.value and r.call is None)
        out = cls(
            list(rules),
            broad=broad,
            guarded=guarded,
            cuda_only=unfixed,
            attribute_ids=attribute_ids,
            raising=raising,
            raising_imports=raising_imports,
            unbound=unbound,
        )
        for rule in rules:
            if rule.kind == "call":
                out.calls.add(rule)
            elif rule.kind == "attribute":
                out.attributes.add(rule)
            elif rule.kind == "keyword":
                out.keywords.setdefault(rule.pattern, []).append(rule)
            elif rule.kind == "imports":
                out.imports.append(rule)
                out.import_index.setdefault(rule.pattern, []).append(rule)
            else:
                name = cast("Detector", rule.pattern)  # the schema took only a Detector here
                out.detectors.setdefault(name, []).append(rule)
        out.device_ids = frozenset(r.id for name in DEVICE_RULES for r in out.detectors.get(name, ()))
        out.probes = frozenset(r.id for r in out.calls.match(PROBE, PROBE))
        return out

    def by_id(self) -> dict[str, ScanRule]:
        return {r.id: r for r in self.rules}


def compile_rule(model: MigrationRule, link: str) -> ScanRule:
    """A ``ScanRule`` from a validated table row."""
    m = model.match
    base = ScanRule(
        id=model.id,
        code=model.code,
        kind="detector",
        pattern="",
        severity=model.severity,
        message=model.message,
        suggestion=model.suggestion,
        page=model.page,
        link=link,
        fix=RuleFix.of(model.fix) if model.fix is not None else None,
    )
    if m.call is not None:
        return replace(base, kind="call", pattern=m.call, path=PathPattern.parse(m.call))
    if m.attribute is not None:
        return replace(base, kind="attribute", pattern=m.attribute, path=PathPattern.parse(m.attribute))
    if m.keyword is not None:
        kw = m.keyword
        call = PathPattern.parse(kw.call) if kw.call is not None else None
        values = (kw.value,) if isinstance(kw.value, (str, bool)) else tuple(kw.value or ())
        return replace(base, kind="keyword", pattern=kw.name, value=values, call=call)
    if m.imports is not None:
        return replace(base, kind="imports", pattern=m.imports)
    assert m.detector is not None  # the schema guarantees exactly one
    return replace(base, pattern=m.detector)


PACKAGED = Path(__file__).parent / "rules"  # where an installed torchtpu-scan keeps its copy (setup.py)


def rule_files(root: Path | None) -> list[Path]:
    """The rules table of the project at ``root`` (``migration_rules.yml`` and its parts), or the
    copy packaged with an installed ``torchtpu-scan`` when ``root`` is None."""
    data = PACKAGED if root is None else root / "docs" / "data"
    main = data / f"{TABLE}.yml"
    return [main, *sorted(data.glob(f"{TABLE}.*.yml"))] if main.is_file() else []


def load_rules(files: list[Path], root: Path, site_url: str | None = None) -> RuleSet:
    """Read and compile the rules; KBError with every problem (bad rows, duplicate ids). Links go
    under ``site_url`` when given, else under mkdocs.yml's ``site_url`` at ``root``."""
    from ..core.load import load_table
    from ..core.schema import MigrationRule

    base = link_base(root, site_url)
    problems: list[Problem] = []
    rules: list[ScanRule] = []
    seen: set[str] = set()
    for path in files:
        shown = _shown(path, root)
        if not path.is_file():
            problems.append(Problem(shown, 1, "no such rules file (expected a migration_rules table)"))
            continue
        records, found = load_table(TABLE, path, shown)
        problems += found
        for rec in records:
            model = rec.narrow(MigrationRule).model
            if model.id in seen or model.code in seen:
                what = f"rule id '{model.id}'" if model.id in seen else f"rule code {model.code}"
                problems.append(Problem(shown, rec.line, f"duplicate {what} (expected unique ids and codes)"))
                continue
            seen |= {model.id, model.code}
            rules.append(compile_rule(model, page_link(model.page, base)))
    if problems:
        raise KBError(problems)
    return RuleSet.of(rules)


@dataclass(frozen=True)
class SiteBase:
    """Where pages are published: ``site_url`` from mkdocs.yml (None when unset) and the URL style."""

    url: str | None
    directory_urls: bool = True


class _Settings(ConfigLoader):
    """mkdocs.yml with ``!ENV NAME`` read from the environment, as MkDocs reads it."""


def _from_env(items: list[str]) -> str | None:
    """``!ENV NAME`` or ``!ENV [NAME, ..., DEFAULT]``: the first variable set, else the default."""
    names, default = (items[:-1], items[-1]) if len(items) > 1 else (items, None)
    return next((os.environ[n] for n in names if n in os.environ), default)


_Settings.add_constructor("!ENV", lambda loader, node: _from_env([str(node.value)]))  # lists: see site_base


def link_base(root: Path, site_url: str | None) -> SiteBase:
    """Where the rules' links point: ``site_url`` when given, else as mkdocs.yml at ``root`` says."""
    return SiteBase(site_url) if site_url else site_base(root)


def site_base(root: Path) -> SiteBase:
    """Read ``site_url`` and ``use_directory_urls`` from mkdocs.yml (as pages.check_nav reads it)."""
    config = root / "mkdocs.yml"
    if not config.is_file():
        return SiteBase(None)
    try:
        data = parse(config.read_text(encoding="utf-8"), "mkdocs.yml", _Settings).data
    except (YAMLProblem, OSError, UnicodeDecodeError):
        return SiteBase(None)
    if not isinstance(data, dict):
        return SiteBase(None)
    url = data.get("site_url")
    if isinstance(url, list):  # !ENV [NAMES..., DEFAULT]: the loader builds every list itself, and no URL is a list
        url = _from_env([str(item) for item in url])
    directory = data.get("use_directory_urls", True)
    return SiteBase(url if isinstance(url, str) and url.strip() else None, directory is not False)


def page_link(page: str, base: SiteBase) -> str:
    """``migrate/x.md#a`` as a URL under ``site_url``, or as written when there is none."""
    if base.url is None:
        return page
    doc, _, anchor = page.partition("#")
    stem = doc[: -len(".md")]
    if base.directory_urls:
        path = "" if stem == "index" else (stem[: -len("index")] if stem.endswith("/index") else stem + "/")
    else:
        path = stem + ".html"
    return base.url.rstrip("/") + "/" + path + (f"#{anchor}" if anchor else "")


def _shown(path: Path, root: Path) -> str:
    try:
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(root)).as_posix()
    except ValueError:
        return path.as_posix()
