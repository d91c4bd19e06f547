"""Issue 34, round twelve (generative-models, lmdeploy and Megatron-LM, labelled blind): each import
of a CUDA extension is reported, also when an autograd Function's forward and backward both import it;
a method that imports a CUDA-only module of the tree is reported where it imports it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.scan.scanrules import RuleSet
from scantree import project_rules, scan_tree


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return project_rules()


SOFTMAX = """\
import torch

class ScaledSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        import scaled_softmax_cuda
        return scaled_softmax_cuda.forward(x, scale)

    @staticmethod
    def backward(ctx, grad):
        import scaled_softmax_cuda
        return scaled_softmax_cuda.backward(grad), None
"""


def test_each_import_of_an_extension_in_a_function_is_reported(real: RuleSet, tmp_path: Path):
    found = scan_tree(tmp_path, real, {"softmax.py": SOFTMAX})
    assert [(f.line, f.rule) for f in found] == [(6, "cuda-extension-import"), (11, "cuda-extension-import")]


KERNELS = {
    "pkg/__init__.py": "",
    "pkg/kernels/__init__.py": "from .fill import fill\n",
    "pkg/kernels/fill.py": "import triton\n\n@triton.jit\ndef _k(x):\n    pass\n\ndef fill(x):\n    _k[(1,)](x)\n",
    "pkg/attention.py": (
        "class Impl:\n    def __init__(self):\n        from pkg.kernels import fill\n        self.fill = fill\n\n"
        "    def forward(self, x):\n        if x is None:\n            from pkg.kernels.fill import fill\n"
        "        return self.fill(x)\n"
    ),
}


def test_a_method_that_imports_a_cuda_only_module_of_the_tree_is_reported_there(real: RuleSet, tmp_path: Path):
    found = [(Path(f.path).name, f.line) for f in scan_tree(tmp_path, real, KERNELS) if f.rule == "local-cuda-module"]
    assert ("attention.py", 3) in found
    assert ("attention.py", 8) not in found  # under an if: the code chooses


def test_a_kernel_kept_in_an_attribute_is_called_where_the_attribute_is(real: RuleSet, tmp_path: Path):
    (found,) = [f for f in scan_tree(tmp_path, real, KERNELS) if f.rule == "local-cuda-module" and f.line == 3]
    assert 9 in [line for line, _ in found.related]  # self.fill(x), bound by self.fill = fill
