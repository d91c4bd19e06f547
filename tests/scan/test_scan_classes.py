"""What the real rules table finds (docs/data/migration_rules.yml): one positive and one negative
example per class of CUDA-only code seen in public trainers, one finding per root cause at the line
to change, ``# noqa``, rule codes in every format, and text that can't drive a terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT
from kb.scan.scan import scan_source, silenced
from kb.scan.scanfix import fix_text, fixes_for
from kb.scan.scanreport import concise_report, json_report, sarif_report, text_report
from kb.scan.scanrules import RuleSet, load_rules

ENV = {**os.environ, "PYTHONPATH": str(ROOT / "scripts")}


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return load_rules(sorted((ROOT / "docs" / "data").glob("migration_rules*.yml")), ROOT)


def found(real: RuleSet, code: str) -> list[tuple[int, str, str]]:
    return [(f.line, f.rule, f.severity) for f in scan_source(textwrap.dedent(code), "t.py", real)]


def rules_at(real: RuleSet, code: str) -> set[str]:
    return {rule for _, rule, _ in found(real, code)}


CLASSES = [
    # per-rank device indices
    ("import torch\nmodel.to(local_rank)\n", "rank-device-index"),
    ("import torch\nx = x.cuda(args.gpu)\n", "rank-device-index"),
    ('import torch\ndev = torch.device(f"{kind}:{rank}")\n', "rank-device-index"),
    ("import torch\ntorch.accelerator.set_device_index(rank)\n", "rank-device-index"),
    ("from torch.nn.parallel import DistributedDataParallel as DDP\nDDP(m, device_ids=[rank])\n", "rank-device-index"),
    ("import torch\nDDP(m, device_ids=[local_rank], output_device=local_rank)\n", "rank-device-index"),
    ('import torch\ndev = torch.device("cuda", local_rank)\n', "rank-device-index"),
    ("import torch\nx = torch.zeros(2, device=local_rank)\n", "rank-device-index"),
    ("import torch\nx.to(rank % torch.cuda.device_count())\n", "rank-device-index"),
    ("import torch\ndev = torch.device(args.local_rank)\n", "rank-device-index"),
    ('import torch, os\nx = x.to(int(os.environ["LOCAL_RANK"]))\n', "rank-device-index"),
    ("m = AutoModel.from_pretrained('x', device_map={'': local_rank})\n", "rank-device-index"),
    ("m = AutoModel.from_pretrained('x', device_map={'': int(os.getenv('LOCAL_RANK', 0))})\n", "rank-device-index"),
    ("m = AutoModel.from_pretrained('x', device_map=accelerator.local_process_index)\n", "rank-device-index"),
    # device strings where they are assigned, compared, defaulted or tested
    ('device = "cuda"\n', "cuda-device-string"),
    ('parser.add_argument("--device", default="cuda")\n', "cuda-device-string"),
    ('if device.type == "cuda":\n    pass\n', "cuda-compare"),
    ("ctx = nullcontext() if 'cuda' not in device else autocast()\n", "cuda-compare"),
    ('if str(device).startswith("cuda"):\n    pass\n', "cuda-compare"),
    ("parser.add_argument('--backend', default='nccl')\n", "nccl-backend"),
    ('BACKENDS = "cpu:gloo,cuda:nccl"\n', "nccl-backend"),
    ("import torch.distributed as dist\nb = dist.Backend.NCCL\n", "nccl-backend-enum"),
    # CUDA-only libraries and framework switches
    ("import bitsandbytes as bnb\n", "bitsandbytes-import"),
    ("from apex.optimizers import FusedAdam\n", "apex-import"),
    ("from flash_attn import flash_attn_func\n", "flash-attn-import"),
    ("import xformers.ops as xops\n", "xformers-import"),
    ("import transformer_engine.pytorch as te\n", "transformer-engine-import"),
    ("import cupy as cp\n", "cupy-import"),
    ("import pynvml\n", "pynvml-import"),
    ("import triton\n", "triton-import"),
    ("import lightning as L\ntrainer = L.Trainer(accelerator='gpu')\n", "lightning-gpu"),
    (
        "from lightning.pytorch.accelerators import CUDAAccelerator\nacc = CUDAAccelerator()\n",
        "lightning-cuda-accelerator",
    ),
    # probes that quietly switch a feature off
    ("import torch\nok = torch.cuda.is_bf16_supported()\n", "cuda-bf16-probe"),
    ("import torch\nif torch.version.cuda:\n    pass\n", "cuda-version-probe"),
    ("import torch.distributed as dist\nif dist.is_nccl_available():\n    pass\n", "nccl-available-probe"),
    ("import torch\nif torch.backends.cudnn.is_available():\n    pass\n", "cudnn-available-probe"),
    # memory, timing and property calls, each with its own advice
    ("import torch\nm = torch.cuda.memory_allocated()\n", "cuda-memory-allocated"),
    ("import torch\nm = torch.cuda.memory_reserved()\n", "cuda-memory-reserved"),
    ("import torch\nm = torch.cuda.max_memory_reserved()\n", "cuda-max-memory-reserved"),
    ("import torch\ntorch.cuda.reset_peak_memory_stats()\n", "cuda-reset-peak-memory"),
    ("import torch\nstats = torch.cuda.memory_stats()\n", "cuda-memory-stats-dict"),
    ("import torch\ntorch.cuda.empty_cache()\n", "cuda-empty-cache"),
    ("import torch\nfree, total = torch.cuda.mem_get_info()\n", "cuda-mem-get-info"),
    ("import torch\np = torch.cuda.get_device_properties(0)\n", "cuda-device-properties"),
    ("import torch\nname = torch.cuda.get_device_name()\n", "cuda-device-name"),
    ("import torch\nmajor, _ = torch.cuda.get_device_capability()\n", "cuda-device-capability"),
    ("import torch\nstart = torch.cuda.Event(enable_timing=True)\n", "cuda-events"),
    ("import torch\ni = torch.cuda.current_device()\n", "cuda-current-device"),
    ("import torch\ntorch.cuda.manual_seed(42)\n", "cuda-manual-seed-current"),
    (
        'import torch\n@torch.library.custom_op("a::f", mutates_args=(), device_types="cuda")\ndef f(x): ...\n',
        "custom-op-cuda-only",
    ),
    (
        'from torch.library import custom_op\n@custom_op("a::f", mutates_args=(), device_types=("cuda",))\ndef f(x): ...\n',
        "custom-op-cuda-only",
    ),
    ("import torch\ny = torch._scaled_mm(a, b, scale_a=s, scale_b=t, use_fast_accum=True)\n", "scaled-mm-fast-accum"),
    ("import torch\ntorch.cuda.manual_seed_all(42)\n", "cuda-manual-seed"),
    ("import torch\nx.cuda()\nstate = torch.load(path)\n", "load-without-map-location"),
    ("import torch.multiprocessing as mp\nmp.spawn(main, nprocs=4)\n", "mp-spawn"),
    ("from torch.profiler import ProfilerActivity\nacts = [ProfilerActivity.CUDA]\n", "profiler-cuda-activity"),
    ("import torch.cuda.nccl as nccl\n", "cuda-nccl-import"),
    (
        "from liger_kernel.transformers import LigerFusedLinearJSDLoss\nloss = LigerFusedLinearJSDLoss()\n",
        "liger-kernel-calls",
    ),
    ("from vllm.distributed.device_communicators.pynccl import PyNcclCommunicator\n", "vllm-pynccl"),
    # legacy CUDA tensor types, by name and as a string
    ("import torch\nx = torch.cuda.FloatTensor(3)\n", "cuda-tensor-type"),
    ("import torch\ny = x.type(torch.cuda.HalfTensor)\n", "cuda-tensor-type"),
    ('import torch\ntorch.set_default_tensor_type("torch.cuda.FloatTensor")\n', "cuda-tensor-type"),
    ("from torch.cuda import LongTensor\ni = LongTensor([1])\n", "cuda-tensor-type"),
    ("import torch\nif isinstance(x, torch.cuda.BoolTensor):\n    pass\n", "cuda-tensor-type"),
    # Lightning's CUDA device count (litgpt's api.py and generate/sequentially.py)
    (
        "from lightning.fabric.accelerators import CUDAAccelerator\nn = CUDAAccelerator.auto_device_count()\n",
        "lightning-cuda-device-count",
    ),
    # an f-string with no placeholder is a plain string (guided-diffusion's dist_util.dev())
    ('import torch\nd = torch.device(f"cuda")\n', "cuda-device-string"),
    ('import torch\nd = f"cuda"\nx = t.to(d)\n', "cuda-device-string"),
    # the GPU launcher's variable, which TorchTPU never reads (guided-diffusion's setup_dist())
    ('import os\nos.environ["CUDA_VISIBLE_DEVICES"] = f"{rank % 8}"\n', "cuda-visible-devices"),
    ('import os\nn = len(os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(","))\n', "cuda-visible-devices"),
    ('import subprocess\nsubprocess.run(cmd, env={"CUDA_VISIBLE_DEVICES": "1"})\n', "cuda-visible-devices"),
    # device and precision a framework chooses (docs/data/migration_rules.frameworks.yml)
    ('import lightning as L\nt = L.Trainer(accelerator="tpu")\n', "lightning-tpu-accelerator"),
    ('from lightning.fabric import Fabric\nf = Fabric(accelerator="auto", devices=8)\n', "lightning-auto-accelerator"),
    ("from lightning.pytorch.strategies import XLAStrategy\ns = XLAStrategy()\n", "lightning-xla-strategy"),
    ("import torch\nx.cuda()\nsd = torch.hub.load_state_dict_from_url(url)\n", "load-without-map-location"),
    ("import lightning as L\nfabric = L.Fabric(devices=2, precision='bf16-mixed')\n", "lightning-default-accelerator"),
    ("from pytorch_lightning import Trainer\nt = Trainer(max_epochs=1)\n", "lightning-default-accelerator"),
    (
        "from lightning.fabric.strategies import FSDPStrategy\ns = FSDPStrategy(sharding_strategy='FULL')\n",
        "lightning-fsdp-strategy",
    ),
    ('from transformers import TrainingArguments\na = TrainingArguments("o", fp16=True)\n', "trainer-fp16"),
    (
        "import transformers\na = transformers.TrainingArguments(output_dir='o', torch_compile=True)\n",
        "trainer-torch-compile",
    ),
    ('from accelerate import Accelerator\nacc = Accelerator(mixed_precision="fp16")\n', "accelerate-fp16"),
    ('from transformers import AutoModel\nm = AutoModel.from_pretrained("x", load_in_8bit=True)\n', "load-in-8bit"),
    ('from transformers import AutoModel\nm = AutoModel.from_pretrained("x", load_in_4bit=True)\n', "load-in-4bit"),
    ('from kernels import get_kernel\nk = get_kernel("org/flash")\n', "kernels-get-kernel"),
    (
        "from torch.nn.attention.flex_attention import flex_attention\ny = flex_attention(q, k, v)\n",
        "flex-attention-call",
    ),
    # device tests written the other way round (kb.scan.scandevtest)
    (
        'import torch\ndef f(x):\n    if x.device.type == "cpu":\n        return x * 2\n    return ext.forward_cuda(x)\n',
        "cpu-else-cuda",
    ),
    (
        'import torch\ndef f(x):\n    if x.device.type != "cpu":\n        torch.cuda.synchronize()\n    return x\n',
        "cpu-else-cuda",
    ),
    (
        "import torch\ndef f(x):\n    if x.is_cuda:\n        return fast_norm(x)\n    return slow_norm(x)\n",
        "is-cuda-test",
    ),
    # CUDA code under names the scanner did not know
    ('from torch.utils.cpp_extension import load\next = load("ops", sources=["ops.cpp", "k.cu"])\n', "cuda-sources"),
    (
        'from torch.utils import cpp_extension\next = cpp_extension.load_inline("x", src, with_cuda=True)\n',
        "cuda-sources",
    ),
    ('import subprocess\nout = subprocess.check_output(["nvidia-smi", "-L"])\n', "nvidia-smi"),
    ('import os\nos.system("nvidia-smi --query-gpu=name --format=csv")\n', "nvidia-smi"),
    # collectives tpu_dist does not implement (the distributed page's table)
    ("import torch.distributed as dist\ndist.reduce(t, dst=0)\n", "dist-reduce"),
    ("import torch.distributed as dist\ndist.all_reduce_coalesced(ts)\n", "dist-all-reduce-coalesced"),
    ("import torch.distributed as dist\ndist.all_gather_coalesced(out, ts)\n", "dist-all-gather-coalesced"),
    ("import torch.distributed as dist\ndist.monitored_barrier()\n", "dist-monitored-barrier"),
    ("import torch.distributed as dist\ndist.all_reduce(t, op=dist.ReduceOp.PREMUL_SUM)\n", "premul-sum"),
]


@pytest.mark.parametrize("code, rule", CLASSES)
def test_each_class_is_found(real, code, rule):
    assert rule in rules_at(real, code)


def test_a_legacy_tensor_type_is_reported_once_instead_of_torch_cuda_star(real):
    assert found(real, "import torch\nx = torch.cuda.FloatTensor(2).zero_()\n") == [
        (2, "cuda-tensor-type", "must-change")
    ]


def test_the_narrowest_catch_all_rule_speaks_alone(real):
    """torch.cuda.amp.* and torch.cuda.* both match an autocast call (dinov2): the narrower one speaks."""
    assert found(real, "import torch\nwith torch.cuda.amp.autocast(dtype=d):\n    pass\n") == [
        (2, "cuda-amp-calls", "must-change")
    ]


def test_a_keyword_rule_speaks_for_its_literal_once(real):
    """accelerator="cuda" and device_types="cuda" are one root cause each, not a device string too."""
    assert found(real, 'import lightning as L\nt = L.Trainer(accelerator="cuda")\n') == [
        (2, "lightning-gpu", "must-change")
    ]
    code = 'import torch\n@torch.library.custom_op("a::f", mutates_args=(), device_types="cuda")\ndef f(x): ...\n'
    assert found(real, code) == [(2, "custom-op-cuda-only", "must-change")]


def test_a_per_device_backend_string_is_a_backend_not_a_device(real):
    """ "cuda:nccl,cpu:gloo" (modded-nanogpt) names backends; "cuda:0" and "cuda:{}" name devices."""
    code = 'import torch.distributed as dist\ndist.init_process_group(backend="cuda:nccl,cpu:gloo")\n'
    assert rules_at(real, code) == {"nccl-backend"}
    assert rules_at(real, 'd = "cuda:0"\n') == {"cuda-device-string"}
    for built in ('e = "cuda:{}".format(r)\n', 'f = "cuda:" + str(r)\n', 'g = "cuda:%d" % r\n'):
        assert rules_at(real, built) & {"cuda-device-string", "cuda-fstring-device"}, built


@pytest.mark.parametrize(
    "code",
    [
        "model.to(device)\nmodel.to(0)\n",  # no rank in it
        "DDP(m, device_ids=[0])\n",  # the process's own device
        # the process's own device, whatever the accelerator: 0 in every TorchTPU process
        "import torch\ntorch.distributed.barrier(device_ids=[torch.accelerator.current_device_index()])\n",
        "import torch\ndev = torch.device(device_type, device_module.current_device())\n",
        'label = "cuda cores"\nprint("nccl is fast")\n',  # text, not a device or a backend
        '"""Runs on cuda."""\n',  # a docstring
        'if device.type != "cpu":\n    pass\n',  # the device-agnostic test
        # names that start with cuda but are no device (torchtitan's compile passes)
        'if "cudagraph_pass" not in disabled:\n    pass\n',
        'if name.startswith("cudagraph"):\n    pass\n',
        'ok = kind == "cuda_graph"\n',
        "import flash_attention_tpu\nimport apexlib\n",  # other packages
        "trainer = Trainer(accelerator='cpu')\n",
        "from transformers import Trainer\nt = Trainer(model=m, args=a)\n",  # Hugging Face's, not Lightning's
        "import lightning as L\nf = L.Fabric(**cfg)\n",  # the accelerator may be in cfg
        "import torch\ny = torch._scaled_mm(a, b, use_fast_accum=False)\n",  # the TPU's own setting
        'import torch\n@torch.library.custom_op("a::f", mutates_args=())\ndef f(x): ...\n',  # every device
        'import torch\ntorch.set_default_tensor_type("torch.FloatTensor")\nt = "torch.cuda.Tensors"\n',  # CPU, or text
        '"""Set CUDA_VISIBLE_DEVICES first."""\nos.environ["TPU_VISIBLE_DEVICES"] = "0"\n',  # a docstring; TPU's
        'd = f"cuda{{0}}"\nlabel = f"cuda {n}"\n',  # text that only starts like a device
        "n = fabric.accelerator.auto_device_count()\n",  # whatever accelerator Fabric chose
        # the TPU forms of the framework settings
        'from transformers import TrainingArguments\na = TrainingArguments("o", bf16=True, fp16=False)\n',
        'from accelerate import Accelerator\nacc = Accelerator(mixed_precision="bf16")\n',
        "import torch.distributed as dist\ndist.all_reduce(t, op=dist.ReduceOp.AVG)\n",
        "m = AutoModel.from_pretrained('x', load_in_8bit=False)\n",
        "m = AutoModel.from_pretrained('x', device_map={'': 0})\nn = AutoModel.from_pretrained('x', device_map='auto')\n",
        'import os\nrank = int(os.environ["RANK"])\nprint(int(os.environ["WORLD_SIZE"]))\n',
        'from torch.utils.cpp_extension import load\next = load("ops", sources=["ops.cpp"])\n',  # C++ only
        'import subprocess\nsubprocess.run(["echo", "nvidia-smi is absent"])\n',
        # a CPU test whose other path is plain torch; an is_cuda guard in front of CUDA-only code
        'import torch\ndef f(x):\n    if x.device.type == "cpu":\n        return x * 2\n    return x.exp()\n',
        "import torch\ndef f(x):\n    if x.is_cuda:\n        return ext.forward_cuda(x)\n    return x\n",
    ],
)
def test_clean_code_is_not_flagged(real, code):
    must = [f for f in found(real, code) if f[2] == "must-change"]
    assert must == []


def test_crashes_wrong_devices_and_lost_features_are_must_change(real):
    code = "import torch\nimport torch.distributed as dist\nx.to(local_rank)\ntorch.cuda.ipc_collect()\nprobe = torch.cuda.is_bf16_supported()\n"
    assert {sev for _, _, sev in found(real, code)} == {"must-change"}
    review = "import torch\nfor b in loader:\n    total += b.item()\nidx = t.nonzero()\n"
    assert {sev for _, _, sev in found(real, review)} == {"review"}


def test_one_finding_per_root_cause_at_the_line_to_change(real):
    code = textwrap.dedent("""\
        import torch
        device = "cuda"
        a = torch.zeros(2, device=device)
        b = a.to(device)
        model.to(device)
        with torch.autocast(device_type=device):
            pass
        """)
    findings = [f for f in scan_source(code, "t.py", real) if f.rule == "cuda-device-string"]
    assert [(f.line, f.related) for f in findings] == [(2, ((3, 5), (4, 5), (5, 1), (6, 6)))]


def test_uses_are_traced_through_argparse_defaults_and_torch_device(real):
    code = textwrap.dedent("""\
        import argparse
        import torch
        import torch.distributed as dist
        p = argparse.ArgumentParser()
        p.add_argument("--dist-backend", default="nccl")
        p.add_argument("-d", "--device", default="cuda")
        args = p.parse_args()
        dist.init_process_group(backend=args.dist_backend)
        dev = torch.device(args.device)
        x = torch.load("ckpt.pt", map_location=dev)
        """)
    related = {f.line: f.related for f in scan_source(code, "t.py", real)}
    assert related[5] == ((8, 1),)  # the backend's default, used by init_process_group
    assert related[6] == ((9, 7), (10, 5))  # the device default: torch.device, and torch.load through it


def test_uses_are_traced_through_an_attribute_set_in_the_same_function(real):
    """MAE's init_distributed_mode: args.dist_backend = 'nccl', then init_process_group(backend=args.dist_backend)."""
    code = textwrap.dedent("""\
        import torch
        import torch.distributed as dist
        def init(args):
            args.dist_backend = "nccl"
            dist.init_process_group(backend=args.dist_backend)
            self.device = "cuda"
            x.to(self.device)
        """)
    related = {f.line: f.related for f in scan_source(code, "t.py", real)}
    assert related[4] == ((5, 5),) and related[6] == ((7, 5),)


def test_a_rank_device_name_is_one_finding_with_its_uses(real):
    code = 'import torch\ndevice = torch.device(f"{kind}:{rank}")\nm.to_empty(device=device)\nx = torch.ones(2, device=device)\n'
    (f,) = [f for f in scan_source(code, "t.py", real) if f.rule == "rank-device-index"]
    assert (f.line, f.related) == (2, ((3, 1), (4, 5)))


def test_a_device_index_computed_from_the_rank_is_one_finding_where_it_is_computed(real):
    code = textwrap.dedent("""\
        import torch
        def main(rank):
            device = rank % torch.cuda.device_count()
            model.to(device)
            x = torch.ones(2, device=device)
            work(device)
        def work(where):
            return torch.zeros(1, device=where)
        """)
    (f,) = [f for f in scan_source(code, "t.py", real) if f.rule == "rank-device-index"]
    assert (f.line, f.column, f.related) == (3, 14, ((4, 5), (5, 9), (6, 10), (8, 12)))  # 6: passed on


def test_a_rank_passed_to_a_parameter_named_for_it_is_reported_where_it_is_used(real):
    code = "import torch\ndef demo(rank):\n    model.to(rank)\ndef main(rank):\n    demo(rank)\n"
    found = [(f.line, f.related) for f in scan_source(code, "t.py", real) if f.rule == "rank-device-index"]
    assert found == [(3, ((5, 5),))]  # the call of demo() fails inside it: a place (round twenty-two)


def test_a_device_a_function_of_the_file_returns_is_followed_to_its_uses(real):
    code = textwrap.dedent("""\
        import torch
        def pick(want=""):
            if want == "cpu":
                return torch.device("cpu")
            arg = "cuda:0"
            return torch.device(arg)
        def run(x):
            device = pick()
            return x.to(device)
        """)
    (f,) = [f for f in scan_source(code, "t.py", real) if f.rule == "cuda-device-string"]
    assert (f.line, f.related) == (5, ((6, 12), (9, 12)))


def test_a_device_set_on_self_in_one_method_is_followed_to_the_others(real):
    code = textwrap.dedent("""\
        import torch
        class Trainer:
            def __init__(self, config):
                self.device = "cuda" if torch.cuda.is_available() else "cpu"
            def run(self, batch):
                return [t.to(self.device) for t in batch]
        def other(obj, t):
            return t.to(obj.device)
        """)
    (f,) = [f for f in scan_source(code, "t.py", real) if f.rule == "cuda-device-string"]
    assert (f.line, f.related) == (4, ((6, 17),))  # obj.device in a plain function is no method's self


def test_a_cuda_literal_taken_apart_by_a_string_method_is_no_device(real):
    code = 'import torch\nname = str(device).replace("cuda:", "")\nparts = spec.split("cuda")\ndevice = "cuda"\n'
    code += 'kind = props.type.replace("hip", "cuda")\n'  # what replace() puts in may become a device
    assert [f.line for f in scan_source(code, "t.py", real) if f.rule == "cuda-device-string"] == [4, 5]


def test_torch_load_with_map_location_or_without_cuda_is_fine(real):
    assert "load-without-map-location" not in rules_at(
        real, "import torch\nx.cuda()\ntorch.load(p, map_location='cpu')\n"
    )
    assert "load-without-map-location" not in rules_at(real, "import torch\ntorch.load(p)\n")  # nothing here uses CUDA


def test_noqa_silences_a_line(real):
    code = "import torch\ntorch.cuda.synchronize()  # noqa: TPU109\ntorch.cuda.synchronize()  # noqa\ntorch.cuda.synchronize()  # noqa: E501\n"
    # another tool's code, or a bare noqa (written for other linters), silences nothing here
    assert [line for line, _, _ in found(real, code)] == [3, 4]
    assert silenced("x  # NOQA: tpu109, TPU101", "TPU101") and not silenced("x  # noqa: TPU1", "TPU101")


def test_codes_are_in_every_format(real):
    findings = scan_source("import torch\ndevice = 'cuda'\nx.to(device)\n", "t.py", real)
    assert concise_report(findings) == "t.py:2:10: TPU102 " + findings[0].message
    sarif = json.loads(sarif_report(findings, [], real.rules))
    (result,) = sarif["runs"][0]["results"]
    assert result["properties"]["code"] == "TPU102"
    assert result["relatedLocations"][0]["physicalLocation"]["region"] == {"startLine": 3, "startColumn": 1}
    driver = sarif["runs"][0]["tool"]["driver"]["rules"]
    assert all(r["name"].startswith("TPU") for r in driver)


def test_every_rule_has_a_unique_code(real):
    codes = [r.code for r in real.rules]
    assert len(codes) == len(set(codes)) and all(c.startswith("TPU") for c in codes)


# Invisible characters the scan report once let through (it had an escaper of its own), and one it
# alone caught: all are written as escapes now, by kb.core.errors' escape_text.
HIDDEN = "\u00ad\u180e\ufff9\u2065\U000e0100"


def test_terminal_text_is_escaped(real):
    (finding,) = scan_source("import torch\ntorch.cuda.synchronize()  # é ok\n", "t.py", real)
    path, snippet = "evil\x1b[31m\u202e" + HIDDEN + ".py", "x\x07" + HIDDEN + " é"
    findings = [finding._replace(path=path, snippet=snippet, elsewhere=((path, 3, 1),))]
    shown = "\\xad\\u180e\\ufff9\\u2065\\U000e0100"
    for report in (text_report(findings, [], 1), concise_report(findings)):
        assert "evil\\x1b[31m\\u202e" + shown + ".py" in report
        assert all(line.isprintable() for line in report.split("\n"))
        assert not any(ch in report for ch in HIDDEN + "\x1b\x07\u202e")
    assert "x\\x07" + shown + " é" in text_report(findings, [], 1)  # visible text stays as it is


def test_control_characters_in_source_and_names_never_reach_the_terminal(tmp_path):
    bad = tmp_path / "evil\x1b[2Jname.py"
    bad.write_text("import torch\nx = '\x1b[2J'; torch.cuda.synchronize()\n")
    result = subprocess.run(
        [sys.executable, "-m", "kb", "--root", str(ROOT), "scan", str(tmp_path)],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "\x1b" not in result.stdout + result.stderr


def test_the_concise_format(tmp_path):
    (tmp_path / "t.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    result = subprocess.run(
        [sys.executable, "-m", "kb", "--root", str(ROOT), "scan", "--format", "concise", "t.py"],
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.splitlines() == [
        "t.py:2:1: TPU109 `torch.cuda.synchronize()` waits for GPU work only: on a TPU host, whose torch is the CPU build, it raises."
    ]
    assert result.returncode == 1


def _pyproject(tmp_path: Path, body: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[project]\nname = 'x'\n\n[tool.torchtpu-scan]\n{body}")


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kb", "--root", str(ROOT), "scan", "--format", "concise", *args],
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_settings_come_from_the_scanned_repositorys_pyproject(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("import torch\ntorch.cuda.synchronize()\nx = t.nonzero()\n")
    (tmp_path / "src" / "skip.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    _pyproject(tmp_path, 'exclude = ["skip.py"]\nignore = ["TPU1"]\nfail-on = "review"\n')
    result = _run(tmp_path, "src")
    assert result.stdout.splitlines() == [
        "src/a.py:3:5: TPU801 `.nonzero()` returns a data-dependent shape; each new count compiles a new graph."
    ] or [line.split(" ")[1] for line in result.stdout.splitlines()] == ["TPU801"]
    assert result.returncode == 1  # fail-on review
    assert _run(tmp_path, "--fail-on", "never", "src").returncode == 0
    only = _run(tmp_path, "--select", "TPU109", "--ignore", "", "src")
    assert [line.split(" ")[1] for line in only.stdout.splitlines()] == ["TPU109"]


@pytest.mark.parametrize(
    "body, line, message",
    [
        ("select = [\n", 5, "is not valid TOML"),
        ("colour = 'red'\n", 5, "unknown key 'colour'"),
        ("select = 'TPU1'\n", 5, "tool.torchtpu-scan.select: expected a list of strings"),
        ("ignore = ['E501']\n", 5, "'E501' is not a rule code"),
        ("fail-on = 'sometimes'\n", 5, "fail-on: 'sometimes'"),
        ("site-url = 'http://x'\n", 5, "expected an https:// URL"),
    ],
)
def test_bad_settings_name_the_file_and_line(tmp_path, body, line, message):
    (tmp_path / "a.py").write_text("x = 1\n")
    _pyproject(tmp_path, body)
    result = _run(tmp_path, "a.py")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    (first,) = [ln for ln in result.stderr.splitlines() if ln.startswith(str(tmp_path / "pyproject.toml"))]
    assert first.startswith(f"{tmp_path / 'pyproject.toml'}:{line}: ") and message in first, result.stderr


def test_site_url_links_findings_to_the_handbook(tmp_path):
    (tmp_path / "a.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    result = subprocess.run(
        [sys.executable, "-m", "kb", "--root", str(ROOT), "scan", "--format", "json", "a.py"],
        cwd=tmp_path,
        env={**ENV, "TORCHTPU_SCAN_SITE_URL": "https://wiki.example.com/tpu/"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    (f,) = json.loads(result.stdout)["findings"]
    assert f["link"] == "https://wiki.example.com/tpu/migrate/device-code/#legacy-device-apis"


def test_a_bad_code_on_the_command_line_is_a_usage_error(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    result = _run(tmp_path, "--select", "E501", "a.py")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "--select 'E501': not a rule code (expected TPU and up to 3 digits)" in result.stderr


def test_a_key_of_a_returned_dict_holds_only_that_entry(real: RuleSet):
    """result = setup(); result["device"]: what setup() returns for that key (a dict literal or
    dict(...)); another key's value is not a use of the device."""
    code = textwrap.dedent(
        """\
        import torch
        def setup(device="cuda"):
            return {"device": device, "rank": 0}
        def other():
            return dict(backend="nccl", size=1)
        result = setup()
        x.to(result["device"])
        y.to(result["rank"])
        torch.distributed.init_process_group(backend=other()["backend"])
        """
    )
    related = {f.line: f.related for f in scan_source(code, "t.py", real)}
    assert related[2] == ((7, 1),)  # x.to(result["device"]); not y.to(result["rank"])
    assert related[5] == ((9, 1),)  # other()["backend"], looked up on the call itself


def test_the_uses_of_a_name_a_reported_import_binds_are_its_places(real: RuleSet):
    """Swin-Transformer: 'from apex.optimizers import FusedAdam' is the line to change, and each
    FusedAdam(...) and amp.normalization.FusedLayerNorm is one of its places; a use that is a finding of
    its own (torch.cuda.amp.autocast()) stays one, and a name no reported import bound is no place. (Swin
    imports it in a try that carries on without it: test_scan_round13 has that optional import.)"""
    code = textwrap.dedent(
        """\
        import torch
        from apex.optimizers import FusedAdam, FusedLAMB

        import apex as amp
        import torch.cuda.amp as tamp
        opt = FusedAdam(params) if fused else FusedLAMB(params)
        norm = amp.normalization.FusedLayerNorm
        with tamp.autocast():
            other = Adam(params)
        """
    )
    related = {(f.line, f.rule): f.related for f in scan_source(code, "t.py", real)}
    assert related[(2, "apex-import")] == ((6, 7), (6, 39))
    assert related[(4, "apex-import")] == ((7, 8),)
    assert related[(8, "cuda-amp-calls")] == () and related[(5, "cuda-amp")] == ()  # its own finding


def test_a_rank_index_kept_on_an_attribute_is_reported_where_it_is_computed(real: RuleSet):
    """deit: args.gpu = args.rank % torch.cuda.device_count(), then torch.cuda.set_device(args.gpu);
    --fix renames device_count(), and the line is still wrong: the rank index is its own finding."""
    code = textwrap.dedent(
        """\
        import torch
        def init(args):
            args.gpu = args.rank % torch.cuda.device_count()
            torch.cuda.set_device(args.gpu)
            torch.accelerator.set_device_index(args.gpu)
        """
    )
    places = {(f.line, f.rule): f.related for f in scan_source(code, "t.py", real)}
    assert places[(3, "rank-device-index")] == ((4, 5), (5, 5))


def test_a_name_a_reported_import_binds_has_places_only_in_the_module_the_rule_names(real: RuleSet):
    """'import torch.cuda.amp' binds torch: torch.zeros() is no place of that import's finding."""
    code = "import torch.cuda.amp\nx = torch.zeros(2)\ny = torch.nn.Linear(2, 2)\n"
    (finding,) = scan_source(code, "t.py", real)
    assert (finding.line, finding.related) == (1, ())


def test_code_a_true_not_cuda_or_skips_is_review_and_reported_so(real):
    """``not torch.cuda.is_available() or X``: on a TPU host the ``or`` stops at the true ``not``, so X
    never runs there and the whole is True (bf16 kept); with ``and`` the probe's False loses bf16."""
    code = (
        "import torch\n"
        "use_bf16 = not torch.cuda.is_available() or torch.cuda.is_bf16_supported()\n"
        "dtype = torch.bfloat16 if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else torch.float32\n"
    )
    findings = scan_source(code, "t.py", real)
    severity = {(f.line, f.rule): f.severity for f in findings}
    assert severity[(2, "cuda-bf16-probe")] == "review"
    assert severity[(3, "cuda-bf16-probe")] == "must-change"
    rows = json.loads(json_report(findings, [], 1))["findings"]
    assert [(r["line"], r["severity"]) for r in rows if r["rule"] == "cuda-bf16-probe"] == [
        (2, "review"),
        (3, "must-change"),
    ]


def test_an_argument_is_reported_on_its_own_line_in_a_call_over_several_lines(real):
    """The part to edit, not the statement's first line: a keyword a rule names, and device_ids."""
    code = (
        "import torch\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "ddp = DDP(\n"
        "    model,\n"
        "    device_ids=[args.local_rank],\n"
        ")\n"
        "y = torch._scaled_mm(\n"
        "    a, b,\n"
        "    use_fast_accum=True,\n"
        ")\n"
    )
    at = {(rule, line) for line, rule, _ in found(real, code)}
    assert ("rank-device-index", 5) in at and ("scaled-mm-fast-accum", 9) in at, at


def test_a_method_on_a_receiver_over_several_lines_is_reported_and_fixed_at_the_method(real):
    """``).cuda()`` on the statement's last line: the finding is there, its snippet shows it, and
    --fix rewrites that call (the fixer finds it at the place the scan reports)."""
    code = "import torch\nmodel = torch.nn.Sequential(\n    torch.nn.ReLU(),\n).cuda()\nx = (y\n     .\n     cuda())\n"
    got = [(f.line, f.column, f.snippet) for f in scan_source(code, "t.py", real) if f.rule == "cuda-method"]
    assert got == [(4, 2, ".cuda()"), (7, 6, "cuda()")], got
    fixed, count = fix_text(code, fixes_for(scan_source(code, "t.py", real), real.by_id()))
    assert count == 2 and ".cuda" not in fixed and "cuda()" not in fixed, fixed
    assert [f.rule for f in scan_source(fixed, "t.py", real) if f.severity == "must-change"] == []


def test_an_is_cuda_guard_of_cuda_only_code_is_not_a_device_test_finding(real):
    code = "import torch\ndef f(x):\n    if x.is_cuda:\n        return ext.forward_cuda(x)\n    return x\n"
    assert "is-cuda-test" not in rules_at(real, code)


def test_noise_a_host_read_every_n_steps_or_on_the_way_to_an_error_is_no_item_in_loop(real):
    code = (
        "import torch\n"
        "for step in range(100):\n"
        "    loss = model(x)\n"
        "    if step % 10 == 0:\n"
        "        print(loss.item())\n"
        "    if not ok:\n"
        "        raise ValueError(f'bad loss {loss.item()}')\n"
        "    total += loss.item()\n"
    )
    assert [line for line, rule, _ in found(real, code) if rule == "item-in-loop"] == [8]


def test_noise_a_cuda_version_only_printed_or_logged_is_info(real):
    code = (
        "import torch\n"
        "print(f'cuda {torch.version.cuda}')\n"
        "logger.info('built with %s', torch.version.cuda)\n"
        "fused = torch.version.cuda is not None\n"
    )
    severity = {line: sev for line, rule, sev in found(real, code) if rule == "cuda-version-probe"}
    assert severity == {2: "info", 3: "info", 4: "must-change"}


def test_a_checkpoint_fetched_from_a_url_with_a_map_location_is_fine(real):
    code = "import torch\nx.cuda()\na = torch.hub.load_state_dict_from_url(u, None, 'cpu')\n"
    code += "b = torch.hub.load_state_dict_from_url(u, map_location='cpu')\nc = torch.hub.load_state_dict_from_url(u)\n"
    assert [line for line, rule, _ in found(real, code) if rule == "load-without-map-location"] == [5]


def test_a_device_count_that_picks_a_device_by_rank_is_left_to_a_person(real):
    """Issue 34, no half-fixes: ``rank % torch.accelerator.device_count()`` would still be a per-rank index."""
    code = "import torch\nd = rank % torch.cuda.device_count()\nn = torch.cuda.device_count()\n"
    got = {(f.line, f.manual) for f in scan_source(code, "t.py", real) if f.rule == "cuda-device-count"}
    assert got == {(2, True), (3, False)}, got
    fixed, count = fix_text(code, fixes_for(scan_source(code, "t.py", real), real.by_id()))
    assert count == 1 and "rank % torch.cuda.device_count()" in fixed, fixed


def test_noise_a_cuda_test_that_guards_only_cuda_calls_is_review(real):
    """Issue 34, noise: ``if device.type == "cuda": torch.cuda.synchronize()`` skips a CUDA call on a
    TPU, which is right; a test that guards anything else, or has an else, stays must-change."""
    code = (
        'import torch\nif device.type == "cuda":\n    torch.cuda.synchronize()\n'
        'if device.type == "cuda":\n    torch.cuda.synchronize()\n    x = 1\npin = device.type == "cuda"\n'
    )
    got = [(line, sev) for line, rule, sev in found(real, code) if rule == "cuda-compare"]
    assert got == [(2, "review"), (4, "must-change"), (7, "must-change")], got


def test_the_uses_of_a_cuda_event_are_places_of_its_finding(real):
    code = "import torch\ndef step():\n    t0 = torch.cuda.Event(enable_timing=True)\n    t0.record()\n    return t0\n"
    (f,) = [f for f in scan_source(code, "t.py", real) if f.rule == "cuda-events"]
    assert (f.line, f.related) == (3, ((4, 5),)), f  # t0.record(); a bare name is no use of the object
