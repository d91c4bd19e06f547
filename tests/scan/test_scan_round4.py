"""Issue 34, round four: the classes the six blind-labelled repositories showed missing, each on
small code written for the test: compiled CUDA extensions under unknown names and what wraps them,
device maps and device arguments holding a rank or a device chosen by ``torch.cuda.is_available()``,
a precision chosen through a default argument, host values read in a loop, and guards that only log."""

from __future__ import annotations

import textwrap

import pytest

from kb.scan.scan import scan_source
from kb.scan.scannames import Finding
from kb.scan.scanrules import RuleSet
from scantree import project_rules, scan_tree


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return project_rules()


def scan(real: RuleSet, code: str, rule: str) -> list[Finding]:
    return [f for f in scan_source(textwrap.dedent(code), "t.py", real) if f.rule == rule]


# ---- 1. compiled CUDA extensions ------------------------------------------------------------------------------

NAMED = """\
    import torch
    import blur_cuda_kernels

    def blur(x):
        out = blur_cuda_kernels.run(x)
        return blur_cuda_kernels.finish(out)
    """


def test_an_extension_named_for_cuda_is_reported_at_its_import_with_its_calls_as_places(real):
    (f,) = scan(real, NAMED, "cuda-extension-import")
    assert (f.line, f.severity, f.related) == (2, "must-change", ((5, 11), (6, 12)))


@pytest.mark.parametrize(
    "code",
    [
        "import os\nimport json\nos.path.join('a', 'b')\n",  # the standard library
        "import einops\nimport cudatoolkit_docs\ny = einops.rearrange(x, 'a b -> b a')\n",  # no cuda word
        "try:\n    import blur_cuda_kernels\nexcept ImportError:\n    blur_cuda_kernels = None\n",  # optional
        # (an import in a function, once called a path that chooses it, is one: tests/scan/test_scan_round7.py)
    ],
)
def test_no_extension_without_evidence_or_at_the_top(real, code):
    assert scan(real, code, "cuda-extension-import") == []


KERNEL = """\
    import torch
    import fastops
    import shapes

    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = torch.empty_like(x)
            fastops.scale_into(x, out)
            return shapes.flat(out)

        @staticmethod
        def backward(ctx, g):
            return fastops.scale_bwd(g)
    """


def test_a_module_an_autograd_function_calls_as_a_kernel_is_an_extension(real):
    """``fastops`` writes into an output tensor (its result dropped) and names a pass: a kernel.
    ``shapes.flat(out)`` returns a value used like any helper's: no evidence."""
    found = scan(real, KERNEL, "cuda-extension-import")
    assert [(f.line, f.snippet) for f in found] == [(2, "import fastops")]
    assert found[0].related == ((9, 9), (14, 16))


def test_a_module_of_the_tree_with_an_extension_name_is_no_extension(tmp_path, real):
    findings = scan_tree(
        tmp_path,
        real,
        {"train.py": NAMED, "blur_cuda_kernels.py": "def run(x):\n    return x\n"},
    )
    assert [f for f in findings if f.rule == "cuda-extension-import"] == []


EXTENSION_FILE = """\
    import torch
    import torch.nn as nn
    import mix_cuda_lib

    class MixFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return mix_cuda_lib.forward(a, b)

    class MixLoss(nn.Module):
        def forward(self, a, b):
            return MixFn.apply(a, b).mean()

    mix = MixFn.apply

    def plain(a):
        return a * 2
    """


def test_the_wrappers_of_an_extension_are_reported_where_another_file_calls_them(tmp_path, real):
    """``mix`` (an autograd Function's apply) and ``MixLoss`` (a module calling it) are CUDA-only;
    ``plain`` is not. A package __init__ that re-exports one passes it on; each import of the
    extension's file is a local-cuda-module finding."""
    files = {
        "lib/__init__.py": "from lib.ops import MixLoss\n",
        "lib/ops.py": EXTENSION_FILE,
        "lib/other.py": "def helper(x):\n    return x\n",
        "train.py": """\
            from lib.ops import mix, plain
            from lib import MixLoss
            from lib.other import helper

            def step(a, b):
                loss_fn = MixLoss()
                y = mix(a, b)
                return plain(y) + helper(loss_fn(a, b))
            """,
    }
    findings = scan_tree(tmp_path, real, files)
    got = sorted((f.path, f.line, f.rule) for f in findings if f.path == "train.py")
    assert got == [
        ("train.py", 1, "local-cuda-module"),
        ("train.py", 2, "local-cuda-module"),
        ("train.py", 6, "cuda-extension-call"),
        ("train.py", 7, "cuda-extension-call"),
    ], got  # line 3 passes through lib/__init__.py without naming it: fixing that file fixes it
    (call,) = [f for f in findings if f.line == 7 and f.path == "train.py"]
    assert call.severity == "must-change" and "`mix` of `lib/ops.py`" in call.message


def test_a_module_that_only_imports_a_gpu_package_is_fixed_in_itself_not_where_imported(tmp_path, real):
    files = {
        "model.py": "import torch\nfrom flash_attn import flash_attn_func\n\ndef attend(q):\n    return q\n",
        "train.py": "from model import attend\n",
    }
    findings = scan_tree(tmp_path, real, files)
    assert [(f.path, f.line) for f in findings if f.rule in ("local-cuda-module", "flash-attn-import")] == [
        ("model.py", 2)
    ]


# ---- 2 and 3. device maps and device arguments ----------------------------------------------------------------


def test_a_device_map_held_in_a_name_with_the_rank_is_reported_where_the_map_is_written(real):
    code = """\
        import os
        from transformers import AutoModel
        device_map = "auto"
        if int(os.environ.get("WORLD_SIZE", 1)) > 1:
            device_map = {"": int(os.environ.get("LOCAL_RANK") or 0)}
        model = AutoModel.from_pretrained(
            "m",
            device_map=device_map,
        )
        """
    (f,) = scan(real, code, "rank-device-index")
    assert (f.line, f.related) == (5, ((8, 5),))


def test_a_device_argument_holding_the_rank_is_reported_at_the_argument(real):
    code = """\
        import os
        import torch
        from transformers import pipeline
        if torch.cuda.is_available():
            device = int(os.environ.get("LOCAL_RANK", 0))
        else:
            device = -1
        scorer = pipeline("text-classification", device=device)
        quiet = pipeline("text-classification", device=other)
        """
    assert [f.line for f in scan(real, code, "rank-device-index")] == [8]


def test_a_device_map_naming_a_chosen_device_is_a_use_of_its_cuda_literal(real):
    code = """\
        import torch
        if torch.cuda.is_available():
            device = "cuda"
        else:
            device = "cpu"
        model = Model.from_pretrained(
            "m",
            device_map={"": device},
        )
        """
    (f,) = scan(real, code, "cuda-device-string")
    assert (f.line, f.related) == (3, ((8, 21),))


# ---- 4. a precision chosen through a default argument ---------------------------------------------------------


def test_fp16_through_a_default_argument_is_reported_at_the_default_used_at_the_argument(real):
    code = """\
        from accelerate import Accelerator

        class Trainer:
            def __init__(self, amp=False, mixed_precision_type="fp16"):
                self.accelerator = Accelerator(
                    split_batches=True,
                    mixed_precision=mixed_precision_type if amp else "no",
                )
        """
    found = [f for f in scan_source(textwrap.dedent(code), "t.py", real) if f.line == 4]
    assert [f.rule for f in found] == ["accelerate-fp16"] and found[0].related == ((7, 13),)


# ---- 5. noise: host values read in a loop, guards that only log -----------------------------------------------

HOST = """\
    import numpy as np
    import torch

    def report(rows, fn):
        for row in rows:
            a = np.frombuffer(row, dtype=np.float32).reshape(2, 2)
            print(a[0].tolist())
            print(torch.as_tensor(row).mean().item())
            r = fn(row)
            if isinstance(r, list):
                r = torch.tensor(r, dtype=float)
            else:
                r = torch.tensor([r])
            print(r.sum().item())
    """


def test_a_value_built_on_the_host_is_no_device_read(real):
    assert scan(real, HOST, "item-in-loop") == []


@pytest.mark.parametrize(
    "code",
    [
        # one branch keeps what fn returned, which may be on the device
        "import torch\ndef f(rows, fn):\n    for row in rows:\n        r = fn(row)\n"
        "        if row:\n            r = torch.tensor([1.0])\n        print(r.item())\n",
        # built with a device
        "import torch\ndef f(rows, d):\n    for row in rows:\n        r = torch.tensor(row, device=d)\n"
        "        print(r.item())\n",
        # unpacked from a call: not the host tensor written before
        "import torch\ndef f(rows, g):\n    p = torch.tensor([1])\n    for row in rows:\n        q, p = g(row, p)\n"
        "        print(p.tolist())\n",
        # a loop variable
        "def f(batches):\n    for loss in batches:\n        print(loss.item())\n",
        # moved to the device after it was built
        "import torch\ndef f(rows):\n    for row in rows:\n        print(torch.tensor(row).to('tpu').item())\n",
    ],
)
def test_a_value_that_may_be_on_the_device_is_still_read_in_a_loop(real, code):
    assert len(scan(real, code, "item-in-loop")) == 1


def test_a_cuda_comparison_that_only_guards_a_log_line_is_no_finding(real):
    code = """\
        import torch
        def setup(device, log):
            if device != "cuda":
                log.info("placing the model yourself")
            if device == "cuda":
                torch.backends.cudnn.benchmark = True
        """
    assert [f.line for f in scan(real, code, "cuda-compare")] == [5]


# ---- Accelerate checkpoints: the TPU's random state --------------------------------------------------------------


def test_an_accelerate_checkpoint_is_reported_where_the_accelerator_saves_or_loads(real):
    code = """\
        from accelerate import Accelerator

        class Trainer:
            def __init__(self):
                self.acc = Accelerator(mixed_precision="bf16")

            def save(self, path):
                self.acc.save_state(path)

        def resume(accelerator, path):
            accelerator.load_state(path)
        """
    assert [f.line for f in scan(real, code, "accelerate-rng-state")] == [8, 11]


@pytest.mark.parametrize(
    "code",
    [
        "class T:\n    def save(self, p):\n        self.model.save_state(p)\n",  # no Accelerator
        "def f(accelerator, p):\n    accelerator.save_state(p)\n",  # the name alone, Accelerate never imported
    ],
)
def test_other_save_states_are_not_accelerate_checkpoints(real, code):
    assert scan(real, code, "accelerate-rng-state") == []


def test_a_module_a_setup_py_of_the_tree_builds_with_cuda_is_an_extension_where_imported(tmp_path, real):
    files = {
        "csrc/setup.py": """\
            from setuptools import setup
            from torch.utils.cpp_extension import CUDAExtension
            setup(ext_modules=[CUDAExtension("blurops", ["blur.cpp", "blur_kernel.cu"])])
            """,
        "model.py": "import torch\nimport blurops\nimport pillow_simd\n\ndef f(x):\n    return blurops.run(x)\n",
    }
    findings = scan_tree(tmp_path, real, files)
    got = [(f.line, f.snippet) for f in findings if f.path == "model.py" and f.rule == "cuda-extension-import"]
    assert got == [(2, "import blurops")]  # pillow_simd: no evidence


def test_the_kernel_call_a_tpu_tensor_reaches_past_a_cpu_test_is_a_place_of_that_finding(real):
    code = """\
        import torch
        from torch.utils.cpp_extension import load
        ops = load("ops", sources=["ops.cpp", "ops_kernel.cu"])

        class ActFn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return ops.act(x)

        def act(x):
            if x.device.type == "cpu":
                return torch.relu(x)
            else:
                return ActFn.apply(
                    x
                )
        """
    (f,) = scan(real, code, "cpu-else-cuda")
    assert (f.line, f.related) == (11, ((14, 16),))
