"""Cross-table rules, each with a good and a bad case and the exact message and line."""

import datetime as dt
import textwrap

import pytest

from conftest import MINI_TABLES, write_tables
from kb.core.errors import KBError
from kb.core.load import load_kb
from kb.core.validate import validate_kb

TODAY = dt.date(2026, 11, 29)


def problems(tmp_path, **tables):
    data = write_tables(tmp_path / "docs" / "data", **tables)
    return [str(p) for p in validate_kb(load_kb(data, shown_root=tmp_path), today=TODAY)]


def test_the_mini_kb_is_valid(tmp_path):
    assert problems(tmp_path) == []


def add_claim(status="reported", sources="[{id: prim, locator: x}]", conflicts="", id_="c3", verified="2026-11-01"):
    """The mini claims table plus one claim, starting on line 19 (status on 22, sources on 23)."""
    extra = f"- id: {id_}\n  topic: device\n  statement: X.\n  status: {status}\n  sources: {sources}\n"
    if conflicts:
        extra += f"  conflicts: {conflicts}\n"
    return (
        textwrap.dedent(MINI_TABLES["claims"])
        + extra
        + f"  verified: {verified}\n  checked_against: torch-tpu==0.2.0\n"
    )


def test_duplicate_id(tmp_path):
    claims = add_claim(id_="dev", status="confirmed")
    assert problems(tmp_path, claims=claims) == [
        "docs/data/claims.yml:21: claims[2].id: duplicate id 'dev' (first used on line 1; expected unique ids)"
    ]


def test_unknown_source(tmp_path):
    claims = add_claim(sources="[{id: nope, locator: x}]")
    assert problems(tmp_path, claims=claims) == [
        "docs/data/claims.yml:25: claims[2].sources[0].id: unknown source 'nope' (expected an id from docs/data/sources.yml)"
    ]


def test_orphan_source(tmp_path):
    sources = textwrap.dedent(MINI_TABLES["sources"]) + (
        "- {id: lonely, title: T, publisher: P, url: 'https://x.org/', accessed: 2026-11-01, kind: news, language: en,"
        " verified: 2026-11-01, checked_against: torch-tpu==0.2.0}\n"
    )
    assert problems(tmp_path, sources=sources) == [
        "docs/data/sources.yml:20: sources[2]: source 'lonely' is cited by no record "
        "(expected every source to back at least one fact; cite it or remove it)"
    ]


def test_confirmed_needs_a_primary_source(tmp_path):
    claims = add_claim(status="confirmed", sources="[{id: news, locator: x}]")
    assert problems(tmp_path, claims=claims) == [
        "docs/data/claims.yml:24: claims[2].status: 'confirmed' but no cited source is primary or vendor-docs "
        "(expected a primary or vendor-docs source, or status 'reported')"
    ]


def test_disputed_needs_two_sources_saying_what(tmp_path):
    claims = add_claim(status="disputed", conflicts="[{source: prim, says: one thing}]")
    assert problems(tmp_path, claims=claims) == [
        "docs/data/claims.yml:24: claims[2].status: 'disputed' but conflicts name 1 source(s) "
        "(expected at least two sources, each with what it says)"
    ]


def test_disputed_with_two_sources_is_fine(tmp_path):
    claims = add_claim(
        status="disputed",
        sources="[{id: prim, locator: x}, {id: news, locator: y}]",
        conflicts="[{source: prim, says: one thing}, {source: news, says: another}]",
    )
    assert problems(tmp_path, claims=claims) == []


def test_corrected_needs_the_wrong_source(tmp_path):
    claims = add_claim(status="corrected")
    assert problems(tmp_path, claims=claims) == [
        "docs/data/claims.yml:24: claims[2].status: 'corrected' but conflicts is empty "
        "(expected the source that published the wrong claim and what it says)"
    ]


def test_unknown_source_in_conflicts(tmp_path):
    claims = add_claim(status="disputed", conflicts="[{source: prim, says: a}, {source: ghost, says: b}]")
    assert problems(tmp_path, claims=claims) == [
        "docs/data/claims.yml:26: claims[2].conflicts[1].source: unknown source 'ghost' (expected an id from docs/data/sources.yml)"
    ]


def test_verified_in_the_future(tmp_path):
    claims = add_claim(sources="[{id: news, locator: x}]", verified="2027-01-01")
    assert problems(tmp_path, claims=claims) == [
        "docs/data/claims.yml:26: claims[2].verified: 2027-01-01 is in the future (expected a date up to 2026-11-29)"
    ]


def test_source_needs_url_or_file(tmp_path):
    sources = textwrap.dedent(MINI_TABLES["sources"]).replace("  file: seeds/x.txt\n", "")
    assert problems(tmp_path, sources=sources) == [
        "docs/data/sources.yml:11: sources[1]: source 'news' has neither url nor file (expected one of them, so a reader can find it)"
    ]


def test_a_scanner_rule_must_rest_on_a_record_that_exists(tmp_path):
    rules = textwrap.dedent("""\
        - id: r
          code: TPU101
          match: {call: "*.cuda"}
          severity: must-change
          message: M
          suggestion: S
          page: migrate/device-code.md#device-string
          rests_on: {table: api_map, id: ghost}
          status: confirmed
          sources: [{id: prim, locator: x}]
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        """)
    assert problems(tmp_path, migration_rules=rules) == [
        "docs/data/migration_rules.yml:8: migration_rules[0].rests_on: no api_map record 'ghost' "
        "(expected an id from docs/data/api_map.yml)"
    ]


_RULE = """\
- id: {id}
  code: {code}
  match: {match}
  severity: must-change
  message: M
  suggestion: S
  page: migrate/device-code.md#device-string
  rests_on: {{table: api_map, id: ghost}}
  status: confirmed
  sources: [{{id: prim, locator: x}}]
  verified: 2026-11-01
  checked_against: torch-tpu==0.2.0
"""


def test_two_scanner_rules_may_not_share_a_code(tmp_path):
    rules = _RULE.format(id="a", code="TPU101", match='{call: "*.cuda"}') + _RULE.format(
        id="b", code="TPU101", match="{call: torch.cuda.synchronize}"
    )
    found = problems(tmp_path, migration_rules=rules)
    assert (
        "docs/data/migration_rules.yml:14: migration_rules[1].code: code TPU101 is also rule 'a' (expected one code per rule)"
        in found
    )


@pytest.mark.parametrize(
    "match, fix, message",
    [
        (
            "{call: torch.cuda.synchronize}",
            "{kind: rename, to: os.system}",
            "fix.to 'os.system' must be a torch.* name",
        ),
        ("{call: torch.cuda.synchronize}", "{kind: rename}", "a rename fix takes to (got none)"),
        (
            "{detector: cuda-device-string}",
            '{kind: replace, literal: cuda, expression: "torch.device(0)", guard: true}',
            "guard applies to a rename fix only (got a replace fix)",
        ),
        ("{call: torch.cuda.synchronize}", "{kind: rename, to: torch.accelerator.synchronize, guard: yes}", "guard"),
        (
            "{detector: cuda-device-string}",
            "{kind: replace, literal: cuda, expression: \"__import__('os')\"}",
            "names '__import__'",
        ),
        ("{detector: cuda-device-string}", '{kind: replace, literal: cuda, expression: "torch.x("}', "does not parse"),
        (
            "{call: torch.cuda.synchronize}",
            "{kind: matmul-precision}",
            "a matmul-precision fix needs a attribute match (got call)",
        ),
    ],
)
def test_a_fix_is_validated_with_its_rule(tmp_path, match, fix, message):
    rules = _RULE.format(id="a", code="TPU101", match=match).replace("  severity:", f"  fix: {fix}\n  severity:")
    data = write_tables(tmp_path / "docs" / "data", migration_rules=rules)
    with pytest.raises(KBError) as err:
        load_kb(data, shown_root=tmp_path)
    assert any(message in p.message for p in err.value.problems), [p.message for p in err.value.problems]


def test_a_scanner_match_names_exactly_one_pattern(tmp_path):
    rules = "- {id: r, match: {call: a.b, imports: c}}\n"
    data = write_tables(tmp_path / "docs" / "data", migration_rules=rules)
    with pytest.raises(KBError) as err:
        load_kb(data, shown_root=tmp_path)
    assert (
        "docs/data/migration_rules.yml:1: migration_rules[0].match: a match names exactly one of call, attribute, "
        "keyword, imports, detector (got ['call', 'imports'])"
    ) in [str(p) for p in err.value.problems]


# ---- Valid but wrong (issue 21): each refused at its line ----


def with_value(old: str, new: str, table: str = "figures") -> dict[str, str]:
    text = textwrap.dedent(MINI_TABLES[table])
    assert old in text
    return {table: text.replace(old, new, 1)}


@pytest.mark.parametrize(
    ("value", "read"), [(".nan", "nan"), (".NaN", "nan"), (".inf", "inf"), ("-.inf", "-inf"), ("+.Inf", "inf")]
)
def test_a_non_finite_number_is_refused_at_its_line(tmp_path, value, read):
    data = write_tables(tmp_path / "docs" / "data", **with_value("value: 25700", f"value: {value}"))
    with pytest.raises(KBError) as err:
        load_kb(data, shown_root=tmp_path)
    assert [str(p) for p in err.value.problems] == [
        f"docs/data/figures.yml:3: figures[0].value: expected a finite number, got number {read}"
    ]


def test_a_non_finite_number_in_a_hardware_row_too(tmp_path):
    data = write_tables(tmp_path / "docs" / "data", **with_value("hbm_gib: 192", "hbm_gib: .inf", "hardware"))
    with pytest.raises(KBError) as err:
        load_kb(data, shown_root=tmp_path)
    assert [(p.line, "expected a finite number" in p.message) for p in err.value.problems] == [(3, True)]


@pytest.mark.parametrize(
    ("old", "new", "line", "where"),
    [
        ("verified: 2026-11-01", "verified: 2026-11-30", 12, "figures[0].verified"),
        ("accessed: 2026-11-01", "accessed: 2026-11-30", 6, "sources[0].accessed"),
        ("published: 2026-10", "published: 2026-12", 5, "sources[0].published"),
        ("published: 2026-10", "published: 2027", 5, "sources[0].published"),
    ],
)
def test_a_date_after_today_is_refused_at_its_line(tmp_path, old, new, line, where):
    table = "figures" if where.startswith("figures") else "sources"
    found = problems(tmp_path, **with_value(old, new, table))
    value = new.split(": ")[1]
    assert found == [f"docs/data/{table}.yml:{line}: {where}: {value} is in the future (expected a date up to {TODAY})"]


def test_today_itself_and_this_month_are_not_the_future(tmp_path):
    assert problems(tmp_path, **with_value("published: 2026-10", "published: 2026-11", "sources")) == []
    assert problems(tmp_path, **with_value("verified: 2026-11-01", f"verified: {TODAY}")) == []


def test_the_build_date_is_the_clock_not_a_constant(tmp_path, monkeypatch):
    """The clock is faked: the same row passes on one day and fails the day before its date."""
    import kb.core.validate

    data = write_tables(tmp_path / "docs" / "data", **with_value("verified: 2026-11-01", "verified: 2030-05-05"))
    kb_ = load_kb(data, shown_root=tmp_path)
    monkeypatch.setattr(kb.core.validate, "build_date", lambda: dt.date(2030, 5, 5))
    assert validate_kb(kb_) == []
    monkeypatch.setattr(kb.core.validate, "build_date", lambda: dt.date(2030, 5, 4))
    assert [p.message for p in validate_kb(kb_)] == [
        "figures[0].verified: 2030-05-05 is in the future (expected a date up to 2030-05-04)"
    ]


@pytest.mark.parametrize(
    "value",
    [
        "/etc/passwd",
        "../outside.txt",
        "seeds/../../x.txt",
        "%2e%2e/x.txt",
        "~/notes.txt",
        "file:///etc/passwd",
        "C:\\x.txt",
        "..\\x.txt",
        "link/escape.txt",
    ],
)
def test_a_file_source_outside_the_project_is_refused(tmp_path, value):
    (tmp_path / "link").symlink_to("/tmp")
    found = problems(tmp_path, **with_value("file: seeds/x.txt", f"file: '{value}'", "sources"))
    assert found == [
        f"docs/data/sources.yml:14: sources[1].file: {value!r} points outside the project (expected a path "
        "inside the project folder, without '..', not absolute and not through a symlink that leads out)"
    ]


@pytest.mark.parametrize("value", ["seeds/x.txt", "notes/a..b.txt", "code excerpt: a test (repository path unknown)"])
def test_a_file_source_inside_the_project_or_a_description_passes(tmp_path, value):
    assert problems(tmp_path, **with_value("file: seeds/x.txt", f"file: '{value}'", "sources")) == []


def test_a_glossary_past_the_limit_is_refused_at_the_first_term_too_many(tmp_path, monkeypatch):
    from kb.core import validate

    monkeypatch.setattr(validate, "MAX_GLOSSARY_TERMS", 2)
    terms = "".join(
        f"- {{id: t{k}, term: T{k}Q, definition: D., verified: 2026-11-01, checked_against: torch-tpu==0.2.0}}\n"
        for k in range(2)
    )
    glossary = textwrap.dedent(MINI_TABLES["glossary"]) + terms
    assert problems(tmp_path, glossary=glossary) == [
        "docs/data/glossary.yml:8: glossary[2]: the glossary has 3 terms (expected at most 2: every term is a "
        "tooltip and a row of the glossary page and the printable handbook, so each adds to every build and to "
        "those pages' weight; keep the terms readers meet in the handbook)"
    ]
    monkeypatch.setattr(validate, "MAX_GLOSSARY_TERMS", 3)
    assert problems(tmp_path, glossary=glossary) == []
