"""Issue 34, round twenty-five (improved-diffusion, LitServe, SimPO, Muon, hlb-gpt), labelled blind:
a device kept in a nested config dict (``hyp["misc"]["device"]``) is followed to each use, and a
``cuda:{rank}`` device a function of another module returns gains the places that use it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.scan.scan import scan_source
from kb.scan.scanrules import RuleSet
from scantree import project_rules, scan_tree

NESTED = """\
import torch

hyp = {
    "opt": {"lr": 1e-3},
    "misc": {
        "device": "cuda",
        "dtype": torch.bfloat16,
    },
}

mask = torch.ones(4, device=hyp["misc"]["device"])

def batch(n):
    return torch.randint(10, (n,), device=hyp["misc"]["device"])

def model(net):
    return net.to(hyp["misc"].get("device"), torch.bfloat16)

def other(net):
    return net.to(hyp["opt"]["lr"])
"""


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return project_rules()


def test_a_device_in_a_nested_config_dict_is_followed_to_each_use(real: RuleSet):
    """hlb-gpt: the device sits two keys deep in a module-level dict, read in functions."""
    (found,) = [f for f in scan_source(NESTED, "main.py", real) if f.rule == "cuda-device-string"]
    assert (found.line, found.column) == (6, 19)
    assert {line for line, _ in found.related} >= {11, 14, 17}
    assert 20 not in {line for line, _ in found.related}  # another key of the dict holds no device


def test_a_rank_formatted_cuda_device_returned_by_another_module_gains_its_uses(tmp_path: Path, real: RuleSet):
    """improved-diffusion: dist_util.dev() returns th.device(f"cuda:{rank % 8}"); the training loop
    (a relative import) and the scripts (an absolute one) move work to it."""
    files = {
        "gd/__init__.py": "",
        "gd/dist_util.py": "import torch as th\n\ndef dev():\n    if th.cuda.is_available():\n"
        '        return th.device(f"cuda:{rank() % 8}")\n    return th.device("cpu")\n',
        "gd/train_util.py": "from . import dist_util\n\ndef step(batch):\n    return batch.to(dist_util.dev())\n",
        "scripts/train.py": "from gd import dist_util\nmodel.to(dist_util.dev())\n",
    }
    findings = scan_tree(tmp_path, real, files)
    (f,) = [f for f in findings if f.rule == "cuda-fstring-device"]
    assert (f.path, f.line) == ("gd/dist_util.py", 5)
    assert {(p, line) for p, line, _ in f.elsewhere} == {("gd/train_util.py", 4), ("scripts/train.py", 2)}


def test_a_failing_function_called_through_its_imported_module_is_a_place_there(tmp_path: Path, real: RuleSet):
    """improved-diffusion: the scripts run ``dist_util.setup_dist()`` after ``from pkg import
    dist_util``, and the training loop after ``from . import dist_util``; the function starts a
    process group on "nccl", so each call is where the run stops."""
    files = {
        "pkg/__init__.py": "",
        "pkg/du.py": "import torch.distributed as dist\n\ndef setup():\n    dist.init_process_group(backend='nccl')\n",
        "pkg/loop.py": "from . import du\n\ndef run():\n    du.setup()\n    du.other()\n",
        "scripts/train.py": "from pkg import du\n\ndu.setup()\n",
    }
    findings = scan_tree(tmp_path, real, files)
    (f,) = [f for f in findings if f.rule == "nccl-backend"]
    assert (f.path, f.line) == ("pkg/du.py", 4)
    assert {(p, line) for p, line, _ in f.elsewhere} == {("pkg/loop.py", 4), ("scripts/train.py", 3)}


REFUSAL = """\
def sanitize(accelerator):
    if accelerator not in ["auto", "cpu", "mps", "cuda", "gpu", None]:
        raise ValueError(f"unknown accelerator {accelerator}")
    return accelerator

def ported(accelerator):
    if accelerator not in ("cpu", "cuda", "mps", "tpu"):
        raise ValueError(accelerator)

def logged(accelerator):
    if accelerator not in ("cpu", "cuda", "mps"):
        print("unknown")
"""


def test_a_check_that_refuses_names_its_list_leaves_out_is_reported_at_the_list(real: RuleSet):
    """LitServe: the accelerator is checked against a list naming cuda and mps, not tpu, and
    refused with a raise; the list is where tpu goes. A list naming tpu, or a check that only
    prints, is no finding."""
    found = [f for f in scan_source(REFUSAL, "connector.py", real) if f.rule == "device-dispatch-no-tpu"]
    assert [(f.line, f.column) for f in found] == [(2, 27)]


KERNELS = """\
import torch
import xformers.ops as xops
from flash_attn import flash_attn_varlen_func
from flash_attn.bert_padding import unpad_input

class Attn(torch.nn.Module):
    def forward(self, q, k, v, mask):
        q, idx, cu, n, _ = unpad_input(q, mask)
        out = flash_attn_varlen_func(
            q, k, v, cu, cu, n, n,
        )
        return xops.memory_efficient_attention(q, k, v) + out
"""


def test_each_call_of_what_a_kernel_package_binds_is_a_line_to_change(real: RuleSet):
    """The tuning split's labellers mark each flash-attn or xFormers call as a line to change (to SDPA),
    as the optional import's calls already were."""
    found = [(f.line, f.rule) for f in scan_source(KERNELS, "attn.py", real) if f.severity == "must-change"]
    assert [line for line, rule in found if rule == "kernel-package-call"] == [8, 9, 12]


def test_a_kernel_package_scanned_from_its_own_tree_reports_no_call_of_itself(tmp_path: Path, real: RuleSet):
    """Scanning FlashAttention's own code: its imports of flash_attn are the package's own, so neither
    they nor the calls of what they bind are findings."""
    files = {
        "flash_attn/__init__.py": "",
        "flash_attn/modules/__init__.py": "",
        "flash_attn/utils.py": "def split(n, world):\n    return n // world\n",
        "flash_attn/modules/mha.py": "from flash_attn.utils import split\n\nheads = split(8, 2)\n",
    }
    findings = scan_tree(tmp_path, real, files)
    assert [f.rule for f in findings] == []
