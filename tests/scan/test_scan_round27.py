"""Issue 34, round twenty-seven (megablocks, sentence-transformers, Time-Series-Library, rl_games,
stable-dreamfusion), labelled blind: a device a method returns (``self.device = self._acquire_device()``),
one a base class of the same file sets, a message that names a ``cuda:N`` device, and Ray's
``use_gpu`` only where Ray's config takes it."""

from __future__ import annotations

import pytest

from kb.scan.scan import scan_source
from kb.scan.scanrules import RuleSet
from scantree import project_rules


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
