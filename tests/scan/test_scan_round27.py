"""Issue 34, round twenty-seven (megablocks, sentence-transformers, Time-Series-Library, rl_games,
stable-dreamfusion), labelled blind: a device a method returns (``self.device = self._acquire_device()``),
one a base class sets (in the same file or another), a message that names a ``cuda:N`` device, and Ray's
``use_gpu`` only where Ray's config takes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.scan.scan import scan_source
from kb.scan.scanrules import RuleSet
from scantree import project_rules, scan_tree


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return project_rules()


EXP = """\
import torch

class Exp:
    def __init__(self, args):
        self.args = args
        self.device = self._acquire_device()
        self.model = self._build_model().to(self.device)

    def _acquire_device(self):
        if self.args.use_gpu:
            device = torch.device('cuda:{}'.format(self.args.gpu))
            print('Use GPU: cuda:{}'.format(self.args.gpu))
        else:
            device = torch.device('cpu')
        return device
"""


def test_a_device_a_method_returns_is_followed_to_its_uses(real: RuleSet):
    """Time-Series-Library: the device comes from self._acquire_device(); the message beside it is no device."""
    found = {f.line: f for f in scan_source(EXP, "exp_basic.py", real)}
    assert found[11].rule == "cuda-fstring-device"
    assert [line for line, _ in found[11].related] == [7]
    assert 12 not in found  # 'Use GPU: cuda:{}' names a device in a message


BASE = """\
import torch

class Base:
    def __init__(self, config):
        self.ppo_device = config.get('device', 'cuda:0')

class Continuous(Base):
    def __init__(self, config, low):
        Base.__init__(self, config)
        self.low = torch.from_numpy(low).float().to(self.ppo_device)
"""


def test_what_a_base_class_of_the_file_sets_is_followed_into_its_subclass(real: RuleSet):
    """rl_games: A2CBase sets self.ppo_device; ContinuousA2CBase moves its tensors there."""
    found = {f.line: f for f in scan_source(BASE, "a2c_common.py", real)}
    assert found[5].rule == "cuda-device-string"
    assert [line for line, _ in found[5].related] == [10]


RAY = """\
import argparse
from ray.train import ScalingConfig

parser = argparse.ArgumentParser()
parser.add_argument('--use_gpu', action='store_true', default=True, help='use gpu')
scaling = ScalingConfig(num_workers=4, use_gpu=True)
"""


def test_use_gpu_is_rays_only_in_rays_config(real: RuleSet):
    """Time-Series-Library: an argparse flag named use_gpu is no Ray resource request."""
    found = [(f.line, f.rule) for f in scan_source(RAY, "run.py", real) if f.rule == "ray-use-gpu"]
    assert found == [(6, "ray-use-gpu")]


def test_what_a_base_class_of_another_file_sets_is_followed_into_its_subclasses(tmp_path: Path, real: RuleSet):
    """Time-Series-Library: Exp_Basic (exp/exp_basic.py) sets self.device; each experiment class of
    another file, a subclass, moves its batches there. A subclass that sets its own device does not."""
    files = {
        "exp/__init__.py": "",
        "exp/exp_basic.py": EXP.replace("class Exp:", "class Exp_Basic:"),
        "exp/exp_forecast.py": "from exp.exp_basic import Exp_Basic\n\nclass Exp_Forecast(Exp_Basic):\n"
        "    def train(self, batch):\n        return batch.float().to(self.device)\n",
        "exp/exp_own.py": "from .exp_basic import Exp_Basic\n\nclass Exp_Own(Exp_Basic):\n"
        "    def __init__(self):\n        self.device = 'cpu'\n\n"
        "    def train(self, batch):\n        return batch.to(self.device)\n",
    }
    (f,) = [f for f in scan_tree(tmp_path, real, files) if f.rule == "cuda-fstring-device"]
    assert (f.path, f.line) == ("exp/exp_basic.py", 11)
    assert {(p, line) for p, line, _ in f.elsewhere} == {("exp/exp_forecast.py", 5)}


LOADER = """\
from torch.autograd import Function

BACKEND = None

def get_backend():
    global BACKEND
    if BACKEND is None:
        try:
            import _raymarching as _backend
        except ImportError:
            from .backend import _backend
        BACKEND = _backend
    return BACKEND

def has_fused():
    try:
        import _raymarching
    except ImportError:
        return None
    return _raymarching

class NearFar(Function):
    @staticmethod
    def forward(ctx, rays, aabb):
        get_backend().near_far_from_aabb(rays, aabb)
        return rays
"""

SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(name='raymarching', ext_modules=[CUDAExtension(name='_raymarching', sources=['src/raymarching.cu'])])
"""


def test_a_lazily_loaded_extension_the_tree_builds_is_reported_with_its_calls(tmp_path: Path, real: RuleSet):
    """stable-dreamfusion: get_backend() imports the CUDAExtension setup.py builds, on first use; each
    get_backend().op(...) runs its code. An optional import of it (no import in the handler) is left alone."""
    files = {"raymarching/__init__.py": "", "raymarching/raymarching.py": LOADER, "raymarching/setup.py": SETUP}
    found = [f for f in scan_tree(tmp_path, real, files) if f.rule == "cuda-extension-import"]
    assert [(f.path, f.line) for f in found] == [("raymarching/raymarching.py", 9)]
    assert [line for line, _ in found[0].related] == [25]


PPO = """\
import torch
import torch.distributed as dist

class A2CBase:
    def __init__(self, config):
        dist.init_process_group("nccl")
        self.ppo_device = config.get('device', 'cuda:0')

    def play_steps(self):
        return torch.zeros(4, device=self.ppo_device)

class Discrete(A2CBase):
    def __init__(self, config):
        A2CBase.__init__(self, config)

    def train_epoch(self):
        return self.play_steps()

class Own(A2CBase):
    def play_steps(self):
        return torch.zeros(4)

    def train_epoch(self):
        return self.play_steps()
"""


def test_a_method_a_subclass_inherits_or_names_by_its_class_fails_where_it_is_called(real: RuleSet):
    """rl_games: DiscreteA2CBase calls A2CBase.__init__ (an nccl process group) by its class's name and
    self.play_steps(), which it inherits and which puts tensors on 'cuda:0'. A subclass with its own
    play_steps does not fail there."""
    found = {f.line: f for f in scan_source(PPO, "a2c_common.py", real)}
    assert 14 in {line for line, _ in found[6].related}
    assert {line for line, _ in found[7].related} >= {10, 17}
    assert 24 not in {line for line, _ in found[7].related}


def test_a_rank_passed_where_the_callee_puts_work_is_a_device_index(tmp_path: Path, real: RuleSet):
    """direct-preference-optimization: the trainer hands self.rank to utils' slice_and_move(batch, rank,
    device), whose body moves each tensor .to(device); in the same file, step(batch, self.rank) does too.
    A rank handed to a parameter used as a rank is not a device."""
    files = {
        "utils.py": "def slice_and_move(batch, rank, device):\n    return {k: v.to(device) for k, v in batch.items()}\n",
        "trainers.py": "from utils import slice_and_move\n\nclass Trainer:\n    def __init__(self, rank):\n"
        "        self.rank = rank\n\n    def step(self, batch, device):\n        return batch.to(device)\n\n"
        "    def train(self, batch):\n        local = slice_and_move(batch, self.rank, self.rank)\n"
        "        return self.step(batch, self.rank)\n",
    }
    found = [f for f in scan_tree(tmp_path, real, files) if f.rule == "rank-device-index"]
    assert [(f.path, f.line, f.column) for f in found] == [("trainers.py", 11, 50), ("trainers.py", 12, 33)]
    assert [(p, line) for p, line, _ in found[0].elsewhere] == [("utils.py", 2)]
    assert [line for line, _ in found[1].related] == [8]


TIMER = """\
import time
import torch

class Timer:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        torch.cuda.synchronize()
        self.start = time.perf_counter()

    def __exit__(self, *exc):
        print(self.name, time.perf_counter() - self.start)

def sort_tokens(keys):
    with Timer("sort"):
        return sorted(keys)
"""


def test_a_context_manager_that_fails_on_entry_fails_where_it_is_used(real: RuleSet):
    """EAGLE: Timer's __enter__ synchronizes CUDA; each `with Timer(...)` runs it."""
    found = {f.line: f for f in scan_source(TIMER, "utils.py", real)}
    assert found[9].rule == "cuda-synchronize" and [line for line, _ in found[9].related] == [16]
