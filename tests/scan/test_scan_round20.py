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


def test_an_import_chain_to_a_module_that_builds_cuda_ops_fails_at_each_step(tmp_path: Path, real: RuleSet):
    """score_sde_pytorch: run_lib.py imports models/ncsnpp.py, which imports layerspp.py (among other
    names of one statement), which imports up_or_down_sampling.py, which imports the op module that
    builds CUDA sources as it loads: each of those imports is a place of the first one's finding. An
    import inside a function does not make its own file fail as it loads."""
    files = {
        "op/__init__.py": "",
        "op/upfirdn.py": 'from torch.utils.cpp_extension import load\n\next = load("upfirdn", sources=["k.cu"])\n',
        "models/__init__.py": "",
        "models/utils.py": "",
        "models/up.py": "from op import upfirdn\n",
        "models/layers.py": "from . import utils, up\n",
        "models/net.py": "from . import layers\n",
        "run.py": "from models import net\n",
        "lazy.py": "def f():\n    from models import utils, up\n",
        "later.py": "import lazy\n",
    }
    findings = scan_tree(tmp_path, real, files)
    (first,) = [f for f in findings if f.rule == "local-cuda-module" and f.path.endswith("up.py")]
    got = {(Path(p).as_posix(), line) for p, line, _ in first.elsewhere}
    assert got == {("models/layers.py", 1), ("models/net.py", 1), ("run.py", 1), ("lazy.py", 2)}
