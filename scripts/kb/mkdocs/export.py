"""The KB as JSON for internal tools and bots: ``kb.json`` (every table and record, as validated)
and ``kb.schema.json`` (a JSON Schema generated from the pydantic models in schema.py).

Both are deterministic (sorted keys, records in the order they are read), so the same KB always
gives the same bytes. Characters that mean something in HTML are written as JSON escapes
(``\\u003c``), so a hostile string stays an inert JSON string even if a browser sniffs the file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic.json_schema import models_json_schema

from ..core.load import KB

if TYPE_CHECKING:
    from .project import Project
from ..core.schema import TABLES

FORMAT = 1  # bump when the shape of kb.json changes (not when records change)
DATA_FILE = "kb.json"
SCHEMA_FILE = "kb.schema.json"
_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def kb_document(kb: KB, pin: str | None) -> dict[str, Any]:
    """Every table as a list of its records (JSON-ready), with the format version and the pin."""
    tables = {
        name: [rec.model.model_dump(mode="json", exclude_defaults=False) for rec in kb.tables.get(name, [])]
        for name in TABLES
    }
    return {"format": FORMAT, "torch_tpu": pin, "tables": tables}


def kb_schema() -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) for ``kb_document``: one array of the table's model per table."""
    refs, top = models_json_schema(
        [(model, "validation") for model in dict.fromkeys(TABLES.values())],
        ref_template="#/$defs/{model}",
    )
    tables = {name: {"type": "array", "items": refs[(model, "validation")]} for name, model in TABLES.items()}
    return {
        "$schema": _DIALECT,
        "title": "TorchTPU Migration Handbook knowledge base",
        "type": "object",
        "properties": {
            "format": {"const": FORMAT},
            "torch_tpu": {"type": ["string", "null"], "description": "the torch-tpu release the KB is held to"},
            "tables": {
                "type": "object",
                "properties": tables,
                "required": list(TABLES),
                "additionalProperties": False,
            },
        },
        "required": ["format", "torch_tpu", "tables"],
        "additionalProperties": False,
        "$defs": top.get("$defs", {}),
    }


def dumps(value: object) -> str:
    """Deterministic JSON: sorted keys, ASCII only, no raw < > & (written as \\u escapes), and
    ValueError for NaN or infinity, which JSON has no spelling for (the schema refuses them first)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=True, indent=1, allow_nan=False) + "\n"
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def write_export(kb: KB, site: Path, pin: str | None, data_text: str | None = None) -> list[Path]:
    """Write kb.json (``data_text`` when given: the text of the same KB and pin) and
    kb.schema.json at the root of the built site; return their paths."""
    written = []
    data = dumps(kb_document(kb, pin)) if data_text is None else data_text
    for name, text in ((DATA_FILE, data), (SCHEMA_FILE, _schema_text())):
        path = site / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


@lru_cache(maxsize=1)
def _schema_text() -> str:
    """The schema depends on the models only: under serve it is written again, not generated again."""
    return dumps(kb_schema())


def export_project(
    project: Project | None, root: Path, site: Path, reuse: Callable[[list[str], Callable[[], str]], str] | None = None
) -> list[Path]:
    """/kb.json and /kb.schema.json of a validated project (nothing without a KB), with the pin when it reads.
    ``reuse(parts, make)``: kb.json's text, or the one kept for the same ``parts``: the digest of
    docs/data the KB was read from and the pin (under serve, kb/mkdocs/build.py)."""
    from ..wheel.package import PackageError, pin_text

    if project is None or project.kb is None:
        return []
    try:
        pin: str | None = pin_text(root)
    except PackageError:
        pin = None
    kb = project.kb
    if reuse is None or not project.kb_key:
        return write_export(kb, site, pin)
    text = reuse(["kb.json", project.kb_key, repr(pin)], lambda: dumps(kb_document(kb, pin)))
    return write_export(kb, site, pin, text)
