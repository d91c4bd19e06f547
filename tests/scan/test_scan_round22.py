"""Issue 34, rounds twenty-two (mdlm, mistral-inference, nanoVLM, PixArt-alpha) and twenty-three
(ChatGLM-6B, lightllm, Latte, EasyContext), labelled blind: a per-rank device index fails inside the
function that holds it, so each call of that function is a place of its finding; a script's import loads
the module beside it; a process-group call over several lines is a place of its "nccl"; the private spelling
of `attn_implementation`."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.scan.scan import scan_source
from kb.scan.scanrules import RuleSet
from scantree import project_rules, scan_tree

WRAP = """\
import os
from torch.nn.parallel import DistributedDataParallel

def wrap_model(model):
    local_rank = int(os.environ["LOCAL_RANK"])
    return DistributedDataParallel(model, device_ids=[local_rank])

def main(model, distributed):
    if distributed:
        model = wrap_model(model)
    return model
"""


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return project_rules()


def test_a_call_of_a_function_that_wraps_with_the_rank_index_is_a_place(real: RuleSet):
    """nanoVLM: ``wrap_model`` gives DDP ``device_ids=[local_rank]``, rejected on every rank but 0:
    ``model = wrap_model(model)`` is where the run fails."""
    (found,) = [f for f in scan_source(WRAP, "train.py", real) if f.rule == "rank-device-index"]
    assert found.line == 6
    assert (10, 17) in found.related


def test_the_call_in_another_file_is_a_place_too(tmp_path: Path, real: RuleSet):
    files = {"dist.py": WRAP, "train.py": "from dist import wrap_model\n\ndef go(m):\n    return wrap_model(m)\n"}
    (found,) = [f for f in scan_tree(tmp_path, real, files) if f.rule == "rank-device-index"]
    assert ("train.py", 4) in [(Path(p).name, line) for p, line, _ in found.elsewhere]


def test_index_zero_is_no_finding_and_its_callers_no_places(real: RuleSet):
    code = WRAP.replace("device_ids=[local_rank]", "device_ids=[0]")
    assert [f for f in scan_source(code, "train.py", real) if f.rule == "rank-device-index"] == []


def test_a_script_imports_the_module_beside_it_among_several_of_that_name(tmp_path: Path, real: RuleSet):
    """Round twenty-three (Latte): ``from utils import setup_distributed`` in train.py loads the
    utils.py beside it, though models/utils.py has the same name: the call is a place of the failure
    inside. With no file beside it, which one loads is not known and nothing is linked."""
    body = "import torch\n\ndef setup_distributed():\n    return torch.cuda.device_count()\n"
    files = {
        "utils.py": body,
        "models/utils.py": "def helper():\n    return 1\n",
        "train.py": "from utils import setup_distributed\n\ndef main():\n    setup_distributed()\n",
        "tools/run.py": "from utils import setup_distributed\n\ndef main():\n    setup_distributed()\n",
    }
    (found,) = [f for f in scan_tree(tmp_path, real, files) if f.rule == "cuda-device-count"]
    assert [(Path(p).as_posix(), line) for p, line, _ in found.elsewhere] == [("train.py", 4)]


def test_a_process_group_call_over_lines_is_a_place_of_its_nccl(real: RuleSet):
    """Round twenty-three (lightllm): ``init_process_group(`` on one line and ``backend="nccl"`` on the
    next: the finding stays on the string, and the call's line, where it raises, is its place."""
    code = "import torch.distributed as dist\n\ndist.init_process_group(\n    backend='nccl',\n    rank=0,\n)\n"
    (found,) = [f for f in scan_source(code, "dist_utils.py", real) if f.rule == "nccl-backend"]
    assert (found.line, found.related) == (4, ((3, 1),))


def test_the_private_spelling_of_attn_implementation_is_the_same_request(real: RuleSet):
    """Round twenty-three (EasyContext): ``_attn_implementation="flash_attention_2"`` reaches the config
    as ``attn_implementation=`` does (transformers 5.25); "sdpa" in either spelling is fine."""
    code = (
        "from transformers import AutoModelForCausalLM\n"
        "m = AutoModelForCausalLM.from_pretrained(\n    'x',\n    _attn_implementation='flash_attention_2',\n)\n"
        "n = AutoModelForCausalLM.from_pretrained('x', _attn_implementation='sdpa')\n"
    )
    found = [(f.line, f.code) for f in scan_source(code, "train.py", real) if f.rule == "hf-flash-attention"]
    assert found == [(4, "TPU640")]
