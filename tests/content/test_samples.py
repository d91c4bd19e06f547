"""The handbook's code samples (snippets/): each one runs, or at least compiles and lints.

snippets/MANIFEST.toml lists every sample with its kind:
  cpu    run here on the CPU; must exit 0 and print `expect` (or die with `expect_error`)
  tpu    needs a TPU (gpu: an NVIDIA GPU; xla: a TPU and torch_xla): compiled and linted only,
         plus an optional `smoke` run on the CPU after a few textual replacements
  shell  checked with `bash -n`
  diff   a unified diff of two samples (tests/content/test_port.py keeps it current)
Twins (a GPU file and its TPU rewrite, or before/after) declare `hl_lines`, the lines of the
file that differ from its twin; the pages highlight those, so they are checked against a diff.
"""

from __future__ import annotations

import ast
import difflib
import functools
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SNIPPETS = ROOT / "snippets"
MANIFEST_PATH = SNIPPETS / "MANIFEST.toml"
README_PATH = SNIPPETS / "README.md"
DOCS = ROOT / "docs"
NOT_SAMPLES = {"MANIFEST.toml", "README.md"}
KINDS = {"cpu", "tpu", "gpu", "xla", "shell", "diff"}
COMPILE_ONLY = {"tpu", "gpu", "xla"}
TIMEOUT_S = 120
SCRATCH = tempfile.TemporaryDirectory(prefix="samples-")  # removed when the session ends

# torch.tpu.* calls that TorchTPU 0.2.0 keeps internal (they raise RuntimeError naming the
# torch.accelerator.* replacement), so no sample may call them.
LEGACY_TPU_CALLS = {
    f"torch.tpu.{name}"
    for name in (
        "is_available",
        "device_count",
        "current_device",
        "set_device",
        "synchronize",
        "current_stream",
        "set_stream",
        "initial_seed",
        "get_rng_state",
        "device",
    )
}


def load_manifest() -> dict[str, dict]:
    with MANIFEST_PATH.open("rb") as f:
        return tomllib.load(f)


MANIFEST = load_manifest()


def entries(*kinds: str) -> list[str]:
    return sorted(path for path, entry in MANIFEST.items() if entry["kind"] in kinds)


def sample_files() -> set[str]:
    return {
        p.relative_to(SNIPPETS).as_posix()
        for p in SNIPPETS.rglob("*")
        if p.is_file() and p.name not in NOT_SAMPLES and "__pycache__" not in p.parts
    }


def changed_lines(path: str, twin: str) -> list[int]:
    """1-based numbers of the non-blank lines of `path` that differ from `twin` (a line diff)."""
    mine = (SNIPPETS / path).read_text().splitlines()
    theirs = (SNIPPETS / twin).read_text().splitlines()
    matcher = difflib.SequenceMatcher(None, mine, theirs, autojunk=False)
    return [
        n + 1
        for tag, i1, i2, _, _ in matcher.get_opcodes()
        if tag != "equal"
        for n in range(i1, i2)
        if mine[n].strip()  # a highlighted blank line shows nothing
    ]


def as_hl_lines(numbers: list[int]) -> str:
    """[3, 4, 5, 9] -> '3-5 9', the syntax of pymdownx.highlight's hl_lines."""
    spans: list[list[int]] = []
    for n in numbers:
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return " ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def sample_env() -> dict[str, str]:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)  # the samples import nothing from this repository
    return env


def run_python(script: Path, entry: dict, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a sample with this venv's Python, under torchrun when the entry asks for it."""
    if "torchrun" in entry:
        launcher = ["-m", "torch.distributed.run", "--standalone"]
        launcher.append(f"--nproc_per_node={entry['torchrun']}")
    else:
        launcher = []
    return subprocess.run(
        [sys.executable, *launcher, str(script)],
        cwd=cwd,
        env=sample_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


@functools.cache
def run_cpu_sample(path: str) -> subprocess.CompletedProcess[str]:
    """Run a cpu sample once per test session, in a scratch folder; later tests reuse the result."""
    cwd = Path(SCRATCH.name) / path.replace("/", "__")
    cwd.mkdir()
    return run_python(SNIPPETS / path, MANIFEST[path], cwd=cwd)


def uncaught_exception(stderr: str) -> str | None:
    """The type name of the exception that ended a Python process, from its traceback."""
    lines = stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if line == "Traceback (most recent call last):"]
    if not starts:
        return None
    # After the last traceback header come indented frame lines, then "Type: message".
    for line in lines[starts[-1] + 1 :]:
        if line and not line.startswith(" "):
            return line.split(":", 1)[0].rsplit(".", 1)[-1]
    return None


def dotted_names(tree: ast.AST) -> set[str]:
    """Every dotted name used in the code, e.g. 'torch.accelerator.synchronize'."""
    names = set()
    for node in ast.walk(tree):
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and parts:
            names.add(".".join([node.id, *reversed(parts)]))
    return names


def string_constants(tree: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and type(n.value) is str}


# --- the manifest covers the folder, and only real files ---------------------------------


def test_every_sample_file_is_in_the_manifest():
    missing = sorted(sample_files() - set(MANIFEST))
    assert not missing, f"add these to {MANIFEST_PATH.name} (nothing is skipped silently): {missing}"


def test_every_manifest_entry_is_a_file():
    ghosts = sorted(set(MANIFEST) - sample_files())
    assert not ghosts, f"{MANIFEST_PATH.name} lists files that do not exist: {ghosts}"


@pytest.mark.parametrize("path", sorted(MANIFEST))
def test_manifest_entry_is_well_formed(path):
    entry = MANIFEST[path]
    assert entry.get("kind") in KINDS, f"{path}: kind must be one of {sorted(KINDS)}"
    assert entry.get("shows"), f"{path}: say in `shows` what the sample shows"
    page = entry.get("page", "")
    assert (ROOT / "docs" / page).is_file(), f"{path}: page {page!r} is not a file under docs/"
    if path.endswith(".sh"):
        assert entry["kind"] == "shell", f"{path}: shell scripts have kind 'shell'"
    assert path.endswith(".diff") == (entry["kind"] == "diff"), f"{path}: .diff files, and only they, have kind 'diff'"
    if entry["kind"] == "cpu":
        assert ("expect" in entry) != ("expect_error" in entry), (
            f"{path}: a cpu sample needs exactly one of expect / expect_error"
        )
    if "twin" in entry:
        twin = MANIFEST.get(entry["twin"])
        assert twin is not None, f"{path}: twin {entry['twin']!r} is not in the manifest"
        assert twin.get("twin") == path, f"{path}: its twin must name it back"


# --- cpu samples: run them -------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("path", entries("cpu"))
def test_cpu_sample_runs(path):
    entry = MANIFEST[path]
    result = run_cpu_sample(path)
    output = f"--- stdout\n{result.stdout}\n--- stderr\n{result.stderr[-3000:]}"
    if "expect_error" in entry:
        assert result.returncode != 0, f"{path} should fail, but exited 0\n{output}"
        assert uncaught_exception(result.stderr) == entry["expect_error"], (
            f"{path} should die with {entry['expect_error']}\n{output}"
        )
        assert entry.get("expect_stderr", "") in result.stderr, output
    else:
        assert result.returncode == 0, f"{path} exited {result.returncode}\n{output}"
        assert entry["expect"] in result.stdout, f"{path}: {entry['expect']!r} not printed\n{output}"


@pytest.mark.slow
def test_rank_divergence_prints_from_rank_zero_only():
    path = "distributed/rank_divergence.py"
    entry = MANIFEST[path]
    result = run_cpu_sample(path)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [line for line in result.stdout.splitlines() if line.startswith("losses of")]
    assert len(lines) == 1, f"exactly one rank should print, got: {lines}"
    assert f"losses of {entry['torchrun']} ranks" in lines[0]


def test_wrong_and_fixed_current_accelerator_differ_only_in_the_call():
    wrong = "device/wrong_current_accelerator.py"
    fixed = "device/fixed_current_accelerator.py"
    assert MANIFEST[wrong]["expect_error"] == "TypeError"
    assert MANIFEST[fixed]["expect"] == "ok"
    wrong_code = ast.parse((SNIPPETS / wrong).read_text())
    fixed_code = ast.parse((SNIPPETS / fixed).read_text())
    calls = {
        type(node.value).__name__
        for node in ast.walk(wrong_code)
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "device"
    }
    assert calls == {"Attribute"}, "the wrong sample assigns the function, not a call"
    assert "torch.accelerator.current_accelerator" in dotted_names(fixed_code)
    assert any(isinstance(n, ast.Compare) and isinstance(n.ops[0], ast.Is) for n in ast.walk(fixed_code)), (
        "the fixed sample handles current_accelerator() returning None"
    )


# --- compile-only samples: syntax, smoke runs, API names ---------------------------------


@pytest.mark.parametrize("path", entries("cpu", *COMPILE_ONLY))
def test_python_sample_compiles(path):
    source = (SNIPPETS / path).read_text()
    compile(source, str(SNIPPETS / path), "exec")


SMOKE = sorted(path for path, entry in MANIFEST.items() if "smoke" in entry)

# Runs a smoke copy as __main__, then collects garbage before the interpreter shuts down.
# DDP keeps its process group alive through a reference cycle; a gloo group that is only
# destroyed during interpreter shutdown can abort the process ("terminate called without
# an active exception", seen with torch 2.13 on CPU), which says nothing about the sample.
SMOKE_WRAPPER = """\
import gc
import runpy
import sys

sys.argv[0] = {script!r}
runpy.run_path({script!r}, run_name="__main__")
gc.collect()
"""


@pytest.mark.slow
@pytest.mark.parametrize("path", SMOKE)
def test_smoke_run_on_cpu(path, tmp_path):
    """Run a TPU-only sample on the CPU after swapping its TPU names for CPU ones."""
    entry = MANIFEST[path]
    assert entry["kind"] in COMPILE_ONLY, f"{path}: cpu samples run as they are"
    source = (SNIPPETS / path).read_text()
    for old, new in entry["smoke"]["replace"]:
        assert old in source, f"{path}: smoke replacement {old!r} no longer matches the sample"
        source = source.replace(old, new)
    script = tmp_path / Path(path).name
    script.write_text(source)
    wrapper = tmp_path / "run_smoke.py"
    wrapper.write_text(SMOKE_WRAPPER.format(script=str(script)))
    result = run_python(wrapper, entry["smoke"], cwd=tmp_path)
    output = f"--- stdout\n{result.stdout}\n--- stderr\n{result.stderr[-3000:]}"
    assert result.returncode == 0, f"{path} (smoke) exited {result.returncode}\n{output}"
    assert entry["smoke"]["expect"] in result.stdout, output


@pytest.mark.parametrize("path", entries("cpu", *COMPILE_ONLY))
def test_no_legacy_torch_tpu_device_calls(path):
    used = dotted_names(ast.parse((SNIPPETS / path).read_text())) & LEGACY_TPU_CALLS
    assert not used, f"{path}: use torch.accelerator.* instead of {sorted(used)}"


@pytest.mark.parametrize("path", entries("tpu"))
def test_tpu_sample_has_no_cuda_or_xla_left(path):
    tree = ast.parse((SNIPPETS / path).read_text())
    leftovers = {s for s in string_constants(tree) if s in {"cuda", "nccl", "xla", "inductor"}}
    leftovers |= {n for n in dotted_names(tree) if n.startswith(("torch.cuda.", "torch_xla", "xm."))}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            leftovers |= {a.name for a in node.names if a.name.startswith("torch_xla")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("torch_xla"):
            leftovers.add(node.module)
    assert not leftovers, f"{path}: GPU or PyTorch/XLA names left in a TPU sample: {leftovers}"


# --- twins: the highlighted lines are the lines that differ ------------------------------


TWINS = sorted(path for path, entry in MANIFEST.items() if "twin" in entry)


@pytest.mark.parametrize("path", TWINS)
def test_hl_lines_match_the_diff_with_the_twin(path):
    entry = MANIFEST[path]
    actual = as_hl_lines(changed_lines(path, entry["twin"]))
    assert actual, f"{path} is identical to its twin {entry['twin']}"
    assert entry.get("hl_lines") == actual, (
        f"{path}: hl_lines should be {actual!r} (lines that differ from {entry['twin']})"
    )


def test_uncaught_exception_helper():
    traceback = 'Traceback (most recent call last):\n  File "x.py", line 1\n    f()\n'
    assert uncaught_exception(traceback + "TypeError: bad\n * detail: x\n") == "TypeError"
    assert uncaught_exception(traceback + "torch.OutOfMemoryError: oom\n") == "OutOfMemoryError"
    assert uncaught_exception("no traceback here") is None


def test_changed_lines_helper():
    assert as_hl_lines([3, 4, 5, 9, 11, 12]) == "3-5 9 11-12"
    assert line_set("3-5 9 11-12") == {3, 4, 5, 9, 11, 12}
    pair = ("quickstart/first_step_gpu.py", "quickstart/first_step_tpu.py")
    device_line = next(
        n for n, line in enumerate((SNIPPETS / pair[0]).read_text().splitlines(), 1) if line.startswith("device =")
    )
    assert changed_lines(*pair) == [device_line]


# --- lint and shell syntax --------------------------------------------------------------


def test_ruff_check_snippets():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "snippets", "tests/content/test_samples.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_snippets():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "--no-cache", "snippets"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, f"run `ruff format snippets`:\n{result.stdout}{result.stderr}"


@pytest.mark.parametrize("path", entries("shell"))
def test_shell_sample_syntax(path):
    script = SNIPPETS / path
    assert script.read_text().startswith("#!/usr/bin/env bash\n"), f"{path}: bash shebang"
    result = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "set -euo pipefail" in script.read_text(), f"{path}: stop at the first failing step"


# --- the README table lists every sample as the manifest does ------------------------------


def readme_rows() -> dict[str, list[str]]:
    rows = {}
    for line in README_PATH.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = cells
    return rows


def test_readme_lists_every_sample_with_its_kind_page_and_hl_lines():
    rows = readme_rows()
    assert set(rows) == set(MANIFEST), (
        f"README.md and MANIFEST.toml disagree: "
        f"missing {sorted(set(MANIFEST) - set(rows))}, extra {sorted(set(rows) - set(MANIFEST))}"
    )
    for path, entry in MANIFEST.items():
        cells = rows[path]
        assert entry["kind"] in cells, f"README row of {path} should give kind {entry['kind']}"
        assert f"`{entry['page']}`" in cells, f"README row of {path} should name {entry['page']}"
        hl = f"`{entry['hl_lines']}`" if "hl_lines" in entry else "-"
        assert hl in cells, f"README row of {path} should give hl_lines {hl}"


# --- the pages include only manifest samples, and highlight what the manifest says --------

INCLUDE = re.compile(r'--8<-- "([^":]+)((?::-?\d*)*)"')
HL_FENCE = re.compile(r'^\s*```\w*.*\bhl_lines="([^"]*)"')


def page_includes() -> list[tuple[str, int, str, str, str | None]]:
    """(page, line number, sample path, line range, hl_lines of its fence) for each include."""
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        lines = page.read_text().splitlines()
        for number, line in enumerate(lines, 1):
            for match in INCLUDE.finditer(line):
                fence = lines[number - 2] if number > 1 else ""
                hl = HL_FENCE.match(fence)
                rel = page.relative_to(DOCS).as_posix()
                found.append((rel, number, match[1], match[2], hl[1] if hl else None))
    return found


def line_set(hl_lines: str) -> set[int]:
    numbers = set()
    for part in hl_lines.split():
        first, _, last = part.partition("-")
        numbers.update(range(int(first), int(last or first) + 1))
    return numbers


def test_pages_include_only_manifest_samples():
    unknown = [f"docs/{page}:{n}: {path}" for page, n, path, _, _ in page_includes()]
    unknown = [u for u in unknown if u.rsplit(": ", 1)[1] not in MANIFEST]
    assert not unknown, f"included but not in {MANIFEST_PATH.name}, so never tested: {unknown}"


def test_page_line_ranges_fit_the_sample():
    for page, n, path, span, _ in page_includes():
        if span and path in MANIFEST:
            length = len((SNIPPETS / path).read_text().splitlines())
            bounds = [int(x) for x in span.strip(":").split(":") if x.lstrip("-").isdigit()]
            assert all(abs(b) <= length for b in bounds), (
                f"docs/{page}:{n}: {path}{span} is outside the file ({length} lines)"
            )


def docstring_lines(path: str) -> set[int]:
    """Line numbers of a Python sample's module docstring (empty for other files)."""
    if not path.endswith(".py"):
        return set()
    body = ast.parse((SNIPPETS / path).read_text()).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        return set(range(body[0].lineno, body[0].end_lineno + 1))
    return set()


def test_pages_highlight_the_lines_that_differ_from_the_twin():
    """A page showing a whole twin with hl_lines highlights its changed lines and no others.

    Highlighting a changed docstring is the page's choice; every other changed line must be.
    """
    for page, n, path, span, hl in page_includes():
        entry = MANIFEST.get(path, {})
        if hl is None or span or "hl_lines" not in entry:
            continue
        changed = line_set(entry["hl_lines"])
        required = changed - docstring_lines(path)
        where = f"docs/{page}:{n}: {path} shown with hl_lines={hl!r}"
        assert line_set(hl) <= changed, (
            f"{where} highlights lines that do not differ from {entry['twin']}: "
            f"{sorted(line_set(hl) - changed)} (the changed lines are {entry['hl_lines']!r})"
        )
        assert required <= line_set(hl), f"{where} misses changed lines {sorted(required - line_set(hl))}"


def included_lines(path: str, span: str) -> list[str]:
    """The lines that `--8<-- "path:span"` puts in the page (span ':start:end', 1-based)."""
    lines = (SNIPPETS / path).read_text().splitlines()
    bounds = [int(x) if x else None for x in span.split(":")[1:3]] if span else []
    start = bounds[0] if bounds and bounds[0] else 1
    end = bounds[1] if len(bounds) > 1 and bounds[1] else len(lines)
    return lines[start - 1 : end]


def test_page_highlights_point_at_code():
    """Every hl_lines number of a page's include names a non-blank line of what is included.

    Catches highlights left behind when a sample is edited and its lines move.
    """
    for page, n, path, span, hl in page_includes():
        if hl is None or path not in MANIFEST:
            continue
        shown = included_lines(path, span)
        bad = [k for k in sorted(line_set(hl)) if k > len(shown) or not shown[k - 1].strip()]
        assert not bad, f"docs/{page}:{n}: hl_lines={hl!r} of {path}{span} point at blank or missing lines {bad}"
