"""kb.scan.scanguard: a torch.cuda.is_available() that only lets CUDA-only code run is reported as a
guard (review, no fix), because rewriting it would let that code run, and raise, on a TPU host."""

from __future__ import annotations

import textwrap

import pytest

from conftest import ROOT
from kb.scan.scan import scan_source
from kb.scan.scanfix import fix_text, fixes_for
from kb.scan.scanrules import RuleSet, load_rules

CAPABILITY = "torch.cuda.get_device_capability()"  # must-change, and no fix rewrites it


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return load_rules(sorted((ROOT / "docs" / "data").glob("migration_rules*.yml")), ROOT)


def probe_rule(real: RuleSet, code: str) -> str:
    """The rule reported for the is_available() call of ``code`` (its only one)."""
    source = "import torch\n" + textwrap.dedent(code)
    found = [f for f in scan_source(source, "t.py", real) if "is_available" in f.snippet]
    assert len(found) == 1, found
    return found[0].rule


@pytest.mark.parametrize(
    "code",
    [
        f"ok = torch.cuda.is_available() and {CAPABILITY} >= (9, 0)\n",
        f"if torch.cuda.is_available():\n    cap = {CAPABILITY}\n",
        f"if not torch.cuda.is_available():\n    pass\nelse:\n    cap = {CAPABILITY}\n",
        f"cap = {CAPABILITY} if torch.cuda.is_available() else None\n",
        f"ok = not torch.cuda.is_available() or {CAPABILITY}\n",
        f"while torch.cuda.is_available():\n    cap = {CAPABILITY}\n",
        f"if x and torch.cuda.is_available() and y:\n    cap = {CAPABILITY}\n",
        f'name = "é"; ok = torch.cuda.is_available() and {CAPABILITY}\n',  # columns in characters
        f"def f():\n    return (\n        torch.cuda.is_available()\n        and {CAPABILITY}\n    )\n",
        f"def f():\n    if not torch.cuda.is_available():\n        return None\n    return {CAPABILITY}\n",
        f"for d in ds:\n    if not torch.cuda.is_available():\n        continue\n    cap = {CAPABILITY}\n",
        f"def f():\n    use_cuda = not cpu and torch.cuda.is_available()\n    if use_cuda:\n        cap = {CAPABILITY}\n",
    ],
)
def test_a_guard_around_cuda_only_code_is_review_and_not_fixed(real, code):
    assert probe_rule(real, code) == "cuda-only-guard"


@pytest.mark.parametrize(
    "code",
    [
        'if torch.cuda.is_available():\n    device = "cuda"\n',  # picks the device: the fix is right
        "if torch.cuda.is_available():\n    torch.cuda.synchronize()\n",  # the body is fixed too
        f"if not torch.cuda.is_available():\n    cap = {CAPABILITY}\n",  # runs when it is False
        f"ok = torch.cuda.is_available() or {CAPABILITY}\n",  # likewise
        f"if torch.cuda.is_available():\n    pass\nelse:\n    cap = {CAPABILITY}\n",
        "assert torch.cuda.is_available()\n",
        f"def f():\n    if not torch.cuda.is_available():\n        log()\n    return {CAPABILITY}\n",  # no exit
        'if torch.cuda.is_available():\n    dev = torch.device(f"cuda:{rank % 8}")\n',  # picks the device
        "if torch.cuda.is_available():\n    model = DDP(model, device_ids=[rank])\n",  # turns DDP on
        f"use_cuda = torch.cuda.is_available()\nif use_cuda:\n    cap = {CAPABILITY}\n",  # module level: not followed
        f"def f():\n    use_cuda = torch.cuda.is_available()\n    if not use_cuda:\n        cap = {CAPABILITY}\n",
        f"def f():\n    no_cuda = not torch.cuda.is_available()\n    if no_cuda:\n        cap = {CAPABILITY}\n",
    ],
)
def test_a_probe_that_picks_or_guards_fixable_code_stays_must_change(real, code):
    assert probe_rule(real, code) == "cuda-is-available"


def test_the_fixer_leaves_the_guard_and_fixes_the_probe(real):
    text = (
        "import torch\n"
        f"new = torch.cuda.is_available() and {CAPABILITY} >= (9, 0)\n"
        'device = "cuda" if torch.cuda.is_available() else "cpu"\n'
    )
    findings = scan_source(text, "t.py", real)
    fixed, count = fix_text(text, fixes_for(findings, real.by_id()))
    lines = fixed.splitlines()
    assert lines[1] == f"new = torch.cuda.is_available() and {CAPABILITY} >= (9, 0)"
    assert "torch.accelerator.is_available()" in lines[2] and count == 2  # the probe and its "cuda"


def test_without_the_guard_rule_the_probe_is_reported_as_before(real):
    table = RuleSet.of([rule for rule in real.rules if rule.id != "cuda-only-guard"])
    text = f"import torch\nok = torch.cuda.is_available() and {CAPABILITY}\n"
    assert "cuda-is-available" in {f.rule for f in scan_source(text, "t.py", table)}
