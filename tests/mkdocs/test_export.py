"""The KB export (kb/mkdocs/export.py): kb.json validates against kb.schema.json and round-trips."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import jsonschema
import pytest

from conftest import MINI_TABLES, ROOT, write_tables
from kb.core.load import KB, load_kb
from kb.core.schema import TABLES
from kb.mkdocs.export import FORMAT, dumps, kb_document, kb_schema, write_export

HOSTILE = '</script><script>alert(1)</script> "q" \\ & <!-- kb:figure x -->'


@pytest.fixture(scope="module")
def real_kb() -> KB:
    return load_kb(ROOT / "docs" / "data", ROOT)


def exported(kb: KB, pin: str | None = "torch-tpu==0.2.0") -> tuple[dict, dict]:
    """kb.json and kb.schema.json as a client reads them back."""
    return json.loads(dumps(kb_document(kb, pin))), json.loads(dumps(kb_schema()))


def test_the_export_validates_against_the_generated_schema(real_kb):
    data, schema = exported(real_kb)
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(data)
    assert data["format"] == FORMAT
    assert data["torch_tpu"] == "torch-tpu==0.2.0"
    assert list(data["tables"]) == sorted(TABLES)
    assert sum(map(len, data["tables"].values())) == sum(map(len, real_kb.tables.values()))


def test_the_schema_rejects_what_the_models_reject(real_kb):
    data, schema = exported(real_kb)
    data["tables"]["claims"][0]["surprise"] = 1  # extra="forbid"
    with pytest.raises(jsonschema.ValidationError, match="surprise"):
        jsonschema.validate(data, schema)
    del data["tables"]["claims"][0]["surprise"]
    data["tables"]["claims"][0]["status"] = "rumoured"
    with pytest.raises(jsonschema.ValidationError, match="rumoured"):
        jsonschema.validate(data, schema)


def test_loading_the_export_back_gives_the_kbs_records(real_kb):
    data, _ = exported(real_kb)
    for name, model in TABLES.items():
        back = [model.model_validate(row) for row in data["tables"][name]]
        assert back == [rec.model for rec in real_kb.tables[name]], name


@pytest.mark.slow
def test_the_export_is_deterministic(real_kb):
    first = dumps(kb_document(real_kb, "p")) + dumps(kb_schema())
    again = dumps(kb_document(load_kb(ROOT / "docs" / "data", ROOT), "p")) + dumps(kb_schema())
    assert first == again
    text = dumps(kb_document(real_kb, "p"))
    assert dumps(json.loads(text)) == text  # re-serialising with sorted keys changes nothing
    assert text.index('"format"') < text.index('"tables"') < text.index('"torch_tpu"')


def test_a_hostile_string_stays_an_inert_json_string(tmp_path: Path):
    claims = textwrap.dedent(MINI_TABLES["claims"]).replace('"The device is `tpu`."', json.dumps(HOSTILE))
    kb = load_kb(write_tables(tmp_path / "docs" / "data", claims=claims), tmp_path)
    written = write_export(kb, tmp_path, None)
    text = (tmp_path / "kb.json").read_text(encoding="utf-8")
    assert [p.name for p in written] == ["kb.json", "kb.schema.json"]
    assert not set("<>&") & set(text)  # nothing a browser or a JS parser could take as markup
    data = json.loads(text)
    assert data["tables"]["claims"][0]["statement"] == HOSTILE
    assert data["torch_tpu"] is None
    jsonschema.validate(data, json.loads((tmp_path / "kb.schema.json").read_text(encoding="utf-8")))


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_a_non_finite_number_is_never_written_as_invalid_json(value):
    """json.dumps would write NaN or Infinity, which no JSON parser accepts (the schema refuses them first)."""
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        dumps({"value": value})
