"""Issue 34, round twenty-two (mdlm, mistral-inference, nanoVLM and PixArt-alpha, labelled blind): a
per-rank device index fails inside the function that holds it, so each call of that function is a
place of its finding."""

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
