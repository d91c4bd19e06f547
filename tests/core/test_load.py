"""Loading tables: schema errors come back as file:line messages, never tracebacks."""

import os
import textwrap

import pytest

from buildtools import HANG_S, deadline
from conftest import write_tables
from kb.core.errors import KBError
from kb.core.load import load_kb, load_table, read_kb
from kb.core.schema import TABLES


def problems_of(tmp_path, name, text):
    path = tmp_path / f"{name}.yml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    records, problems = load_table(name, path, f"docs/data/{name}.yml")
    return records, [str(p) for p in problems]


def test_the_mini_kb_loads(mini):
    kb = load_kb(mini / "docs" / "data", shown_root=mini)
    assert [r.id for r in kb.tables["claims"]] == ["dev", "wrong"]
    assert kb.get("figures", "tput").line == 1


FIGURE = """\
- id: f
  metric: Throughput
  value: 1
  unit: tokens/s
  conditions: {workload: inference}
  measured_by: vendor
  claimed_by: V
  topic: t
  status: reported
  sources: [{id: s, locator: here}]
  verified: 2026-11-01
  checked_against: torch-tpu==0.2.0
"""


def test_missing_unit(tmp_path):
    _, problems = problems_of(tmp_path, "figures", FIGURE.replace("  unit: tokens/s\n", ""))
    assert problems == ["docs/data/figures.yml:1: figures[0]: missing field 'unit' (expected it to be set)"]


def test_unit_not_in_vocabulary(tmp_path):
    _, problems = problems_of(tmp_path, "figures", FIGURE.replace("unit: tokens/s", "unit: tok/s"))
    assert len(problems) == 1
    assert problems[0].startswith(
        "docs/data/figures.yml:4: figures[0].unit: 'tok/s' is not allowed (expected one of: tokens/s,"
    )


def test_wrong_type(tmp_path):
    _, problems = problems_of(tmp_path, "figures", FIGURE.replace("value: 1", "value: lots"))
    assert problems == ["docs/data/figures.yml:3: figures[0].value: expected a valid number, got string 'lots'"]


def test_unknown_key_lists_the_allowed_ones(tmp_path):
    _, problems = problems_of(tmp_path, "figures", FIGURE + "  colour: red\n")
    assert len(problems) == 1
    assert problems[0].startswith("docs/data/figures.yml:13: figures[0]: unknown key 'colour' (expected one of: ")
    assert "metric, value, unit" in problems[0]


def test_unknown_key_in_a_nested_mapping(tmp_path):
    _, problems = problems_of(
        tmp_path, "figures", FIGURE.replace("{workload: inference}", "{workload: inference, gpu: 1}")
    )
    assert problems[0].startswith(
        "docs/data/figures.yml:5: figures[0].conditions: unknown key 'gpu' (expected one of: model, hardware,"
    )


def test_impossible_date(tmp_path):
    _, problems = problems_of(tmp_path, "figures", FIGURE.replace("verified: 2026-11-01", "verified: 2026-13-45"))
    assert problems == [
        "docs/data/figures.yml:11: figures[0].verified: '2026-13-45' is not a real date (expected YYYY-MM-DD)"
    ]


def test_http_url_is_refused(tmp_path):
    text = "- {id: s, title: T, publisher: P, url: 'http://x.org/a', accessed: 2026-11-01, kind: news, language: en,\n    verified: 2026-11-01, checked_against: torch-tpu==0.2.0}\n"
    _, problems = problems_of(tmp_path, "sources", text)
    assert problems == [
        "docs/data/sources.yml:1: sources[0].url: 'http://x.org/a' is not an absolute https URL (expected https://host/...)"
    ]


def test_top_level_must_be_a_list(tmp_path):
    _, problems = problems_of(tmp_path, "glossary", "term: HBM\n")
    assert problems == [
        "docs/data/glossary.yml:1: top level is a mapping (expected a list of records, each starting with '- ')"
    ]


def test_a_row_must_be_a_mapping(tmp_path):
    _, problems = problems_of(tmp_path, "glossary", "- just text\n")
    assert problems == ["docs/data/glossary.yml:1: glossary[0] is a string (expected a mapping of fields)"]


def test_all_problems_of_all_files_are_listed_sorted(tmp_path):
    data = write_tables(tmp_path / "docs" / "data", glossary="- {id: a, term: A}\n", hardware="oops: [\n")
    (data / "notes.yml").write_text("- x: 1\n")
    with pytest.raises(KBError) as exc:
        load_kb(data, shown_root=tmp_path)
    lines = str(exc.value).splitlines()
    assert lines == sorted(lines)
    assert "docs/data/glossary.yml:1: glossary[0]: missing field 'definition' (expected it to be set)" in lines
    assert any(line.startswith("docs/data/hardware.yml:2: malformed YAML") for line in lines)
    assert any(line.startswith("docs/data/notes.yml:1: unknown table file 'notes.yml'") for line in lines)


def test_missing_table_file(tmp_path):
    data = write_tables(tmp_path / "docs" / "data")
    (data / "limits.yml").unlink()
    with pytest.raises(KBError) as exc:
        load_kb(data, shown_root=tmp_path)
    assert str(exc.value) == "docs/data/limits.yml:1: table 'limits' is missing (expected the file limits.yml)"


def test_split_table_files_are_read_in_order(tmp_path):
    data = write_tables(tmp_path / "docs" / "data")
    (data / "glossary.extra.yml").write_text(
        "- {id: mxu, term: MXU, definition: Matrix unit., verified: 2026-11-01, checked_against: torch-tpu==0.2.0}\n"
    )
    kb = load_kb(data, shown_root=tmp_path)
    assert [r.id for r in kb.tables["glossary"]] == ["hbm", "mxu"]
    assert kb.get("glossary", "mxu").path == "docs/data/glossary.extra.yml"


# ---- Hostile files: never read outside the project, never block, never a traceback ----


def load_problems(root) -> list[str]:
    with deadline(HANG_S), pytest.raises(KBError) as exc:
        load_kb(root / "docs" / "data", shown_root=root)
    return str(exc.value).splitlines()


def test_a_table_part_that_links_out_of_the_project_is_never_read(tmp_path):
    root = tmp_path / "p"
    data = write_tables(root / "docs" / "data")
    secret = tmp_path / "secret.yml"
    secret.write_text("- {id: leaked, term: SECRET, definition: do not publish}\n")
    (data / "glossary.evil.yml").symlink_to(secret)
    assert load_problems(root) == [
        f"docs/data/glossary.evil.yml:1: symlink leaves the project (points to '{secret}'; expected a file inside the project folder)"
    ]


def test_a_table_part_that_is_a_folder_or_a_fifo(tmp_path):
    data = write_tables(tmp_path / "docs" / "data")
    (data / "claims.folder.yml").mkdir()
    os.mkfifo(data / "claims.fifo.yml")
    assert load_problems(tmp_path) == [
        "docs/data/claims.fifo.yml:1: not a regular file (a FIFO, socket or device; expected a file)",
        "docs/data/claims.folder.yml:1: is a folder (expected a file)",
    ]


def test_a_main_table_file_that_is_a_folder(tmp_path):
    data = write_tables(tmp_path / "docs" / "data")
    (data / "limits.yml").unlink()
    (data / "limits.yml").mkdir()
    assert load_problems(tmp_path) == ["docs/data/limits.yml:1: is a folder (expected a file)"]


@pytest.mark.parametrize("table", TABLES)
def test_every_table_refuses_invisible_characters_with_file_and_line(tmp_path, table):
    data = write_tables(tmp_path / "docs" / "data")
    (data / f"{table}.extra.yml").write_text("- id: x\n  note: 'safe \u202e}]txet[ '\n", encoding="utf-8")
    assert load_problems(tmp_path) == [
        f"docs/data/{table}.extra.yml:2: invisible bidi control U+202E (RIGHT-TO-LEFT OVERRIDE) "
        "(expected visible text: it can make a line read differently from what it holds)"
    ]


def test_a_deep_table_is_a_problem_with_its_line(tmp_path):
    _, problems = problems_of(tmp_path, "claims", "- id: a\n  statement: " + "[" * 500 + "]" * 500 + "\n")
    assert problems == [
        "docs/data/claims.yml:2: nested more than 32 levels deep (expected at most 32; the tables need 4)"
    ]


def test_a_value_with_line_breaks_keeps_its_problem_on_one_line(tmp_path):
    text = '- {id: s, title: T, publisher: P, url: "http://x.org/a\\ndocs/data/x.yml:1: forged", accessed: 2026-11-01,\n    kind: news, language: en, verified: 2026-11-01, checked_against: torch-tpu==0.2.0}\n'
    _, problems = problems_of(tmp_path, "sources", text)
    assert problems == [
        "docs/data/sources.yml:1: sources[0].url: 'http://x.org/a\\ndocs/data/x.yml:1: forged' is not an absolute https URL (expected https://host/...)"
    ]


def test_a_table_file_name_with_a_line_break_stays_on_one_line(tmp_path):
    data = write_tables(tmp_path / "docs" / "data")
    (data / "claims.x\nforged.yml").write_text("- id: x\n")
    problems = load_problems(tmp_path)
    assert "docs/data/claims.x\\nforged.yml:1: claims[0]: missing field 'topic' (expected it to be set)" in problems
    assert all(line.startswith("docs/data/claims.x\\nforged.yml:1: claims[0]: missing field") for line in problems)


@pytest.mark.parametrize(
    ("rel", "message"),
    [
        ("sub/claims.yml", "table file 'sub/claims.yml' is in a subfolder of docs/data/, which the loader never reads"),
        (
            "a/b/limits.yaml",
            "table file 'a/b/limits.yaml' is in a subfolder of docs/data/, which the loader never reads",
        ),
        ("claims.yaml", "unknown table file 'claims.yaml', which the loader never reads"),
        ("Claims.yml", "unknown table file 'Claims.yml', which the loader never reads"),
        ("claims.YML", "unknown table file 'claims.YML', which the loader never reads"),
        ("claims.yml.bak", "unknown table file 'claims.yml.bak', which the loader never reads"),
        ("claims.extra.yaml", "unknown table file 'claims.extra.yaml', which the loader never reads"),
    ],
)
def test_a_table_file_the_loader_would_never_read_is_reported(tmp_path, rel, message):
    data = write_tables(tmp_path / "docs" / "data")
    (data / rel).parent.mkdir(parents=True, exist_ok=True)
    (data / rel).write_text("- id: x\n", encoding="utf-8")
    _, found = read_kb(data, shown_root=tmp_path)
    assert [str(p) for p in found] == [
        f"docs/data/{rel}:1: {message} (expected docs/data/<table>.yml or <table>.<part>.yml, table one of: "
        + ", ".join(TABLES)
        + ")"
    ]


def test_split_files_and_other_data_are_not_reported(tmp_path):
    data = write_tables(tmp_path / "docs" / "data")
    (data / "modes.extra.yml").write_text("[]\n", encoding="utf-8")
    (data / "package.json").write_text("{}\n", encoding="utf-8")
    (data / "notes").mkdir()
    (data / "notes" / "readme.txt").write_text("x\n", encoding="utf-8")
    assert read_kb(data, shown_root=tmp_path)[1] == []
