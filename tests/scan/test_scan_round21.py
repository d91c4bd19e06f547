"""Issue 34, round twenty-one (ConvNeXt, taming-transformers, exllamav2 and Qwen, labelled blind): an
extension imported prebuilt or else built from CUDA sources, the calls of a module a from-import binds,
a function called through ``import module``, a rank-indexed ``device_map`` chosen by a condition, and
``torch._six``."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.scan.scan import scan_source
from kb.scan.scanrules import RuleSet
from scantree import project_rules, scan_tree

# exllamav2's ext.py: the prebuilt extension if it imports, else the same one built from .cu sources
EXT = """\
import torch
from torch.utils.cpp_extension import load

build_jit = False
try:
    import fast_ext
except ModuleNotFoundError:
    build_jit = True

if build_jit:
    fast_ext = load(name="fast_ext", sources=["ext.cpp", "cuda/gemm.cu"])

ext_c = fast_ext

def make_matrix(w):
    return ext_c.make_q_matrix(w)
"""


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return project_rules()


def test_a_prebuilt_import_with_a_cuda_build_behind_it_is_an_extension(real: RuleSet):
    """The import in the ``try`` is the prebuilt form of the extension the ``if`` builds from ``.cu``
    sources: it is reported, and a call through its alias (``ext_c``) is one of its places."""
    findings = scan_source(EXT, "ext.py", real)
    (imported,) = [f for f in findings if f.rule == "cuda-extension-import"]
    assert imported.line == 6
    assert (16, 12) in imported.related
    assert any(f.rule == "cuda-sources" and f.line == 11 for f in findings)


def test_without_cuda_sources_the_same_try_is_an_optional_import(real: RuleSet):
    """A C++-only build names no ``.cu`` source: the import is optional, as any with a fallback."""
    code = EXT.replace('"cuda/gemm.cu"', '"more.cpp"')
    assert [f for f in scan_source(code, "ext.py", real) if f.rule == "cuda-extension-import"] == []


def test_a_module_that_builds_its_extension_when_the_import_fails_is_cuda_only(tmp_path: Path, real: RuleSet):
    """On a TPU host the prebuilt import fails and the ``.cu`` build runs as the module loads: each import
    of it elsewhere is reported, and ``ext_c.op(...)`` calls in that file are the finding's places."""
    files = {
        "pkg/__init__.py": "",
        "pkg/ext.py": EXT,
        "pkg/model.py": "from pkg.ext import fast_ext as ext_c\n\ndef forward(x):\n    return ext_c.gemm(x)\n",
    }
    findings = scan_tree(tmp_path, real, files)
    (local,) = [f for f in findings if f.rule == "local-cuda-module"]
    assert Path(local.path).name == "model.py" and local.line == 1
    assert local.related == ((4, 12),)


def test_no_fallback_build_leaves_the_module_importable(tmp_path: Path, real: RuleSet):
    """The build under a flag no ``except`` sets is a choice, not what the module does on load."""
    code = EXT.replace("    build_jit = True\n", "    pass\n").replace("build_jit = False", "build_jit = True")
    files = {"pkg/__init__.py": "", "pkg/ext.py": code, "pkg/model.py": "from pkg.ext import fast_ext as ext_c\n"}
    assert [f for f in scan_tree(tmp_path, real, files) if f.rule == "local-cuda-module"] == []


def test_a_function_called_through_its_module_is_a_place_of_its_failure(tmp_path: Path, real: RuleSet):
    """ConvNeXt: ``utils.init_distributed_mode(args)`` runs ``torch.cuda.set_device`` in utils.py; the
    call in main.py is a place of that finding, as a from-imported call is. A standard-library module
    called the same way (``os.getenv``) is never looked up."""
    files = {
        "utils.py": """\
import os
import torch

def init_distributed_mode(args):
    if "RANK" not in os.environ:
        return
    torch.cuda.set_device(args.gpu)
""",
        "main.py": "import os\nimport utils\n\ndef main(args):\n    utils.init_distributed_mode(args)\n    os.getenv('X')\n",
    }
    findings = scan_tree(tmp_path, real, files)
    (device,) = [f for f in findings if f.rule == "cuda-current-or-set-device"]
    assert [(Path(r[0]).name, r[1]) for r in device.elsewhere] == [("main.py", 5)]


def test_a_rank_device_map_chosen_by_a_condition_is_reported(real: RuleSet):
    """Qwen's finetune.py: ``{"": LOCAL_RANK} if ddp else "auto"``, then ``device_map=device_map``."""
    code = """\
import os
import transformers

def load(ddp):
    device_map = {"": int(os.environ.get("LOCAL_RANK") or 0)} if ddp else "auto"
    return transformers.AutoModelForCausalLM.from_pretrained("m", device_map=device_map)
"""
    (found,) = [f for f in scan_source(code, "finetune.py", real) if f.rule == "rank-device-index"]
    assert (found.line, found.column) == (5, 18)
    assert found.related == ((6, 67),)


def test_torch_six_is_reported_and_math_inf_is_not(real: RuleSet):
    code = "from torch._six import inf\nimport torch._six as six\nfrom math import inf as INF\n"
    found = [(f.line, f.code) for f in scan_source(code, "utils.py", real)]
    assert found == [(1, "TPU654"), (2, "TPU654")]
