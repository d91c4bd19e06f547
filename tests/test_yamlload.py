"""The strict YAML reader: lines kept, duplicates and bad bytes rejected with a location."""

import pytest

from kb.yamlload import YAMLProblem, load_file, parse


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
        parse("base: &b {x: 1}\nother:\n  <<: *b\n", "t.yml")
    assert "merge keys" in str(exc.value) and str(exc.value).startswith("t.yml:3:")


def test_mkdocs_config_tags_read_as_text():
    from kb.yamlload import ConfigLoader

    doc = parse("a: !ENV [X, 1]\nb: !!python/name:material.extensions.emoji.twemoji\n", "mkdocs.yml", ConfigLoader)
    assert doc.data == {"a": ["X", 1], "b": "tag:yaml.org,2002:python/name:material.extensions.emoji.twemoji "}
