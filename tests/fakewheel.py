"""A small fake torch-tpu wheel, built by the tests themselves (no network), shaped like 0.2.0."""

from __future__ import annotations

import zipfile
from pathlib import Path

METADATA = """\
Metadata-Version: 2.1
Name: torch_tpu
Version: {version}
Requires-Python: >=3.11
Requires-Dist: libtpu>=0.0.50
Requires-Dist: torch>=2.11.0,<=2.15.0
"""

PUBLIC_API = """\
from typing import Final

_DEVICE: Final[str] = "torch_tpu._internal.device._device_module"


def _tpu_attr(name: str) -> str:
  return f"{_DEVICE}:TpuDeviceModule.{name}"


_PUBLIC_MODULES = {
    "torch.tpu": ModuleSpec(
        exports={
            "EagerMode": _tpu_attr("EagerMode"),
            "precision": _tpu_attr("precision"),
            "eager_mode": Property(f"{_DEVICE}:_Meta.eager_mode"),
        },
    ),
    "torch.tpu.distributed": ModuleSpec(
        exports={"set_tpu_launch_env": "torch_tpu._internal.distributed.distributed:set_tpu_launch_env"},
        main="torch_tpu._internal.distributed.distributed",
    ),
}
"""

DEVICE = """\
from torch_tpu._internal import execution_mode as _em


class _Meta(type):
  @property
  def eager_mode(cls):
    return _em.eager_mode


_FORK_ERROR = (
    "cannot access or re-initialize TPU in a forked subprocess. "
    "To use TPU with multiprocessing, you must use the 'spawn' start method"
)


class TpuDeviceModule(metaclass=_Meta):
  precision = None

  @classmethod
  def _lazy_init(cls, bad_fork, idx):
    if bad_fork:
      raise RuntimeError(_FORK_ERROR)
    raise ValueError(f"Cannot set TPU device to index {idx}, current process is bound to device index 0.")
"""

EXECUTION_MODE = """\
import enum


class EagerMode(enum.Enum):
  DEFER_AND_FUSE = 1
  DEFER_NEVER = 2


def set_eager_mode(mode):
  pass
"""

DISTRIBUTED = """\
import os
from torch_tpu._internal import env


def set_tpu_launch_env(*, nnodes=None, nproc_per_node=None):
  env.get_int_env_once("TORCH_TPU_BASE_PORT", default_value=8070)
  os.environ.get("JOB_COMPLETION_INDEX")
"""

LOADER = """\
import torch
from torch_tpu._internal import env


def load():
  if not env.TORCH_TPU_IS_OPTIMIZED_BUILD:
    pass
  torch.utils.rename_privateuse1_backend("tpu")
  torch.distributed.Backend.register_backend("tpu_dist", None, devices=["tpu"])
"""


def build_wheel(
    dest: Path, version: str = "0.2.0", extra: dict[str, str | bytes] | None = None, drop: tuple[str, ...] = ()
) -> Path:
    """Write ``torch_tpu-VERSION-...whl`` into ``dest`` and return its path."""
    files: dict[str, str | bytes] = {
        f"torch_tpu-{version}.dist-info/METADATA": METADATA.format(version=version),
        "torch_tpu/__init__.py": "",
        "torch_tpu/_loader.py": LOADER,
        "torch_tpu/_internal/public_api.py": PUBLIC_API,
        "torch_tpu/_internal/device/_device_module.py": DEVICE,
        "torch_tpu/_internal/execution_mode/__init__.py": EXECUTION_MODE,
        "torch_tpu/_internal/distributed/distributed.py": DISTRIBUTED,
        # a native library: its string table holds env var names and messages
        "torch_tpu/csrc/common/glue_2_13_0/libpywrap_2_13_0_common.so": (
            b"\x7fELF\x00TORCH_TPU_DEFER_AND_FUSE\x00TORCH_TPU_LAUNCH_BLOCKING\x00XLA_FLAGS\x00"
            b"expected a TPU device\x00timeout in barrier options is not supported\x00"
        ),
        "torch_tpu/_internal/precision/precision_impl_2_13_0.so": b"\x00Precision\x00DEFAULT\x00HIGHEST\x00",
        "torch_tpu/_internal/env_2_13_0.so": b"\x00TORCH_TPU_IS_OPTIMIZED_BUILD\x00get_int_env_once\x00",
        "torch_tpu/_internal/precision/__init__.py": "from torch_tpu._internal.precision import precision_impl\n"
        "Precision = precision_impl.Precision\n",
        **(extra or {}),
    }
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / f"torch_tpu-{version}-cp311-cp311-manylinux_2_31_x86_64.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            if name not in drop:
                zf.writestr(name, data)
    return path
