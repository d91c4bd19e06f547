"""Issue 34, round eight (OLMo, lerobot, open-r1 and torchtune, labelled blind): code that branches on
a device's name over several backends (kb.scan.scandispatch), a rank handed over by a function,
a device index compared with the rank, a loader that names its start method, and NumPy arrays
read in a loop."""

from __future__ import annotations

import pytest

from kb.scan.scan import scan_source
from kb.scan.scanrules import RuleSet
from scantree import project_rules


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return project_rules()


def places(source: str, rules: RuleSet, *wanted: str) -> list[tuple[int, str]]:
    return [(f.line, f.rule) for f in scan_source(source, "t.py", rules) if not wanted or f.rule in wanted]


DISPATCH = ("cuda-compare", "cuda-device-string", "device-dispatch-no-tpu")

RAISES = """\
import torch

def amp_ok(device: str):
    if device in ["cuda", "xpu", "cpu"]:
        return True
    elif device == "mps":
        return False
    else:
        raise ValueError(device)

def memory(device):
    if device == "cuda":
        return torch.cuda.get_device_properties(0).total_memory
    if device == "xpu":
        return torch.xpu.get_device_properties(0).total_memory
    raise RuntimeError(device)
"""


def test_a_dispatch_that_raises_for_tpu_is_reported_at_the_raise_not_at_its_arms(real: RuleSet):
    assert places(RAISES, real, *DISPATCH) == [(9, "device-dispatch-no-tpu"), (16, "device-dispatch-no-tpu")]


GENERIC = """\
import torch

def safe(name: str):
    if name.startswith("cuda"):
        device = torch.device(name)
    elif name == "mps":
        device = torch.device("mps")
    else:
        device = torch.device(name)
    return device
"""


def test_a_dispatch_whose_last_arm_takes_any_device_reports_nothing(real: RuleSet):
    assert places(GENERIC, real, *DISPATCH) == []


SKIPS = """\
import torch

def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()
    elif device == "mps":
        torch.mps.synchronize()

def sync_or_say(device):
    if device == "cuda":
        torch.cuda.synchronize()
    elif device == "mps":
        torch.mps.synchronize()
    else:
        print(f"no sync for {device}")
"""


def test_a_dispatch_the_tpu_silently_skips_keeps_its_cuda_comparison(real: RuleSet):
    """No ``else`` (or one that only logs): on a TPU nothing happens, and the comparison is the bug."""
    assert places(SKIPS, real, *DISPATCH) == [(4, "cuda-compare"), (10, "cuda-compare")]


PORTED = """\
import torch

def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()
    elif device == "tpu":
        torch.accelerator.synchronize()
"""


def test_a_dispatch_with_a_tpu_arm_reports_nothing(real: RuleSet):
    assert places(PORTED, real, *DISPATCH) == []


def test_a_plain_cuda_test_is_no_dispatch(real: RuleSet):
    source = 'def f(device):\n    if device == "cuda":\n        return 1\n    else:\n        raise ValueError(device)\n'
    assert places(source, real, *DISPATCH) == [(2, "cuda-compare")]


def test_a_cuda_key_of_a_mapping_is_no_device(real: RuleSet):
    source = 'import torch\nstate = {}\nx = state["cuda"]\ny = "cuda"\n'
    assert places(source, real, "cuda-device-string") == [(4, "cuda-device-string")]


RANKS = """\
import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from .util import get_local_rank

def wrap(model, device, local_rank):
    m = FSDP(
        model,
        device_id=get_local_rank(),
    )
    if device.index != local_rank:
        raise RuntimeError("index must be the local rank")
    if device.index != 0:
        raise RuntimeError("not the first device")
    return m
"""


def test_a_rank_from_a_function_or_compared_with_the_device_index_is_a_per_rank_index(real: RuleSet):
    assert places(RANKS, real, "rank-device-index") == [(8, "rank-device-index"), (10, "rank-device-index")]


LOADERS = """\
import torch
from torch.utils.data import DataLoader

def loaders(ds, cfg):
    x = torch.zeros(2).to("cuda")
    a = DataLoader(ds, num_workers=4, multiprocessing_context="spawn")
    b = DataLoader(ds, num_workers=4, multiprocessing_context=cfg.start)
    c = DataLoader(ds, num_workers=4, multiprocessing_context=None)
    d = DataLoader(ds, num_workers=4, multiprocessing_context="fork")
    return x, a, b, c, d
"""


def test_a_loader_that_names_a_start_method_other_than_fork_does_not_fork(real: RuleSet):
    assert places(LOADERS, real, "dataloader-fork") == [(8, "dataloader-fork"), (9, "dataloader-fork")]


HOST = """\
import torch

def pick(ds, model):
    model.to("cuda")
    arr = ds.column("task").to_numpy()
    for t in range(3):
        hits = (arr == t).nonzero()[0][:4]
        chosen = hits.tolist()
    x = torch.ones(3, device="cuda")
    for t in range(3):
        y = (x == t).nonzero()
        z = y.tolist()
    return chosen, z
"""


def test_numpy_arrays_read_in_a_loop_are_host_reads(real: RuleSet):
    """``.to_numpy()`` makes a host array; what is computed from it stays on the host."""
    assert places(HOST, real, "nonzero", "item-in-loop") == [(11, "nonzero"), (12, "item-in-loop")]


ENV_DEFAULT = """\
import os
import torch

class Recipe:
    def setup(self, model):
        self._backend = os.environ.get("TORCH_COMPILE_BACKEND", "inductor")
        self.model = torch.compile(model, backend=self._backend)
        self.loss = torch.compile(self.loss, backend=os.getenv("LOSS_BACKEND", "tpu"))
"""


def test_the_default_of_an_environment_read_is_what_runs(real: RuleSet):
    """Unless the variable is set, the default is the value: the place to change, used at the call."""
    (found,) = [f for f in scan_source(ENV_DEFAULT, "t.py", real) if f.rule == "compile-inductor"]
    assert (found.line, [line for line, _ in found.related]) == (6, [7])
