"""Issue 34, round nineteen (DeepSeek-V3, s4, DALLE2-pytorch, oat and whisper, labelled blind): what
is made on a default device set to CUDA; a host copy made before a loop is no device read in it."""

from __future__ import annotations

import pytest

from kb.scan.scan import scan_source
from kb.scan.scanrules import RuleSet
from scantree import project_rules


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return project_rules()


def places(code: str, rules: RuleSet) -> dict[tuple[int, str], tuple[int, ...]]:
    return {(f.line, f.rule): tuple(r[0] for r in f.related) for f in scan_source(code, "t.py", rules)}


def test_what_is_made_after_set_default_device_cuda_is_a_use_of_the_string(real: RuleSet):
    """DeepSeek-V3's model test: ``torch.set_default_device("cuda")``, then a tensor and a model made
    without a device. A factory given its own device, a dataclass and a call before it are not uses."""
    code = """\
import torch
from dataclasses import dataclass
from model import Transformer

@dataclass
class Args:
    n: int = 2

def main():
    early = torch.zeros(2)
    torch.set_default_device("cuda")
    args = Args()
    x = torch.randint(0, 10, (2, 8))
    y = torch.ones(2, device="cpu")
    model = Transformer(args)
    return model(x), y, early
"""
    assert places(code, real)[(11, "cuda-device-string")] == (13, 15)


def test_what_a_with_torch_device_cuda_block_makes_is_a_use_and_nothing_after_it(real: RuleSet):
    code = """\
import torch
import torch.nn as nn

def build():
    with torch.device("cuda"):
        layer = nn.Linear(4, 4)
        buf = torch.empty(4)
    later = torch.empty(4)
    return layer, buf, later
"""
    assert places(code, real)[(5, "cuda-device-string")] == (6, 7)


def test_a_read_of_a_host_copy_made_before_the_loop_is_no_device_read(real: RuleSet):
    """whisper: ``probs = logits.softmax(-1).cpu()``, then ``probs[i, j].item()`` in a comprehension;
    a copy made inside the loop is the stall itself, and stays reported."""
    code = """\
def read(logits, xs):
    probs = logits.softmax(-1).cpu()
    out = [probs[i].item() for i in range(3)]
    for x in xs:
        a = x.cpu()
        print(a.item())
        print(x.cpu().item())
        print(x.item())
    return out
"""
    assert {line for line, rule in places(code, real) if rule == "item-in-loop"} == {6, 7, 8}


def test_a_function_imported_by_a_name_that_says_fwd_and_run_in_an_autograd_pass_is_an_extension(real: RuleSet):
    """s4: ``from structured_kernels import cauchy_mult_sym_fwd``, called in an autograd Function's
    ``forward``: the import is a CUDA extension's, and the Function's ``apply`` and the wrappers that
    call it are its places. A from-imported helper with no pass in its name is not evidence."""
    code = """\
import torch
from structured_kernels import cauchy_mult_sym_fwd, cauchy_mult_sym_bwd
from helpers import rearrange

class Cauchy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, v, z):
        return cauchy_mult_sym_fwd(rearrange(v), z)

    @staticmethod
    def backward(ctx, dout):
        return cauchy_mult_sym_bwd(dout), None

def _cauchy(v, z):
    return Cauchy.apply(v, z)

def cauchy(v, z):
    return _cauchy(v.contiguous(), z)
"""
    got = places(code, real)
    assert set(got) == {(2, "cuda-extension-import")}
    assert {8, 12, 15, 18} <= set(got[(2, "cuda-extension-import")])


def test_deepspeed_initialize_and_init_distributed_are_reported(real: RuleSet):
    """oat: DeepSpeed falls back to its CPU accelerator on a host without CUDA, so its engine and
    its process group never reach the TPU. A name of another package called ``initialize`` is not it."""
    code = """\
import deepspeed
from other import initialize

def setup(model, config):
    deepspeed.init_distributed(timeout=60)
    engine, opt, _, _ = deepspeed.initialize(model=model, config=config)
    initialize(model)
    return engine, opt
"""
    assert set(places(code, real)) == {(5, "deepspeed-init-distributed"), (6, "deepspeed-initialize")}
