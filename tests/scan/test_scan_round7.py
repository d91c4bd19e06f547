"""Issue 34, after round six: a device value handed to a class. The tuning split's misses held
uses of a ``cuda`` device that reach their place through a constructor (``Augment(..., device)``,
``Worker(device=args.device)``) and ``self.device`` set from ``__init__``'s parameter. Each is one
of the places of the finding where the value is written, and so is the call that hands it over."""

from __future__ import annotations

import textwrap

import pytest

from kb.scan.scan import scan_source
from kb.scan.scanrules import RuleSet
from scantree import project_rules, scan_tree


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return project_rules()


WORKER = """\
import argparse
import torch

class Worker:
    def __init__(self, path, device):
        self.device = device
        self.buf = torch.zeros(2, device=device)

    def step(self, x):
        return x.to(self.device)

class Quiet:
    def __init__(self, device):
        self.device = device

    def step(self, x):
        return x.to(self.device)

p = argparse.ArgumentParser()
p.add_argument("--device", default="cuda")
args = p.parse_args()
w = Worker("m", args.device)
q = Quiet("cpu")
"""


def test_a_device_handed_to_a_class_is_used_where_its_methods_use_it(real: RuleSet):
    found = [f for f in scan_source(WORKER, "t.py", real) if f.rule == "cuda-device-string"]
    assert [(f.line, f.column) for f in found] == [(20, 36)]
    # 7: the buffer, 10: step() through self.device, 22: the call that hands it over; never Quiet's 17
    assert [line for line, _ in found[0].related] == [7, 10, 22]


def test_a_class_of_another_file_is_followed_into_its_init(tmp_path, real: RuleSet):
    files = {
        "train.py": """\
            import torch
            from augment import Augment
            device = "cuda"
            aug = Augment(0.6, 500, device)
            other = Augment(0.6, 500, "cpu")
            """,
        "augment.py": """\
            import torch
            class Augment:
                def __init__(self, target, length, device):
                    self.buf = torch.tensor([0.0, 0.0], device=device)
                    self.device = device

                def tune(self, x):
                    return x.to(self.device)
            """,
    }
    (f,) = [f for f in scan_tree(tmp_path, real, files) if f.rule == "cuda-device-string"]
    assert (f.path, f.line) == ("train.py", 3)
    assert f.related == ((4, 25),)  # the call that hands it over
    assert f.elsewhere == (("augment.py", 4, 20), ("augment.py", 8, 16))


def test_a_keyword_only_init_parameter_is_matched_by_keyword(real: RuleSet):
    code = textwrap.dedent("""\
        import torch
        class M:
            def __init__(self, *, device):
                self.device = device
            def run(self, x):
                return x.to(self.device)
        M(device="cuda")
        M("cuda")
        """)
    found = {f.line: f.related for f in scan_source(code, "t.py", real) if f.rule == "cuda-device-string"}
    assert [line for line, _ in found[7]] == [6]  # by keyword: run() uses it
    assert found[8] == ()  # positional, to a keyword-only parameter: lands nowhere


# ---- a FlashAttention implementation asked of transformers -------------------------------------------------------

ATTN = """\
import argparse
from dataclasses import dataclass, field
from transformers import AutoModelForCausalLM

@dataclass
class Args:
    attn_implementation: str = field(default="flash_attention_2", metadata={"help": "which"})
    other: str = "flash_attention_2"

kw = {"torch_dtype": "bf16", "attn_implementation": "flash_attention_3"}
kw["attn_implementation"] = "flash_attention_2"
kw["attn_implementation"] = "sdpa"
impl = "flash_attention_2"
m = AutoModelForCausalLM.from_pretrained("m", attn_implementation=impl, **kw)
if impl == "flash_attention_2":
    pass
choices = ["eager", "sdpa", "flash_attention_2"]
p = argparse.ArgumentParser()
p.add_argument("--attn_implementation", type=str, default="flash_attention_2", choices=choices)
"""


def test_a_flash_attention_implementation_is_found_where_it_is_chosen(real: RuleSet):
    found = [(f.line, f.related) for f in scan_source(ATTN, "t.py", real) if f.rule == "hf-flash-attention"]
    # 7: a dataclass field's default, 10: a dict's entry, 11: a kwargs entry set, 13: a name then passed
    # (14), 19: an option's default; never the comparison (15) nor the list of choices (17)
    assert [line for line, _ in found] == [7, 10, 11, 13, 19]
    assert dict(found)[13] == ((14, 47),)  # the keyword it is passed by


def test_a_keyword_set_before_the_call_never_matches_a_rule_bound_to_a_call(real: RuleSet):
    """``TrainingArguments(fp16=True)`` is a rule on one call: ``{"fp16": True}`` alone is not it."""
    code = 'import transformers\nkw = {"fp16": True}\nkw["fp16"] = True\nargs = transformers.TrainingArguments(fp16=True)\n'
    assert [f.line for f in scan_source(code, "t.py", real) if f.rule == "trainer-fp16"] == [4]


# ---- a failure inside a function surfaces where the function is called ------------------------------------------

REACH = """\
import torch

def barrier():
    torch.distributed.barrier()
    torch.cuda.synchronize()

def save():
    barrier()

class Monitor:
    def peak(self):
        return torch.cuda.max_memory_allocated()

    def log(self):
        print(self.peak())

def quiet():
    return 1

class Other:
    def log(self):
        return self.peak()  # another class's method of that name

barrier()
save()
quiet()
"""


def test_a_failing_call_inside_a_function_is_met_where_the_function_is_called(real: RuleSet):
    found = {f.rule: f.related for f in scan_source(REACH, "t.py", real)}
    # 8: save() calls barrier(); 24, 25: the script calls barrier() and save() (through it)
    assert [line for line, _ in found["cuda-synchronize"]] == [8, 24, 25]
    assert [line for line, _ in found["cuda-memory-stats"]] == [15]  # self.peak() in its class only


# ---- a CUDA extension imported in a try block or a function -----------------------------------------------------

EXT = """\
import torch

try:
    import flash_attn_2_cuda
    V2 = True
except ImportError:
    try:
        import flash_attn_cuda
    except ImportError as e:
        raise ImportError("no FlashAttention") from e
try:
    import rotary_cuda
except ImportError:
    rotary_cuda = None

def attend(q):
    import fused_rotary_cuda
    from pkg.cuda_ops import fused_op
    return fused_rotary_cuda.fwd(q), flash_attn_2_cuda.varlen_fwd(q), fused_op(q)

def check():
    from transformers.utils import is_torch_cuda_available
    return is_torch_cuda_available()
"""


def test_an_extension_imported_in_a_try_block_or_a_function_is_reported(real: RuleSet):
    found = {f.line: f.related for f in scan_source(EXT, "t.py", real) if f.rule == "cuda-extension-import"}
    # 4, 8: the module's try blocks (12 is optional: its except binds a fallback); 17, 18: a function's,
    # by the module's name (as at the top); never 22, a function of a module whose name doesn't say CUDA
    assert sorted(found) == [4, 8, 17, 18]
    assert [line for line, _ in found[17]] == [19] and [line for line, _ in found[4]] == [19]


# ---- a keyword rule's value passed in through a parameter --------------------------------------------------------

FAST = """\
import torch

def matmul(a, b, sa, sb, use_fast_accum=False):
    return torch._scaled_mm(
        a, b, scale_a=sa, scale_b=sb,
        use_fast_accum=use_fast_accum,
    )

def forward(a, b, sa, sb):
    return matmul(a, b, sa, sb, use_fast_accum=True)

def backward(a, b, sa, sb):
    return matmul(a, b, sa, sb, use_fast_accum=False)
"""


def test_a_keyword_value_a_call_passes_to_a_parameter_is_found_where_it_is_written(real: RuleSet):
    found = [(f.line, f.related) for f in scan_source(FAST, "t.py", real) if f.rule == "scaled-mm-fast-accum"]
    assert found == [(10, ((6, 9),))]  # forward's True, used at the keyword; never backward's False


# ---- a "cuda" fallback for a torch without torch.accelerator ----------------------------------------------------

FALLBACK = """\
import torch

kind = torch.accelerator.current_accelerator().type if hasattr(torch, "accelerator") else "cuda"
x = torch.ones(2).to(kind)
if hasattr(torch, "accelerator"):
    dev = torch.accelerator.current_accelerator()
else:
    dev = torch.device("cuda")
other = "mps" if hasattr(torch, "mps") else "cuda"
"""


def test_a_cuda_fallback_for_a_torch_without_accelerator_is_never_reported(real: RuleSet):
    """Every TorchTPU host's torch has ``torch.accelerator``: the other branch never runs there."""
    found = [(f.line, f.rule) for f in scan_source(FALLBACK, "t.py", real) if f.severity == "must-change"]
    assert found == [(9, "cuda-device-string")]  # only the test that is not torch.accelerator's


def test_a_flag_given_as_a_comparison_is_true_in_some_runs(real: RuleSet):
    code = (
        "from transformers import AutoModelForCausalLM\n"
        "m = AutoModelForCausalLM.from_pretrained(p, load_in_4bit=args.bits == 4, load_in_8bit=False)\n"
    )
    assert [f.rule for f in scan_source(code, "t.py", real) if f.severity == "must-change"] == ["load-in-4bit"]
