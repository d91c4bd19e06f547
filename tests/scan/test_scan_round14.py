"""Issue 34, round fourteen (slime, imagen-pytorch and dinov2, labelled blind): an optional import under
an ``if`` in its ``try``, a raise on the flag its handler sets; Ray's GPU ids."""

from __future__ import annotations

import pytest

from kb.scan.scan import scan_source
from kb.scan.scanrules import RuleSet
from scantree import project_rules


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return project_rules()


def found(code: str, rules: RuleSet) -> dict[int, tuple[str, str]]:
    return {f.line: (f.rule, f.severity) for f in scan_source(code, "t.py", rules)}


def test_an_import_under_an_if_in_the_try_and_a_raise_on_its_flag(real: RuleSet):
    """dinov2: the import sits under ``if XFORMERS_ENABLED:`` in the try, and a method raises when the
    flag its handler sets is false: the raise is where a TPU run stops."""
    code = """\
try:
    if ENABLED:
        from xformers.ops import fmha
        AVAILABLE = True
    else:
        AVAILABLE = False
except ImportError:
    AVAILABLE = False

def forward(x):
    if not AVAILABLE:
        raise AssertionError("xFormers is required")
    return fmha.memory_efficient_attention(x, x, x)
"""
    assert found(code, real) == {
        3: ("optional-cuda-import", "review"),
        12: ("optional-import-call", "must-change"),
        13: ("optional-import-call", "must-change"),
    }


def test_ray_gpu_ids_are_empty_on_a_tpu_host_and_an_index_read_from_them_fails(real: RuleSet):
    code = """\
import ray

def local_gpu():
    return ray.get_gpu_ids()[0]

def setup():
    device = local_gpu()
"""
    (finding,) = scan_source(code, "t.py", real)
    assert (finding.line, finding.rule, finding.severity) == (4, "ray-get-gpu-ids", "must-change")
    assert [line for line, _ in finding.related] == [7]
