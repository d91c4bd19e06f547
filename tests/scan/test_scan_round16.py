"""Issue 34, round sixteen (sam2, F5-TTS, Medusa, GaLore and axolotl, labelled blind): workers started
with ``start_processes``, also through a name that holds it; torch's ``varlen_attn``; a rank in a
``device_map`` set by key; a class derived from a GPU package's class; a function that imports a
CUDA extension fails where it is called."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.scan.scan import scan_source
from kb.scan.scanrules import RuleSet
from scantree import project_rules, scan_tree


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return project_rules()


def found(code: str, rules: RuleSet) -> set[tuple[int, str]]:
    return {(f.line, f.rule) for f in scan_source(code, "t.py", rules)}


def test_start_processes_is_reported_as_spawn_is_and_through_a_name_that_holds_it(real: RuleSet):
    """sam2: ``mp_runner = torch.multiprocessing.start_processes``, then ``mp_runner(...)``; a name
    that holds something else is not read as it."""
    code = """\
import torch
import torch.multiprocessing as mp

def launch(n, run):
    mp_runner = torch.multiprocessing.start_processes
    mp_runner(run, nprocs=n, start_method="spawn")
    mp.start_processes(run, nprocs=n)
    other = torch.nn.Linear
    other(2, 2)
"""
    assert found(code, real) == {(6, "mp-start-processes"), (7, "mp-start-processes")}


def test_varlen_attn_has_no_tpu_kernel(real: RuleSet):
    code = """\
from torch.nn.attention.varlen import varlen_attn

def attend(q, k, v, cu, n):
    return varlen_attn(q, k, v, cu, cu, n, n, is_causal=True)
"""
    assert found(code, real) == {(4, "torch-varlen-attn")}


def test_a_rank_in_a_device_map_set_by_key_is_reported_where_it_is_written(real: RuleSet):
    """axolotl: ``self.model_kwargs["device_map"] = {"": int(os.environ.get("LOCAL_RANK", 0))}``, the
    rank on its own line; a map of ``"auto"`` is fine."""
    code = """\
import os

def kwargs(self):
    self.model_kwargs["device_map"] = {
        "": int(os.environ.get("LOCAL_RANK", 0))
    }
    self.model_kwargs["device_map"] = "auto"
"""
    assert found(code, real) == {(5, "rank-device-index")}


def test_a_class_derived_from_a_gpu_package_class_uses_that_package(real: RuleSet):
    """GaLore: ``class AdamW8bit(Optimizer2State)`` from bitsandbytes. ``super().__init__`` and the
    inherited ``self.update_step`` run bitsandbytes; its own ``self.helper`` does not."""
    code = """\
from bitsandbytes.optim.optimizer import Optimizer2State

class AdamW8bit(Optimizer2State):
    def __init__(self, params):
        super().__init__("adam", params)

    def helper(self):
        return 1

    def step(self):
        self.helper()
        self.update_step(None)
"""
    (imp,) = scan_source(code, "t.py", real)
    assert (imp.line, imp.rule, [line for line, _ in imp.related]) == (1, "bitsandbytes-import", [5, 12])


def test_a_function_importing_a_cuda_extension_fails_where_it_is_called(real: RuleSet):
    """gpt-neox: a method that imports a CUDA extension in its body fails where it is called, as one
    that calls a Triton kernel does."""
    code = """\
class Softmax:
    def available(self, n):
        return self.per_block(n) > 0

    @staticmethod
    def per_block(n):
        import scaled_masked_softmax_cuda
        return scaled_masked_softmax_cuda.get_batch_per_block(n)
"""
    (imp,) = scan_source(code, "t.py", real)
    assert (imp.line, imp.rule, [line for line, _ in imp.related]) == (7, "cuda-extension-import", [3, 8])


def test_an_import_of_a_cuda_extension_the_tree_builds_is_reported_in_a_function(tmp_path: Path, real: RuleSet):
    """sam2: ``setup.py`` builds ``pkg._C`` as a CUDAExtension; a function imports it in its body, and
    llm-awq's module imports its extension at the top."""
    files = {
        "setup.py": 'from torch.utils.cpp_extension import CUDAExtension\n\next = CUDAExtension("pkg._C", ["k.cu"])\n',
        "pkg/__init__.py": "",
        "pkg/misc.py": "def components(mask):\n    from pkg import _C\n\n    return _C.components(mask)\n",
        "pkg/ops.py": "import pkg._C as ext\n\ndef gemv(x):\n    return ext.gemv(x)\n",
    }
    findings = scan_tree(tmp_path, real, files)
    found = [
        (Path(f.path).name, f.line, [ln for ln, _ in f.related]) for f in findings if f.rule == "cuda-extension-import"
    ]
    assert found == [("misc.py", 2, [4]), ("ops.py", 1, [4])]  # each call of the extension is a place


def test_a_failing_class_a_package_re_exports_fails_where_another_file_makes_it(tmp_path: Path, real: RuleSet):
    """GaLore: ``galore_torch/__init__.py`` imports ``AdamW8bit as GaLoreAdamW8bit`` from its module,
    whose ``__init__`` runs bitsandbytes; ``torchrun_main.py`` makes a ``GaLoreAdamW8bit``. axolotl: a
    function that builds a device mesh on ``cuda`` fails where another file calls it."""
    files = {
        "galore/__init__.py": "from .adamw8bit import AdamW8bit as GaLoreAdamW8bit\n",
        "galore/adamw8bit.py": """\
from bitsandbytes.optim.optimizer import Optimizer2State

class AdamW8bit(Optimizer2State):
    def __init__(self, params):
        super().__init__("adam", params)
""",
        "mesh.py": 'def build(cfg):\n    return cfg.build_device_mesh("cuda")\n',
        "main.py": """\
from galore import GaLoreAdamW8bit
from mesh import build

def train(params, cfg):
    opt = GaLoreAdamW8bit(params)
    mesh = build(cfg)
""",
    }
    findings = scan_tree(tmp_path, real, files)
    places = {f.rule: {(Path(p).name, line) for p, line, _ in f.elsewhere} for f in findings}
    assert places["bitsandbytes-import"] == {("main.py", 5)}
    assert places["cuda-device-string"] == {("main.py", 6)}


def test_a_module_importing_a_built_extension_is_cuda_code_and_its_importers_importers_places(
    tmp_path: Path, real: RuleSet
):
    """llm-awq (round seventeen): qmodule.py imports the extension its setup.py builds, at its top;
    quantizer.py imports qmodule (a finding there, as for a known extension), and entry.py's import of
    quantizer is one of that finding's places: loading it fails too."""
    files = {
        "setup.py": 'from torch.utils.cpp_extension import CUDAExtension\n\next = CUDAExtension("engine", ["k.cu"])\n',
        "pkg/__init__.py": "",
        "pkg/qmodule.py": "import engine\n\ndef gemv(x):\n    return engine.gemv(x)\n",
        "pkg/quantizer.py": "from .qmodule import gemv\n\ndef quantize(x):\n    return gemv(x)\n",
        "pkg/entry.py": "from .quantizer import quantize\n",
    }
    findings = scan_tree(tmp_path, real, files)
    (local,) = [f for f in findings if f.rule == "local-cuda-module"]
    assert (Path(local.path).name, local.line) == ("quantizer.py", 1)
    assert {(Path(p).name, line) for p, line, _ in local.elsewhere} == {("entry.py", 1)}


def test_a_function_that_starts_an_nccl_group_fails_where_it_is_called(real: RuleSet):
    """ijepa (round eighteen): ``init_distributed()`` calls ``init_process_group(backend="nccl")``; each
    call of it is where a TPU run stops. A function that only writes "nccl" as a default does not fail."""
    code = """\
import argparse
import torch.distributed as dist

def init_distributed():
    dist.init_process_group(backend="nccl")

def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="nccl")
    return parser.parse_args()

def main():
    args = parse()
    init_distributed()
"""
    places = {f.line: [line for line, _ in f.related] for f in scan_source(code, "t.py", real)}
    assert places == {5: [14], 9: []}
