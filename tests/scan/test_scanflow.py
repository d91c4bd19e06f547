"""kb.scan.scanflow: a device value written in one scanned file and used in another (mirrors scripts/kb/scan/scanflow.py)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT
from kb.scan.scan import scan_flows
from kb.scan.scanflow import Called, Export, Flows, Passed, Returned, join, module_names, module_of, relative
from kb.scan.scannames import Finding
from kb.scan.scanreport import json_report, sarif_report, text_report
from kb.scan.scanrules import RuleSet, load_rules
from kb.scan.scanrun import scan_all
from scantree import scan_tree


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return load_rules(sorted((ROOT / "docs" / "data").glob("migration_rules*.yml")), ROOT)


def finding(path: str, line: int, column: int, rule: str = "cuda-device-string") -> Finding:
    return Finding(path, line, column, rule, "TPU102", "must-change", "'cuda'", "m", "s", "l", "direct")


def test_a_file_is_imported_by_its_path_and_a_relative_import_from_its_folder():
    assert module_of("repo/util/misc.py") == ("repo", "util", "misc")
    assert module_of("repo/pkg/__init__.py") == ("repo", "pkg")
    assert relative("repo/pkg/main.py", 1, "engine") == ("repo", "pkg", "engine")
    assert relative("repo/pkg/main.py", 2, "util.misc") == ("repo", "util", "misc")
    assert relative("main.py", 1, None) == ()


def test_a_worker_sends_only_the_calls_and_from_imports_of_scanned_modules(real: RuleSet):
    assert module_names(["r/util/misc.py", "r/pkg/__init__.py"]) == {
        ("misc",),
        ("util", "misc"),
        ("r", "util", "misc"),
        ("pkg",),
        ("r", "pkg"),
    }
    text = textwrap.dedent("""\
        import torch
        from engine import train
        from other import run
        from .helpers import put
        device = torch.device("cuda")
        train(model, device)
        run(model, device)
        put(batch, device)
        """)
    _, every = scan_flows(text, "r/main.py", real)
    _, sent = scan_flows(text, "r/main.py", real, module_names(["r/main.py", "r/engine.py", "r/helpers.py"]))
    assert sorted(p.function for p in every.passed) == ["put", "run", "train"]
    assert sorted(p.function for p in sent.passed) == ["put", "train"]  # no file is other.py
    assert sorted(b.name for b in every.bound) == ["put", "run", "train"]
    assert sorted(b.name for b in sent.bound) == ["put", "train"]
    assert sent.imports == every.imports  # every import: a setup.py may build any module as an extension


def test_a_value_passed_by_position_or_keyword_gains_the_uses_in_the_other_file(real: RuleSet):
    flows = [
        Flows("r/main.py", passed=(Passed(("engine",), False, "train", 1, None, (3, 10)),)),
        Flows("r/eval.py", passed=(Passed(("r", "engine"), False, "train", -1, "device", (7, 2)),)),
        Flows("r/engine.py", exports=(Export("train", "device", 1, 12, 5), Export("train", "model", 0, 11, 5))),
    ]
    out = join([finding("r/eval.py", 7, 2), finding("r/main.py", 3, 10)], flows, real)
    assert [(f.path, f.elsewhere, f.how) for f in out] == [
        ("r/eval.py", (("r/engine.py", 12, 5),), "followed"),
        ("r/main.py", (("r/engine.py", 12, 5),), "followed"),
    ]


def test_a_module_two_files_could_be_or_none_is_left_alone(real: RuleSet):
    ours = finding("a/main.py", 3, 10)
    exports = (Export("train", "device", 0, 5, 1),)
    flows = [
        Flows("a/main.py", passed=(Passed(("engine",), False, "train", 0, None, (3, 10)),)),
        Flows("a/engine.py", exports=exports),
        Flows("b/engine.py", exports=exports),
    ]
    elsewhere = [flows[0]._replace(path="c/main.py"), *flows[1:]]
    assert join([finding("c/main.py", 3, 10)], elsewhere, real) == [finding("c/main.py", 3, 10)]  # two engine.py
    (beside,) = join([ours], flows, real)  # a script loads the engine.py in its own folder (sys.path[0])
    assert beside.how == "followed"
    missing = [Flows("a/main.py", passed=(Passed(("nowhere",), False, "train", 0, None, (3, 10)),))]
    assert join([ours], missing, real) == [ours]
    exact = [flows[0]._replace(passed=(Passed(("engine",), True, "train", 0, None, (3, 10)),)), flows[1]]
    assert join([ours], exact, real) == [ours]  # a relative import names its file exactly: 'engine' is not 'a/engine'


def test_only_a_device_value_finding_gains_uses_and_a_wrong_position_matches_nothing(real: RuleSet):
    flows = [
        Flows("m.py", passed=(Passed(("e",), False, "f", 2, None, (1, 1)),)),
        Flows("e.py", exports=(Export("f", "device", 1, 9, 9), Export("f", "x", -1, 8, 8))),
    ]
    other = finding("m.py", 1, 1, rule="nccl-backend")
    assert join([finding("m.py", 1, 1), other], flows, real) == [finding("m.py", 1, 1), other]


def test_scan_all_follows_a_device_into_the_module_that_uses_it(tmp_path: Path, real: RuleSet):
    (tmp_path / "pkg").mkdir()
    main = textwrap.dedent("""\
        import torch
        from engine import train_one_epoch
        from .helpers import put
        device = torch.device("cuda")
        train_one_epoch(model, loader, device=device)
        put(batch, device)
        """)
    engine = "def train_one_epoch(model, loader, device):\n    for x in loader:\n        x = x.to(device)\n"
    helpers = "def put(batch, where):\n    return batch.to(where)\n"
    files = {"pkg/main.py": main, "pkg/engine.py": engine, "pkg/helpers.py": helpers}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    walk = [(str(tmp_path / name), name) for name in sorted(files)]
    findings, problems = scan_all(walk, real, jobs=1)
    (f,) = [f for f in findings if f.rule == "cuda-device-string"]
    assert problems == [] and (f.path, f.line) == ("pkg/main.py", 4)
    # 5:1 moves it (device=), 6:12 hands it to put(), which moves it in helpers.py
    assert f.related == ((5, 1), (6, 12)) and f.elsewhere == (("pkg/engine.py", 3, 13), ("pkg/helpers.py", 2, 12))
    text = text_report([f], [], 3)
    assert "used at 4 place(s): 5:1, 6:12, pkg/engine.py:3:13, pkg/helpers.py:2:12" in text
    related = json.loads(json_report([f], [], 3))["findings"][0]["related"]
    assert related[2:] == [
        {"path": "pkg/engine.py", "line": 3, "column": 13},
        {"path": "pkg/helpers.py", "line": 2, "column": 12},
    ]
    sarif = json.loads(sarif_report([f], [], real.rules))["runs"][0]["results"][0]["relatedLocations"]
    assert [r["physicalLocation"]["artifactLocation"]["uri"] for r in sarif] == [
        "pkg/main.py",
        "pkg/main.py",
        "pkg/engine.py",
        "pkg/helpers.py",
    ]


def test_a_call_through_an_imported_module_is_followed_too(tmp_path: Path, real: RuleSet):
    (tmp_path / "pkg").mkdir()
    files = {
        "main.py": 'import torch\nimport engine\nfrom pkg import helpers\ndevice = torch.device("cuda")\n'
        "engine.train(model, device)\nhelpers.put(x, device)\n",
        "engine.py": "def train(model, device):\n    model.to(device)\n",
        "pkg/helpers.py": "def put(x, where):\n    return x.to(where)\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    findings, _ = scan_all([(str(tmp_path / n), n) for n in sorted(files)], real, jobs=1)
    (f,) = [f for f in findings if f.rule == "cuda-device-string"]
    assert f.elsewhere == (("engine.py", 2, 5), ("pkg/helpers.py", 2, 12))
    assert f.related == ((5, 21), (6, 16))  # the calls that hand it over


def test_a_device_a_function_returns_gains_the_places_other_files_use_it(tmp_path: Path, real: RuleSet):
    """guided-diffusion: dist_util.dev() returns th.device(f"cuda"), and the scripts and the training
    loop (a relative import) move things to what it returns."""
    (tmp_path / "gd").mkdir()
    (tmp_path / "scripts").mkdir()
    files = {
        "gd/dist_util.py": 'import torch as th\n\ndef dev():\n    if th.cuda.is_available():\n        return th.device(f"cuda")\n    return th.device("cpu")\n',
        "gd/train_util.py": "from . import dist_util\n\ndef step(batch):\n    return batch.to(dist_util.dev())\n",
        "scripts/train.py": "import torch\nfrom gd import dist_util\nmodel.to(dist_util.dev())\n"
        "t = torch.zeros(2, device=dist_util.dev())\nother.to(elsewhere.dev())\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    findings, problems = scan_all([(str(tmp_path / n), n) for n in sorted(files)], real, jobs=1)
    (f,) = [f for f in findings if f.rule == "cuda-device-string"]
    assert problems == [] and (f.path, f.line, f.column) == ("gd/dist_util.py", 5, 26)
    assert f.elsewhere == (("gd/train_util.py", 4, 12), ("scripts/train.py", 3, 1), ("scripts/train.py", 4, 5))


def test_a_returned_device_joins_only_a_call_of_that_function_in_one_file(real: RuleSet):
    flows = [
        Flows("r/dist.py", returns=(Returned("dev", 5, 25),)),
        Flows("r/train.py", calls=(Called(("dist",), False, "dev", 3, 1), Called(("dist",), False, "other", 4, 1))),
        Flows("r/eval.py", calls=(Called(("r", "dist"), True, "dev", 9, 2), Called(("nowhere",), False, "dev", 2, 2))),
    ]
    out = join([finding("r/dist.py", 5, 25)], flows, real)
    assert out[0].elsewhere == (("r/eval.py", 9, 2), ("r/train.py", 3, 1))
    assert join([finding("r/dist.py", 5, 25, rule="nccl-backend")], flows, real)[0].elsewhere == ()


def test_a_device_bound_to_a_package_function_call_is_followed_into_the_module_that_returns_it(
    tmp_path: Path, real: RuleSet
):
    """timm: train.py binds device = utils.init_distributed_device(args) ('from timm import utils'), a
    function of timm/utils/distributed.py that returns torch.device(result['device']), where result is
    the dict another function of that file returns, holding its 'cuda' default."""
    (tmp_path / "timm" / "utils").mkdir(parents=True)
    files = {
        "timm/utils/distributed.py": "import torch\n\ndef init_so(device='cuda', backend=None):\n"
        "    return dict(device=device, world_size=1)\n\ndef init_distributed_device(args):\n"
        "    result = init_so(backend=None)\n    args.world_size = result['world_size']\n"
        "    args.device = result['device']\n    return torch.device(args.device)\n",
        "train.py": "import torch\nfrom timm import utils\n\ndef main(args):\n"
        "    device = utils.init_distributed_device(args)\n    model.to(device=device)\n"
        "    n = torch.zeros(2, device=args.world_size)\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    findings, problems = scan_all([(str(tmp_path / n), n) for n in sorted(files)], real, jobs=1)
    (f,) = [f for f in findings if f.rule == "cuda-device-string"]
    assert problems == [] and (f.path, f.line) == ("timm/utils/distributed.py", 3)
    # dict(device=...) counts as a use (such a dict is often **kwargs for a call); world_size's use does not
    assert f.related == ((4, 12), (10, 12))
    assert f.elsewhere == (("train.py", 6, 5),)


def test_a_package_function_is_matched_only_when_one_module_of_the_package_returns_a_device(real: RuleSet):
    flows = [
        Flows("p/utils/dist.py", returns=(Returned("dev", 5, 25),)),
        Flows("p/utils/other.py", returns=(Returned("pick", 2, 9),)),
        Flows("train.py", calls=(Called(("p", "utils"), False, "dev", 3, 1), Called(("p", "utils"), False, "x", 4, 1))),
    ]
    assert join([finding("p/utils/dist.py", 5, 25)], flows, real)[0].elsewhere == (("train.py", 3, 1),)
    twice = [*flows, Flows("p/utils/again.py", returns=(Returned("dev", 7, 3),))]
    assert join([finding("p/utils/dist.py", 5, 25)], twice, real)[0].elsewhere == ()  # two modules define dev


def test_an_import_of_a_cuda_only_module_of_the_tree_is_reported_where_it_is_imported(tmp_path: Path, real: RuleSet):
    """Class 2's last item: ops/fused.py imports Triton when it loads, so importing it fails on a TPU
    host. Each import of it is a finding; a guarded one, an import of a module that only imports Triton
    under try, a kernel library importing another, and a file two imports away are not."""
    (tmp_path / "ops").mkdir()
    files = {
        "ops/__init__.py": "",
        "ops/fused.py": "import torch\nimport triton\n\n@triton.jit\ndef k(x):\n    pass\n",
        "ops/optional.py": "try:\n    import triton\nexcept ImportError:\n    triton = None\n",
        "ops/kern2.py": "import triton\nfrom ops.fused import k\n\n@triton.jit\ndef k2(x):\n    pass\n",
        "model.py": "import torch\nfrom ops.fused import k\nimport ops.optional\ntry:\n    from ops import fused\n"
        "except ImportError:\n    fused = None\n\ndef f():\n    from ops import fused\n",
        "train.py": "import model\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    findings, problems = scan_all([(str(tmp_path / n), n) for n in sorted(files)], real, jobs=1)
    got = [(f.path, f.line, f.severity) for f in findings if f.rule == "local-cuda-module"]
    assert problems == [] and got == [("model.py", 2, "must-change"), ("model.py", 10, "must-change")], got
    (first,) = [f for f in findings if f.rule == "local-cuda-module" and f.line == 2]
    assert "`ops/fused.py`: TPU604 at line 2" in first.message and first.snippet == "from ops.fused import k"


def test_a_finished_parallel_scan_closes_its_workers_without_a_signal(tmp_path: Path, real: RuleSet, monkeypatch):
    """A SIGTERM to idle workers at the end of a scan could leave one waiting on a lock of the task
    queue, and the command waiting for it forever: a scan that ends normally closes the pool, and
    only an exception or a signal terminates it."""
    import multiprocessing.pool

    from kb.scan import scanrun

    calls: list[str] = []
    for name in ("close", "terminate"):
        original = getattr(multiprocessing.pool.Pool, name)
        monkeypatch.setattr(
            multiprocessing.pool.Pool, name, lambda self, _o=original, _n=name: (calls.append(_n), _o(self))[1]
        )
    files = []
    for i in range(scanrun.PARALLEL_FROM + 2):
        (tmp_path / f"m{i}.py").write_text("import torch\ntorch.cuda.synchronize()\n")
        files.append((str(tmp_path / f"m{i}.py"), f"m{i}.py"))
    findings, problems = scan_all(files, real, jobs=2)
    assert problems == [] and len(findings) == len(files) and calls == ["close"], calls
    with pytest.raises(ZeroDivisionError), scanrun._workers(2, real):
        raise ZeroDivisionError
    assert calls == ["close", "terminate"], calls


def test_a_package_scanned_from_inside_itself_is_scanned(tmp_path: Path, real: RuleSet):
    """``./dev scan .`` in a folder that holds an ``__init__.py``: the files are shown from there, the
    package's folder is "", and naming its modules looped for good (before the fix)."""
    import threading

    files = {"__init__.py": "import flash_attn\n", "m.py": "from flash_attn import flash_attn_func\n"}
    got: list[list[str]] = []
    done = threading.Thread(target=lambda: got.append([f.path for f in scan_tree(tmp_path, real, files)]), daemon=True)
    done.start()
    done.join(60)
    assert not done.is_alive(), "the scan of a package from inside it never ended"
    assert got == [["__init__.py", "m.py"]]
