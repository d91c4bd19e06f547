"""Issue 34, round fifteen (ring-flash-attention, open_lm, stable-audio-tools, cifar10-airbench and
FlexLLMGen, labelled blind): where a failure inside a function surfaces when the function is a class
made elsewhere, a callback or the user of a failing call's result (kb.scan.scanreach); a setting whose
default is written in one file and read in another (kb.scan.scansettings)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.scan.scan import scan_source
from kb.scan.scannames import Finding
from kb.scan.scanrules import RuleSet
from scantree import project_rules, scan_tree


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return project_rules()


def related(findings: list[Finding], rule: str) -> list[tuple[int, ...]]:
    return [(f.line, *(line for line, _ in f.related)) for f in findings if f.rule == rule]


def test_a_class_whose_init_fails_fails_where_it_is_made(real: RuleSet):
    """airbench: the loader's ``__init__`` loads the data onto ``cuda``; each ``Loader(...)`` is where a TPU run stops."""
    code = """\
import torch

class Loader:
    def __init__(self, path):
        torch.cuda.synchronize()

def main():
    train = Loader("train")
    test = Loader("test")
"""
    assert related(scan_source(code, "t.py", real), "cuda-synchronize") == [(5, 8, 9)]


def test_a_failing_method_handed_on_as_a_callback_fails_where_it_is_handed(real: RuleSet):
    """FlexLLMGen: ``timer.start(self.sync)`` runs ``torch.cuda.synchronize()`` later; so does a
    thread's target. A parameter of the same name as a failing function is what the caller gives."""
    code = """\
import threading
import torch

def worker(queue):
    torch.cuda.set_device(0)

class Engine:
    def sync(self):
        torch.cuda.synchronize()

    def step(self, timer, worker):
        timer.start(self.sync)
        threading.Thread(target=worker).start()

def start():
    threading.Thread(target=worker, args=(None,)).start()
"""
    findings = scan_source(code, "t.py", real)
    assert related(findings, "cuda-synchronize") == [(9, 12)]
    assert related(findings, "cuda-current-or-set-device") == [(5, 16)]


def test_a_helper_that_uses_what_a_failing_call_made_fails_where_it_is_called(real: RuleSet):
    """airbench: ``starter = torch.cuda.Event()``, then ``def start_timer(): starter.record()``."""
    code = """\
import torch

def main():
    starter = torch.cuda.Event(enable_timing=True)
    def start_timer():
        starter.record()
    start_timer()
    start_timer()
"""
    assert related(scan_source(code, "t.py", real), "cuda-events") == [(4, 6, 7, 8)]


def test_a_nccl_default_written_in_one_file_is_read_in_another(tmp_path: Path, real: RuleSet):
    """open_lm: ``--dist-backend`` defaults to nccl in params.py and distributed.py gives it to
    ``init_process_group``: the default stays the line to change, each read is one of its places."""
    files = {
        "params.py": """\
import argparse

def parse(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--dist-backend", default="nccl")
    return parser.parse_args(argv)
""",
        "config.py": """\
from dataclasses import dataclass, field

@dataclass
class Config:
    distributed_backend: str = field(default="nccl")
""",
        "distributed.py": """\
import torch

def init(args, cfg):
    torch.distributed.init_process_group(
        backend=args.dist_backend,
        init_method=args.dist_url,
    )
    torch.distributed.init_process_group(cfg.distributed_backend)
""",
    }
    findings = scan_tree(tmp_path, real, files)
    by_file = {Path(f.path).name: f for f in findings if f.rule == "nccl-backend"}
    assert set(by_file) == {"params.py", "config.py"}
    assert {(Path(p).name, line) for p, line, _ in by_file["params.py"].elsewhere} == {
        ("distributed.py", 4),
        ("distributed.py", 5),
    }
    assert {(Path(p).name, line) for p, line, _ in by_file["config.py"].elsewhere} == {("distributed.py", 8)}


def test_a_setting_defined_in_two_files_or_read_where_it_is_set_is_left_alone(tmp_path: Path, real: RuleSet):
    files = {
        "a.py": 'class A:\n    backend = "nccl"\n',
        "b.py": 'class B:\n    backend = "nccl"\n',
        "c.py": "import torch\n\ndef init(cfg):\n    torch.distributed.init_process_group(backend=cfg.backend)\n",
        "d.py": 'import torch\n\nclass D:\n    mode = "nccl"\n\ndef init(cfg):\n    torch.distributed.new_group(backend=cfg.mode)\n',
    }
    findings = scan_tree(tmp_path, real, files)
    assert [f.elsewhere for f in findings if f.rule == "nccl-backend"] == [(), (), ()]


def test_an_if_that_picks_the_device_is_no_guard_and_is_not_renamed_alone(real: RuleSet):
    """open_lm: ``if torch.cuda.is_available(): device = "cuda:0"; torch.cuda.set_device(device)``,
    ``else: device = "cpu"``. A TPU host takes the else and trains on the CPU: the test must change, but
    renaming it alone would run ``set_device`` there, so it is not offered as a fix. An ``if`` with
    no such else still only guards CUDA-only code."""
    code = """\
import torch

def pick():
    if torch.cuda.is_available():
        device = "cuda:0"
        torch.cuda.set_device(device)
    else:
        device = "cpu"
    return device

def seed():
    if torch.cuda.is_available():
        torch.cuda.manual_seed(0)
"""
    by_line = {f.line: f for f in scan_source(code, "t.py", real)}
    assert (by_line[4].rule, by_line[4].severity, by_line[4].manual) == ("cuda-is-available", "must-change", True)
    assert (by_line[12].rule, by_line[12].severity) == ("cuda-only-guard", "review")


def test_a_module_that_imports_a_gpu_package_fails_where_another_file_imports_it(tmp_path: Path, real: RuleSet):
    """ring-flash-attention: the adapter imports a module whose first lines import flash-attn. That
    import stays the line to change; the adapter's import of the module and its calls are its places."""
    files = {
        "pkg/__init__.py": "",
        "pkg/varlen.py": "from flash_attn import flash_attn_varlen_func\n\ndef ring(q):\n    return flash_attn_varlen_func(q)\n",
        "pkg/adapter.py": "from .varlen import ring\n\ndef forward(q):\n    return ring(q)\n",
    }
    findings = scan_tree(tmp_path, real, files)
    (gpu,) = [f for f in findings if Path(f.path).name == "varlen.py" and f.line == 1]
    assert {(Path(p).name, line) for p, line, _ in gpu.elsewhere} == {("adapter.py", 1), ("adapter.py", 4)}
    assert [f for f in findings if Path(f.path).name == "adapter.py"] == []


def test_a_method_inherited_from_a_class_in_another_file_fails_where_it_is_called(tmp_path: Path, real: RuleSet):
    """FlexLLMGen: ``class DistOptLM(OptLM)`` calls ``self.sync()``, which OptLM defines in another
    file with ``torch.cuda.synchronize()`` in its body. A method the subclass defines itself is its own."""
    files = {
        "engine.py": "import torch\n\nclass OptLM:\n    def sync(self):\n        torch.cuda.synchronize()\n",
        "dist.py": """\
from engine import OptLM

class DistOptLM(OptLM):
    def step(self):
        self.sync()
        self.other()

class Own(OptLM):
    def sync(self):
        pass

    def step(self):
        self.sync()
""",
    }
    findings = scan_tree(tmp_path, real, files)
    (sync,) = [f for f in findings if f.rule == "cuda-synchronize"]
    assert {(Path(p).name, line) for p, line, _ in sync.elsewhere} == {("dist.py", 5)}


def test_an_implementation_named_cuda_and_only_compared_is_no_device(real: RuleSet):
    """stylegan3's ``impl='cuda'``: an option that picks the fused kernel, checked with ``impl in
    ['ref', 'cuda']`` and ``impl == 'cuda'`` beside a device test. It sends nothing to a GPU, so neither
    the default nor the list is a device string; ``x.device.type in ("cuda", "xpu")`` is a device test."""
    code = """\
import torch

def bias_act(x, impl="cuda"):
    assert impl in ["ref", "cuda"]
    if x.device.type in ("cuda", "xpu"):
        return x
    return x

def zeros(device="cuda"):
    return torch.zeros(2, device=device)
"""
    found = {(f.line, f.rule) for f in scan_source(code, "t.py", real)}
    assert found == {(5, "cuda-compare"), (9, "cuda-device-string")}
