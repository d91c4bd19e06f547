"""The migration scanner (``python -m kb scan``): every match kind and detector, with positive and
negative examples; the sample repo end to end (exact findings); JSON and SARIF shapes; exit codes.

Rules come from tests/scan_rules.yml, a small table with the schema of docs/data/migration_rules.yml.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT, scan_cli
from kb.__main__ import main
from kb.core.errors import KBError
from kb.scan.scan import scan_file, scan_source
from kb.scan.scanrules import PathPattern, RuleSet, ScanRule, SiteBase, load_rules, page_link

SAMPLE = ROOT / "tests" / "scan_sample"
RULES = ROOT / "tests" / "scan_rules.yml"
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "scripts")}


@pytest.fixture(scope="module")
def rules() -> RuleSet:
    return load_rules([RULES], ROOT)


def findings(rules: RuleSet, code: str) -> list[tuple[int, int, str, str]]:
    return [(f.line, f.column, f.rule, f.how) for f in scan_source(textwrap.dedent(code), "t.py", rules)]


def rule_ids(rules: RuleSet, code: str) -> set[str]:
    return {f[2] for f in findings(rules, code)}


POSITIVE = [
    ("import torch_xla.core.xla_model as xm\n", "xla-import"),
    ("from torch_xla.core import xla_model\n", "xla-import"),
    ("def f():\n    import torch_xla\n", "xla-import"),
    ("import triton.language as tl\n", "triton-import"),
    ("import torch\ntorch.cuda.synchronize()\n", "cuda-synchronize"),
    ("from torch.cuda import synchronize\nsynchronize()\n", "cuda-synchronize"),
    ("from torch import cuda as tc\ntc.synchronize()\n", "cuda-synchronize"),
    ("from torch.cuda import amp\nwith amp.autocast():\n    pass\n", "cuda-amp-autocast"),
    ("model = make()\nmodel.cuda()\n", "module-cuda"),
    ("make().half().cuda(0)\n", "module-cuda"),
    ("from torch_xla.core import xla_model as xm\nxm.mark_step()\n", "xm-mark-step"),
    ("import torch_xla.core.xla_model as xm\nxm.mark_step()\n", "xm-mark-step"),
    ("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n", "allow-tf32"),
    ("import torch.backends.cuda as bc\nflag = bc.matmul.allow_tf32\n", "allow-tf32"),
    ('import torch.distributed as dist\ndist.init_process_group(backend="nccl")\n', "nccl-backend"),
    ('import torch.distributed as dist\ndist.init_process_group("nccl")\n', "nccl-backend"),
    ('launch(backend="nccl")\n', "nccl-backend"),
    ("from torch.utils.data import DataLoader\nDataLoader(ds, pin_memory=False)\n", "loader-pin-memory"),
    ('import torch\ntorch.device("cuda")\n', "cuda-device"),
    ('import torch\ntorch.device("cuda:1")\n', "cuda-device"),
    ('import torch\ntorch.device(type="cuda")\n', "cuda-device"),
    ('x.to("cuda")\n', "cuda-device"),
    ('import torch\ntorch.ones(2, device="cuda:0")\n', "cuda-device"),
    ('import torch\nwith torch.autocast(device_type="cuda"):\n    pass\n', "cuda-device"),
    ('from torch import autocast\nwith autocast("cuda"):\n    pass\n', "cuda-device"),
    ('import torch\ntorch.set_default_device("cuda")\n', "cuda-device"),
    ('def f(r, x):\n    d = f"cuda:{r}"\n    return x.to(d)\n', "cuda-fstring"),
    ('r = 0\nname = f"cuda:{r}"\n', "cuda-fstring"),
    ('name = "cuda:" + str(0)\n', "cuda-fstring"),
    ('name = "cuda:{}".format(0)\n', "cuda-fstring"),
    ('name = "cuda:%d" % 0\n', "cuda-fstring"),
    (
        "import torch\nimport torch.distributed as dist\ndist.init_process_group()\ntorch.cuda.current_device()\n",
        "init-no-backend",
    ),
    ("import torch.distributed as dist\ndist.init_process_group(init_method='env://')\nm.cuda()\n", "init-no-backend"),
    ("import torch.distributed as dist\ndist.init_process_group()\nx.to('cuda')\n", "init-no-backend"),
    ("x = x.to(dev)\nidx = x.nonzero()\n", "nonzero"),  # the file puts work on a device
    ("import torch\nx.to(dev)\nidx = torch.nonzero(x)\n", "nonzero"),
    ("from torch import nonzero\nimport torch\ntorch.cuda.synchronize()\nidx = nonzero(x)\n", "nonzero"),
    ("y = x[x > 0]\n", "bool-mask"),
    ("y = x[(x > 0) & (x < 5)]\n", "bool-mask"),
    ("y = x[~(x == 0)]\n", "bool-mask"),
    ("y = x[x > 0, :]\n", "bool-mask"),
    ("def f(x):\n    keep = x != 0\n    return x[keep]\n", "bool-mask"),
    ("for b in batches:\n    total += b.item()\n", "item-in-loop"),
    ("while True:\n    vals = t.tolist()\n", "item-in-loop"),
    ("vals = [t.item() for t in ts]\n", "item-in-loop"),
    ("from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=2)\nm.to(dev)\n", "dataloader-fork"),
    (
        "from torch.utils.data import DataLoader\ndef f(n, ds):\n    m.cuda()\n    return DataLoader(ds, num_workers=n)\n",
        "dataloader-fork",
    ),
    (
        "import torch.utils.data as tud\nW = 8\ntud.DataLoader(ds, 4, True, None, None, W)\nx = y.to(d)\n",
        "dataloader-fork",
    ),
    ('import torch\ntorch.compile(m, mode="reduce-overhead")\n', "compile-cudagraphs"),
    ('import torch\n@torch.compile(mode="max-autotune")\ndef f(x):\n    return x\n', "compile-cudagraphs"),
    ('model.compile(mode="reduce-overhead")\n', "compile-cudagraphs"),
    ("import torch\n@torch.compile(fullgraph=True)\ndef step(x):\n    return x.sum().item()\n", "fullgraph"),
    ("import torch\ndef step(x):\n    print(x)\nf = torch.compile(step, fullgraph=True)\n", "fullgraph"),
]

NEGATIVE = [
    ('note = "import torch_xla; torch.cuda.synchronize(); model.cuda()"\n', "xla-import"),
    ("# import torch_xla\n# torch.cuda.synchronize()\nx = 1\n", "cuda-synchronize"),
    ('"""model.cuda() x[x > 0] t.item() torch.device("cuda")"""\n', "module-cuda"),
    ('def f():\n    """x[x > 0] for t in ts: t.item()"""\n', "bool-mask"),
    ("import torch_xla_extras\nimport mytorch_xla\n", "xla-import"),
    ("import mylib\nmylib.cuda.synchronize()\n", "cuda-synchronize"),
    ("torch.cuda.synchronize()\n", "cuda-synchronize"),  # torch was never imported: nothing resolves
    ("import torch\ntorch.backends.cuda.matmul.fp32_precision = 'tf32'\n", "allow-tf32"),
    ('import torch.distributed as dist\ndist.init_process_group(backend="gloo")\n', "nccl-backend"),
    ('backend = "nccl"\nprint(backend)\n', "nccl-backend"),
    ("Loader(ds, pin_memory=True)\n", "loader-pin-memory"),
    ('import torch\nx.to("cpu")\ntorch.device("cpu")\ntorch.ones(2, device="mps")\n', "cuda-device"),
    ('label = "cuda cores"\nprint("runs on cuda", b"cuda")\n', "cuda-device"),
    ('import torch\ntorch.device("cudaz")\n', "cuda-device"),
    ('r = 0\nname = f"cpu:{r}"\nlabel = f"cuda is {r}"\n', "cuda-fstring"),
    (
        "import torch\nimport torch.distributed as dist\ndist.init_process_group('gloo')\ntorch.cuda.synchronize()\n",
        "init-no-backend",
    ),
    ("import torch.distributed as dist\ndist.init_process_group()\n", "init-no-backend"),
    ("import torch.distributed as dist\ndist.init_process_group(**opts)\nm.cuda()\n", "init-no-backend"),
    ("import numpy as np\nnp.nonzero(a)\n", "nonzero"),
    ("nonzero(a)\n", "nonzero"),
    ("y = x[0]\nz = x[i]\nw = x[1:2]\nv = d['k']\nt: dict[str, int] = {}\n", "bool-mask"),
    ("x[x > 0] = 0\n", "bool-mask"),
    ("v = t.item()\nfor v in t.tolist():\n    pass\ndef f():\n    return t.item()\n", "item-in-loop"),
    ("for t in ts:\n    def g(t=t):\n        return t.item()\n", "item-in-loop"),
    ("from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=0)\nm.to(dev)\n", "dataloader-fork"),
    ("from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=4)\n", "dataloader-fork"),
    (
        "import torch\ntorch.compile(m, mode='default')\ntorch.compile(m, mode='max-autotune-no-cudagraphs')\n",
        "compile-cudagraphs",
    ),
    ("import re\nre.compile('x', fullgraph=True)\n", "fullgraph"),
    ("import torch\ntorch.compile(m, fullgraph=False)\n", "fullgraph"),
    ("import torch\ntorch.compile(m, fullgraph=True)\n", "fullgraph"),  # no graph break in sight
    ("import torch\n@torch.compile(fullgraph=True)\ndef step(x):\n    return x * 2\n", "fullgraph"),
    ("idx = x.nonzero()\n", "nonzero"),  # nothing says x is on a device
]


@pytest.mark.parametrize("code, rule", POSITIVE)
def test_positive(rules, code, rule):
    assert rule in rule_ids(rules, code)


@pytest.mark.parametrize("code, rule", NEGATIVE)
def test_negative(rules, code, rule):
    assert rule not in rule_ids(rules, code)


def test_strings_comments_and_docstrings_never_match(rules):
    code = '''\
        """torch.cuda.synchronize() import torch_xla model.cuda() x[x > 0] t.item() f"cuda:{r}"."""
        # dist.init_process_group("nccl"); torch.compile(m, fullgraph=True)
        NOTE = 'x.to("cuda"), device="cuda", torch.nonzero(x), DataLoader(num_workers=4)'
        '''
    assert findings(rules, code) == []


@pytest.mark.parametrize(
    "code, how",
    [
        ('DEV = "cuda"\ndef f(x):\n    return x.to(DEV)\n', "followed"),
        ('def f(x, ok):\n    d = "cuda" if ok else "cpu"\n    return x.to(d)\n', "followed"),
        ('def f(x, d="cuda:0"):\n    return x.to(d)\n', "followed"),
        ('A = "cuda"\nB = A\ndef f(x):\n    return x.to(B)\n', "followed"),
        ('def f(x):\n    return x.to("cuda")\n', "direct"),
    ],
)
def test_device_values_are_followed(rules, code, how):
    assert [f[3] for f in findings(rules, code) if f[2] == "cuda-device"] == [how]


@pytest.mark.parametrize(
    "code",
    [
        'DEV = "cuda"\ndef f(x, DEV):\n    return x.to(DEV)\n',  # a parameter shadows the constant
        'def f(x):\n    d = "cuda"\ndef g(x):\n    return x.to(d)\n',  # another function's local
        "def f(x):\n    d = pick()\n    return x.to(d)\n",  # a call's value is unknown
    ],
)
def test_values_are_not_followed_out_of_scope(rules, code):
    found = [f for f in scan_source(textwrap.dedent(code), "t.py", rules) if f.rule == "cuda-device"]
    assert [f.related for f in found] == [()] * len(found)  # the literal is reported, no use is traced to it
    assert all(f.line != code.count("\n") for f in found)  # and never at the use


def test_other_followed_kinds(rules):
    code = """\
        import torch
        import torch.distributed as dist
        B = "nccl"
        MODE = "reduce-overhead"
        FULL = True
        dist.init_process_group(backend=B)
        torch.compile(m, mode=MODE, fullgraph=FULL)
        """
    assert findings(rules, code) == [
        (3, 5, "nccl-backend", "followed"),  # the line to change; the call is a use of it
        (7, 1, "compile-cudagraphs", "followed"),
    ]
    (nccl,) = [f for f in scan_source(textwrap.dedent(code), "t.py", rules) if f.rule == "nccl-backend"]
    assert nccl.related == ((6, 25),)  # the use is the argument (backend=B), the part a person edits


def test_a_backend_looked_up_in_a_mapping_is_a_use_of_its_nccl(rules):
    code = """\
        import torch.distributed as dist
        BACKENDS = {"xpu": "ccl", "cuda": "nccl"}
        def init(kind, backend=None):
            if backend is None:
                backend = BACKENDS.get(kind, "gloo")
            dist.init_process_group(backend=backend)
            dist.init_process_group({"cuda": "nccl"}[kind])
            dist.init_process_group(backend=unknown.get(kind))
        """
    found = [f for f in scan_source(textwrap.dedent(code), "t.py", rules) if f.rule == "nccl-backend"]
    assert [(f.line, f.related) for f in found] == [(2, ((6, 29),)), (7, ((7, 29),))]  # at the argument


def test_a_parameter_holds_what_the_files_calls_pass(rules):
    code = """\
        import argparse
        def evaluate(model, device):
            model.to(device)
        def train(model, *, dev="cpu"):
            model.to(dev)
        def other(model, device):
            model.to(device)
        p = argparse.ArgumentParser()
        p.add_argument("--device", default="cuda")
        args = p.parse_args()
        evaluate(None, args.device)
        evaluate(None, device=args.device)
        train(None, dev="cuda:0")
        other(*rest)
        """
    found = [f for f in scan_source(textwrap.dedent(code), "t.py", rules) if f.rule == "cuda-device"]
    # line 12 passes device= (a place a device goes, as before); never other()'s line 7
    # and the calls that pass it: line 11 at the argument
    assert [(f.line, f.related) for f in found] == [(9, ((3, 5), (11, 16), (12, 1))), (13, ((5, 5),))]


def _rule(kind: str, pattern: str) -> ScanRule:
    return ScanRule(
        id=f"{kind}-{pattern}", code="TPU999", kind=kind, pattern=pattern, severity="review", message="m", suggestion="s",
        page="migrate/x.md#a", link="migrate/x.md#a", path=PathPattern.parse(pattern),
    )  # fmt: skip


@pytest.mark.parametrize(
    "kind, pattern, code, hits",
    [
        ("call", "torch.cuda.*", "import torch\ntorch.cuda.synchronize()\ntorch.cuda.amp.autocast()\n", [2, 3]),
        ("call", "torch.cuda.*", "import torch\ntorch.cudax.f()\ntorch.cuda()\nx.cuda.f()\n", []),
        ("call", "*.pin_memory", "t.pin_memory()\nmake().pin_memory()\n", [1, 2]),
        ("call", "*.pin_memory", "pin_memory()\nt.pin_memory_x()\n", []),
        ("attribute", "torch.backends.cudnn.*", "import torch\ntorch.backends.cudnn.benchmark = True\n", [2]),
        ("attribute", "torch.backends.cudnn.*", "import torch\nb = torch.backends.cudnn\n", []),
        ("attribute", "torch.backends.cudnn", "import torch\ntorch.backends.cudnn.benchmark = True\n", [2]),
        ("attribute", "*.is_cuda", "if t.is_cuda:\n    pass\n", [1]),
    ],
)
def test_wildcards(kind, pattern, code, hits):
    rules = RuleSet.of([_rule(kind, pattern)])
    assert [f.line for f in scan_source(code, "t.py", rules)] == hits


def test_columns_are_characters_and_code_is_one_trimmed_line(rules):
    line = 's = "ééé"; i = t.to(d).nonzero()\n'
    (found,) = scan_source(line, "t.py", rules)
    assert (found.line, found.column, found.snippet) == (1, line.index("t.to") + 1, "t.to(d).nonzero()")
    long = "t.to(d).nonzero(" + ", ".join(f"arg{i}" for i in range(40)) + ")\n"
    (found,) = scan_source(long, "t.py", rules)
    assert len(found.snippet) <= 100 and found.snippet.endswith("…") and "\n" not in found.snippet
    multi = "t.to(d).nonzero(\n    a,\n)\n"
    assert [f.snippet for f in scan_source(multi, "t.py", rules)] == ["t.to(d).nonzero("]


@pytest.mark.parametrize(
    "content, line, message",
    [
        (b"import torch\n\ndef f(:\n", 3, "does not parse: invalid syntax; skipped"),
        (b"x = 1\n# caf\xe9\n", 2, "is not UTF-8 (byte 0xe9); skipped"),
        (b"x = 1\ny = '\x00'\n", 2, "contains a NUL byte; skipped"),
        (b"x = " + b"(" * 300 + b"1" + b")" * 300 + b"\n", 1, None),
        (b"x = " + b" + ".join([b"a"] * 20000) + b"\n", 1, None),
    ],
)
def test_bad_files_are_problems_not_exceptions(rules, tmp_path, content, line, message):
    path = tmp_path / "bad.py"
    path.write_bytes(content)
    found, problems = scan_file(path, "bad.py", rules)
    if message is None:  # too deep for the parser or the walk: either scanned or reported, never raised
        assert found == [] and len(problems) <= 1
        return
    assert found == [] and [(p.line, p.message) for p in problems] == [(line, message)]


def test_missing_file_is_a_problem(rules, tmp_path):
    found, problems = scan_file(tmp_path / "gone.py", "gone.py", rules)
    assert found == [] and problems[0].message.startswith("can't be read")


def test_bom_is_accepted(rules, tmp_path):
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbfimport torch_xla\n")
    assert [(f.line, f.column, f.rule) for f in scan_file(path, "bom.py", rules)[0]] == [(1, 1, "xla-import")]


def test_rules_table_problems_are_reported(tmp_path):
    bad = tmp_path / "rules.yml"
    bad.write_text(RULES.read_text().replace("match: {imports: triton}", "match: {imports: triton, call: x.y}"))
    with pytest.raises(KBError) as exc:
        load_rules([bad], tmp_path)
    assert any("exactly one of" in p.message for p in exc.value.problems)


def test_links():
    assert page_link("migrate/device-code.md#nccl", SiteBase(None)) == "migrate/device-code.md#nccl"
    base = SiteBase("https://handbook.example.org/tpu/")
    assert (
        page_link("migrate/device-code.md#nccl", base) == "https://handbook.example.org/tpu/migrate/device-code/#nccl"
    )
    assert page_link("migrate/index.md#a", base) == "https://handbook.example.org/tpu/migrate/#a"
    flat = SiteBase("https://h.example.org", directory_urls=False)
    assert page_link("migrate/device-code.md#nccl", flat) == "https://h.example.org/migrate/device-code.html#nccl"


def test_site_url_from_mkdocs_yml(tmp_path):
    (tmp_path / "mkdocs.yml").write_text("site_name: x\nsite_url: https://h.example.org/\n")
    rules = load_rules([RULES], tmp_path)
    assert rules.rules[0].link == "https://h.example.org/migrate/device-code/#xla-import"


@pytest.mark.parametrize(
    "setting, env, link",
    [
        ("!ENV SITE", {"SITE": "https://e.example.org/hb/"}, "https://e.example.org/hb/migrate/device-code/#xla-import"),
        ("!ENV SITE", {}, "migrate/device-code.md#xla-import"),  # unset: the page as written, never the tag's text
        ("!ENV [A, B, 'https://d.example.org/']", {"B": "https://b.example.org/"}, "https://b.example.org/migrate/device-code/#xla-import"),
        ("!ENV [A, B, 'https://d.example.org/']", {}, "https://d.example.org/migrate/device-code/#xla-import"),
    ],
)  # fmt: skip
def test_site_url_read_from_the_environment_as_mkdocs_reads_it(tmp_path, monkeypatch, setting, env, link):
    for name in ("SITE", "A", "B"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "mkdocs.yml").write_text(f"site_name: x\nsite_url: {setting}\n")
    assert load_rules([RULES], tmp_path).rules[0].link == link


# -- the sample repo, end to end ---------------------------------------------------------------

EXPECTED = """\
sample/aliased.py:2:1 xla-import
sample/aliased.py:5:1 xla-import
sample/aliased.py:9:29 nccl-backend
sample/aliased.py:10:10 cuda-amp-autocast
sample/aliased.py:12:5 cuda-synchronize
sample/aliased.py:13:5 xm-mark-step
sample/aliased.py:14:5 xm-mark-step
sample/followed.py:4:11 nccl-backend followed
sample/followed.py:5:10 cuda-device followed
sample/followed.py:10:14 cuda-device followed
sample/followed.py:14:19 cuda-fstring followed
sample/followed.py:17:14 bool-mask followed
sample/followed.py:18:16 compile-cudagraphs followed
sample/followed.py:22:22 cuda-device followed
sample/init_cuda.py:6:5 init-no-backend
sample/keep_ignored.py:1:1 xla-import
sample/sub/generated/gen.py:1:1 triton-import
sample/train_direct.py:5:1 xla-import
sample/train_direct.py:6:1 triton-import
sample/train_direct.py:11:42 nccl-backend
sample/train_direct.py:12:5 allow-tf32
sample/train_direct.py:13:13 module-cuda
sample/train_direct.py:14:31 cuda-device
sample/train_direct.py:15:5 cuda-synchronize
sample/train_direct.py:16:14 dataloader-fork
sample/train_direct.py:16:50 loader-pin-memory
sample/train_direct.py:21:11 nonzero
sample/train_direct.py:22:9 bool-mask
sample/train_direct.py:25:15 item-in-loop
sample/train_direct.py:26:25 cuda-device
sample/train_direct.py:31:8 compile-cudagraphs
sample/train_direct.py:31:8 fullgraph
sample/train_direct.py:32:9 cuda-fstring
""".splitlines()

EXPECTED_PROBLEMS = [
    "sample/broken_syntax.py:3: does not parse: invalid syntax; skipped",
    "sample/latin1.py:1: is not UTF-8 (byte 0xe9); skipped",
    "sample/outside_link.py:1: symlink leads out of the scanned tree; not followed",
]


@pytest.fixture
def sample(tmp_path, monkeypatch) -> Path:
    """The sample repo, plus what git would not keep: ignored files, skipped folders, symlinks out."""
    work = tmp_path / "work"
    shutil.copytree(SAMPLE, work / "sample")
    root = work / "sample"
    for rel in ("skip_ignored.py", "generated/gen.py", ".venv/lib.py", "node_modules/m.py", "__pycache__/c.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("import torch_xla\n")
    (root / "sub/generated").mkdir(parents=True)
    (root / "sub/generated/gen.py").write_text("import triton\n")  # '/generated/' is anchored: scanned
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "real.py").write_text("import torch_xla\n")
    (root / "outside_link.py").symlink_to(outside / "real.py")
    (root / "linked_dir").symlink_to(outside, target_is_directory=True)
    monkeypatch.chdir(work)
    return work


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["--root", os.getcwd(), "scan", "--rules", str(RULES), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_sample_end_to_end_json(sample, capsys):
    code, out, err = run(capsys, "--format", "json", "sample")
    doc = json.loads(out)
    got = [
        f"{f['path']}:{f['line']}:{f['column']} {f['rule']}" + (" followed" if f["match"] == "followed" else "")
        for f in doc["findings"]
    ]
    assert got == EXPECTED
    assert [f"{p['path']}:{p['line']}: {p['message']}" for p in doc["problems"]] == EXPECTED_PROBLEMS
    assert err.splitlines() == EXPECTED_PROBLEMS
    assert code == 1
    assert doc["tool"] == "kb scan" and doc["format"] == 2 and doc["files_scanned"] == 10
    first = doc["findings"][0]
    assert set(first) == {
        "path",
        "line",
        "column",
        "code",
        "rule",
        "severity",
        "match",
        "snippet",
        "message",
        "suggestion",
        "link",
        "fixable",
        "related",
    }
    assert first["snippet"] == "import torch_xla.core.xla_model as xm" and first["code"] == "TPU901"
    uses = {f"{f['line']}:{f['column']}": f["related"] for f in doc["findings"] if f["path"] == "sample/followed.py"}
    assert uses["5:10"] == [{"path": "sample/followed.py", "line": 13, "column": 11}]  # DEVICE, used by torch.device
    assert uses["14:19"] == [{"path": "sample/followed.py", "line": 15, "column": 12}]
    assert first["link"] == "migrate/device-code.md#xla-import" and first["severity"] == "must-change"
    assert doc["summary"]["must-change"] == 17 and doc["summary"]["by_rule"]["xla-import"] == 4


def test_sample_text_report(sample, capsys):
    code, out, _ = run(capsys, "sample")
    assert code == 1
    assert out.startswith(
        "sample/aliased.py\n  2:1  TPU901  must-change  xla-import  import torch_xla.core.xla_model as xm\n"
    )
    assert '  10:14  TPU910  must-change  cuda-device  "cuda"\n      used at 1 place(s): 11:13\n' in out
    assert "33 finding(s) in 6 of 10 file(s) scanned; 3 problem(s), listed on stderr\n" in out
    assert "by severity: must-change 17, review 13, info 3\n" in out
    assert "  TPU901  xla-import          must-change  4\n" in out


def test_exclude(sample, capsys):
    _, out, _ = run(capsys, "--format", "json", "--exclude", "followed.py", "--exclude", "sub/", "sample")
    paths = {f["path"] for f in json.loads(out)["findings"]}
    assert "sample/followed.py" not in paths and "sample/sub/generated/gen.py" not in paths
    assert "sample/aliased.py" in paths


def test_sarif_shape(sample, capsys):
    code, out, _ = run(capsys, "--format", "sarif", "sample")
    doc = json.loads(out)
    assert code == 1
    assert doc["version"] == "2.1.0" and doc["$schema"].endswith("sarif-2.1.0.json")
    (run_,) = doc["runs"]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "kb scan"
    ids = [r["id"] for r in driver["rules"]]
    assert len(ids) == len(set(ids)) == 18
    for r in driver["rules"]:
        assert r["shortDescription"]["text"] and r["properties"]["link"].startswith("migrate/device-code.md#")
        assert "helpUri" not in r  # SARIF wants an absolute URL: only with site_url (see test_sarif.py)
        assert r["defaultConfiguration"]["level"] in ("error", "warning", "note")
    assert len(run_["results"]) == len(EXPECTED)
    for res in run_["results"]:
        assert res["ruleId"] == ids[res["ruleIndex"]]
        assert res["level"] in ("error", "warning", "note") and res["message"]["text"]
        (loc,) = res["locations"]
        region = loc["physicalLocation"]["region"]
        assert loc["physicalLocation"]["artifactLocation"]["uri"].startswith("sample/")
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
    first = run_["results"][0]
    assert (first["ruleId"], first["level"]) == ("xla-import", "error")
    notes = run_["invocations"][0]["toolExecutionNotifications"]
    assert [n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for n in notes] == [
        "sample/broken_syntax.py",
        "sample/latin1.py",
        "sample/outside_link.py",
    ]


def test_exit_zero_when_nothing_must_change(sample, capsys):
    assert run(capsys, "sample/clean.py", "sample/init_cpu.py")[0] == 0
    code, out, _ = run(capsys, "sample/init_cuda.py")  # a review finding only
    assert code == 0 and "init-no-backend" in out


def test_a_named_file_is_scanned_even_if_ignored(sample, capsys):
    _, out, _ = run(capsys, "--format", "json", "sample/skip_ignored.py")
    assert [f["path"] for f in json.loads(out)["findings"]] == ["sample/skip_ignored.py"]


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return scan_cli(*args, cwd=cwd)


@pytest.mark.parametrize(
    "args, message",
    [
        (["no/such/path"], "python -m kb scan: no/such/path: no such file or folder"),
        (["--format", "xml", "tests"], "invalid choice: 'xml'"),
        (["--jobs", "-1", "tests"], "python -m kb scan: --jobs -1: expected 0 (one per core) or more"),
        (["--jobs", "two", "tests"], "invalid int value: 'two'"),
        (["--rules", "no/rules.yml", "tests"], "no/rules.yml:1: no such rules file"),
    ],
)
def test_usage_errors_exit_2_without_traceback(args, message):
    result = _cli(*args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr


def test_cli_bad_inputs_never_traceback():
    result = _cli("tests/scan_sample")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "tests/scan_sample/latin1.py:1: is not UTF-8" in result.stderr


def test_parallel_matches_serial(tmp_path):
    for i in range(150):
        body = "import torch\n" + ("x.to('cuda')\n" if i % 3 == 0 else "y = 1\n") + ("def f(:\n" if i == 7 else "")
        (tmp_path / f"m{i:03}.py").write_text(body)
    serial = _cli("--format", "json", "--jobs", "1", ".", cwd=tmp_path)
    parallel = _cli("--format", "json", "--jobs", "2", ".", cwd=tmp_path)
    assert serial.returncode == parallel.returncode == 1
    assert serial.stdout == parallel.stdout and serial.stderr == parallel.stderr
    doc = json.loads(parallel.stdout)
    assert len(doc["findings"]) == 50 and doc["files_scanned"] == 150 and len(doc["problems"]) == 1


def test_dev_scan_runs_from_the_callers_folder():
    result = subprocess.run(
        [str(ROOT / "dev"), "scan", "--format", "json", "scan_sample/clean.py"],
        cwd=ROOT / "tests",
        capture_output=True,
        text=True,
    )
    # Without docs/data/migration_rules.yml the scan stops with a usage error; with it, it runs.
    if (ROOT / "docs/data/migration_rules.yml").is_file():
        assert result.returncode in (0, 1) and json.loads(result.stdout)["files_scanned"] == 1
    else:
        assert result.returncode == 2 and "no rules table" in result.stderr


def test_the_real_rules_load_and_a_catch_all_rule_stays_quiet_where_a_specific_one_spoke():
    real = load_rules([ROOT / "docs" / "data" / "migration_rules.yml"], ROOT)
    code = "import torch\ntorch.cuda.synchronize()\ntorch.cuda.ipc_collect()\n"
    assert [(f.line, f.rule) for f in scan_source(code, "t.py", real)] == [
        (2, "cuda-synchronize"),
        (3, "torch-cuda-other"),
    ]
