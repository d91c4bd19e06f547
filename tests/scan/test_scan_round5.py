"""Issue 34, round five: what the nine blind-labelled repositories showed missing, each on small code
written for the test: an assert that a tensor is on CUDA, ``torch.compile(dynamic=True)``, which the
TPU backend refuses, and bitsandbytes quantization asked for through ``BitsAndBytesConfig``."""

from __future__ import annotations

import textwrap

import pytest

from conftest import ROOT
from kb.scan.scan import scan_source
from kb.scan.scannames import Finding
from kb.scan.scanrules import RuleSet
from scantree import project_rules


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return project_rules()


def scan(real: RuleSet, code: str, rule: str) -> list[tuple[int, int]]:
    found: list[Finding] = scan_source(textwrap.dedent(code), "t.py", real)
    return [(f.line, f.column) for f in found if f.rule == rule]


@pytest.mark.parametrize(
    "code, where",
    [
        ("def f(x):\n    assert x.is_cuda\n", [(2, 12)]),
        ("def f(x):\n    assert x.dtype is not None and x.is_cuda, 'needs CUDA'\n", [(2, 36)]),
        ("def f(x):\n    if x.is_cuda:\n        return x\n", []),  # a test, not a requirement
        ("def f(x):\n    assert not x.is_cuda\n", []),  # true on a TPU
        ("def f(x):\n    assert x.is_cuda or x.is_cpu\n", []),  # either may hold
    ],
)
def test_an_assert_that_a_tensor_is_on_cuda_is_must_change(real, code, where):
    assert scan(real, code, "assert-is-cuda") == where


@pytest.mark.parametrize(
    "code, where",
    [
        ("import torch\ng = torch.compile(f, dynamic=True)\n", [(2, 22)]),
        ("import torch\ng = torch.compile(\n    f,\n    dynamic=True,\n)\n", [(4, 5)]),  # at the argument
        ("import torch\ng = torch.compile(f, dynamic=False)\n", []),
        ("import torch\ng = torch.compile(f)\n", []),
        ("import torch\nx = torch.zeros(2)\ng = other.compile(f, dynamic=True)\n", []),  # not torch's
    ],
)
def test_compile_with_dynamic_true_is_reported_at_the_argument(real, code, where):
    assert scan(real, code, "compile-dynamic") == where


QUANT = """\
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig

    def load(args):
        config = BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
        )
        return AutoModelForCausalLM.from_pretrained("m", load_in_8bit=True, quantization_config=config)
    """


def test_a_bitsandbytes_config_is_reported_once_at_the_call_and_loading_at_its_keyword(real):
    assert scan(real, QUANT, "bnb-quantization-config") == [(4, 14)]
    assert scan(real, QUANT, "load-in-4bit") == []  # the config's finding speaks for its keywords
    assert scan(real, QUANT, "load-in-8bit") == [(8, 54)]


def test_no_quantization_finding_without_bitsandbytes(real):
    code = "from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained('m', load_in_8bit=False)\n"
    assert scan(real, code, "load-in-8bit") == [] and scan(real, code, "bnb-quantization-config") == []


@pytest.mark.parametrize("helper", ["print0", "print_rank_0", "rank0_print", "rank_zero_info", "master_print"])
def test_a_cuda_comparison_that_only_guards_a_rank_zero_print_is_no_finding(real, helper):
    code = f"""\
        import torch
        def setup(device_type, fp8):
            if device_type != "cuda":
                {helper}("fp8 needs CUDA: ignored")
            if device_type == "cuda":
                torch.backends.cudnn.benchmark = True
        """
    assert [line for line, _ in scan(real, code, "cuda-compare")] == [5]


@pytest.mark.parametrize("helper", ["printer", "print_model", "main", "log_softmax"])
def test_a_call_named_like_a_print_but_not_one_still_counts(real, helper):
    code = f'import torch\ndef f(device_type, x):\n    if device_type != "cuda":\n        {helper}(x)\n'
    assert [line for line, _ in scan(real, code, "cuda-compare")] == [3]


DEVICE_MODULE = """\
    import torch

    def torch_device(name):
        return getattr(torch, name)

    def device_id(name):
        return torch_device(name).current_device()

    def setup(local_rank, device_type):
        module = torch.get_device_module(device_type)
        module.set_device(local_rank)
        torch.accelerator.synchronize()
        torch_device(device_type).manual_seed(0)
        getattr(torch, "cuda").synchronize()
        getattr(other, device_type).synchronize()
        return getattr(torch, device_type).device_count()
    """


def test_an_internal_call_on_a_device_module_picked_by_name_is_must_change(real):
    """The module of whichever device runs (getattr(torch, name), torch.get_device_module, or what a
    function of the file returns of them): on a TPU it is torch.tpu, whose current_device, set_device
    and device_count raise. manual_seed is not internal; getattr of a written-out name, or of
    another module, is no device module."""
    assert scan(real, DEVICE_MODULE, "device-module-call") == [(7, 12), (11, 5), (16, 12)]


def test_the_internal_device_calls_are_those_the_error_index_says_raise():
    """The scanner ships without the KB, so it holds its own list: the same as the error entry's."""
    import yaml

    from kb.scan.scan import _INTERNAL_DEVICE_CALLS

    entries = yaml.safe_load((ROOT / "docs" / "data" / "errors.yml").read_text(encoding="utf-8"))
    (legacy,) = [e for e in entries if e["id"] == "legacy-device-api"]
    raised = {r["call"].removeprefix("torch.tpu.") for r in legacy["raised_by"]}
    assert _INTERNAL_DEVICE_CALLS == raised
