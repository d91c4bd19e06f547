"""One answer per question: an api_map row may not recommend a call the error index says raises."""

import shutil

import pytest

from conftest import ROOT
from kb.core import agree
from kb.core.load import load_kb

ROW = '  tpu: "nothing: drop the call (each worker already owns its device, as index 0)"\n'
OLD_SET_DEVICE = '  tpu: "`torch.accelerator.set_device_index(i)`"\n'


def real_kb(tmp_path, old: str = "", new: str = ""):
    data = tmp_path / "docs" / "data"
    shutil.copytree(ROOT / "docs" / "data", data)
    if old:
        path = data / "api_map.yml"
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, old
        path.write_text(text.replace(old, new), encoding="utf-8")
    return load_kb(data, shown_root=tmp_path)


def test_the_handbook_gives_one_answer():
    assert [str(p) for p in agree.check(load_kb(ROOT / "docs" / "data", shown_root=ROOT))] == []


def test_the_old_set_device_row_fails(tmp_path):
    """The row as it stood before issue 36: torch.cuda.set_device(i) -> set_device_index(i)."""
    kb = real_kb(tmp_path, ROW, OLD_SET_DEVICE)
    found = [str(p) for p in agree.check(kb)]
    assert len(found) == 1
    assert found[0].startswith("docs/data/api_map.yml:")
    assert "api_map[5].tpu: the TPU side writes `torch.accelerator.set_device_index(i)`" in found[0]
    assert "'device-index-out-of-bounds'" in found[0]


@pytest.mark.parametrize(
    ("tpu", "bad"),
    [
        ("`torch.accelerator.set_device_index(0)`", False),
        ("`torch.accelerator.set_device_index(local_rank)`", True),
        ("`torch.tpu.device_count()`", True),
        ("`n = torch.tpu.device_count()` is not Python of one expression", False),
        ("`torch.accelerator.device_count()`", False),
    ],
)
def test_a_call_the_error_index_says_raises_is_refused(tmp_path, tpu, bad):
    kb = real_kb(tmp_path, ROW, f'  tpu: "{tpu}"\n')
    assert bool(agree.check(kb)) is bad


def test_calls_reads_code_spans_as_python():
    text = "`torch.tpu.Stream`, `torch.tpu.stream(s)` and `x.to('tpu', non_blocking=True)`; `not python(`"
    assert list(agree.calls(text)) == [("torch.tpu.stream", "s"), ("x.to", "'tpu', non_blocking=True")]
