"""Issue 34, round nine (flash-linear-attention, prime-rl and picotron, labelled blind): the code
that calls what a GPU package or a CUDA-only module of the tree provides. A function that calls
``flash_attn_func`` fails where it is called; a layer built from a Triton module's class fails where
the model calls it (``self.norm(x)``); a function of another file that fails inside fails at the
calls of this one. Each is a place of the finding on the import (or inside the function)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.scan.scan import scan_source
from kb.scan.scanrules import RuleSet
from scantree import project_rules, scan_tree


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return project_rules()


WRAPPER = """\
import torch
from flash_attn import flash_attn_func

def attention(q, k, v):
    return flash_attn_func(q, k, v, causal=True)

class Block(torch.nn.Module):
    def forward(self, q, k, v):
        return attention(q, k, v)

def plain(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v)

out = plain(1, 2, 3)
"""


def test_a_function_that_calls_what_a_gpu_package_binds_fails_where_it_is_called(real: RuleSet):
    (found,) = [f for f in scan_source(WRAPPER, "t.py", real) if f.line == 2]
    assert [line for line, _ in found.related] == [9]  # the call of attention()
    (call,) = [f for f in scan_source(WRAPPER, "t.py", real) if f.line == 5]
    assert call.rule == "kernel-package-call"  # the call inside is a line to change of its own (round 25)


INSTANCE = """\
import torch
from flash_attn.ops.triton.layer_norm import RMSNorm

class Block(torch.nn.Module):
    def __init__(self, dim, fused):
        super().__init__()
        self.norm = RMSNorm(dim) if fused else torch.nn.RMSNorm(dim)
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, x):
        return self.proj(self.norm(x))
"""


def test_a_layer_built_from_a_gpu_class_fails_where_it_is_called(real: RuleSet):
    found = {f.line: f for f in scan_source(INSTANCE, "t.py", real)}
    assert [line for line, _ in found[2].related] == [11]  # called through the instance: never self.proj
    assert found[7].rule == "kernel-package-call"  # built: a line to change of its own (round 25)


def test_calls_into_a_cuda_only_module_of_the_tree_are_places_of_its_import(tmp_path: Path, real: RuleSet):
    files = {
        "ops/kernels.py": """\
            import triton
            import triton.language as tl

            @triton.jit
            def _k(x_ptr):
                pass

            def fused_norm(x):
                _k[(1,)](x)
                return x

            class FusedNorm:
                def __call__(self, x):
                    return fused_norm(x)
            """,
        "model.py": """\
            import torch
            from ops.kernels import FusedNorm, fused_norm

            class Block(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.norm = FusedNorm()

                def forward(self, x):
                    return fused_norm(self.norm(x))
            """,
    }
    (found,) = [f for f in scan_tree(tmp_path, real, files) if f.path == "model.py" and f.rule == "local-cuda-module"]
    assert (found.line, [line for line, _ in found.related]) == (2, [7, 10, 10])  # built; both calls on 10


def test_a_function_of_another_file_that_fails_inside_fails_where_it_is_called(tmp_path: Path, real: RuleSet):
    files = {
        "utils.py": """\
            import torch

            def setup(rank):
                torch.cuda.set_device(rank)

            def quiet():
                return 1
            """,
        "train.py": """\
            from utils import quiet, setup

            setup(0)
            quiet()
            """,
    }
    (found,) = [f for f in scan_tree(tmp_path, real, files) if f.path == "utils.py" and f.line == 4]
    assert found.elsewhere == (("train.py", 3, 1),)
