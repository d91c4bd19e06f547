"""Issue 34, round twenty-four (deit, ControlNet, TriForce, alpaca_farm), labelled blind: a
``torch.cuda.CUDAGraph`` is a CUDA object like an Event or a Stream, so each use of it (its
``replay()``) is a place of its finding."""

from __future__ import annotations

import pytest

from kb.scan.scan import scan_source
from kb.scan.scanrules import RuleSet
from scantree import project_rules

CAPTURE = """\
import torch

def capture(step, x):
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = step(x)

    def run(new_x):
        x.copy_(new_x)
        graph.replay()
        return y.clone()

    return run
"""


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return project_rules()


def test_each_replay_of_a_cuda_graph_is_a_place_of_its_finding(real: RuleSet):
    """TriForce: the graph is made once and replayed in a closure; on a TPU host the object cannot
    be made, and the replay is where decoding stops."""
    (found,) = [f for f in scan_source(CAPTURE, "graphs.py", real) if f.rule == "cuda-graph-class"]
    assert found.line == 4
    assert (10, 9) in found.related
