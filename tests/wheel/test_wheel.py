"""Reading a wheel as a zip: public names, members, env vars, backends and metadata."""

import pytest

from fakewheel import build_wheel
from kb.wheel.wheel import WheelError, read_wheel


@pytest.fixture
def index(tmp_path):
    return read_wheel(build_wheel(tmp_path))


@pytest.mark.parametrize(
    "name",
    [
        "torch.tpu",
        "torch.tpu.EagerMode",
        "torch.tpu.EagerMode.DEFER_AND_FUSE",
        "torch.tpu.eager_mode",
        "torch.tpu.precision",
        "torch.tpu.distributed",
        "torch.tpu.distributed.set_tpu_launch_env",
        "torch_tpu._internal.execution_mode",
        "torch_tpu._internal.execution_mode.EagerMode.DEFER_NEVER",
        "torch_tpu._internal",  # a folder without __init__.py
        "torch_tpu._internal.precision.Precision.HIGHEST",  # a native class, through an alias
    ],
)
def test_names_the_wheel_defines_resolve(index, name):
    assert index.resolve(name)


@pytest.mark.parametrize(
    "name",
    [
        "torch.tpu.EagerMode.DEFER_AND_FUSE_WITH_O1",
        "torch.tpu.nope",
        "torch.tpu.distributed.launch",
        "torch_tpu._internal.distributed.launchers.singlehost_wrapper",
        "torch_tpu._internal.precision.Precision.HIGHER",
        "torch.cuda.is_available",
    ],
)
def test_names_it_does_not_define_do_not(index, name):
    assert not index.resolve(name)


def test_env_vars_backends_and_metadata(index):
    assert {
        "TORCH_TPU_DEFER_AND_FUSE",
        "TORCH_TPU_LAUNCH_BLOCKING",
        "TORCH_TPU_BASE_PORT",
    } <= index.env | index.env_read
    assert "JOB_COMPLETION_INDEX" in index.env_read
    assert index.has_env("TORCH_TPU_BASE_PORT") and not index.has_env("TORCH_TPU_INTERNAL_ENABLE_DEBUG_CHECKS")
    assert not index.has_env("TORCH_TPU_IS_OPTIMIZED_BUILD")  # a constant the code reads as env.X
    assert index.backends == {"tpu", "tpu_dist"}
    assert index.requires_python == ">=3.11"
    assert index.requires["torch"] == ">=2.11.0,<=2.15.0"
    assert (index.project, index.version) == ("torch-tpu", "0.2.0")


def test_not_a_wheel(tmp_path):
    bad = tmp_path / "x.whl"
    bad.write_bytes(b"not a zip")
    with pytest.raises(WheelError, match="not a readable wheel"):
        read_wheel(bad)


def test_a_zip_without_metadata(tmp_path):
    path = build_wheel(tmp_path, drop=("torch_tpu-0.2.0.dist-info/METADATA",))
    with pytest.raises(WheelError, match="no \\*.dist-info/METADATA"):
        read_wheel(path)


def test_broken_python_in_the_wheel_is_a_problem_not_a_crash(tmp_path):
    index = read_wheel(build_wheel(tmp_path, extra={"torch_tpu/_internal/bad.py": "def (:\n"}))
    assert index.problems == ["torch_tpu/_internal/bad.py:1: not valid Python (invalid syntax)"]
