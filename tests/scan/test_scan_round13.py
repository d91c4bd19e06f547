"""Issue 34, round thirteen (LLaVA, sd-scripts, gpt-neox and fairseq, labelled blind): an optional
import of a GPU-only package is fine as written, each call of what it binds is what fails; a CUDA
build told by nvcc's flags, failing where a local helper is called; an extension's autograd Function
applied in its own file; NVTX profiling; SageAttention; DDP's output_device beside device_ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.scan.scan import scan_source
from kb.scan.scanrules import RuleSet
from scantree import project_rules, scan_tree


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return project_rules()


def found(code: str, rules: RuleSet) -> dict[int, tuple[str, str]]:
    return {f.line: (f.rule, f.severity) for f in scan_source(code, "t.py", rules)}


OPTIONAL = """\
try:
    from flash_attn import flash_attn_func
    from flash_attn import flash_attn_varlen_func
except ImportError:
    flash_attn_func = flash_attn_varlen_func = None

def attend(q, k, v, mode):
    if mode == "flash":
        return flash_attn_func(q, k, v)
    return flash_attn_varlen_func(q, k, v)
"""


def test_an_optional_import_is_reviewed_once_and_each_call_must_change(real: RuleSet):
    assert found(OPTIONAL, real) == {
        2: ("optional-cuda-import", "review"),
        9: ("optional-import-call", "must-change"),
        10: ("optional-import-call", "must-change"),
    }
    (call, *_) = [f for f in scan_source(OPTIONAL, "t.py", real) if f.line == 9]
    assert "`flash_attn_func`, imported at line 2" in call.message


def test_a_handler_that_raises_makes_the_import_required(real: RuleSet):
    code = OPTIONAL.replace("    flash_attn_func = flash_attn_varlen_func = None\n", "    raise\n")
    assert found(code, real)[2] == ("flash-attn-import", "must-change")
    assert {line: r for line, (r, _) in found(code, real).items()} == {
        2: "flash-attn-import",
        3: "flash-attn-import",
        9: "kernel-package-call",  # round 25: each call of what a required kernel package binds must change
        10: "kernel-package-call",
    }


GUARDED = """\
try:
    import xformers.ops as xops
    import pynvml
    pynvml.nvmlInit()
    HAS_XFORMERS = True
except ImportError:
    xops = None
    HAS_XFORMERS = False

def attend(q, k, v):
    if xops is not None:
        return xops.memory_efficient_attention(q, k, v)
    out = xops.memory_efficient_attention(q, k, v) if HAS_XFORMERS else q
    return out

class Block:
    def __init__(self):
        self.attn = xops.MemoryEfficientAttentionOp()

    def forward(self, x):
        return self.attn(x)
"""


def test_calls_behind_a_test_of_the_fallback_or_inside_the_try_are_not_reported(real: RuleSet):
    assert found(GUARDED, real) == {
        2: ("optional-cuda-import", "review"),
        3: ("optional-cuda-import", "review"),
        18: ("optional-import-call", "must-change"),
    }


ASSERTED = """\
try:
    from flash_attn.layers.rotary import RotaryEmbedding
except ImportError:
    RotaryEmbedding = None

class Attention:
    def __init__(self, dim):
        assert RotaryEmbedding is not None, "rotary_emb is not installed"
        self.rotary = RotaryEmbedding(dim)
"""


def test_an_assert_of_the_fallback_is_where_a_tpu_run_fails(real: RuleSet):
    assert found(ASSERTED, real) == {
        2: ("optional-cuda-import", "review"),
        8: ("optional-import-call", "must-change"),
    }


def test_a_required_import_in_a_try_that_raises_again_makes_the_module_cuda_only(real: RuleSet, tmp_path: Path):
    """gpt-neox's transformer_engine.py re-raises ImportError: a module that loads a Triton kernel
    library behind such a try is CUDA code where it is imported, as one without the try."""
    files = {
        "pkg/__init__.py": "",
        "pkg/kern.py": "try:\n    import triton\nexcept ImportError:\n    raise ImportError('install triton')\n\n"
        "@triton.jit\ndef k(x):\n    pass\n",
        "pkg/model.py": "from pkg.kern import k\n",
    }
    rules = {(f.path.rsplit("/", 1)[-1], f.line): f.rule for f in scan_tree(tmp_path, real, files)}
    assert rules[("model.py", 1)] == "local-cuda-module"


NVCC = """\
from torch.utils import cpp_extension

def load(args):
    def _helper(name, sources):
        return cpp_extension.load(name=name, sources=sources, extra_cuda_cflags=["-O3"])

    softmax = _helper("softmax_cuda", args.sources)
    rope = _helper("rope", args.sources)
"""


def test_nvcc_flags_make_a_cuda_build_and_a_local_helper_fails_where_it_is_called(real: RuleSet):
    (finding,) = scan_source(NVCC, "t.py", real)
    assert (finding.line, finding.rule) == (5, "cuda-sources")
    assert [line for line, _ in finding.related] == [7, 8]


FUNCTION = """\
import dynconv_cuda
from torch.autograd import Function

class DynConv(Function):
    @staticmethod
    def forward(ctx, x, w):
        return dynconv_cuda.forward(x, w)[0]

class Layer:
    def forward(self, x, w):
        return DynConv.apply(x, w)
"""


def test_an_extension_function_applied_in_its_own_file_is_a_place_of_the_import(real: RuleSet):
    (finding,) = scan_source(FUNCTION, "t.py", real)
    assert (finding.line, finding.rule) == (1, "cuda-extension-import")
    assert [line for line, _ in finding.related] == [7, 11]


def test_nvtx_profiling_sageattention_and_an_output_device_beside_device_ids(real: RuleSet):
    code = """\
import torch
from sageattention import sageattn
from torch.nn.parallel import DistributedDataParallel as DDP

with torch.autograd.profiler.emit_nvtx():
    out = sageattn(q, k, v)
model = DDP(model, device_ids=[args.device_id],
            output_device=args.device_id)
ddp = DDP(model, device_ids=[args.device_id], output_device=torch.device("tpu"))
"""
    assert {line: rule for line, (rule, _) in found(code, real).items()} == {
        2: "sageattention-import",
        5: "emit-nvtx",
        6: "kernel-package-call",
        7: "rank-device-index",
        8: "rank-device-index",
        9: "rank-device-index",
    }
