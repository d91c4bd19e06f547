"""Issue 34, round twenty-six (minRF, Open-Sora, FlagEmbedding, tianshou, spinningup), labelled blind:
``assert x.device.type == "cuda"`` fails as ``assert x.is_cuda`` does, and every call of the function
that asserts it fails with it; DeepSpeed's ``get_accelerator()`` is its CPU accelerator on a TPU host."""

from __future__ import annotations

import pytest

from kb.scan.scan import scan_source
from kb.scan.scanrules import RuleSet
from scantree import project_rules

GATHER = """\
import torch

def _gather(x, group):
    out = [torch.empty_like(x) for _ in range(2)]
    assert x.device.type == "cuda"
    torch.distributed.all_gather(out, x, group=group)
    return torch.cat(out)

class Gather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group):
        return _gather(x, group)

def check(x):
    if x.device.type == "cuda":
        return x
    return x.cpu()
"""


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return project_rules()


def test_an_assert_that_a_tensor_is_on_cuda_fails_where_the_function_is_called(real: RuleSet):
    """Open-Sora: _gather asserts its input is a CUDA tensor; forward calls it."""
    found = {f.line: f for f in scan_source(GATHER, "comm.py", real)}
    assert found[5].rule == "assert-is-cuda" and [line for line, _ in found[5].related] == [12]
    assert found[15].rule == "cuda-compare"  # a test that is no assert stays a comparison


ACCEL = """\
import torch
from deepspeed import get_accelerator

if local_rank == -1:
    device = torch.device(get_accelerator().device_name())
else:
    get_accelerator().set_device(local_rank)
"""


def test_deepspeeds_accelerator_is_reported_at_each_use(real: RuleSet):
    """minRF: the device comes from DeepSpeed's accelerator, the CPU one on a TorchTPU host."""
    found = [(f.line, f.rule) for f in scan_source(ACCEL, "train.py", real) if f.rule.startswith("deepspeed")]
    assert found == [(5, "deepspeed-get-accelerator"), (7, "deepspeed-get-accelerator")]


def test_the_device_deepspeeds_accelerator_names_is_followed_to_its_uses(real: RuleSet):
    """minRF: each batch goes to the device built from get_accelerator().device_name(): cpu on a TPU host."""
    code = (
        ACCEL.replace("get_accelerator().set_device(local_rank)", "pass")
        + "x = batch.to(device)\ny = torch.ones(2, device=device)\n"
    )
    (found,) = [f for f in scan_source(code, "train.py", real) if f.rule == "deepspeed-get-accelerator"]
    assert found.line == 5 and {line for line, _ in found.related} >= {8, 9}


LOGGED = """\
import logging
import torch

log = logging.getLogger(__name__)
log.info(f"CUDA available? {torch.cuda.is_available()}")
print("cuda:", torch.cuda.is_available())
use_amp = torch.cuda.is_available()
"""


def test_a_cuda_probe_only_written_to_a_log_is_info(real: RuleSet):
    """lm-evaluation-harness logs whether CUDA is there: the answer changes nothing the run does."""
    found = [(f.line, f.severity) for f in scan_source(LOGGED, "m.py", real) if f.rule == "cuda-is-available"]
    assert found == [(5, "info"), (6, "info"), (7, "must-change")]
