"""The worked port (docs/migrate/worked-port.md): a GPU training script and its TorchTPU port.

Both scripts train for a few steps on the CPU with a tiny config (the GPU one with
--device=cpu, the TPU one because it falls back to the CPU without an accelerator), the TPU
one also under torchrun with two processes. snippets/port/train.diff is the diff between the
two, and the page shows every hunk of it exactly once.

    KB_UPDATE_DIFF=1 ./dev test tests/content/test_port.py   # rewrite train.diff after editing a script
"""

from __future__ import annotations

import ast
import difflib
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from pagecmds import Block, marked_blocks, run_block

ROOT = Path(__file__).resolve().parents[2]
PORT = ROOT / "snippets" / "port"
GPU, TPU, DIFF = PORT / "train_gpu.py", PORT / "train_tpu.py", PORT / "train.diff"
PAGE = ROOT / "docs" / "migrate" / "worked-port.md"
TIMEOUT_S = 180
MAX_ITERS = 4
TINY = [
    "--compile=False",
    f"--max_iters={MAX_ITERS}",
    f"--eval_interval={MAX_ITERS}",
    "--eval_iters=2",
    "--log_interval=1",
    "--n_layer=2",
    "--n_head=2",
    "--n_embd=64",
    "--block_size=32",
    "--batch_size=8",
    "--grad_accum_steps=2",
    "--stream_tokens=20000",
    "--warmup_iters=1",
    "--learning_rate=3e-3",
]
ITER_LINE = re.compile(r"^iter (\d+): loss (\S+),", re.M)
INCLUDE = re.compile(r'--8<-- "port/train\.diff:(\d+):(\d+)"')


def run(script: Path, *args: str, cwd: Path, nproc: int = 0) -> subprocess.CompletedProcess[str]:
    launcher = ["-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}"] if nproc else []
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [sys.executable, *launcher, str(script), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


def losses(stdout: str) -> list[float]:
    return [float(loss) for _, loss in ITER_LINE.findall(stdout)]


def check_training_run(
    result: subprocess.CompletedProcess[str], out_dir: Path, iters: int = MAX_ITERS, shown: str = ""
) -> dict:
    """The run exits 0, logs one finite, falling loss per step and leaves a loadable checkpoint
    (``shown``: the checkpoint's path as the run prints it, by default ``out_dir/ckpt.pt``)."""
    output = f"--- stdout\n{result.stdout}\n--- stderr\n{result.stderr[-3000:]}"
    assert result.returncode == 0, output
    assert "Traceback" not in result.stderr, output
    steps = [int(n) for n, _ in ITER_LINE.findall(result.stdout)]
    assert steps == list(range(iters)), output
    values = losses(result.stdout)
    assert all(math.isfinite(v) for v in values), output
    assert values[-1] < values[0], f"the loss should fall over {iters} steps: {values}"
    assert f"saved checkpoint to {shown or out_dir / 'ckpt.pt'}" in result.stdout, output
    checkpoint = torch.load(out_dir / "ckpt.pt", map_location="cpu")
    assert checkpoint["iter_num"] == iters
    assert {"model", "optimizer", "config"} <= set(checkpoint)
    return checkpoint


# --- the scripts train on the CPU ----------------------------------------------------------


@pytest.fixture(scope="module")
def gpu_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The GPU script's tiny run on the CPU, once for this module (its checkpoint is also the one
    the TPU script resumes from): the run and its output folder, which no test changes."""
    out = tmp_path_factory.mktemp("gpu-run")
    return run(GPU, "--device=cpu", *TINY, f"--out_dir={out}", cwd=out), out


@pytest.mark.slow
def test_gpu_script_trains_on_the_cpu(gpu_run):
    result, out = gpu_run
    check_training_run(result, out)
    assert "on cpu" in result.stdout


@pytest.mark.slow
def test_tpu_script_falls_back_to_the_cpu_and_trains(tmp_path):
    result = run(TPU, *TINY, f"--out_dir={tmp_path}", cwd=tmp_path)
    checkpoint = check_training_run(result, tmp_path)
    assert "rank 0 (local 0) of 1 on cpu" in result.stdout
    assert "dtype bfloat16" in result.stdout
    tensors = [t for t in checkpoint["model"].values() if isinstance(t, torch.Tensor)]
    assert tensors and all(t.device.type == "cpu" for t in tensors)


@pytest.mark.slow
def test_tpu_script_under_torchrun_logs_and_saves_from_rank_zero_only(tmp_path):
    result = run(TPU, *TINY, f"--out_dir={tmp_path}", cwd=tmp_path, nproc=2)
    check_training_run(result, tmp_path)
    assert "rank 1 (local 1) of 2 on cpu" in result.stdout
    assert result.stdout.count("saved checkpoint") == 1, result.stdout
    assert "1 micro-steps/step" in result.stdout  # grad_accum_steps=2 split over 2 processes


@pytest.mark.slow
def test_tpu_script_resumes_from_the_gpu_scripts_checkpoint(gpu_run, tmp_path):
    result, out = gpu_run
    assert result.returncode == 0, result.stderr[-3000:]
    shutil.copy2(out / "ckpt.pt", tmp_path / "ckpt.pt")  # the shared run's folder stays as it was
    more = [f"--max_iters={MAX_ITERS + 2}", f"--eval_interval={MAX_ITERS + 2}", "--resume=True"]
    result = run(TPU, *TINY, *more, f"--out_dir={tmp_path}", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    steps = [int(n) for n, _ in ITER_LINE.findall(result.stdout)]
    assert steps == [MAX_ITERS, MAX_ITERS + 1], result.stdout
    assert torch.load(tmp_path / "ckpt.pt", map_location="cpu")["iter_num"] == MAX_ITERS + 2


@pytest.mark.slow
@pytest.mark.parametrize(
    ("script", "arg", "message"),
    [
        (TPU, "--dtype=float16", "bad argument --dtype=float16: expected bfloat16 or float32"),
        (TPU, "--tpu_generation=v9", "bad argument --tpu_generation=v9: expected one of"),
        (TPU, "--max_iters=many", "bad argument '--max_iters=many': expected a value of type int"),
        (GPU, "--no_such_key=1", "bad argument '--no_such_key=1': expected --key=value"),
        (GPU, "--compile=maybe", "bad argument '--compile=maybe': expected True or False"),
    ],
)
def test_bad_arguments_stop_with_a_message_not_a_traceback(tmp_path, script, arg, message):
    extra = ["--device=cpu"] if script == GPU else []
    result = run(script, *extra, *TINY, f"--out_dir={tmp_path}", arg, cwd=tmp_path)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]


# --- the MFU peaks are the KB's --------------------------------------------------------------


def module_constant(path: Path, name: str) -> object:
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{path.name} has no module-level {name} = ...")


def test_tpu_peak_flops_match_the_hardware_table():
    records = yaml.safe_load((ROOT / "docs" / "data" / "hardware.yml").read_text())
    generation = {rec["id"].removeprefix("tpu-"): rec for rec in records}
    peaks = module_constant(TPU, "PEAK_BF16_FLOPS_PER_CHIP")
    assert peaks == {g: rec["bf16_tflops"] * 1e12 for g, rec in generation.items()}
    per_chip = module_constant(TPU, "DEVICES_PER_CHIP")
    assert per_chip == {g: rec["devices_per_chip"] for g, rec in generation.items() if rec["devices_per_chip"] != 1}


# --- the diff, and the page that shows it hunk by hunk -----------------------------------------


def expected_diff() -> str:
    lines = difflib.unified_diff(
        GPU.read_text().splitlines(),
        TPU.read_text().splitlines(),
        "train_gpu.py",
        "train_tpu.py",
        n=2,
        lineterm="",
    )
    return "\n".join(lines) + "\n"


def hunks(diff: str) -> list[tuple[int, int]]:
    """(first, last) 1-based line numbers of each hunk of a unified diff, its @@ line first."""
    lines = diff.splitlines()
    starts = [n for n, line in enumerate(lines, 1) if line.startswith("@@ ")]
    return [(start, end - 1) for start, end in zip(starts, [*starts[1:], len(lines) + 1], strict=True)]


def test_diff_file_is_the_diff_of_the_two_scripts():
    expected = expected_diff()
    if os.environ.get("KB_UPDATE_DIFF") == "1":
        DIFF.write_text(expected)
    assert DIFF.read_text() == expected, (
        "snippets/port/train.diff is stale: run KB_UPDATE_DIFF=1 ./dev test tests/content/test_port.py, "
        f"then point the page's includes at the hunks {hunks(expected)}"
    )


def test_page_shows_every_hunk_once_and_only_whole_hunks():
    spans = [(int(a), int(b)) for a, b in INCLUDE.findall(PAGE.read_text())]
    expected = hunks(DIFF.read_text())
    assert sorted(spans) == expected, (
        f"{PAGE.relative_to(ROOT)} should include each hunk of port/train.diff once, as "
        f'--8<-- "port/train.diff:FIRST:LAST"; the hunks are {expected}, the page has {sorted(spans)}'
    )


def test_hunks_helper():
    diff = "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n@@ -5 +5 @@\n-p\n+q\n"
    assert hunks(diff) == [(3, 5), (6, 8)]
    assert losses("iter 0: loss 6.25, 1 ms\niter 1: loss nan, 1 ms\n")[0] == 6.25
    assert math.isnan(losses("iter 1: loss nan, 1 ms\n")[0])


# --- the scanner does the mechanical part ---------------------------------------------------

FIX_DIFF = PORT / "train.fix.diff"


def _scan(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "scripts"))
    cmd = [sys.executable, "-m", "kb", "--root", str(ROOT), "scan", *args]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)


# --- the commands the page tells the reader to run, run exactly as written ---------------------
# Each is a fenced block marked {data-run="FOLDER"} (tests/pagecmds.py), run unchanged with bash
# from FOLDER; tests/content/test_pagecmds.py holds every marked block of the docs to one check.

VERIFY = r"^python train_tpu\.py "
SCAN_DIFF = r"^\./dev scan --diff \S*train_gpu\.py$"
SCAN_PORT = r"^\./dev scan \S*train_tpu\.py$"
CHECKED = (VERIFY, SCAN_DIFF, SCAN_PORT)


def page_block(pattern: str) -> Block:
    found = [b for b in marked_blocks(PAGE) if re.search(pattern, b.command.strip())]
    assert len(found) == 1, f"{PAGE.name}: expected one block marked data-run matching {pattern}, found {found}"
    return found[0]


def test_every_marked_block_of_the_page_has_one_check():
    """tests/content/test_pagecmds.py holds every marked block of the docs to a check; these are this page's."""
    for block in marked_blocks(PAGE):
        where = f"{block.page.relative_to(ROOT)}:{block.line}"
        assert sum(bool(re.search(p, block.command.strip())) for p in CHECKED) == 1, f"{where}: no check"


@pytest.mark.slow
def test_the_pages_verify_command_runs_as_written(tmp_path):
    """Verify, step 1: one iter line per step (five), a falling loss, an eval line, the checkpoint.
    It writes out/ into its folder, so it runs in a copy of snippets/port/."""
    block = page_block(VERIFY)
    assert block.cwd == "snippets/port"
    folder = tmp_path / block.cwd
    shutil.copytree(ROOT / block.cwd, folder)
    result = run_block(block, folder)
    check_training_run(result, folder / "out", iters=5, shown="out/ckpt.pt")
    assert "rank 0 (local 0) of 1 on cpu" in result.stdout
    assert re.search(r"^eval 5: train \S+, val \S+$", result.stdout, re.M), result.stdout


def test_scan_diff_is_the_mechanical_part_of_the_port():
    """Step 1's `./dev scan --diff` of train_gpu.py, from the handbook's root, exits 1 and
    prints train.fix.diff (shown on the page), and every line it changes is a line the hand port
    changes too: the scanner does the mechanical part of this very port."""
    block = page_block(SCAN_DIFF)
    assert block.cwd == "."
    live = run_block(block, ROOT)
    if os.environ.get("KB_UPDATE_DIFF") == "1":
        FIX_DIFF.write_text(live.stdout)
    assert live.returncode == 1, live.stderr[-3000:]
    assert live.stdout == FIX_DIFF.read_text(), "snippets/port/train.fix.diff is stale: KB_UPDATE_DIFF=1 regenerates it"
    changed = {
        line for line in FIX_DIFF.read_text().splitlines() if line.startswith("-") and not line.startswith("---")
    }
    ported = {line for line in DIFF.read_text().splitlines() if line.startswith("-")}
    assert changed and changed <= ported, changed - ported


def test_the_port_scans_with_nothing_to_change():
    """Verify, step 2: nothing under must-change, exit status 0."""
    block = page_block(SCAN_PORT)
    assert block.cwd == "."
    result = run_block(block, ROOT)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "by severity: must-change 0," in result.stdout, result.stdout


@pytest.mark.slow
def test_the_fixed_gpu_script_trains_on_the_cpu_without_being_told(tmp_path):
    """After --fix the script picks the device itself: no --device=cpu, and it still trains."""
    script = tmp_path / "train_gpu.py"
    script.write_text(GPU.read_text())
    assert _scan("--fix", "train_gpu.py", cwd=tmp_path).returncode == 1  # judgement calls are left
    result = run(script, *TINY, f"--out_dir={tmp_path}", cwd=tmp_path)
    check_training_run(result, tmp_path)
    assert "on cpu" in result.stdout
