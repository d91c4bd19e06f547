"""Issue 34, round six: what four more blind-labelled repositories showed missing (open-instruct,
LLaMA-Factory, Liger-Kernel, unsloth), each on small code written for the test: Ray's ``GPU``
resource, Triton kernels and their launches, a function whose name says CUDA taken for a compiled
extension, and a package's rule firing inside that package's own code."""

from __future__ import annotations

import pytest

from kb.scan.scan import scan_source
from kb.scan.scanrules import RuleSet
from scantree import places, project_rules, scan_tree


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return project_rules()


# ---- Ray's GPU resource ---------------------------------------------------------------------------------------

RAY = """\
import ray
from ray.util.placement_group import placement_group

@ray.remote(num_gpus=1)
class Learner:
    pass

@ray.remote(num_gpus=0)
class Judge:
    pass

pg = placement_group([{"GPU": 1, "CPU": 4}, {"GPU": 0, "CPU": 1}])
free = ray.available_resources().get("GPU", 0)
total = ray.cluster_resources()["GPU"]
tpus = ray.cluster_resources()["TPU"]
"""


def test_every_request_or_read_of_rays_gpu_resource_is_must_change(real):
    assert places(real, RAY, "ray-gpu-resource") == [(4, 13), (12, 24), (13, 8), (14, 9)]


PLAN = """\
def plan(per_node, cluster_resources, stats, flags):
    bundles = [{"GPU": n, "CPU": 4 * n} for n in per_node]
    spare = cluster_resources.get("GPU", 0.0)
    names = {"GPU": "accelerator", "TPU": "accelerator"}
    return stats["GPU"], flags.get("GPU"), num(num_gpus=2)
"""


def test_without_ray_only_the_shape_of_rays_resources_counts(real):
    assert places(real, PLAN, "ray-gpu-resource") == [(2, 17), (3, 13)]


def test_gpu_words_without_a_cpu_key_or_a_resources_name_are_no_ray_finding(real):
    code = PLAN.replace('"CPU"', '"cpu"').replace("cluster_resources", "cluster")
    assert places(real, code, "ray-gpu-resource") == []


def test_use_gpu_is_reported_at_its_keyword(real):
    code = "from ray.train import ScalingConfig\ns = ScalingConfig(\n    num_workers=4,\n    use_gpu=True,\n)\n"
    assert places(real, code, "ray-use-gpu") == [(4, 5)]


def test_a_backend_keyword_of_another_librarys_setup_is_a_use_of_the_nccl_string(real):
    code = 'from olmo_core import train\nbackend = "cpu:gloo,cuda:nccl"\ntrain.prepare(seed=1, backend=backend)\n'
    found = [f for f in scan_source(code, "t.py", real) if f.rule == "nccl-backend"]
    assert [(f.line, [line for line, _ in f.related]) for f in found] == [(2, [3])]
    code = code.replace(
        "train.prepare(seed=1, backend=backend)", "train.prepare(\n    seed=1,\n    backend=backend,\n)"
    )
    found = [f for f in scan_source(code, "t.py", real) if f.rule == "nccl-backend"]
    assert [(f.line, [line for line, _ in f.related]) for f in found] == [(2, [3, 5])]  # the call and the keyword
    assert places(real, code.replace("use_gpu=True", "use_gpu=False"), "ray-use-gpu") == []


# ---- Triton kernels and their launches -------------------------------------------------------------------------

TRITON = """\
import triton
import triton.language as tl
from .other import _fused_kernel, table

@triton.jit
def _add(x_ptr, BLOCK: tl.constexpr):
    pass

@triton.autotune(configs=[], key=["n"])
@triton.jit
def _mul(x_ptr):
    pass

def helper(x):
    return x

def run(x, n):
    _add[(n,)](x, BLOCK=4)
    _mul[lambda meta: (n,)](x)
    _fused_kernel[(1,)](x)
    table["a"](x)
    helper(x)
"""


def test_a_triton_kernel_is_reported_at_its_first_decorator(real):
    assert places(real, TRITON, "triton-kernel") == [(5, 2), (9, 2)]


def test_each_launch_of_a_kernel_is_must_change_and_a_dict_call_is_not(real):
    assert places(real, TRITON, "triton-launch") == [(18, 5), (19, 5), (20, 5)]


def test_no_launch_without_triton(real):
    code = "from .other import _fused_kernel\n\ndef run(x):\n    _fused_kernel[(1,)](x)\n"
    assert places(real, code, "triton-launch") == []


# ---- a function whose name says CUDA is not an extension -------------------------------------------------------


def test_a_function_named_for_cuda_is_not_a_cuda_extension(real):
    code = "from transformers.utils import is_torch_cuda_available\nok = is_torch_cuda_available()\n"
    assert places(real, code, "cuda-extension-import") == []


def test_a_module_named_for_cuda_imported_from_a_package_still_is(real):
    code = "from mypkg import fused_norm_cuda\n\ndef f(x):\n    return fused_norm_cuda.forward(x)\n"
    assert places(real, code, "cuda-extension-import") == [(1, 1)]


# ---- a package's own code --------------------------------------------------------------------------------------

OWN = {
    "src/liger_kernel/__init__.py": "",
    "src/liger_kernel/ops/__init__.py": "",
    "src/liger_kernel/ops/utils.py": "def calculate_settings(n):\n    return n\n",
    "src/liger_kernel/ops/norm.py": "from liger_kernel.ops.utils import calculate_settings\n",
}


def test_a_packages_rule_is_quiet_inside_that_packages_own_code(tmp_path, real):
    found = scan_tree(tmp_path, real, OWN)
    assert [f for f in found if f.rule == "liger-kernel"] == []


def test_a_packages_rule_still_reports_the_package_imported_by_other_code(tmp_path, real):
    files = {"train.py": "from liger_kernel.ops.utils import calculate_settings\n"}
    assert [(f.path, f.line) for f in scan_tree(tmp_path, real, files) if f.rule == "liger-kernel"] == [("train.py", 1)]


def test_a_folder_without_an_init_does_not_make_a_package(tmp_path, real):
    files = {**OWN, "src/liger_kernel/__init__.py": None}
    files = {k: v for k, v in files.items() if v is not None}  # liger_kernel is no package: not the tree's own
    found = [(f.path, f.line) for f in scan_tree(tmp_path, real, files) if f.rule == "liger-kernel"]
    assert found == [("src/liger_kernel/ops/norm.py", 1)]


# ---- the device module picked by name in another file ----------------------------------------------------------

PICKED = {
    "pkg/__init__.py": "",
    "pkg/misc.py": """\
        import torch

        def get_device_name():
            return "cuda" if torch.cuda.is_available() else "cpu"

        def get_torch_device():
            return getattr(torch, get_device_name())

        def get_device_count():
            return torch.cuda.device_count()

        device_module = torch.get_device_module()
        """,
    "pkg/train.py": """\
        from .misc import get_torch_device, device_module, get_device_count
        from pkg.misc import get_torch_device as picked

        def setup(rank, other):
            get_torch_device().set_device(rank)
            device_module.synchronize()
            picked().current_device()
            other.synchronize()
            get_device_count()
        """,
}


def test_an_internal_call_on_another_files_device_module_is_must_change(tmp_path, real):
    found = [(f.path, f.line) for f in scan_tree(tmp_path, real, PICKED) if f.rule == "device-module-call"]
    assert found == [("pkg/train.py", 5), ("pkg/train.py", 6), ("pkg/train.py", 7)]


def test_the_same_calls_are_no_finding_when_the_other_file_returns_a_plain_module(tmp_path, real):
    files = {**PICKED, "pkg/misc.py": PICKED["pkg/misc.py"].replace("getattr(torch, get_device_name())", "torch")}
    files["pkg/misc.py"] = files["pkg/misc.py"].replace("torch.get_device_module()", "None")
    assert [f for f in scan_tree(tmp_path, real, files) if f.rule == "device-module-call"] == []


def test_the_device_module_is_followed_under_an_alias_of_torch(tmp_path, real):
    files = {**PICKED, "pkg/misc.py": PICKED["pkg/misc.py"].replace("import torch\n", "import torch as th\n")}
    files["pkg/misc.py"] = files["pkg/misc.py"].replace("torch.", "th.").replace("getattr(torch,", "getattr(th,")
    found = [(f.path, f.line) for f in scan_tree(tmp_path, real, files) if f.rule == "device-module-call"]
    assert found == [("pkg/train.py", 5), ("pkg/train.py", 6), ("pkg/train.py", 7)]


def test_a_kernel_named_import_is_launched_only_in_a_module_that_imports_triton(real):
    code = (
        "import triton\nfrom .ops import _fwd_kernel, table\n\ndef run(x):\n    _fwd_kernel[(1,)](x)\n    table[0](x)\n"
    )
    assert places(real, code, "triton-launch") == [(5, 5)]
