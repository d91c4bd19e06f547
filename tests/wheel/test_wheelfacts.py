"""kb.wheel.wheelfacts: what the wheel's backend code decides, and the claims held to it."""

from __future__ import annotations

import textwrap
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT, write_tables
from kb.core.load import load_kb
from kb.wheel.package import load_index
from kb.wheel.wheel import WheelIndex
from kb.wheel.wheelfacts import (
    BACKEND_FILE,
    FACT_RECORDS,
    PG_LIBRARY,
    backend_options,
    check_facts,
    decorated,
    graph_breakers,
    process_group_methods,
    read_facts,
    stated_names,
)

BACKEND = b"""
class TpuBackend:
  def __call__(self, gm, inputs, **kwargs):
    options = kwargs.pop("options", {}) or {}
    a = options.get("async_compile", False)
    b = options.get("bucket_size")
    other = {}.get("not_an_option")
"""


def mangled(method: str) -> bytes:
    return b"_ZN9torch_tpu15ProcessGroupTpu" + str(len(method)).encode() + method.encode() + b"ERSt6vector\0"


def test_backend_options_are_the_keys_read_from_options():
    assert backend_options(BACKEND) == {"async_compile", "bucket_size"}
    assert backend_options(b"") == set()


def test_process_group_methods_read_from_mangled_names():
    library = b"junk\0" + mangled("allreduce") + mangled("_allgather_base") + b"_ZN9torch_tpu15ProcessGroupTpu99x\0"
    assert process_group_methods(library) == {"allreduce", "_allgather_base"}


def test_decorated_and_graph_breakers():
    python = {
        "torch_tpu/a.py": b"@annotations.forbid_in_torch_compile('r')\ndef f():\n  pass\ndef g():\n  pass\n",
        "torch_tpu/b/__init__.py": b"import torch\ndef p():\n  torch._dynamo.graph_break(msg='x')\n",
    }
    assert decorated(python, "forbid_in_torch_compile") == {"torch_tpu.a:f"}
    assert graph_breakers(python) == {"torch_tpu.b:p"}


def fake_wheel(tmp_path: Path, methods: list[str]) -> Path:
    path = tmp_path / "torch_tpu-0.2.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(BACKEND_FILE, BACKEND)
        zf.writestr(PG_LIBRARY, b"".join(mangled(m) for m in methods))
        zf.writestr(
            "torch_tpu/_internal/device/_device_module.py",
            b"import torch_tpu._internal.modes as _modes\nclass Base:\n  set_mode = _modes.set_mode\n"
            b"class TpuDeviceModule(Base):\n  pass\n",
        )
        zf.writestr("torch_tpu/_internal/modes/__init__.py", b"from torch_tpu._internal.modes.impl import set_mode\n")
        zf.writestr("torch_tpu/_internal/modes/impl.py", b"@forbid_in_torch_compile('no')\ndef set_mode(m):\n  pass\n")
    return path


def test_read_facts_follows_aliases_and_base_classes(tmp_path):
    public = {"torch.tpu.set_mode": "torch_tpu._internal.device._device_module:TpuDeviceModule.set_mode"}
    facts = read_facts(fake_wheel(tmp_path, ["allreduce", "barrier"]), public)
    assert facts["forbidden-in-compile"] == {"torch.tpu.set_mode"}
    assert facts["tpu-dist-implements"] == {"all_reduce", "barrier"}
    assert "reduce" in facts["tpu-dist-missing"] and "all_reduce" not in facts["tpu-dist-missing"]
    assert facts["compile-backend-options"] == {"async_compile", "bucket_size"}


def test_stated_names_per_universe():
    text = "Keys `async_compile` and `name`, with `backend='tpu'`; `all_reduce`; `torch.tpu.precision(...)`."
    assert stated_names(text, "options") == {"async_compile", "name", "all_reduce"}  # any plain identifier
    assert stated_names(text, "collectives") == {"all_reduce"}
    assert stated_names(text, "torch.tpu") == {"torch.tpu.precision"}


def claims_table(statement: str) -> str:
    return textwrap.dedent(f"""\
        - id: tpu-dist-collectives
          topic: distributed
          statement: "{statement}"
          status: confirmed
          sources:
            - {{id: prim, locator: intro}}
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        - id: dev
          topic: device
          statement: "The device is `tpu`."
          status: confirmed
          sources:
            - {{id: prim, locator: intro}}
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        """)


def index_with(facts: dict[str, list[str]]) -> WheelIndex:
    return WheelIndex(
        "w.whl", "torch-tpu", "0.2.0", set(), {}, {}, {}, set(), set(), set(), set(), "", {}, set(), facts=facts
    )


def test_check_facts_names_file_line_and_the_difference(tmp_path):
    kb = load_kb(write_tables(tmp_path / "data", claims=claims_table("It implements `all_reduce` and `reduce`.")))
    problems = check_facts(kb, {"tpu-dist-implements": ["all_reduce", "barrier"]})
    assert len(problems) == 1
    text = str(problems[0])
    assert "claims.yml:3" in text
    assert "not stated: ['barrier']" in text and "stated but not in the wheel: ['reduce']" in text


def test_check_facts_passes_when_the_statement_matches(tmp_path):
    kb = load_kb(write_tables(tmp_path / "data", claims=claims_table("It implements `barrier` and `all_reduce`.")))
    assert check_facts(kb, {"tpu-dist-implements": ["all_reduce", "barrier"]}) == []


def test_every_fact_has_its_claim_in_the_real_kb():
    kb = load_kb(ROOT / "docs" / "data")
    ids = {rec.id for rec in kb.tables["claims"]}
    assert set(FACT_RECORDS) <= ids


@pytest.mark.slow  # reads the real wheel (downloaded once)
def test_real_wheel_facts_are_not_empty(real_wheels):
    """A refactor that reads nothing would make every statement fail, but say so plainly here."""
    wheel = real_wheels
    facts = load_index(wheel).facts
    assert "all_to_all_single" in facts["tpu-dist-implements"]
    assert "reduce" in facts["tpu-dist-missing"]
    assert "num_dynamic_buckets" in facts["compile-backend-options"]
    assert "torch.tpu.set_eager_mode" in facts["forbidden-in-compile"]
    assert facts["graph-break-in-compile"] == ["torch.tpu.precision"]
