"""The scanner's mechanical fixes (``scanfix``): each fix kind, what is left alone, and the whole
loop on a GPU-style DDP script of our own: --diff writes nothing, --fix rewrites, a second --fix
changes nothing, the fixed script trains on the CPU, and a rescan leaves only the non-mechanical
findings. The real rules table is used throughout: the fixes under test are the ones it declares."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT
from kb.scan.scan import scan_source
from kb.scan.scanfix import FixError, fix_text, fixes_for
from kb.scan.scanrules import RuleSet, load_rules

SAMPLE = ROOT / "tests" / "scan_fix" / "train_ddp.py"
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "scripts")}
ACC = "(torch.accelerator.current_accelerator(check_available=True) or torch.device('cpu')).type"
# What --fix leaves to a person in the sample: each needs judgement, not a rename.
NON_MECHANICAL = {
    "cuda-bf16-probe",  # choose bf16 on TPU and drop the scaler
    "cuda-compare",  # what should `"cuda" in device` mean on a TPU?
    "cuda-current-or-set-device",  # torch.cuda.set_device(local_rank): drop it on TPU, keep it on GPU
    "cuda-fstring-device",  # f"cuda:{local_rank}": the index is wrong on TPU, right on GPU
    "rank-device-index",  # device_ids=[local_rank], likewise
}


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return load_rules(sorted((ROOT / "docs" / "data").glob("migration_rules*.yml")), ROOT)


def fixed(real: RuleSet, code: str) -> str:
    code = textwrap.dedent(code)
    found = scan_source(code, "t.py", real)
    return fix_text(code, fixes_for(found, real.by_id()))[0]


@pytest.mark.parametrize(
    "before, after",
    [
        ("import torch\ntorch.cuda.synchronize()\n", "import torch\ntorch.accelerator.synchronize()\n"),
        # torch as the file names it, and no second import (improved-diffusion imports torch as th)
        ("import torch as th\nth.cuda.synchronize()\n", "import torch as th\nth.accelerator.synchronize()\n"),
        ("import torch as th\nd = 'cuda'\n", "import torch as th\nd = " + ACC.replace("torch.", "th.") + "\n"),
        (
            "import torch as th\nimport torch\nth.cuda.synchronize()\n",
            "import torch as th\nimport torch\ntorch.accelerator.synchronize()\n",
        ),
        (
            "import torch\nn = torch.cuda.device_count()  # how many\n",
            "import torch\nn = torch.accelerator.device_count()  # how many\n",
        ),
        (
            "from torch.cuda import current_device as here\nx = here()\n",
            "from torch.cuda import current_device as here\nimport torch\n\nx = torch.accelerator.current_device_index()\n",
        ),
        (  # a guard rename inside the test that a device is there (renamed in the same pass)
            "import torch\nif torch.cuda.is_available():\n    print(torch.cuda.max_memory_allocated())\n",
            "import torch\nif torch.accelerator.is_available():\n    print(torch.accelerator.max_memory_allocated())\n",
        ),
        (
            "import torch\nm = torch.cuda.memory_stats() if rank == 0 and torch.accelerator.is_available() else {}\n",
            "import torch\nm = torch.accelerator.memory_stats() if rank == 0 and torch.accelerator.is_available() else {}\n",
        ),
        (  # after an early exit when there is none; through a name the probe is stored in
            "import torch\ndef f():\n    if not torch.accelerator.is_available():\n        return 0\n    return torch.cuda.memory_reserved()\n",
            "import torch\ndef f():\n    if not torch.accelerator.is_available():\n        return 0\n    return torch.accelerator.memory_reserved()\n",
        ),
        (
            "import torch\ndef f():\n    on = torch.accelerator.is_available()\n    if on:\n        torch.cuda.empty_cache()\n",
            "import torch\ndef f():\n    on = torch.accelerator.is_available()\n    if on:\n        torch.accelerator.empty_cache()\n",
        ),
        (
            "import torch\nif torch.accelerator.is_available():\n    for _ in range(2):\n        torch.cuda.empty_cache()\n",
            "import torch\nif torch.accelerator.is_available():\n    for _ in range(2):\n        torch.accelerator.empty_cache()\n",
        ),
        ("import torch\ndevice = 'cuda'\n", f"import torch\ndevice = {ACC}\n"),
        # an f-string with no placeholder is the string it spells (guided-diffusion's th.device(f"cuda"))
        ('import torch\ndevice = torch.device(f"cuda")\n', f"import torch\ndevice = torch.device({ACC})\n"),
        ("import torch\nx = t.to('cuda')\n", f"import torch\nx = t.to({ACC})\n"),
        ("import torch\ndef f(x, device='cuda'):\n    pass\n", f"import torch\ndef f(x, device={ACC}):\n    pass\n"),
        (
            "import torch\nd = 'cuda' if torch.cuda.is_available() else 'cpu'\n",
            f"import torch\nd = {ACC} if torch.accelerator.is_available() else 'cpu'\n",
        ),
        (
            "import torch\nm = model.cuda()\nx = t.cuda(non_blocking=True)\n",
            "import torch\nm = model.to(torch.accelerator.current_accelerator(check_available=True) or 'cpu')\n"
            "x = t.to(torch.accelerator.current_accelerator(check_available=True) or 'cpu', non_blocking=True)\n",
        ),
        (
            "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\ntorch.backends.cuda.matmul.allow_tf32 = False\n",
            'import torch\ntorch.set_float32_matmul_precision("high")\ntorch.set_float32_matmul_precision("highest")\n',
        ),
        (
            "import torch.distributed as dist\ndist.init_process_group(backend='nccl')\n",
            "import torch.distributed as dist\nimport torch\n\n"
            f"dist.init_process_group(backend=torch.distributed.get_default_backend_for_device({ACC}))\n",
        ),
        (  # Windows line endings stay as they were
            "import torch\r\ntorch.cuda.synchronize()\r\n",
            "import torch\r\ntorch.accelerator.synchronize()\r\n",
        ),
    ],
)
def test_each_fix_kind(real, before, after):
    assert fixed(real, before) == after


@pytest.mark.parametrize(
    "code",
    [
        "import torch\nkinds = {'cuda': 1, 'cpu': 2}\n",  # a dict key is data, not a device
        "import torch\nchoices = ['cuda', 'cpu']\n",  # so is a list item
        "import torch\nif device == 'cuda':\n    pass\n",  # a comparison needs judgement
        "import torch\nx = t.cuda(0)\n",  # an index: the device is chosen per rank
        "import torch\nx = t.to('cuda:1')\n",  # likewise
        "import torch\nx = (t).cuda(device=d)\n",  # an argument .to() would read differently
        "import torch\ntorch.backends.cuda.matmul.allow_tf32 = flag\n",  # a value we can't map
        "import torch\nflag = torch.backends.cuda.matmul.allow_tf32\n",  # a read, not a setting
        "import torch\ntorch.cuda.set_device(local_rank)\n",  # no mechanical fix declared
        "import torch\nx = 'cu' 'da'\n",  # a literal in pieces
        "import torch\nx = f'cu' f'da'\n",  # likewise, as f-strings
        "import torch\nmatch device:\n    case 'cuda':\n        pass\n",  # a pattern
        # a guard rename (torch.accelerator's memory calls raise on a CPU, torch.cuda's return 0) with no guard:
        "import torch\nprint(torch.cuda.memory_allocated())\n",
        "import torch\nif not torch.accelerator.is_available():\n    torch.cuda.empty_cache()\n",
        "import torch\nif torch.accelerator.is_available():\n    pass\nelse:\n    torch.cuda.empty_cache()\n",
        "import torch\nif torch.accelerator.is_available() or force:\n    torch.cuda.empty_cache()\n",
        "import torch\nm = {} if torch.accelerator.is_available() else torch.cuda.memory_stats()\n",
    ],
)
def test_what_the_fixer_does_not_fully_understand_is_left_alone(real, code):
    assert fixed(real, code) == textwrap.dedent(code)


def test_comments_and_formatting_are_kept(real):
    code = "import torch  # the framework\n\n\ndef step():\n    torch.cuda.synchronize(  # wait\n    )\n"
    assert fixed(real, code) == code.replace("torch.cuda.synchronize", "torch.accelerator.synchronize")


def test_columns_count_characters_so_fixes_land_after_non_ascii_text(real):
    code = "import torch\nnote = 'é'; device = 'cuda'\n"
    assert fixed(real, code) == f"import torch\nnote = 'é'; device = {ACC}\n"


def test_a_file_libcst_cannot_parse_is_a_fix_error():
    with pytest.raises(FixError) as err:
        fix_text("def f(:\n", {(1, 1): []})
    assert err.value.line >= 1 and "not fixed" in err.value.message


def test_every_fix_names_only_what_torch_2_13_has(real):
    """Each `to` and each dotted name in an expression resolves in the installed torch 2.13."""
    import ast

    names = []
    for rule in real.rules:
        if rule.fix is None:
            continue
        if rule.fix.to:
            names.append(rule.fix.to)
        if rule.fix.expression:
            for node in ast.walk(ast.parse(rule.fix.expression, mode="eval")):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                    names.append(ast.unparse(node.func))  # every call in a fix is to a dotted torch name
    assert names
    names.append("torch.set_float32_matmul_precision")  # what matmul-precision writes
    for name in names:
        _torch(name)  # AttributeError names the missing part


def _torch(name: str) -> object:
    """The object a dotted ``torch.*`` name names in the installed torch."""
    import torch

    obj: object = torch
    for part in name.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def _outcome(name: str) -> tuple[str, object]:
    obj = _torch(name)
    try:
        return "returns", obj()  # type: ignore[operator]
    except Exception as exc:  # noqa: BLE001  # what it raises is the outcome
        return "raises", type(exc).__name__


def test_a_rename_does_on_a_cpu_what_the_call_did_or_is_made_only_under_a_guard(real):
    """Run on this CPU build, each renamed call and its replacement do the same (both raise, or
    both return the same value), or the fix is a guard one: made only under an is_available() test."""
    renames = [r for r in real.rules if r.fix is not None and r.fix.kind == "rename"]
    assert len(renames) >= 10
    differ = {r.id: _outcome(r.pattern)[0] != _outcome(r.fix.to or "")[0] for r in renames}  # type: ignore[union-attr]
    assert {r.id: r.fix.guard for r in renames} == differ  # type: ignore[union-attr]
    assert sum(differ.values()) == 6  # the memory calls: 0 or {} or a no-op against RuntimeError


# What a message says a torch.cuda call does on a TPU host, and the outcome that says it here.
_SAID = {
    "raises": ("raises", None),
    "returns 0": ("returns", 0),
    "returns an empty dict": ("returns", {}),
    "returns False": ("returns", False),
    "does nothing": ("returns", None),
}


def test_what_a_message_says_a_call_does_is_what_it_does_on_a_cpu(real):
    """A torch.cuda rule whose message says what the call does on a TPU host (which runs torch's
    CPU build) does that on this CPU build, called as the rule names it with no argument."""
    said = [
        (rule, phrase)
        for rule in real.rules
        if rule.kind == "call" and rule.pattern.startswith("torch.cuda.")
        for phrase in _SAID
        if phrase in rule.message
    ]
    assert {phrase for _, phrase in said} == set(_SAID)
    for rule, phrase in said:
        kind, value = _SAID[phrase]
        got = _outcome(rule.pattern)
        assert got[0] == kind and (kind == "raises" or got[1] == value), (rule.code, phrase, got)


@pytest.mark.filterwarnings("ignore:torch.set_default_tensor_type")  # it warns, then raises
def test_the_legacy_tensor_types_fail_on_a_cpu_and_the_advice_runs(real):
    """What cuda-tensor-type says of torch.cuda's legacy types holds on this CPU build, for each of
    them, and what it suggests instead runs here."""
    import torch

    assert "cuda-tensor-type" in {r.pattern for r in real.rules if r.kind == "detector"}
    from kb.scan.scan import _TENSOR_TYPES

    assert _TENSOR_TYPES == {f"torch.cuda.{n}" for n in dir(torch.cuda) if n.endswith("Tensor")}
    x = torch.zeros(2)
    for name in sorted(_TENSOR_TYPES):
        kind = _torch(name)
        assert _outcome(name) == ("raises", "TypeError"), name  # built
        with pytest.raises(TypeError):
            torch.set_default_tensor_type(name)  # named as a string
        with pytest.raises(RuntimeError):
            x.type(kind)  # type: ignore[call-overload]
        assert not isinstance(x, kind)  # type: ignore[arg-type]
    assert torch.empty(2, dtype=torch.float32, device="cpu").dtype == torch.float32
    assert x.to("cpu", torch.float16).dtype == torch.float16
    assert x.dtype == torch.float32 and x.device.type == "cpu"


def _scan(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "kb", "--root", str(ROOT), "scan", *args]
    return subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_the_sample_is_fixed_runs_on_cpu_and_only_judgement_is_left(tmp_path):
    script = tmp_path / "train_ddp.py"
    shutil.copy(SAMPLE, script)
    original = script.read_bytes()
    diff = _scan("--diff", "train_ddp.py", cwd=tmp_path)
    assert diff.returncode == 1, diff.stderr
    assert diff.stdout.startswith("--- a/train_ddp.py\n+++ b/train_ddp.py\n")
    assert '+torch.set_float32_matmul_precision("high")' in diff.stdout
    assert script.read_bytes() == original  # --diff writes nothing
    first = _scan("--fix", "--format", "json", "train_ddp.py", cwd=tmp_path)
    assert first.returncode == 1, first.stderr  # judgement calls remain
    after = script.read_text()
    assert after != original.decode() and "torch.cuda.synchronize" not in after
    left = json.loads(first.stdout)["findings"]
    judgement = {f["line"] for f in left if f["rule"] in NON_MECHANICAL and f["severity"] == "must-change"}
    # a mechanical finding stays only on a line a judgement call holds too (no half-fix of that line)
    must = {f["rule"] for f in left if f["severity"] == "must-change" and f["line"] not in judgement}
    assert judgement and must <= NON_MECHANICAL, must - NON_MECHANICAL
    assert not [f for f in left if f["fixable"]]
    again = _scan("--fix", "train_ddp.py", cwd=tmp_path)
    assert again.returncode == 1 and script.read_text() == after  # idempotent
    assert _scan("--diff", "train_ddp.py", cwd=tmp_path).stdout == ""
    run = subprocess.run(
        [sys.executable, str(script), "4", str(tmp_path / "out")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "final loss" in run.stdout and (tmp_path / "out" / "ckpt.pt").is_file()


def test_fix_keeps_a_byte_order_mark_and_the_file_mode(tmp_path):
    script = tmp_path / "bom.py"
    script.write_bytes(b"\xef\xbb\xbfimport torch\ntorch.cuda.synchronize()\n")
    script.chmod(0o751)
    assert _scan("--fix", "bom.py", cwd=tmp_path).returncode == 0
    assert script.read_bytes() == b"\xef\xbb\xbfimport torch\ntorch.accelerator.synchronize()\n"
    assert script.stat().st_mode & 0o777 == 0o751


def test_fix_writes_through_a_symlink_inside_the_tree(tmp_path):
    (tmp_path / "real.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    (tmp_path / "link.py").symlink_to("real.py")
    assert _scan("--fix", "link.py", cwd=tmp_path).returncode == 0
    assert (tmp_path / "link.py").is_symlink()
    assert (tmp_path / "real.py").read_text() == "import torch\ntorch.accelerator.synchronize()\n"


def test_a_guard_rename_is_offered_only_under_its_guard(tmp_path):
    """The report says [fixable] (JSON "fixable": true) for the guarded call, not for the bare
    one; --fix renames the first, and the second stays a finding with the advice to guard it."""
    code = (
        "import torch\nif torch.accelerator.is_available():\n    torch.cuda.empty_cache()\ntorch.cuda.empty_cache()\n"
    )
    (tmp_path / "t.py").write_text(code)
    found = json.loads(_scan("--format", "json", "t.py", cwd=tmp_path).stdout)["findings"]
    assert [(f["line"], f["fixable"]) for f in found if f["rule"] == "cuda-empty-cache"] == [(3, True), (4, False)]
    text = _scan("t.py", cwd=tmp_path).stdout
    assert text.count("[fixable]") == 1 and "is_available():" in text
    fixed = _scan("--fix", "--format", "json", "t.py", cwd=tmp_path)
    assert (tmp_path / "t.py").read_text() == code.replace(
        "    torch.cuda.empty_cache", "    torch.accelerator.empty_cache"
    )
    left = json.loads(fixed.stdout)["findings"]
    assert [(f["line"], f["fixable"]) for f in left] == [(4, False)]


def test_the_fixer_applies_exactly_the_kinds_of_the_fix_table():
    """kb/core/schema.py's FIX_KINDS declares each kind; the fixer asks for each by name."""
    import ast

    from kb.core.schema import FIX_KINDS

    tree = ast.parse((ROOT / "scripts" / "kb" / "scan" / "scanfix.py").read_text(encoding="utf-8"))
    applied = {
        node.args[1].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "_wanted"
        and len(node.args) == 2
        and isinstance(node.args[1], ast.Constant)
    }
    assert applied == set(FIX_KINDS)
