"""The real check: download the pinned torch-tpu wheel once and hold the whole handbook to it.

The download goes to the package index only (``pip download --no-deps``) and is cached in
``.cache/wheels/``; later builds read it offline.
"""

import shutil
import sys

import pytest

from buildtools import build, run
from conftest import ROOT, copy_project
from kb.core.load import KB, Record
from kb.core.schema import TABLES, EnvVar, ErrorEntry, Names
from kb.mkdocs.project import validate_project
from kb.pages.namecheck import allowed_names, check_errors, check_record
from kb.wheel import fwwheels
from kb.wheel.package import load_index, pin_text

pytestmark = pytest.mark.slow  # each test reads the real torch-tpu wheel


@pytest.fixture(scope="module")
def wheel(real_wheels):
    """The pinned torch-tpu wheel, and the framework wheels of frameworks.pin beside it (conftest)."""
    return real_wheels


def test_check_wheel_passes_on_the_real_wheel(wheel):
    result = run([sys.executable, "-m", "kb", "--root", str(ROOT), "check-wheel", "--offline"], ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok: the handbook matches torch-tpu 0.2.0")


def test_the_framework_records_are_held_to_their_wheels(wheel):
    project = validate_project(ROOT)
    assert project.problems == []
    held = [note for note in project.notes if note.startswith("framework check: held to")]
    assert held and all(pin in held[0] for pin in fwwheels.read_pins(ROOT)), project.notes


def test_every_record_carries_checked_against(wheel):
    project = validate_project(ROOT, package=False)
    assert project.kb is not None, project.problems
    pins = {pin_text(ROOT), *fwwheels.read_pins(ROOT)}
    missing = [
        f"{rec.path}:{rec.line}"
        for table, records in project.kb.tables.items()
        # benchmarks and speed: this repository's own timings, sourced by their run, not the package
        if "checked_against" in TABLES[table].model_fields
        for rec in records
        if getattr(rec.model, "checked_against", None) not in pins
    ]
    assert missing == []


def _renamed(rec: Record, field: str, index: int | None) -> Record:
    model = rec.model
    if index is None:
        new = model.model_copy(update={field: getattr(model, field) + "_RENAMED"})
    else:
        names = list(getattr(model, field))
        names[index] = names[index] + ("_RENAMED" if field == "env" else "_renamed")
        new = model.model_copy(update={field: names})
    return Record(rec.table, rec.index, new, rec.path, rec.located)


def test_renaming_any_one_name_fails_with_that_records_file_and_line(wheel):
    """Every API name, env var and backend name in the KB, renamed one at a time, is caught."""
    project = validate_project(ROOT, package=False)
    assert project.kb is not None
    index = load_index(wheel)
    allowed = allowed_names(project.kb, index)
    pin = pin_text(ROOT)
    tried = 0
    for records in project.kb.tables.values():
        for rec in records:
            model = rec.model
            if not isinstance(model, Names):
                continue
            cases = [(f, i) for f in ("api", "env", "backend") for i in range(len(getattr(model, f)))]
            if isinstance(model, EnvVar) and model.read_by == "torch-tpu" and model.spelling != "outdated":
                cases.append(("name", None))
            for field, i in cases:
                problems = check_record(_renamed(rec, field, i), index, pin, allowed)
                path = (field,) if i is None else (field, i)
                where = f"{rec.path}:{rec.line_of(*path)}"
                assert any(f"{p.path}:{p.line}" == where for p in problems), (where, field, i)
                tried += 1
    assert tried >= 100  # the KB states many package names; all of them are held to the wheel


@pytest.mark.build
def test_the_build_runs_the_check_when_the_wheel_is_cached(wheel, tmp_path):
    root = copy_project(tmp_path / "p")
    env = root / "docs" / "data" / "env_vars.yml"
    text = env.read_text()
    assert "name: TORCH_TPU_DEFER_AND_FUSE\n" in text
    env.write_text(text.replace("name: TORCH_TPU_DEFER_AND_FUSE\n", "name: TORCH_TPU_DEFER_AND_FUZE\n", 1))
    line = text[: text.index("name: TORCH_TPU_DEFER_AND_FUSE\n")].count("\n") + 1

    skipped = build(root, tmp_path / "site1")  # no wheel in this copy's cache: skipped, and said so
    assert skipped.returncode == 0, skipped.stderr
    assert "package check skipped: no cached torch-tpu==0.2.0 wheel in .cache/wheels/" in skipped.stderr

    (root / ".cache" / "wheels").mkdir(parents=True)
    shutil.copy2(wheel, root / ".cache" / "wheels" / wheel.name)
    checked = build(root, tmp_path / "site2")
    assert checked.returncode != 0
    assert f"docs/data/env_vars.yml:{line}: " in checked.stderr
    assert "'TORCH_TPU_DEFER_AND_FUZE' is not in torch-tpu==0.2.0" in checked.stderr


def test_every_error_entry_is_in_the_wheel_and_each_one_changed_is_not(wheel):
    """Each entry of docs/data/errors.yml is found in the wheel; the same entry with one word more is not.

    The word goes after the first word, into literal text: a message may end with a value (``…``),
    which matches any tail."""
    project = validate_project(ROOT, package=False)
    assert project.kb is not None
    index = load_index(wheel)
    assert check_errors(project.kb, index) == []
    entries = project.kb.rows("errors", ErrorEntry)
    assert len(entries) >= 40
    assert any("forked subprocess" in rec.model.message for rec in entries)
    for rec in entries:
        first, _, rest = rec.model.message.partition(" ")
        changed = rec.model.model_copy(update={"message": f"{first} zz {rest}".rstrip()})
        kb = KB(project.kb.root, {"errors": [Record(rec.table, rec.index, changed, rec.path, rec.located)]})
        problems = [str(p) for p in check_errors(kb, index)]
        assert len(problems) == 1, (rec.id, problems)
        assert problems[0].startswith(f"{rec.path}:{rec.line_of('message')}: message text not found in ")
