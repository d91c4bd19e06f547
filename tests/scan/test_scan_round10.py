"""Issue 34, round ten (composer, OLMo-core and lorax, labelled blind): GPU attention packages and
flash-attention's compiled extensions under names no rule knew. ``dropout_layer_norm`` and
``rotary_emb`` are built by flash-attention's setup.py files as CUDA extensions, so importing one
is reported even when nothing else in the file says CUDA, and even behind a fallback; FlashAttention-3's
``flash_attn_interface``, ``ring_flash_attn`` and FlashInfer have rules of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.scan.scan import scan_source
from kb.scan.scanrules import RuleSet
from scantree import project_rules, scan_tree


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return project_rules()


KNOWN = """\
import torch
import dropout_layer_norm
try:
    import flash_attn_3.flash_attn_interface as fa3
except ImportError:
    fa3 = None


def norm(x, residual, weight):
    out, res = dropout_layer_norm.dropout_add_ln_fwd(x, residual, weight)
    return out


def attention(q, k, v):
    return fa3.flash_attn_func(q, k, v)
"""


def test_flash_attentions_own_extensions_are_reported_with_their_calls(real: RuleSet):
    found = {f.line: f for f in scan_source(KNOWN, "t.py", real)}
    assert found[2].rule == found[4].rule == "cuda-extension-import"
    assert [line for line, _ in found[2].related] == [10]
    assert [line for line, _ in found[4].related] == [15]  # an import with a fallback too: the name is known


def test_an_unknown_module_behind_a_fallback_is_still_the_codes_choice(real: RuleSet):
    code = KNOWN.replace("flash_attn_3.flash_attn_interface", "my_attention").replace("dropout_layer_norm", "ln")
    assert [f.rule for f in scan_source(code, "t.py", real)] == []


def test_a_module_of_the_tree_named_like_a_known_extension_is_python(real: RuleSet, tmp_path: Path):
    files = {
        "rotary_emb.py": "import torch\n\ndef apply(x):\n    return x\n",
        "model.py": "import rotary_emb\n\ndef f(x):\n    return rotary_emb.apply(x)\n",
    }
    assert [f.rule for f in scan_tree(tmp_path, real, files)] == []


@pytest.mark.parametrize(
    "line, rule",
    [
        ("from flash_attn_interface import flash_attn_func", "flash-attn-interface-import"),
        ("import ring_flash_attn", "ring-flash-attn-import"),
        ("from ring_flash_attn import zigzag_ring_flash_attn_func", "ring-flash-attn-import"),
        ("import flashinfer", "flashinfer-import"),
        ("from flashinfer.sampling import top_k_top_p_sampling_from_probs", "flashinfer-import"),
    ],
)
def test_gpu_attention_packages_are_reported_at_their_import(real: RuleSet, line: str, rule: str):
    assert [(f.line, f.rule, f.severity) for f in scan_source(line + "\n", "t.py", real)] == [(1, rule, "must-change")]


def test_torchaos_float8_training_is_reported_where_the_model_is_converted(real: RuleSet):
    code = "from torchao.float8 import convert_to_float8_training\n\nconvert_to_float8_training(model)\n"
    assert [(f.line, f.rule) for f in scan_source(code, "t.py", real)] == [(3, "torchao-float8-training")]
    assert (
        scan_source("from torchao.float8 import Float8LinearConfig\n\ncfg = Float8LinearConfig()\n", "t.py", real) == []
    )
