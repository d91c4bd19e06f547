"""Issue 34, round twenty (score_sde_pytorch, moco-v3 and starcoder, labelled blind): a device set in a
config object's field in one file, and read where work is put in another."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.scan.scanrules import RuleSet
from scantree import project_rules, scan_tree

CONFIG = """\
import torch

def get_config():
    config = Config()
    config.seed = 42
    config.device = torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")
    return config
"""


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return project_rules()


def test_a_device_in_a_config_field_is_used_where_other_files_read_it(tmp_path: Path, real: RuleSet):
    """score_sde_pytorch: each of its config files sets ``config.device``; ``batch.to(config.device)``
    in the training library is a place of each. A read through another object (``args.device``) is not."""
    files = {
        "configs/cifar.py": CONFIG,
        "configs/celeba.py": CONFIG,
        "train.py": """\
def step(config, args, batch, model):
    batch = batch.to(config.device)
    model = model.to(args.device)
    return model(batch)
""",
    }
    findings = scan_tree(tmp_path, real, files)
    strings = [f for f in findings if f.rule == "cuda-device-string"]
    assert sorted(Path(f.path).parent.name + "/" + Path(f.path).name for f in strings) == [
        "configs/celeba.py",
        "configs/cifar.py",
    ]
    for f in strings:
        assert {(Path(p).name, line) for p, line, _ in f.elsewhere} == {("train.py", 2)}
