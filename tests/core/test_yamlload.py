"""The strict YAML reader: lines kept, duplicates and bad bytes rejected with a location, and every
limit (size, nesting, nodes, value length, aliases, tags, characters) a message, never a crash."""

import os
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import pytest

from buildtools import HANG_S, deadline
from kb.core.yamlload import LIMITS, ConfigLoader, YAMLProblem, load_file, parse

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def problem_of(text: str, loader=None) -> str:
    with deadline(HANG_S), pytest.raises(YAMLProblem) as exc:
        parse(text, "t.yml", *([loader] if loader else []))
    return str(exc.value)


def test_lines_are_kept_for_records_and_fields():
    doc = parse("- id: a\n  n: 3\n- id: b\n  nested: {x: 1}\n", "t.yml")
    assert doc.data == [{"id": "a", "n": 3}, {"id": "b", "nested": {"x": 1}}]
    assert doc.line((0,)) == 1 and doc.line((0, "n")) == 2
    assert doc.line((1, "nested", "x")) == 4
    assert doc.line((1, "missing")) == 3  # falls back to the record's line


def test_yes_no_on_off_stay_strings_and_true_false_are_booleans():
    doc = parse("- a: no\n  b: on\n  c: yes\n  d: true\n  e: False\n", "t.yml")
    assert doc.data == [{"a": "no", "b": "on", "c": "yes", "d": True, "e": False}]


def test_dates_stay_strings_so_the_schema_can_check_them():
    assert parse("- d: 2026-13-45\n", "t.yml").data == [{"d": "2026-13-45"}]


def test_duplicate_key_is_rejected_with_both_lines():
    with pytest.raises(YAMLProblem) as exc:
        parse("- id: a\n  unit: x\n  unit: y\n", "t.yml")
    assert str(exc.value) == "t.yml:3: duplicate key 'unit' (first defined on line 2; expected each key once)"


def test_malformed_yaml_has_a_line():
    with pytest.raises(YAMLProblem) as exc:
        parse("- id: a\n  x: [1, 2\n- id: b\n", "t.yml")
    assert str(exc.value).startswith("t.yml:3: malformed YAML:")


def test_empty_file():
    with pytest.raises(YAMLProblem) as exc:
        parse("# only a comment\n", "t.yml")
    assert str(exc.value) == "t.yml:1: file is empty (expected a list of records)"


def test_non_utf8_bytes_are_reported_with_their_line(tmp_path):
    path = tmp_path / "t.yml"
    path.write_bytes(b"- id: a\n- id: caf\xe9\n")
    with pytest.raises(YAMLProblem) as exc:
        load_file(path, "t.yml")
    assert str(exc.value) == "t.yml:2: byte 0xe9 is not valid UTF-8 (expected UTF-8 text)"


def test_merge_keys_are_refused():
    with pytest.raises(YAMLProblem) as exc:
        parse("base: {x: 1}\nother:\n  <<: {x: 2}\n", "t.yml")
    assert str(exc.value) == "t.yml:3: merge keys (<<) are not supported; write the fields out"


def test_mkdocs_config_tags_read_as_text():
    from kb.core.yamlload import ConfigLoader

    doc = parse("a: !ENV [X, 1]\nb: !!python/name:material.extensions.emoji.twemoji\n", "mkdocs.yml", ConfigLoader)
    assert doc.data == {"a": ["X", 1], "b": "tag:yaml.org,2002:python/name:material.extensions.emoji.twemoji "}


# ---- Limits: checked on libyaml's event stream before any node or object is built ----


def nested_mappings(levels: int) -> str:
    """``levels`` block mappings, one per line: level n opens on line n."""
    return "".join("  " * i + "k:\n" for i in range(levels)) + "  " * levels + "k: 1\n"


def test_32_levels_of_nesting_are_allowed():
    assert LIMITS.max_depth == 32  # the tables nest 4 levels, mkdocs.yml 5
    doc = parse(nested_mappings(31), "t.yml")  # 31 mappings plus the last one: 32 levels
    assert doc.line(("k",) * 32) == 32


def test_nesting_past_the_limit_names_the_line_where_it_happens():
    assert (
        problem_of(nested_mappings(40))
        == "t.yml:33: nested more than 32 levels deep (expected at most 32; the tables need 4)"
    )


def test_500_levels_of_flow_nesting_is_a_problem_not_a_recursion_error():
    assert problem_of("- " + "[" * 500 + "]" * 500 + "\n") == (
        "t.yml:1: nested more than 32 levels deep (expected at most 32; the tables need 4)"
    )


@pytest.mark.parametrize("opener, closer", [("[", "]"), ("{a: ", "}")])
def test_100000_levels_fail_fast_in_a_separate_process(tmp_path, opener, closer):
    """Before the limit this segfaulted (libyaml's composer recursed in C), so it runs apart."""
    path = tmp_path / "deep.yml"
    path.write_text(opener * 100_000 + "1" + closer * 100_000, encoding="utf-8")
    code = (
        "import sys, time; from pathlib import Path; from kb.core.yamlload import load_file, YAMLProblem\n"
        "start = time.perf_counter()\n"
        "try:\n    load_file(Path(sys.argv[1]), 'deep.yml')\nexcept YAMLProblem as exc:\n    print(exc)\n"
        "print(f'{time.perf_counter() - start:.3f}')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        timeout=HANG_S * 2,
        env={**os.environ, "PYTHONPATH": str(SCRIPTS)},
    )
    assert result.returncode == 0, result.stderr[-500:]
    message, took = result.stdout.splitlines()
    assert message == "deep.yml:1: nested more than 32 levels deep (expected at most 32; the tables need 4)"
    assert float(took) < HANG_S  # a hang guard: it took about 0.1 s, and segfaulted before the limit


def billion_laughs() -> str:
    text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for i in range(1, 9):
        text += f"{chr(97 + i)}: &{chr(97 + i)} [" + ",".join([f"*{chr(96 + i)}"] * 9) + "]\n"
    return text


def test_an_alias_bomb_fails_at_the_first_anchor():
    start = time.perf_counter()
    message = problem_of(billion_laughs())
    assert time.perf_counter() - start < HANG_S
    assert message == "t.yml:1: anchor '&a' (expected no anchors or aliases: write each value out)"


def test_an_alias_is_refused_with_its_line():
    assert (
        problem_of("- id: a\n  b: *x\n") == "t.yml:2: alias '*x' (expected no anchors or aliases: write each value out)"
    )


def test_a_self_referencing_anchor_is_refused():
    assert (
        problem_of("- id: a\n  b: &x [*x]\n")
        == "t.yml:2: anchor '&x' (expected no anchors or aliases: write each value out)"
    )


def test_too_many_values_in_one_file():
    text = "- id: a\n  n:\n" + "  - 1\n" * LIMITS.max_nodes
    start = time.perf_counter()
    message = problem_of(text)
    assert time.perf_counter() - start < HANG_S
    # the top list, the mapping, 'id', 'a', 'n' and the inner list are 6 values: item 49,995 (line
    # 49,997) is value 50,001
    assert message == (
        "t.yml:49997: more than 50,000 values in one file (expected fewer; split a table into <table>.<part>.yml files)"
    )


def test_a_value_too_long():
    assert problem_of("- id: a\n  statement: " + "x" * 10_001 + "\n") == (
        "t.yml:2: value of 10,001 characters (expected at most 10,000)"
    )
    parse("- id: a\n  statement: " + "x" * 10_000 + "\n", "t.yml")


def test_a_file_too_large_is_not_even_read_past_the_limit(tmp_path):
    path = tmp_path / "t.yml"
    path.write_text("- id: a\n" + "# padding\n" * 210_000, encoding="utf-8")
    with pytest.raises(YAMLProblem) as exc:
        load_file(path, "t.yml")
    assert str(exc.value) == (
        "t.yml:1: YAML text is larger than 2 MB (expected at most that; split a table into <table>.<part>.yml files)"
    )
    assert problem_of("# x\n" * 600_000) == str(exc.value)


def test_a_folder_or_fifo_is_not_a_yaml_file(tmp_path):
    (tmp_path / "dir.yml").mkdir()
    os.mkfifo(tmp_path / "fifo.yml")
    for name in ("dir.yml", "fifo.yml"):
        with deadline(HANG_S), pytest.raises(YAMLProblem) as exc:
            load_file(tmp_path / name, name)
        assert str(exc.value) == f"{name}:1: not a regular file (expected a YAML file)"


@pytest.mark.parametrize(
    "value, message",
    [
        (
            "!!timestamp 2026-13-45",
            "explicit tag '!!timestamp' (expected a plain value without a tag; quote it to make it text)",
        ),
        ("!!int many", "explicit tag '!!int' (expected a plain value without a tag; quote it to make it text)"),
        (
            "!!python/object:os.system {}",
            "explicit tag '!!python/object:os.system' (expected a plain value without a tag; quote it to make it text)",
        ),
        ("!local x", "explicit tag '!local' (expected a plain value without a tag; quote it to make it text)"),
    ],
)
def test_explicit_tags_are_refused_in_tables(value, message):
    assert problem_of(f"- id: a\n  d: {value}\n") == f"t.yml:2: {message}"


def test_a_bad_tagged_value_in_mkdocs_yml_is_a_problem_not_a_traceback():
    assert problem_of("a: 1\nb: !!int many\n", ConfigLoader) == (
        "t.yml:2: unreadable value: invalid literal for int() with base 10: 'many' (expected a plain value)"
    )


# ---- Characters: no controls, tabs, carriage returns or invisible format characters ----


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "- id: a\n  b: c\rd\r\n",  # parse() reads text as given: read_text turns CRLF into LF first
            "t.yml:2: control character U+000D (carriage return) (expected line ends \\n or \\r\\n, not a lone \\r; 1 more in this file)",
        ),
        ("- id: a\n  b: x\ty\n", "t.yml:2: control character U+0009 (tab) (expected spaces)"),
        ("- id: a\n\t- b\n", "t.yml:2: control character U+0009 (tab) (expected spaces)"),
        ("- id: a\n  b: x\x00y\n", "t.yml:2: control character U+0000 (expected printable text)"),
        ("- id: a\n  b: x\x1by\n", "t.yml:2: control character U+001B (expected printable text)"),
        ("- id: a\n  b: x\x85y\n", "t.yml:2: control character U+0085 (expected printable text)"),
        (
            "- id: a\n  b: 'x\u202ey'\n",
            "t.yml:2: invisible bidi control U+202E (RIGHT-TO-LEFT OVERRIDE) (expected visible text: it can make a line read differently from what it holds)",
        ),
        (
            "- id: a\n  b: x\u2066y\u2069\n",
            "t.yml:2: invisible bidi control U+2066 (LEFT-TO-RIGHT ISOLATE) (expected visible text: it can make a line read differently from what it holds; 1 more in this file)",
        ),
        (
            "- id: a\n  # a comment \u202d\n",
            "t.yml:2: invisible bidi control U+202D (LEFT-TO-RIGHT OVERRIDE) (expected visible text: it can make a line read differently from what it holds)",
        ),
        (
            "- id: a\n  b: x\u200by\n",
            "t.yml:2: invisible format character U+200B (ZERO WIDTH SPACE) (expected visible text)",
        ),
        (
            "- id: a\n  b: x\u00ady\n",
            "t.yml:2: invisible format character U+00AD (SOFT HYPHEN) (expected visible text)",
        ),
        (
            "- id: a\n  b: x\U000e0041y\n",
            "t.yml:2: invisible format character U+E0041 (TAG LATIN CAPITAL LETTER A) (expected visible text)",
        ),
        (
            "- id: a\n- id: b\ufeff\n",
            "t.yml:2: byte order mark U+FEFF after the start of the file (expected one at most, first)",
        ),
        ("- id: a\n  b: x\u2028y\n", "t.yml:2: line separator U+2028 (expected a plain line break, \\n)"),
    ],
)
def test_forbidden_characters_are_reported_with_their_line(text, message):
    assert problem_of(text) == message


@pytest.mark.parametrize(
    "escape, message",
    [
        ("\\t", "control character U+0009 (tab) (expected spaces; written as an escape)"),
        (
            "\\r",
            "control character U+000D (carriage return) (expected line ends \\n or \\r\\n, not a lone \\r; written as an escape)",
        ),
        ("\\0", "control character U+0000 (expected printable text; written as an escape)"),
        (
            "\\u202E",
            "invisible bidi control U+202E (RIGHT-TO-LEFT OVERRIDE) (expected visible text: it can make a line read differently from what it holds; written as an escape)",
        ),
        ("\\N", "control character U+0085 (expected printable text; written as an escape)"),
    ],
)
def test_forbidden_characters_written_as_escapes_are_reported_too(escape, message):
    assert problem_of(f'- id: a\n  b: "x{escape}y"\n') == f"t.yml:2: {message}"


def test_a_leading_byte_order_mark_and_plain_unicode_are_fine(tmp_path):
    path = tmp_path / "t.yml"
    path.write_text("\ufeff- id: a\n  b: Diátaxis — 東京 ✓ \U0001f600\n", encoding="utf-8")
    assert load_file(path, "t.yml").data == [{"id": "a", "b": "Diátaxis — 東京 ✓ \U0001f600"}]
    assert parse('- b: "line\\nbreak"\n', "t.yml").data == [{"b": "line\nbreak"}]


def test_every_control_format_and_separator_character_is_forbidden():
    from kb.core.yamlload import FORBIDDEN

    for code in range(0x110000):
        ch = chr(code)
        if ch != "\n" and unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            assert FORBIDDEN.match(ch), f"U+{code:04X} ({unicodedata.category(ch)}) is let through"
    assert not FORBIDDEN.search("\n plain ASCII, Latin é, CJK 東, emoji \U0001f600")


def test_a_duplicate_key_with_a_line_break_stays_on_one_line():
    assert problem_of('- "a\\nb": 1\n  "a\\nb": 2\n') == (
        "t.yml:2: duplicate key 'a\\nb' (first defined on line 1; expected each key once)"
    )


# ---- Windows files: CRLF line ends and a byte order mark are read as LF and no mark ----

TABLE = "- id: a\n  n: 3\n- id: b\n  nested: {x: 1}\n"


def windows(text: str, bom: bool = True, crlf: bool = True) -> bytes:
    raw = (text.replace("\n", "\r\n") if crlf else text).encode("utf-8")
    return b"\xef\xbb\xbf" + raw if bom else raw


@pytest.mark.parametrize("bom, crlf", [(False, True), (True, False), (True, True)], ids=["crlf", "bom", "both"])
def test_a_windows_file_reads_like_the_unix_one_with_the_same_lines(tmp_path, bom, crlf):
    path = tmp_path / "t.yml"
    path.write_bytes(windows(TABLE, bom, crlf))
    doc, unix = load_file(path, "t.yml"), parse(TABLE, "t.yml")
    assert doc.data == unix.data and doc.lines == unix.lines
    assert path.read_bytes() == windows(TABLE, bom, crlf)  # read, never rewritten


def test_a_problem_in_a_crlf_file_is_reported_at_its_line(tmp_path):
    path = tmp_path / "t.yml"
    path.write_bytes(windows("- id: a\n  unit: x\n  unit: y\n"))
    with pytest.raises(YAMLProblem) as exc:
        load_file(path, "t.yml")
    assert str(exc.value) == "t.yml:3: duplicate key 'unit' (first defined on line 2; expected each key once)"


@pytest.mark.parametrize("bom", [False, True])
def test_a_lone_carriage_return_in_a_crlf_file_still_fails_at_its_line(tmp_path, bom):
    path = tmp_path / "t.yml"
    path.write_bytes(windows("- id: a\n  b: c\n  d: e\rf\n", bom))
    with pytest.raises(YAMLProblem) as exc:
        load_file(path, "t.yml")
    assert str(exc.value).startswith("t.yml:3: control character U+000D (carriage return)")


def test_a_second_byte_order_mark_or_other_controls_stay_refused_in_a_crlf_file(tmp_path):
    path = tmp_path / "t.yml"
    path.write_bytes(windows("- id: a\n  b: x\x1by\n"))
    with pytest.raises(YAMLProblem) as exc:
        load_file(path, "t.yml")
    assert str(exc.value) == "t.yml:2: control character U+001B (expected printable text)"
    path.write_bytes(windows("\ufeff- id: a\n"))
    with pytest.raises(YAMLProblem) as exc:
        load_file(path, "t.yml")
    assert "byte order mark" in str(exc.value)
