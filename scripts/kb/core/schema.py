"""One pydantic model per KB table. Unknown keys are errors (``extra="forbid"``)."""

from __future__ import annotations

import ast
import datetime as dt
import re
from dataclasses import dataclass
from typing import Annotated, Literal, Optional, Union, get_args

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from .escape import UnsafeValue, abbr_line, https_url

Status = Literal["confirmed", "reported", "disputed", "corrected"]
STATUSES: tuple[str, ...] = ("confirmed", "reported", "disputed", "corrected")
SourceKind = Literal["primary", "vendor-docs", "news", "community"]
PRIMARY_KINDS = frozenset({"primary", "vendor-docs"})
Unit = Literal[
    "tokens/s",
    "tokens/day",
    "%",
    "x",
    "GiB",
    "GB",
    "TFLOP/s",
    "models",
    "architectures",
    "chips",
    "devices",
    "ops",
    "passes",
    "bits",
    "entries",
    "contributors",
    "organisations",
    "MiB",
]
UNITS: tuple[str, ...] = get_args(Unit)


def _iso_date(value: object) -> object:
    """Accept an ISO date string (YYYY-MM-DD) and turn it into a date."""
    if isinstance(value, str):
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            raise ValueError(f"'{value}' is not an ISO date (expected YYYY-MM-DD)")
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            raise ValueError(f"'{value}' is not a real date (expected YYYY-MM-DD)") from None
    return value


def _partial_date(value: str) -> str:
    """Accept YYYY, YYYY-MM or YYYY-MM-DD, each a real date."""
    fmt = {4: "%Y", 7: "%Y-%m", 10: "%Y-%m-%d"}.get(len(value))
    if fmt is None or not re.fullmatch(r"\d{4}(-\d{2}){0,2}", value):
        raise ValueError(f"'{value}' is not an ISO date (expected YYYY, YYYY-MM or YYYY-MM-DD)")
    try:
        dt.datetime.strptime(value, fmt)
    except ValueError:
        raise ValueError(f"'{value}' is not a real date (expected YYYY, YYYY-MM or YYYY-MM-DD)") from None
    return value


def _https(value: str) -> str:
    """An absolute https URL that parses; pages write it re-serialised (escape.https_url)."""
    if not re.fullmatch(r"https://[^\s/]+\.[^\s/]+(/\S*)?", value):
        raise ValueError(f"'{value}' is not an absolute https URL (expected https://host/...)")
    try:
        https_url(value)
    except UnsafeValue as exc:
        raise ValueError(f"'{value}' is not a usable URL: {exc}") from None
    return value


def _tooltip_term(value: str) -> str:
    """A glossary term becomes an abbreviation line on every page: it must be one plain line."""
    try:
        abbr_line(value, "")
    except UnsafeValue as exc:
        raise ValueError(f"'{value}' can't be a tooltip term: {exc}") from None
    return value


IsoDate = Annotated[dt.date, BeforeValidator(_iso_date)]
PartialDate = Annotated[
    str,
    BeforeValidator(lambda v: str(v) if isinstance(v, int) and not isinstance(v, bool) else v),
    AfterValidator(_partial_date),
]
HttpsUrl = Annotated[str, AfterValidator(_https)]
Id = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$")]
Text = Annotated[str, Field(min_length=1)]


class Model(BaseModel):
    # defer_build: each model builds its validator when first used, so a command that reads one
    # table (the scanner reads the rules) does not pay for every table's at import.
    # allow_inf_nan=False: YAML's .nan and .inf are numbers, but no figure is one (and JSON has none).
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True, allow_inf_nan=False)


class Noted(Model):
    """An optional free-text note, shown in small print under the record."""

    note: Optional[Text] = None


class SourceRef(Model):
    """A pointer from a record to a source, with where in it the fact is."""

    id: Id
    locator: Text


class Conflict(Model):
    """What one source says, for disputed and corrected records."""

    source: Id
    says: Text


ApiName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")]
EnvName = Annotated[str, Field(pattern=r"^[A-Z][A-Z0-9_]*$")]
BackendName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]
ForeignName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.]*$")]


class Checked(Model):
    """When a record was last verified, and against which release of the package."""

    verified: IsoDate
    checked_against: Text


class Names(Checked):
    """Package names a record states, each checked against the wheel by ``kb check-wheel``.

    ``spelling: outdated`` marks a record that documents an old or mistaken spelling: its
    names are shown as outdated, never as an instruction, and ``current`` is the name the
    package uses. ``elsewhere`` lists names the record mentions that another project owns
    (vLLM, PyTorch, a launcher), so the prose scan does not expect them in the wheel.
    """

    api: list[ApiName] = []
    env: list[EnvName] = []
    backend: list[BackendName] = []
    spelling: Optional[Literal["outdated"]] = None
    current: Optional[Text] = None
    elsewhere: list[ForeignName] = []


class Sourced(Names):
    """Fields shared by every record that states a fact."""

    id: Id
    sources: Annotated[list[SourceRef], Field(min_length=1)]
    status: Status
    conflicts: list[Conflict] = []


Cite = Annotated[str, Field(min_length=1, max_length=48, pattern=r"^[^\n\[\]]*$")]


class Source(Checked, Noted):
    id: Id
    title: Text
    publisher: Text
    cite: Optional[Cite] = None  # the source link's text on pages (publisher and what); else its id
    url: Optional[HttpsUrl] = None
    file: Optional[Text] = None
    published: Optional[PartialDate] = None
    accessed: IsoDate
    kind: SourceKind
    language: Annotated[str, Field(pattern=r"^[a-z]{2}$")]
    # A framework's released wheel (``transformers==5.25.0``, one of ``frameworks.pin``): every
    # locator citing this source is ``FILE:LINE[-LINE] `token` ...``, checked against that wheel.
    wheel: Optional[Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+==[0-9][0-9A-Za-z.+-]*$")]] = None


class Claim(Sourced):
    topic: Text
    statement: Text
    corrects: Optional[Text] = None
    applies_to: Optional[Text] = None


class Conditions(Model):
    model: Optional[Text] = None
    hardware: Optional[Text] = None
    chips: Optional[int] = None
    devices: Optional[int] = None
    seq_len: Optional[int] = None
    workload: Optional[Literal["inference", "training", "serving", "testing", "matmul", "hardware"]] = None
    mode: Optional[Text] = None
    note: Optional[Text] = None


class Figure(Sourced, Noted):
    metric: Text
    value: float
    unit: Unit
    approx: bool = False
    conditions: Conditions
    measured_by: Literal["vendor", "customer", "independent"]
    claimed_by: Text
    topic: Text


class Mode(Sourced):
    kind: Literal["execution", "precision"]
    name: Text
    select: Text  # how code selects the mode, as prose with inline code
    env_var: Optional[Text] = None
    default: bool = False
    behaviour: Text
    cost: Text
    use_when: Text


class Limit(Sourced):
    area: Text
    limit: Text
    impact: Text
    workaround: Text
    roadmap: Literal["current-limit", "planned", "in-progress", "shipped", "not-announced"]


class EnvVar(Sourced):
    name: EnvName
    read_by: Literal["torch-tpu", "pytorch", "xla", "libtpu", "vllm", "launcher", "community"]
    purpose: Text
    values: Text
    default: Text
    read_when: Text
    group: Text


class ApiMap(Sourced):
    topic: Text
    gpu: Text
    tpu: Text
    change: Literal["same", "renamed", "changed", "unsupported"]
    note: Text


class Hardware(Sourced, Noted):
    name: Text
    hbm_gib: float
    bf16_tflops: float
    devices_per_chip: int


class Integration(Sourced, Noted):
    name: Text
    role: Text
    package: Optional[Text] = None


class InternalMessage(Checked):
    """A message the wheel can print that no user code reaches (an internal invariant, a private
    path), with why; with the error index it accounts for every message in ``package.json``."""

    id: Id
    message: Text  # exactly as the inventory spells it, each formatted value written ``…``
    where: Annotated[
        str, Field(pattern=r"^torch_tpu/[A-Za-z0-9_./-]+\.(?:py:[1-9][0-9]*|so)$")
    ]  # file:line, or a library
    reason: Text


Support = Literal["works", "works-with-limits", "not-supported"]
SUPPORT: tuple[str, ...] = get_args(Support)


class Framework(Sourced, Noted):
    """A training or serving framework on a TorchTPU host: one row of the framework matrix.

    ``checked_against`` is the framework's own pin (a line of ``frameworks.pin``), and ``sources``
    cite its wheel; ``floor`` is the oldest release the row holds for, ``ceiling`` the newest one
    checked.
    """

    name: Text
    package: Text
    support: Support
    floor: Text
    ceiling: Optional[Text] = None
    page: Annotated[str, Field(pattern=r"^[a-z0-9/_-]+\.md#[a-z0-9_-]+$")]  # its page and section
    summary: Text  # what it does by itself on a TPU host, in one or two sentences


class Term(Names):
    id: Id
    term: Annotated[str, Field(min_length=1, max_length=80), AfterValidator(_tooltip_term)]
    expansion: Optional[Text] = None
    definition: Text
    sources: list[SourceRef] = []


DottedName = Annotated[str, Field(pattern=r"^(\*\.)?[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*(\.\*)?$")]
Detector = Literal[
    "cuda-device-string",
    "cuda-compare",
    "cuda-fstring",
    "nccl-string",
    "rank-device-index",
    "init-without-backend",
    "load-without-map-location",
    "nonzero",
    "bool-mask-index",
    "item-in-loop",
    "dataloader-fork",
    "compile-cudagraph-mode",
    "fullgraph",
    "cuda-only-guard",
    "cuda-tensor-type",
    "cuda-visible-devices",
    "cpu-else-cuda",
    "is-cuda-test",
    "assert-is-cuda",
    "device-module-call",
    "cuda-sources",
    "nvidia-smi",
    "local-cuda-module",
    "cuda-extension-import",
    "cuda-extension-call",
    "optional-cuda-import",
    "optional-import-call",
    "accelerate-rng-state",
    "lightning-default-accelerator",
    "ray-gpu-resource",
    "triton-kernel",
    "triton-launch",
    "device-dispatch-no-tpu",
    "kernel-package-call",
]


class KeywordMatch(Model):
    """A keyword argument, optionally with its value (a string, or true/false), optionally on one call path."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
    value: Union[bool, Text, list[Text], None] = None  # one value, or any of several strings
    call: Optional[DottedName] = None


class Match(Model):
    """Exactly one declarative pattern. Call and attribute paths are dotted as the code imports
    them (aliases are followed); ``*.name`` matches a method or attribute on any object."""

    call: Optional[DottedName] = None
    attribute: Optional[DottedName] = None
    keyword: Optional[KeywordMatch] = None
    imports: Optional[DottedName] = None
    detector: Optional[Detector] = None

    @model_validator(mode="after")
    def _exactly_one(self) -> "Match":
        given = [k for k in ("call", "attribute", "keyword", "imports", "detector") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                f"a match names exactly one of call, attribute, keyword, imports, detector (got {given or 'none'})"
            )
        return self


class RestsOn(Model):
    """The api_map or limits record a rule rests on."""

    table: Literal["api_map", "limits"]
    id: Id


FixKind = Literal["rename", "replace", "to-device", "matmul-precision"]


@dataclass(frozen=True)
class FixSpec:
    """What one fix kind needs: the rule's match, the fields it takes, whether it may be guarded.
    kb/scan/scanfix.py applies it where the transformer asks for it (``_wanted(node, KIND)``)."""

    match: str
    fields: tuple[str, ...] = ()
    guardable: bool = False
    does: str = ""


# Each fix kind, once (tests/core/test_schema.py holds this table to FixKind, and
# tests/scan/test_scanfix.py to the kinds kb/scan/scanfix.py applies).
FIX_KINDS: dict[str, FixSpec] = {
    "rename": FixSpec("call", ("to",), True, "the callee becomes `to` (arguments kept)"),
    "replace": FixSpec("detector", ("expression", "literal"), False, "the exact string literal becomes `expression`"),
    "to-device": FixSpec("call", ("expression",), False, "x.cuda() (no argument but non_blocking) becomes x.to(...)"),
    "matmul-precision": FixSpec(
        "attribute", (), False, "`... .allow_tf32 = True/False` becomes set_float32_matmul_precision"
    ),
}
_DOTTED_TORCH = re.compile(r"^torch(\.[A-Za-z_][A-Za-z0-9_]*)+$")


class Fix(Model):
    """A mechanical rewrite of what a rule finds, declared on the rule; only `torch.*` names."""

    kind: FixKind
    to: Optional[DottedName] = None
    expression: Optional[Text] = None
    literal: Optional[Text] = None  # replace: the string value it replaces (no other value is touched)
    # rename: only inside `if ...is_available():`, as `to` raises on a machine with no accelerator
    # where the call it replaces answered (torch.cuda.memory_allocated() is 0 there)
    guard: bool = False

    @model_validator(mode="after")
    def _fields(self) -> "Fix":
        wants = FIX_KINDS[self.kind].fields
        given = tuple(k for k in ("to", "expression", "literal") if getattr(self, k) is not None)
        if given != wants:
            raise ValueError(
                f"a {self.kind} fix takes {', '.join(wants) or 'no other field'} (got {', '.join(given) or 'none'})"
            )
        if self.guard and not FIX_KINDS[self.kind].guardable:
            guardable = ", ".join(k for k, spec in FIX_KINDS.items() if spec.guardable)
            raise ValueError(f"guard applies to a {guardable} fix only (got a {self.kind} fix)")
        if self.to is not None and not _DOTTED_TORCH.match(self.to):
            raise ValueError(f"fix.to '{self.to}' must be a torch.* name")
        if self.expression is not None:
            problem = expression_problem(self.expression)
            if problem:
                raise ValueError(f"fix.expression: {problem}")
        return self


def expression_problem(text: str) -> str | None:
    """Why ``text`` is not one Python expression naming only ``torch.*`` (None when it is)."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        return f"does not parse as a Python expression ({exc.msg})"
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id != "torch":
            return f"names '{node.id}' (expected only torch.* names and constants)"
        if isinstance(node, (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
            return "holds a construct a fix may not write (expected calls, attributes and constants)"
    return None


RuleCode = Annotated[str, Field(pattern=r"^TPU[0-9]{3}$")]


class MigrationRule(Sourced):
    """A scanner rule: what CUDA-only code looks like, and what to do about it on TPU."""

    code: RuleCode
    match: Match
    severity: Literal["must-change", "review", "info"]
    message: Text
    suggestion: Text
    page: Annotated[str, Field(pattern=r"^[a-z0-9/_-]+\.md#[a-z0-9_-]+$")]
    rests_on: RestsOn
    fix: Optional[Fix] = None

    @model_validator(mode="after")
    def _fix_fits(self) -> "MigrationRule":
        if self.fix is not None:
            kind = next(
                k for k in ("call", "attribute", "keyword", "imports", "detector") if getattr(self.match, k) is not None
            )
            needs = FIX_KINDS[self.fix.kind].match
            if kind != needs:
                raise ValueError(f"a {self.fix.kind} fix needs a {needs} match (got {kind})")
        return self


ExceptionName = Annotated[str, Field(pattern=r"^(?:[A-Z][A-Za-z0-9]*(?:Error|Exception|Warning|Interrupt)|warning)$")]


class RaisedBy(Model):
    """A call that raises an error entry's message in the setup the handbook assumes (torch 2.13, one
    process per device, no compatibility switch), unless its arguments are written as one of
    ``except_args`` (each the arguments' source as ``ast.unparse`` writes them, e.g. ``"0"``). An
    api_map row whose TPU side writes such a call fails validation (``kb/core/agree.py``)."""

    call: DottedName
    except_args: list[Text] = []


class ErrorEntry(Sourced):
    """A message the package prints, as a reader pastes it: where it comes from, why, and the fix.

    ``message`` is the text exactly as printed; where the package formats a value into it, the value
    is written ``…`` and ``variable`` says what it is. ``kind`` is the exception class the wheel's
    Python code raises (or ``warning``); a native message has none unless the code shows it."""

    message: Text
    variable: Optional[Text] = None
    origin: Literal["python", "native"]
    file: Annotated[str, Field(pattern=r"^torch_tpu/[A-Za-z0-9_./-]+\.(?:py|so)$")]
    kind: Optional[ExceptionName] = None
    cause: Text
    fix: Text
    page: Annotated[str, Field(pattern=r"^[a-z0-9/_-]+\.md#[a-z0-9_-]+$")]
    raised_by: list[RaisedBy] = []

    @model_validator(mode="after")
    def _values_are_explained(self) -> "ErrorEntry":
        if ("…" in self.message) != (self.variable is not None):
            raise ValueError(
                "a message with a value in it (written …) needs 'variable' saying what the value is, "
                "and 'variable' needs a … in the message"
            )
        if self.message.replace("…", "").strip() == "":
            raise ValueError("the message has no text of its own (expected the words the package prints)")
        return self


# ---- Benchmarks: measurements this repository made itself (./dev bench, benchmarks/peers.py) ----
# Their source is the run: the machine, the date, the command and the tool versions, not a document.

BenchTimed = Literal[
    "build",
    "build-hook",
    "build-render",
    "build-htmlproofer",
    "hook-check",
    "check-site",
    "check-site-inprocess",
    "floor",
    "floor-lexbor",
    "kb-validate",
    "linkchecker",
    "linkchecker-anchors",
]
BENCH_TIMED: tuple[str, ...] = get_args(BenchTimed)
BenchChecker = Literal["kb-validate", "kb-check-site", "htmlproofer", "linkchecker", "linkchecker-anchors"]
BENCH_CHECKERS: tuple[str, ...] = get_args(BenchChecker)
Count = Annotated[int, Field(ge=0)]
Seconds = Annotated[float, Field(ge=0)]


class BenchTool(Model):
    name: Text
    version: Text


class BenchSite(Model):
    pages: Annotated[int, Field(ge=1)]
    html_files: Count
    html_mib: Annotated[float, Field(ge=0)]


class BenchTiming(Model):
    """One command at one site size: its runs, or the time limit it was stopped at."""

    tool: BenchTimed
    pages: Annotated[int, Field(ge=1)]
    runs: Optional[Annotated[int, Field(ge=1)]] = None
    median_s: Optional[Seconds] = None
    min_s: Optional[Seconds] = None
    max_s: Optional[Seconds] = None
    stopped_after_s: Optional[Seconds] = None
    peak_mib: Seconds

    @model_validator(mode="after")
    def _runs_or_stopped(self) -> "BenchTiming":
        timed = (self.runs, self.median_s, self.min_s, self.max_s)
        if self.stopped_after_s is None and None in timed:
            raise ValueError("a timing needs runs, median_s, min_s and max_s (or stopped_after_s)")
        if self.stopped_after_s is not None and any(v is not None for v in timed):
            raise ValueError("a stopped timing has stopped_after_s only (no runs, median_s, min_s, max_s)")
        if self.min_s is not None and self.median_s is not None and self.max_s is not None:
            if not self.min_s <= self.median_s <= self.max_s:
                raise ValueError(
                    f"expected min_s <= median_s <= max_s, got {self.min_s}, {self.median_s}, {self.max_s}"
                )
        return self


class BenchFault(Model):
    id: Id
    fault: Text
    injected: Text
    caught_by: list[BenchChecker]


class BenchFindings(Model):
    """What a checker reported beyond the injected faults, and the sizes where it was stopped."""

    checker: BenchChecker
    other_findings: Count
    stopped_at: list[int] = []


class BenchRatio(Model):
    id: Id
    what: Text
    value: Optional[float] = None  # None: not measured in this run (a size or a tool was missing)
    target: float
    compare: Literal["at-most", "at-least"]


class Benchmark(Noted):
    """One run of ./dev bench."""

    id: Id
    measured: IsoDate
    machine: Text
    command: Text
    sizes: Annotated[list[Annotated[int, Field(ge=1)]], Field(min_length=1)]
    runs: Annotated[int, Field(ge=1)]
    slow_runs: Annotated[int, Field(ge=1)]
    slow_size: Annotated[int, Field(ge=1)]
    tools: list[BenchTool]
    sites: list[BenchSite]
    timings: list[BenchTiming]
    faults: list[BenchFault]
    findings: list[BenchFindings]
    ratios: list[BenchRatio]


# ---- Speed runs: the wiki's own speed, measured by this repository (benchmarks/editbench.py --write,
# benchmarks/bench.py glossary --build --write) ----
# Like a benchmark run, their source is the run itself: the date, the machine and the command.

SpeedTimed = Literal[
    "edit-to-reload",
    "glossary-build",
    "hook-cost",  # a build with our hook over plain MkDocs on the pre-rendered pages (benchmarks/hookbench.py)
    "content-page-weight",  # the heaviest content page's HTML (benchmarks/bench.py weight)
    "print-part-weight",  # the heaviest part of the printable handbook
    "search-index-weight",  # the search index
    "scale-build",  # a 1,000-page build over the 40-page build (benchmarks/bench.py scale)
]
SpeedUnit = Literal["s", "x", "KB"]  # seconds; times a reference run; kilobytes (1,000 bytes)


class SpeedRun(Noted):
    """One run of one of the wiki's speed benchmarks: its figures over ``runs`` measurements, in ``unit``
    (the ``_s`` fields hold seconds unless ``unit`` says otherwise)."""

    id: Id
    what: SpeedTimed
    measured: IsoDate
    machine: Text
    command: Text
    runs: Annotated[int, Field(ge=1)]
    unit: SpeedUnit = "s"
    median_s: Seconds
    min_s: Seconds
    max_s: Seconds
    target_s: Seconds
    floor_s: Optional[Seconds] = None  # the most that is still acceptable, where the target allows one
    plain_s: Optional[Seconds] = None  # what plain MkDocs and Material alone take for the same content, if measured

    @model_validator(mode="after")
    def _ordered(self) -> "SpeedRun":
        if not self.min_s <= self.median_s <= self.max_s:
            raise ValueError(f"expected min_s <= median_s <= max_s, got {self.min_s}, {self.median_s}, {self.max_s}")
        if self.floor_s is not None and self.floor_s < self.target_s:
            raise ValueError(f"expected floor_s >= target_s, got {self.floor_s} < {self.target_s}")
        return self


# A diagram drawn at build time (scripts/kb/render/diagrams.py): boxes on a grid and arrows between them.
# Each box rests on a KB record, which holds the fact it shows; a box without a label shows the
# record's own name (a mode's name, a glossary term).
DiagramTable = Literal["claims", "modes", "glossary", "env_vars", "api_map", "limits", "migration_rules"]
BoxLabel = Annotated[str, Field(min_length=1, max_length=120)]


class DiagramRef(Model):
    table: DiagramTable
    id: Id


class DiagramNode(Model):
    id: Id
    label: Optional[BoxLabel] = None
    note: Optional[BoxLabel] = None  # a second, smaller line
    kind: Literal["step", "question", "answer"] = "step"
    row: Annotated[int, Field(ge=0, le=12)]
    col: Annotated[float, Field(ge=0, le=12)]
    span: Annotated[float, Field(gt=0, le=12)] = 1
    rests_on: DiagramRef


class DiagramEdge(Model):
    # Written `from` and `to` in the YAML (Python keywords as field names), and exported so too.
    model_config = ConfigDict(serialize_by_alias=True)

    source: Id = Field(alias="from")
    target: Id = Field(alias="to")
    label: Optional[Annotated[str, Field(min_length=1, max_length=24)]] = None


class Diagram(Names):
    id: Id
    title: Text
    alt: Text  # the text alternative: what the diagram shows, in one or two sentences
    columns: Annotated[int, Field(ge=1, le=12)]
    nodes: Annotated[list[DiagramNode], Field(min_length=1)]
    edges: list[DiagramEdge] = []


TABLES: dict[str, type[Model]] = {
    "sources": Source,
    "claims": Claim,
    "figures": Figure,
    "modes": Mode,
    "limits": Limit,
    "env_vars": EnvVar,
    "api_map": ApiMap,
    "hardware": Hardware,
    "integrations": Integration,
    "frameworks": Framework,
    "glossary": Term,
    "migration_rules": MigrationRule,
    "errors": ErrorEntry,
    "internal_messages": InternalMessage,
    "benchmarks": Benchmark,
    "speed": SpeedRun,
    "diagrams": Diagram,
}
