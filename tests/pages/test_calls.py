"""kb.pages.calls: the handbook's code spans, parsed and sorted by where they can be checked."""

from __future__ import annotations

from pathlib import Path

from kb.pages.calls import compile_arguments, env_settings, parse_span, sample_calls


def one(text: str):
    spans = parse_span(text, "here:1")
    assert len(spans) == 1, spans
    return spans[0]


def test_sides():
    assert one("torch.accelerator.synchronize()").side == "torch"
    assert one("torch.cuda.synchronize()").side == "elsewhere"
    assert one("dist.init_process_group(backend='nccl')").side == "elsewhere"
    assert one("torch.compile(model, backend='openxla')").side == "elsewhere"
    assert one("torch.tpu.synchronize()").side == "tpu"
    assert one("torch.amp.autocast('tpu', dtype=torch.bfloat16)").side == "tpu"
    assert one("optimizer.step()").side == "other"


def test_aliases_expand_and_shapes():
    span = one("dist.get_rank() == 0")
    assert span.shape == "call" and "torch.distributed.get_rank" in span.names
    assert one("torch._dynamo.config.capture_scalar_outputs").shape == "name"
    assert one("with torch.device('tpu'):").code.startswith("with torch.device('tpu'):")


def test_not_python_is_no_span():
    for text in ("tpu:0", "torch-neuronx", "'tpu'", "pip install torch", "TORCH_SHOW_CPP_STACKTRACES=1", "a b"):
        assert parse_span(text, "here:1") == []


def test_alternatives_split_and_ellipsis_elides():
    spans = parse_span("torch.set_float32_matmul_precision('medium' | 'high')", "here:1")
    assert [s.code for s in spans] == [
        "torch.set_float32_matmul_precision('medium')",
        "torch.set_float32_matmul_precision('high')",
    ]
    span = one("torch.compile(..., backend='inductor')")
    assert span.elided and span.code == "torch.compile(backend='inductor')"
    assert span.calls[0].keywords == ("backend",) and span.calls[0].positional == 0


def test_twin_swaps_device_strings_but_not_compile_backends():
    assert one("init_device_mesh('tpu', mesh_shape)").twin == "init_device_mesh('cpu', mesh_shape)"
    assert one("dist.init_process_group(backend='tpu_dist')").twin == "dist.init_process_group(backend='gloo')"
    assert one("torch.compile(model, backend='tpu')").twin is None
    assert one("torch.tpu.manual_seed(0)").twin is None


def test_compile_arguments_literal_keywords():
    span = one("torch.compile(model, backend='tpu', options={'bucket_size': 64}, dynamic=False)")
    assert compile_arguments(span) == [{"backend": "tpu", "options": {"bucket_size": 64}, "dynamic": False}]


def test_env_settings():
    assert env_settings([("set `TORCH_SHOW_CPP_STACKTRACES=1` and `x=1`", "p.md:3")]) == [
        ("TORCH_SHOW_CPP_STACKTRACES", "1", "p.md:3")
    ]


def test_sample_calls_use_the_sample_imports(tmp_path: Path):
    sample = tmp_path / "s.py"
    sample.write_text("import torch.distributed as d\nfrom torch import nn\nd.barrier()\nnn.Linear(2, 2, bias=False)\n")
    spans = sample_calls(sample, "snippets/s.py")
    assert {s.names[0] for s in spans} == {"torch.distributed.barrier", "torch.nn.Linear"}
    linear = next(s for s in spans if s.names[0] == "torch.nn.Linear")
    assert linear.sample and linear.calls[0].keywords == ("bias",) and linear.where == "snippets/s.py:4"
