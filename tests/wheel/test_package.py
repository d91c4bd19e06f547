"""The pin, the cached index, the inventory, release diffs and the check-wheel command."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from buildtools import run
from fakewheel import build_wheel
from kb.wheel import package
from kb.wheel.package import PackageError, diff, inventory, load_index, read_pin
from kb.wheel.wheel import read_wheel


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "torch-tpu.pin:1: expected exactly one line 'torch-tpu==X.Y.Z'"),
        ("torch-tpu>=0.2\n", "torch-tpu.pin:1: expected exactly one line 'torch-tpu==X.Y.Z'"),
        ("torch-tpu==0.2.0\ntorch-tpu==0.3.0\n", "torch-tpu.pin:1: expected exactly one line 'torch-tpu==X.Y.Z'"),
    ],
)
def test_a_bad_pin_is_a_problem(tmp_path, text, message):
    (tmp_path / "torch-tpu.pin").write_text(text)
    with pytest.raises(PackageError) as err:
        read_pin(tmp_path)
    assert str(err.value.problem) == message


def test_the_pin_with_a_comment(tmp_path):
    (tmp_path / "torch-tpu.pin").write_text("# the release the handbook is held to\ntorch-tpu==0.2.0\n")
    assert read_pin(tmp_path) == ("torch-tpu", "0.2.0")


def test_the_cached_index_reads_back_the_same(tmp_path):
    wheel = build_wheel(tmp_path)
    first = load_index(wheel)
    assert list(tmp_path.glob("*.index.json"))
    second = load_index(wheel)  # from the JSON cache
    assert inventory(first) == inventory(second)
    assert second.resolve("torch.tpu.EagerMode.DEFER_NEVER") and not second.resolve("torch.tpu.EagerMode.X")


def test_a_damaged_cache_is_rebuilt(tmp_path):
    wheel = build_wheel(tmp_path)
    load_index(wheel)
    for cached in tmp_path.glob("*.index.json"):
        cached.write_text("{not json")
    assert load_index(wheel).resolve("torch.tpu.precision")


def test_inventory_lists_public_names_env_vars_and_requirements(tmp_path):
    inv = inventory(read_wheel(build_wheel(tmp_path)))
    assert "torch.tpu.distributed.set_tpu_launch_env" in inv["api"]
    assert "TORCH_TPU_BASE_PORT" in inv["env"] and "XLA_FLAGS" not in inv["env"]
    assert inv["requires"]["torch"] == ">=2.11.0,<=2.15.0"


def test_diff_between_two_releases(tmp_path):
    old = read_wheel(build_wheel(tmp_path / "old", version="0.1.0"))
    newer = build_wheel(
        tmp_path / "new",
        version="0.2.0",
        extra={
            "torch_tpu/_internal/distributed/launchers/singlehost_wrapper.py": "X = 1\n",
            "torch_tpu/_internal/distributed/wrap.py": "def f():\n  raise RuntimeError('the wrapper needs a launcher')\n",
        },
    )
    lines = diff(old, read_wheel(newer))
    assert "+ module torch_tpu._internal.distributed.launchers.singlehost_wrapper" in lines
    assert "+ message the wrapper needs a launcher" in lines
    assert diff(old, old) == []


def _cli(root, *args):
    return run([sys.executable, "-m", "kb", "--root", str(root), "check-wheel", *args], root.parent)


def test_check_wheel_on_the_mini_project(mini, tmp_path_factory):
    (mini / "torch-tpu.pin").write_text("torch-tpu==0.2.0\n")
    wheel = build_wheel(tmp_path_factory.mktemp("w"))
    result = _cli(mini, "--wheel", str(wheel))
    assert result.returncode == 1
    assert "docs/data/package.json:1: does not match" in result.stderr  # no inventory yet
    result = _cli(mini, "--wheel", str(wheel), "--write-inventory")
    inventory = json.loads((mini / "docs" / "data" / "package.json").read_text())
    assert inventory["version"] == "0.2.0"
    # the fake wheel's messages are in no error entry yet: each one is named until it is accounted for
    assert result.returncode == 1
    assert result.stderr.count("is neither an entry of docs/data/errors.yml") == len(inventory["messages"]) > 0
    internal = "".join(
        f"- id: m{i}\n  message: {json.dumps(m['text'])}\n  where: {m['where']}\n"
        f"  reason: a test\n  verified: 2026-11-01\n  checked_against: torch-tpu==0.2.0\n"
        for i, m in enumerate(inventory["messages"])
    )
    (mini / "docs" / "data" / "internal_messages.yml").write_text(internal)
    result = _cli(mini, "--wheel", str(wheel))
    assert result.returncode == 0, result.stderr


def test_check_wheel_offline_without_a_cache(mini):
    (mini / "torch-tpu.pin").write_text("torch-tpu==0.2.0\n")
    result = _cli(mini, "--offline")
    assert result.returncode == 2
    assert result.stderr.startswith("torch-tpu.pin:1: torch-tpu==0.2.0 is not in .cache/wheels/ and --offline")
    assert "Traceback" not in result.stderr


def test_check_wheel_with_a_wheel_of_another_version(mini, tmp_path_factory):
    (mini / "torch-tpu.pin").write_text("torch-tpu==0.2.0\n")
    wheel = build_wheel(tmp_path_factory.mktemp("w"), version="0.3.0")
    result = _cli(mini, "--wheel", str(wheel), "--write-inventory")
    assert result.returncode == 1
    assert "torch-tpu.pin:1: the wheel is torch-tpu 0.3.0 (expected torch-tpu==0.2.0, the pin)" in result.stderr


def test_check_wheel_against_an_older_release(mini, tmp_path_factory):
    (mini / "torch-tpu.pin").write_text("torch-tpu==0.2.0\n")
    old = build_wheel(tmp_path_factory.mktemp("old"), version="0.1.0", drop=("torch_tpu/_loader.py",))
    new = build_wheel(tmp_path_factory.mktemp("new"))
    result = _cli(mini, "--wheel", str(new), "--against", str(old))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "torch-tpu 0.1.0 -> torch-tpu 0.2.0: 4 change(s)"
    assert "+ backends tpu_dist" in result.stdout


def test_not_a_wheel_is_a_clear_error(mini, tmp_path):
    (mini / "torch-tpu.pin").write_text("torch-tpu==0.2.0\n")
    bad = tmp_path / "bad.whl"
    bad.write_bytes(b"junk")
    result = _cli(mini, "--wheel", str(bad))
    assert result.returncode == 2
    assert "not a readable wheel" in result.stderr and "Traceback" not in result.stderr


def _fake_pip(writes: bytes, code: int):
    """A stand-in for ``pip download``: it writes one wheel into its -d folder, then exits ``code``."""

    def run(cmd, **kwargs):
        folder = Path(cmd[cmd.index("-d") + 1])
        (folder / "demo-1.0-py3-none-any.whl").write_bytes(writes)
        return subprocess.CompletedProcess(cmd, code, "", "" if code == 0 else "ERROR: connection reset\n")

    return run


def test_a_downloaded_wheel_appears_whole_and_nothing_else_is_left(tmp_path, monkeypatch):
    monkeypatch.setattr(package.subprocess, "run", _fake_pip(b"PK whole", 0))
    dest = tmp_path / "wheels"
    assert package.pip_download(dest, "demo==1.0", "any") == ""
    assert [p.name for p in dest.iterdir()] == ["demo-1.0-py3-none-any.whl"]
    assert (dest / "demo-1.0-py3-none-any.whl").read_bytes() == b"PK whole"


def test_pip_writes_into_a_folder_of_its_own_not_the_cache(tmp_path, monkeypatch):
    seen = []

    def run(cmd, **kwargs):
        seen.append(Path(cmd[cmd.index("-d") + 1]))
        assert list((tmp_path / "wheels").glob("*.whl")) == []  # nothing in the cache while pip runs
        return _fake_pip(b"PK", 0)(cmd, **kwargs)

    monkeypatch.setattr(package.subprocess, "run", run)
    package.pip_download(tmp_path / "wheels", "demo==1.0", "any")
    assert seen[0].parent == tmp_path / "wheels" and seen[0].name.startswith(".download.")
    assert not seen[0].exists()


def test_a_failed_download_leaves_no_wheel_in_the_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(package.subprocess, "run", _fake_pip(b"PK half", 1))
    dest = tmp_path / "wheels"
    assert package.pip_download(dest, "demo==1.0", "any") == "ERROR: connection reset"
    assert list(dest.iterdir()) == []
