"""Hostile text in any field of any table renders inert: parsed as HTML, it adds no element,
attribute, link or block that a plain value would not have. Or the KB refuses it, with file:line.

Each table gets one record; each of its text fields gets each payload in turn. The page holds
every shortcode that can show the record. Markdown is converted with the site's own extensions,
and the HTML is read with a parser, not searched as a string.
"""

from __future__ import annotations

import textwrap
from html.parser import HTMLParser

import markdown
import pytest

from conftest import MINI_TABLES, write_tables
from hostile import PAYLOADS
from kb.core.errors import KBError
from kb.core.load import load_kb
from kb.core.schema import TABLES
from kb.core.validate import validate_kb
from kb.render.render import COLUMNS, Ctx, abbreviations, render_markdown

EXTENSIONS = [
    "abbr",
    "admonition",
    "attr_list",
    "def_list",
    "md_in_html",
    "tables",
    "toc",
    "pymdownx.details",
    "pymdownx.superfences",
    "pymdownx.tabbed",
    "pymdownx.highlight",
    "pymdownx.inlinehilite",
    "pymdownx.snippets",
    "pymdownx.tasklist",
]
CONFIG = {"pymdownx.snippets": {"base_path": ["."], "check_paths": False}, "pymdownx.tabbed": {"alternate_style": True}}


RECORDS = {
    "modes": """\
        - id: m
          kind: execution
          name: SAFE
          select: SAFE
          env_var: SAFE
          behaviour: SAFE
          cost: SAFE
          use_when: SAFE
          status: confirmed
          sources: [{id: prim, locator: SAFE}]
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        """,
    "limits": """\
        - id: l
          area: SAFE
          limit: SAFE
          impact: SAFE
          workaround: SAFE
          roadmap: planned
          status: confirmed
          sources: [{id: prim, locator: SAFE}]
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        """,
    "env_vars": """\
        - id: e
          name: TORCH_TPU_X
          read_by: torch-tpu
          purpose: SAFE
          values: SAFE
          default: SAFE
          read_when: SAFE
          group: g
          status: confirmed
          sources: [{id: prim, locator: SAFE}]
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        """,
    "api_map": """\
        - id: a
          topic: SAFE
          gpu: SAFE
          tpu: SAFE
          change: same
          note: SAFE
          status: confirmed
          sources: [{id: prim, locator: SAFE}]
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        """,
    "migration_rules": """\
        - id: r
          code: TPU101
          match: {call: "*.cuda"}
          severity: must-change
          message: SAFE
          suggestion: SAFE
          page: migrate/page.md#top
          rests_on: {table: api_map, id: a}
          status: confirmed
          sources: [{id: prim, locator: SAFE}]
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        """,
    "errors": """\
        - id: x
          message: SAFE
          origin: python
          file: torch_tpu/_loader.py
          kind: RuntimeError
          cause: SAFE
          fix: SAFE
          page: migrate/page.md#top
          status: confirmed
          sources: [{id: prim, locator: SAFE}]
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        """,
    "integrations": """\
        - id: i
          name: SAFE
          role: SAFE
          package: SAFE
          note: SAFE
          status: confirmed
          sources: [{id: prim, locator: SAFE}]
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        """,
    "internal_messages": """\
        - id: m
          message: SAFE
          where: torch_tpu/_loader.py:1
          reason: SAFE
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        """,
    "frameworks": """\
        - id: f
          name: SAFE
          package: SAFE
          support: works
          floor: SAFE
          ceiling: SAFE
          page: migrate/page.md#top
          summary: SAFE
          note: SAFE
          status: confirmed
          sources: [{id: prim, locator: SAFE}]
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        """,
    "benchmarks": """\
        - id: b
          measured: 2026-11-01
          machine: SAFE
          command: SAFE
          note: SAFE
          sizes: [100]
          runs: 1
          slow_runs: 1
          slow_size: 5000
          tools:
            - name: SAFE
              version: SAFE
          sites: [{pages: 100, html_files: 102, html_mib: 8}]
          timings: [{tool: floor, pages: 100, runs: 1, median_s: 1, min_s: 1, max_s: 1, peak_mib: 9}]
          faults:
            - id: f
              fault: SAFE
              injected: SAFE
              caught_by: [kb-check-site]
          findings: [{checker: kb-check-site, other_findings: 0}]
          ratios:
            - id: r
              what: SAFE
              value: 1
              target: 2
              compare: at-most
        """,
    "speed": """\
        - id: s
          what: edit-to-reload
          measured: 2026-11-01
          machine: SAFE
          command: SAFE
          runs: 10
          median_s: 1.2
          min_s: 1.0
          max_s: 1.8
          target_s: 1
          floor_s: 1.5
          note: SAFE
        """,
    "diagrams": """\
        - id: d
          title: SAFE
          alt: SAFE
          columns: 1
          nodes:
            - id: n
              label: SAFE
              note: SAFE
              row: 0
              col: 0
              rests_on: {table: claims, id: dev}
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        """,
}
# Every shortcode that can show a record of the table.
PAGE = "\n\n".join(
    [
        *(f"<!-- kb:table {t} -->" for t in TABLES),
        "<!-- kb:claim dev -->",
        "<!-- kb:figure tput -->",
        "<!-- kb:limit l -->",
        "<!-- kb:mode m -->",
        "<!-- kb:entries env_vars -->",
        "<!-- kb:entries errors -->",
        "<!-- kb:corrections -->",
        "<!-- kb:chart figures topic=throughput title=Chart -->",
        "<!-- kb:diagram d -->",
        *(f"<!-- kb:bench {part} -->" for part in ("about", "timings", "faults", "ratios", "chart")),
    ]
)


class Shape(HTMLParser):
    """The structure of a page: each element with its attribute names, and every URL it links."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, tuple[str, ...]]] = []
        self.urls: list[str] = []
        self.live: list[str] = []  # event handlers and script URLs, wherever they are

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, tuple(sorted(a for a, _ in attrs))))
        urls = ("href", "src", "action", "formaction", "xlink:href", "data", "poster", "srcset")
        self.live += [
            f"{a}={v}" for a, v in attrs if a.startswith("on") or (a in urls and ":" in (v or "") and "https:" not in v)
        ]
        self.urls += [v for a, v in attrs if a in ("href", "src", "action", "srcset") and v]


def shape(html: str) -> Shape:
    parser = Shape()
    parser.feed(html)
    return parser


def tables_with(table: str, field: str, value: str, quote: bool = True) -> dict[str, str]:
    """The mini KB plus one record per table, with ``field`` of ``table`` set to ``value`` (as a
    quoted string, or written as is with ``quote=False``)."""
    texts = {
        **{k: textwrap.dedent(v) for k, v in MINI_TABLES.items()},
        **{k: textwrap.dedent(v) for k, v in RECORDS.items()},
    }
    lines = texts[table].split("\n")
    for i, line in enumerate(lines):
        key = line.strip().removeprefix("- ").split(":", 1)[0]
        if key == field:
            prefix = line[: len(line) - len(line.lstrip())] + ("- " if line.lstrip().startswith("- ") else "")
            lines[i] = f"{prefix}{field}: {_yaml_str(value) if quote else value}"
            break
    else:  # pragma: no cover - the field list below comes from these records
        raise AssertionError(f"{table} has no field {field}")
    texts[table] = "\n".join(lines)
    return texts


def _yaml_str(value: str) -> str:
    """A double-quoted YAML scalar that parses back to exactly ``value``."""
    out = []
    for c in value:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 32 or 0x7F <= ord(c) <= 0x9F or 0x2028 <= ord(c) <= 0x202E:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


FIELDS = {
    "sources": ["title", "publisher"],
    "claims": ["statement", "topic"],
    "figures": ["metric", "claimed_by"],
    "hardware": ["name"],
    "glossary": ["term", "expansion", "definition"],
    "modes": ["name", "select", "env_var", "behaviour", "cost", "use_when"],
    "limits": ["area", "limit", "impact", "workaround"],
    "env_vars": ["purpose", "values", "default", "read_when"],
    "api_map": ["topic", "gpu", "tpu", "note"],
    "integrations": ["name", "role", "package", "note"],
    "frameworks": ["name", "package", "floor", "ceiling", "summary", "note"],
    "internal_messages": ["message", "reason"],
    "migration_rules": ["message", "suggestion"],
    "errors": ["message", "cause", "fix"],
    "benchmarks": ["machine", "command", "note", "name", "version", "fault", "injected", "what"],
    "speed": ["machine", "command", "note"],
    "diagrams": ["title", "alt", "label", "note"],
}


def render_page(tmp_path, texts: dict[str, str]):
    data = tmp_path / "docs" / "data"
    write_tables(data, **texts)
    try:
        kb = load_kb(data, shown_root=tmp_path)
    except KBError as exc:
        return None, exc.problems
    problems = validate_kb(kb)
    if problems:
        return None, problems
    md, problems = render_markdown(PAGE, Ctx(kb, "migrate/page.md"), "docs/migrate/page.md")
    if problems:
        return None, problems
    html = markdown.Markdown(extensions=EXTENSIONS, extension_configs=CONFIG).convert(md + abbreviations(kb, md))
    return html, []


def test_every_table_has_columns_and_a_record():
    assert set(COLUMNS) == set(TABLES)
    assert set(FIELDS) == set(TABLES)


@pytest.mark.slow
@pytest.mark.parametrize("table", sorted(FIELDS))
def test_payloads_render_inert_or_are_refused(tmp_path, table):
    baseline = {}
    for field in FIELDS[table]:
        html, problems = render_page(tmp_path / f"{field}-safe", tables_with(table, field, "SAFE"))
        assert problems == [], problems
        baseline[field] = shape(html)
    for field in FIELDS[table]:
        for n, payload in enumerate(PAYLOADS):
            html, problems = render_page(tmp_path / f"{field}-{n}", tables_with(table, field, payload))
            where = f"{table}.{field} = {payload!r}"
            if html is None:  # refused: every problem names a data file and a line
                assert problems and all(p.path.startswith("docs/data/") and p.line >= 1 for p in problems), where
                continue
            got, want = shape(html), baseline[field]
            # Backticks make code: <code> in HTML, <tspan class> in a diagram's SVG.
            extra = [t for t in got.tags if t not in want.tags and t not in (("code", ()), ("tspan", ("class",)))]
            assert extra == [], (where, extra)
            assert sorted(set(got.urls)) == sorted(set(want.urls)), where
            assert got.live == [], where


# Valid YAML, valid types, wrong data (issue 21): each refused at the line of the value.
WRONG = [
    ("figures", "value", ".nan"),
    ("figures", "value", "-.inf"),
    ("hardware", "hbm_gib", ".inf"),
    ("hardware", "bf16_tflops", ".NaN"),
    ("figures", "verified", "2999-01-01"),
    ("sources", "accessed", "2999-01-01"),
    ("sources", "published", "2999-01"),
    ("sources", "published", "2999"),
    ("sources", "file", "'../../etc/passwd'"),
    ("sources", "file", "/etc/passwd"),
    ("sources", "file", "'%2e%2e/secrets.txt'"),
]


@pytest.mark.parametrize(("table", "field", "raw"), WRONG, ids=lambda v: str(v))
def test_valid_but_wrong_values_are_refused_at_their_line(tmp_path, table, field, raw):
    texts = tables_with(table, field, raw, quote=False)
    line = next(n for n, text in enumerate(texts[table].split("\n"), 1) if f"{field}: {raw}" in text)
    html, problems = render_page(tmp_path, texts)
    assert html is None
    assert [(p.path, p.line) for p in problems] == [(f"docs/data/{table}.yml", line)], problems
