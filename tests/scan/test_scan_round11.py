"""Issue 34, round eleven (stable-diffusion, detectron2 and EasyR1, labelled blind): a function that
moves work to a ``cuda`` device fails where it is called; ``device_ids`` set in a kwargs mapping
before the call; a backend name spelled ``"NCCL"``; a Ray ``num_gpus`` option set by key."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.scan.scan import scan_source
from kb.scan.scanrules import RuleSet
from scantree import project_rules, scan_tree


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return project_rules()


def found(code: str, rules: RuleSet) -> dict[int, tuple[str, list[int]]]:
    return {f.line: (f.rule, [line for line, _ in f.related]) for f in scan_source(code, "t.py", rules)}


BUFFER = """\
import torch

class Sampler:
    def register_buffer(self, name, attr):
        if type(attr) == torch.Tensor:
            attr = attr.to(torch.device("cuda"))
        setattr(self, name, attr)

    def make_schedule(self, betas):
        self.register_buffer("betas", betas)
        self.register_buffer("alphas", 1 - betas)
"""


def test_a_method_that_moves_work_to_a_cuda_device_fails_at_each_call(real: RuleSet):
    assert found(BUFFER, real) == {6: ("cuda-device-string", [6, 10, 11])}


def test_a_helper_of_another_file_that_moves_work_to_cuda_fails_at_its_calls(real: RuleSet, tmp_path: Path):
    files = {
        "pkg/__init__.py": "",
        "pkg/offload.py": "def load_params(model):\n    for p in model.parameters():\n        p.data = p.data.to('cuda')\n",
        "pkg/worker.py": "from pkg.offload import load_params\n\ndef step(model):\n    load_params(model)\n",
    }
    (finding,) = scan_tree(tmp_path, real, files)
    assert (finding.path.endswith("offload.py"), finding.line, finding.rule) == (True, 3, "cuda-device-string")
    assert [(Path(p).name, line) for p, line, _ in finding.elsewhere] == [("worker.py", 4)]


@pytest.mark.parametrize(
    "setting",
    ['kwargs["device_ids"] = [local_rank]', 'kwargs = {"device_ids": [comm.get_local_rank()]}'],
)
def test_device_ids_set_by_key_before_the_call_is_a_rank_index(real: RuleSet, setting: str):
    code = f"import torch\n\ndef wrap(model, local_rank, comm, kwargs):\n    {setting}\n    return model\n"
    assert [(f.line, f.rule) for f in scan_source(code, "t.py", real)] == [(4, "rank-device-index")]


def test_device_ids_of_device_zero_by_key_is_fine(real: RuleSet):
    code = 'def wrap(kwargs):\n    kwargs["device_ids"] = [0]\n    kwargs["other"] = [local_rank]\n'
    assert scan_source(code, "t.py", real) == []


def test_a_backend_named_in_capitals_is_nccl_and_left_to_a_person(real: RuleSet):
    code = 'import torch.distributed as dist\n\ndist.init_process_group(backend="NCCL" if gpu else "GLOO")\n'
    (finding,) = scan_source(code, "t.py", real)
    assert (finding.rule, finding.manual) == ("nccl-backend", True)  # the fix rewrites "nccl" only
    assert scan_source('import os\n\nos.environ["NCCL_DEBUG"] = "INFO"\n', "t.py", real) == []


def test_a_ray_num_gpus_option_set_by_key_asks_for_gpus(real: RuleSet):
    code = (
        'import ray\n\ndef start(cls, n):\n    options = {}\n    options["num_gpus"] = n\n    options["num_cpus"] = 2\n'
    )
    assert [(f.line, f.rule) for f in scan_source(code, "t.py", real)] == [(5, "ray-gpu-resource")]
    assert scan_source(code.replace("import ray\n", "import os\n"), "t.py", real) == []  # not Ray's, unknown


def test_a_method_named_for_moving_to_a_cuda_device_makes_its_caller_fail(real: RuleSet):
    code = (
        "def load(handles):\n    for h in handles:\n        h.flat_param_to('cuda', non_blocking=True)\n\n"
        "def step(handles):\n    load(handles)\n\ndef pick():\n    return 'cuda'\n\ndef other():\n    pick()\n"
    )
    assert {line: places for line, (rule, places) in found(code, real).items()} == {3: [6], 9: []}  # 9: returned
