"""Property: whatever a contributor does to a real table or page, validation and the build hook
report Problems (or pass). They never raise, hang or crash.

Hypothesis mutates copies of the real KB and pages: it deletes, duplicates and retypes fields,
nests values deeply, adds YAML anchors and aliases, and writes hostile strings anywhere.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import hooks
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT
from hostile import PAYLOADS
from kb.core.errors import Problem
from kb.mkdocs.project import validate_project

pytestmark = pytest.mark.slow  # Hypothesis mutates the real tables and pages, many examples each

EXAMPLES = int(os.environ.get("KB_HYPOTHESIS_EXAMPLES", "25"))
TABLE_FILES = sorted(p.name for p in (ROOT / "docs" / "data").glob("*.yml"))
PAGE_FILES = sorted(p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md"))
HOSTILE = st.one_of(st.sampled_from(PAYLOADS), st.text(max_size=40))
VALUES = st.one_of(
    HOSTILE,
    st.integers(),
    st.floats(allow_nan=True),
    st.booleans(),
    st.none(),
    st.lists(st.text(max_size=5), max_size=3),
    st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=2),
)


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A copy of the real docs (and what validation reads beside them), made once."""
    root = tmp_path_factory.mktemp("base")
    for name in ("docs", "snippets"):
        shutil.copytree(ROOT / name, root / name)
    for name in ("mkdocs.yml", "torch-tpu.pin"):
        shutil.copy2(ROOT / name, root / name)
    return root


def _fresh(base: Path, tmp: Path) -> Path:
    root = tmp / "p"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(base, root, symlinks=True)
    return root


def _mutate_record(records: list, data: st.DataObject) -> str:
    """Apply one object-level mutation to a list of records; return what was done (for the report)."""
    if not records:
        records.append(data.draw(VALUES))
        return "added a value to an empty table"
    i = data.draw(st.integers(0, len(records) - 1))
    rec = records[i]
    op = data.draw(st.sampled_from(["delete", "duplicate", "retype", "hostile", "nest", "drop-record", "dup-record"]))
    if op == "drop-record":
        del records[i]
    elif op == "dup-record":
        records.insert(i, rec)
    elif isinstance(rec, dict) and rec:
        key = data.draw(st.sampled_from(sorted(rec, key=str)))
        if op == "delete":
            del rec[key]
        elif op == "duplicate":
            rec[f"{key}"] = rec[key]
            rec[f"{key}_copy"] = rec[key]
        elif op == "retype":
            rec[key] = data.draw(VALUES)
        elif op == "hostile":
            rec[key] = data.draw(HOSTILE)
        else:
            depth = data.draw(st.integers(1, 60))
            value = rec[key]
            for _ in range(depth):
                value = [value]
            rec[key] = value
    return f"{op} in record {i}"


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_tables_and_pages_give_problems_never_exceptions(base, tmp_path, data):
    root = _fresh(base, tmp_path)
    kind = data.draw(st.sampled_from(["table", "table-text", "page"]))
    if kind == "table":
        path = root / "docs" / "data" / data.draw(st.sampled_from(TABLE_FILES))
        records = yaml.safe_load(path.read_text()) or []
        did = _mutate_record(records, data)
        path.write_text(yaml.safe_dump(records, allow_unicode=True, sort_keys=False))
    elif kind == "table-text":
        path = root / "docs" / "data" / data.draw(st.sampled_from(TABLE_FILES))
        extra = data.draw(
            st.sampled_from(
                [
                    "- " + "[" * 5000 + "]" * 5000 + "\n",
                    "- &a [x, x, x, x, x, x, x, x, x]\n- &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                    "- &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n- &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n",
                    "- id: x\n  statement: *undefined_alias\n",
                    "- {id: a, id: b}\n",
                    "\t- tab\n",
                    "- id: \x00\n",
                    "%YAML 9.9\n---\n",
                    "--- !!python/object:os.system [echo]\n",
                ]
            )
        )
        path.write_text(path.read_text() + extra)
        did = f"appended {extra[:30]!r}"
    else:
        path = root / "docs" / data.draw(st.sampled_from(PAGE_FILES))
        lines = path.read_text().split("\n")
        at = data.draw(st.integers(0, len(lines)))
        lines.insert(at, data.draw(HOSTILE))
        path.write_text("\n".join(lines))
        did = f"inserted a line at {at}"

    project = validate_project(root, package=False)  # must not raise
    assert all(isinstance(p, Problem) and p.line >= 1 for p in project.problems), did

    config = SimpleNamespace(config_file_path=str(root / "mkdocs.yml"))
    try:
        hooks.on_pre_build(config)  # the hook: raises PluginError with the problems, or passes
    except hooks.PluginError:
        pass


# ---- Valid but wrong (issue 21): a value of the right type that names nothing real is refused at
# its file and line, whatever table, record and spelling it lands in ----

NUMBER_FIELDS = ("value", "hbm_gib", "bf16_tflops")
DATE_FIELDS = ("verified", "accessed", "published", "measured")
NON_FINITE = st.sampled_from([float("nan"), float("inf"), -float("inf")])
FUTURE = st.dates(min_value=dt.date.today() + dt.timedelta(days=2), max_value=dt.date(9999, 12, 31)).map(str)


def _cased(word: str) -> st.SearchStrategy[str]:
    """``word`` in a random mix of cases."""
    return st.lists(st.booleans(), min_size=len(word), max_size=len(word)).map(
        lambda ups: "".join(c.upper() if up else c.lower() for c, up in zip(word, ups, strict=True))
    )


SCRIPT_LINKS = st.tuples(
    _cased("javascript"), st.sampled_from(["", "&#x09;", " "]), st.sampled_from([":", "&#58;"])
).map(lambda t: f"[x]({t[0][:4]}{t[1].strip() and t[1]}{t[0][4:]}{t[2]}alert(1))")
NEAR_SHORTCODES = _cased("kb").filter(lambda k: k != "kb").map(lambda k: f"<!-- {k}:table hardware -->")


@settings(max_examples=min(EXAMPLES, 10), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_valid_but_wrong_values_are_refused_at_their_file_and_line(base, tmp_path, data):
    root = _fresh(base, tmp_path)
    name = data.draw(st.sampled_from([n for n in TABLE_FILES if not n.startswith(("benchmarks", "migration_rules"))]))
    path = root / "docs" / "data" / name
    records = yaml.safe_load(path.read_text()) or []
    fields = [(i, k) for i, rec in enumerate(records) for k in rec if k in NUMBER_FIELDS + DATE_FIELDS]
    if not fields:
        return
    i, key = data.draw(st.sampled_from(fields))
    records[i][key] = data.draw(NON_FINITE if key in NUMBER_FIELDS else FUTURE)
    path.write_text(yaml.safe_dump(records, allow_unicode=True, sort_keys=False))
    found = validate_project(root, package=False).problems
    shown = f"docs/data/{name}"
    assert any(
        p.path == shown and p.line > 1 and ("finite number" in p.message or "in the future" in p.message) for p in found
    ), (name, i, key, [str(p) for p in found])


@settings(max_examples=min(EXAMPLES, 10), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_script_links_and_miscased_shortcodes_are_refused_at_their_page_line(base, tmp_path, data):
    root = _fresh(base, tmp_path)
    rel = data.draw(st.sampled_from(PAGE_FILES))
    path = root / "docs" / rel
    text = path.read_text()
    line = data.draw(st.one_of(SCRIPT_LINKS, NEAR_SHORTCODES))
    body = text.rstrip("\n") + "\n\n"
    path.write_text(body + line + "\n")
    at = body.count("\n") + 1
    found = validate_project(root, package=False).problems
    assert any(p.path == f"docs/{rel}" and p.line == at for p in found), (rel, line, [str(p) for p in found])
