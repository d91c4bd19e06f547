"""Every call the handbook recommends that can run on torch 2.13 CPU runs there, and crashes fail.

The spans come from the KB and the pages (scripts/kb/pages/calls.py), never from a list written here:
inline code in records and pages, the scanner rules' fixes, and the torch.* calls in the samples.
One subprocess (tests/recommended_runner.py) runs them all with a one-rank gloo process group:

- a plain-PyTorch call runs as written (placeholders such as ``model`` or ``path`` are bound to
  small CPU objects); a ``torch.accelerator`` call may only end in torch's own "no accelerator"
  error, which is what it does on a machine without one;
- a call written with ``...`` (your arguments), or a call inside a sample, is bound to the
  signature of what it calls: the name must exist and take those keywords;
- a TorchTPU span does not run (it needs a TPU): its ``torch.*`` part is bound the same way, and
  when only the strings 'tpu' and 'tpu_dist' tie it to the TPU, its twin with 'cpu' and 'gloo'
  runs; its ``torch.tpu`` names are held to the wheel by ``kb check-wheel``;
- a dotted name (a Dynamo option, a function named in prose) must resolve on torch 2.13;
- a ``TORCH_*`` environment variable must be spelt as torch reads it.
A failure names the file and line of the span and what happened.
"""

from __future__ import annotations

import builtins
import functools
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT
from kb.core.schema import EnvVar
from kb.mkdocs.project import Project, validate_project
from kb.pages.calls import ALIASES, Span, compile_arguments, env_settings, page_spans, record_spans, sample_calls
from kb.wheel.package import load_index
from kb.wheel.wheelfacts import PG_LIBRARY

pytestmark = pytest.mark.slow  # each test runs CPU PyTorch in a subprocess

RUNNER = Path(__file__).resolve().parents[1] / "recommended_runner.py"
PLACEHOLDERS = {
    "model", "module", "tensor", "x", "t", "inputs", "a", "b", "i", "s", "seed", "dim", "N",
    "device", "path", "state_dict", "mesh_shape", "fn", "args", "optimizer",
}  # fmt: skip
# Names the handbook writes to say they do NOT exist, each with the record that says so. They must
# keep failing to resolve: when torch adds one, the statement is out of date.
ABSENT = {
    "torch.accelerator.random": "api_map manual-seed: 'torch 2.13.0 has no such module'",
    "torch._six": "api_map torch-six: the module older code imports, gone from torch 2.13.0",
}
TIMEOUT_S = 600


@functools.cache
def project() -> Project:
    loaded = validate_project(ROOT, package=False)
    assert loaded.kb is not None, loaded.problems
    return loaded


@functools.cache
def spans() -> tuple[Span, ...]:
    kb = project().kb
    assert kb is not None
    found = record_spans(kb) + page_spans(project().pages)
    with (ROOT / "snippets" / "MANIFEST.toml").open("rb") as f:
        manifest = tomllib.load(f)
    for path, entry in sorted(manifest.items()):
        if entry["kind"] in {"cpu", "tpu"} and path.endswith(".py"):
            found += sample_calls(ROOT / "snippets" / path, f"snippets/{path}")
    return tuple(found)


def runnable(span: Span, code: str) -> bool:
    """Every free name is torch, an alias, a placeholder or a builtin (so the code can run here)."""
    known = {"torch", *ALIASES, *PLACEHOLDERS, *dir(builtins)}
    return not span.elided and not span.sample and span.roots <= known and "torch.tpu" not in code


def jobs() -> list[tuple[Span, dict[str, object]]]:
    planned: list[tuple[Span, dict[str, object]]] = []
    seen: set[str] = set()

    def add(span: Span, job: dict[str, object]) -> None:
        key = json.dumps(job, sort_keys=True)
        if key not in seen:
            seen.add(key)
            planned.append((span, job))

    for span in spans():
        if span.side == "torch" and span.shape == "call" and runnable(span, span.code):
            add(span, {"kind": "run", "code": span.code})
        if span.side == "tpu" and span.twin and runnable(span, span.twin):
            add(span, {"kind": "run", "code": span.twin})
        if span.side in {"torch", "tpu"}:
            for call in span.calls:
                if not call.name.startswith("torch.tpu"):
                    job = {"kind": "bind", "name": call.name, "positional": call.positional}
                    add(span, {**job, "keywords": list(call.keywords) if call.keywords is not None else None})
        if span.side == "torch" and span.shape == "name":
            for name in span.names:
                if name.startswith("torch.") and name not in ABSENT:
                    add(span, {"kind": "resolve", "name": name})
    return planned


@functools.cache
def results() -> tuple[tuple[Span, dict[str, object], dict[str, object]], ...]:
    planned = jobs()
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"aliases": ALIASES, "jobs": [job for _, job in planned]}, f)
    env = {**os.environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0", "PYTHONWARNINGS": "ignore"}
    try:
        proc = subprocess.run(
            [sys.executable, str(RUNNER), f.name], capture_output=True, text=True, timeout=TIMEOUT_S, env=env
        )
    finally:
        os.unlink(f.name)
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == len(planned), (
        f"the runner stopped after {len(lines)} of {len(planned)} jobs:\n{proc.stderr[-3000:]}"
    )
    return tuple((span, job, result) for (span, job), result in zip(planned, lines, strict=True))


def failures(kind: str) -> list[str]:
    return [
        f"{span.where}: `{span.text}` -> {job.get('code') or job.get('name')}: {result['note']}"
        for span, job, result in results()
        if job["kind"] == kind and not result["ok"]
    ]


def test_recommended_calls_run_on_cpu():
    ran = [r for _, job, r in results() if job["kind"] == "run"]
    assert len(ran) >= 40, f"only {len(ran)} spans ran: the collector lost them"
    assert failures("run") == []


def test_ops_without_a_cpu_kernel_have_a_tpu_kernel_in_the_wheel(real_wheels):
    """A span may call an op torch's CPU build lacks only when the wheel registers it for TPU."""
    wheel = real_wheels
    with zipfile.ZipFile(wheel) as zf:
        library = zf.read(PG_LIBRARY)
    missing = [
        f"{span.where}: `{span.text}` needs {note} on the CPU, and the wheel registers no TPU kernel for it"
        for span, _job, result in results()
        if str(note := result["note"]).startswith("no-cpu-kernel:")
        and str(note).split("::", 1)[1].encode() + b"\0" not in library
    ]
    assert missing == []


def test_recommended_calls_take_the_arguments_written():
    assert failures("bind") == []


def test_named_torch_apis_and_dynamo_options_exist():
    assert failures("resolve") == []


def test_names_said_to_be_absent_are_absent():
    probe = "import importlib, sys\nfrom recommended_runner import resolve\n"
    for name, why in ABSENT.items():
        code = (
            probe + f"try:\n    resolve({name!r})\nexcept (AttributeError, ImportError):\n    sys.exit(0)\nsys.exit(1)"
        )
        proc = subprocess.run([sys.executable, "-c", code], cwd=RUNNER.parent, capture_output=True, timeout=120)
        assert proc.returncode == 0, f"{name} exists on this torch, but {why}"


CONFIG_NAME = re.compile(r"torch\._(?:dynamo|inductor)\.config\.[A-Za-z_][\w.]*[A-Za-z0-9_]")


def test_dynamo_and_inductor_options_in_samples_and_pages_exist():
    """``torch._dynamo.config.X`` as the samples set it and the pages name it, code blocks included."""
    texts = [p for p in (ROOT / "docs").rglob("*.md")] + [p for p in (ROOT / "snippets").rglob("*.py")]
    names = {m.group(0): p for p in texts for m in CONFIG_NAME.finditer(p.read_text("utf-8"))}
    assert names, "no Dynamo option found: the pattern is broken"
    code = "import torch\nfrom recommended_runner import resolve\nbad = []\n"
    code += "".join(f"try:\n    resolve({n!r})\nexcept Exception:\n    bad.append({n!r})\n" for n in sorted(names))
    code += "print('\\n'.join(bad))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=RUNNER.parent, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [f"{names[n].relative_to(ROOT)}: {n}" for n in proc.stdout.split()] == []


def compile_calls() -> list[tuple[Span, dict[str, object]]]:
    return [(s, kw) for s in spans() if any(c.name == "torch.compile" for c in s.calls) for kw in compile_arguments(s)]


def test_compile_arguments_are_ones_the_backend_takes(real_wheels):
    """backend names torch or the wheel registers; modes Inductor lists; options the backend reads."""
    wheel = real_wheels
    index = load_index(wheel)
    code = (
        "import json, torch\nprint(json.dumps({'backends': torch._dynamo.list_backends(exclude_tags=()),"
        " 'modes': list(torch._inductor.list_mode_options()), 'options': list(torch._inductor.list_options())}))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    torch_side = json.loads(proc.stdout.splitlines()[-1])
    tpu_options = set(index.facts["compile-backend-options"])
    calls = compile_calls()
    assert calls, "no torch.compile call found"
    bad = []
    for span, kw in calls:
        backend = kw.get("backend", "inductor")
        if span.side == "elsewhere":
            continue  # a peer's backend (openxla, neuron), named as what the peer does
        if isinstance(backend, str) and backend not in torch_side["backends"] and backend not in index.backends:
            bad.append(f"{span.where}: backend {backend!r} is neither a torch backend nor one the wheel registers")
        if "mode" in kw and (backend == "tpu" or kw["mode"] not in torch_side["modes"]):
            bad.append(f"{span.where}: mode {kw['mode']!r} with backend {backend!r}")
        options = kw.get("options") if isinstance(kw.get("options"), dict) else {}
        known = tpu_options if backend == "tpu" else set(torch_side["options"])
        bad += [f"{span.where}: option {k!r} is not read by backend {backend!r}" for k in options if k not in known]
        if "dynamic" in kw and kw["dynamic"] not in (True, False, None):
            bad.append(f"{span.where}: dynamic={kw['dynamic']!r}")
    assert bad == []


def torch_env_names() -> dict[str, str]:
    """TORCH_* names (TorchTPU's own left to check-wheel) the handbook tells readers to set."""
    kb = project().kb
    assert kb is not None
    names = {
        rec.model.name: f"{rec.path}:{rec.line}"
        for rec in kb.rows("env_vars", EnvVar)
        if rec.model.name.startswith("TORCH_") and not rec.model.name.startswith("TORCH_TPU")
    }
    texts = [(p.text, p.shown) for p in project().pages.values()]
    for name, _value, where in env_settings(texts):
        if name.startswith("TORCH_") and not name.startswith("TORCH_TPU"):
            names.setdefault(name, where)
    return names


def test_torch_env_vars_are_spelt_as_torch_reads_them():
    names = torch_env_names()
    assert names, "no TORCH_ variable found"
    code = (
        "import pathlib, sys, torch\nroot = pathlib.Path(torch.__file__).parent\nwanted = set(sys.argv[1:])\n"
        "found = set()\nfor p in root.rglob('*'):\n    if p.suffix in {'.py', '.so'} or '.so.' in p.name:\n"
        "        data = p.read_bytes()\n        found |= {w for w in wanted if w.encode() in data}\n"
        "print('\\n'.join(sorted(wanted - found)))"
    )
    proc = subprocess.run([sys.executable, "-c", code, *names], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [f"{names[n]}: {n} is not in torch's code" for n in proc.stdout.split()] == []


@pytest.mark.parametrize("name", ["TORCH_SHOW_CPP_STACKTRACES", "TORCH_DEVICE_BACKEND_AUTOLOAD"])
def test_torch_env_settings_run(name):
    """The handbook's settings of torch's own variables do not break torch: a small step runs."""
    if name not in torch_env_names():
        pytest.fail(f"{name} is no longer in the handbook: drop it from this test")
    env = {**os.environ, name: "1" if name == "TORCH_SHOW_CPP_STACKTRACES" else "0"}
    code = "import torch\nm = torch.nn.Linear(2, 2)\nm(torch.ones(1, 2)).sum().backward()\nprint('ok')"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.stdout.strip() == "ok", proc.stderr[-2000:]
