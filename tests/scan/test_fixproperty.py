"""Property: for random files and a random edit made while ``--fix`` runs (after the scan, while the
fix is computed, just before the replace, or none), a file is either fixed from the text it had,
or left byte-identical with a ``path:line: message`` naming it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT
from kb.scan.scan import scan_source
from kb.scan.scanfix import FixError, fix_text, fixes_for
from kb.scan.scanrules import load_rules

EXAMPLES = int(os.environ.get("KB_HYPOTHESIS_EXAMPLES", "25"))
RULES = load_rules(sorted((ROOT / "docs" / "data").glob("migration_rules*.yml")), ROOT)
LINES = [
    "torch.cuda.synchronize()",
    "p(12); torch.cuda.synchronize()",
    "x = 'cuda'",
    "y = torch.cuda.device_count()",
    "print('keep')",
    "   ",
    "\t",
    "# torch.cuda.synchronize()",
    "\x0c",
    "",
]
FILES = st.lists(st.tuples(st.sampled_from(LINES), st.sampled_from(["\n", "\r\n", "\r"])), min_size=1, max_size=12).map(
    lambda lines: ("import torch\n" + "".join(a + b for a, b in lines)).encode()
)
EDITS = st.sampled_from([None, "after scan", "while fixing", "before replace"])
APPENDED = st.sampled_from([b"saved = 1\n", b"\r", b"torch.cuda.synchronize()\n", b""])


def expected_fix(raw: bytes) -> bytes:
    text = raw.decode("utf-8")
    try:
        return fix_text(text, fixes_for(scan_source(text, "t.py", RULES), RULES.by_id()))[0].encode()
    except (SyntaxError, FixError):
        return raw


@settings(max_examples=EXAMPLES, deadline=None)
@given(FILES, EDITS, APPENDED)
def test_a_file_is_fixed_from_the_text_it_had_or_left_with_a_message(raw, edit, appended):
    import contextlib
    import io

    import kb.scan.fixwrite
    import kb.scan.scanfix
    import kb.scan.scanrun
    from kb.__main__ import main

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.py"
        path.write_bytes(raw)
        saved: list[bytes] = []

        def save(*_: object) -> None:  # the user's edit, if --fix reaches that step
            saved.append(raw + appended)
            path.write_bytes(saved[-1])

        originals = (kb.scan.scanrun.scan_all, kb.scan.scanfix.fix_text, kb.scan.fixwrite.BEFORE_REPLACE)

        def after(step, *args, **kwargs):
            out = step(*args, **kwargs)
            save()
            return out

        if edit == "after scan":
            kb.scan.scanrun.scan_all = lambda *a, **k: after(originals[0], *a, **k)
        elif edit == "while fixing":
            kb.scan.scanfix.fix_text = lambda *a, **k: after(originals[1], *a, **k)
        elif edit == "before replace":
            kb.scan.fixwrite.BEFORE_REPLACE = save
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                main(["--root", str(ROOT), "scan", "--fix", "--jobs", "1", str(path)])
        finally:
            kb.scan.scanrun.scan_all, kb.scan.scanfix.fix_text, kb.scan.fixwrite.BEFORE_REPLACE = originals
        result, now = path.read_bytes(), saved[-1] if saved else raw
        fixed = expected_fix(raw)
        if result != now:  # written: only from the text it had, and only when nobody changed it
            assert now == raw and result == fixed, (raw, edit, result)
        elif fixed != raw and now != fixed:  # left alone although it had something to fix: said so
            assert f"{path}:" in err.getvalue(), (raw, edit, err.getvalue())


# ---- what --fix leaves: never a hidden finding, never a second change, always Python ----

GPU_FILES = sorted(
    [*ROOT.glob("snippets/*/*_gpu.py"), *ROOT.glob("tests/scan_fix/*.py"), ROOT / "tests/scan_sample/followed.py"]
)


def _lines(text: str) -> list[str]:
    return text.splitlines()


def test_fix_keeps_every_finding_it_did_not_fix_changes_nothing_twice_and_leaves_python():
    """On the handbook's own GPU samples: each must-change finding the fixer was not asked to fix is
    reported again after the fix, on a line with the same text (a fix never hides one); a second
    fix changes nothing; every fixed file still compiles."""
    by_id = RULES.by_id()
    checked = 0
    for path in GPU_FILES:
        text = path.read_text("utf-8")
        before = scan_source(text, path.name, RULES)
        fixed, count = fix_text(text, fixes_for(before, by_id))
        if not count:
            continue
        checked += 1
        compile(fixed, str(path), "exec")
        after = scan_source(fixed, path.name, RULES, before=text)
        assert len(_lines(fixed)) == len(_lines(text))  # a fix rewrites within lines: findings keep their line
        left = {(f.rule, f.line) for f in after}
        for f in before:
            offered = by_id[f.rule].fix is not None and not f.manual
            if f.severity == "must-change" and not offered:
                assert (f.rule, f.line) in left, f"{path.name}:{f.line}: {f.rule} was hidden by the fix"
                assert _lines(fixed)[f.line - 1] == _lines(text)[f.line - 1], f"{path.name}:{f.line}: half-fixed"
        again, more = fix_text(fixed, fixes_for(after, by_id))
        assert (again, more) == (fixed, 0), f"{path.name}: a second fix changed it again"
    assert checked >= 5, "too few samples had anything to fix"


def test_a_fix_of_one_cuda_call_does_not_hide_an_unfixed_torch_load():
    text = 'import torch\nmodel = torch.nn.Linear(2, 2).cuda()\nstate = torch.load("ckpt.pt")\n'
    before = scan_source(text, "t.py", RULES)
    fixed, count = fix_text(text, fixes_for(before, RULES.by_id()))
    assert count == 1 and ".cuda()" not in fixed
    assert "load-without-map-location" in {f.rule for f in scan_source(fixed, "t.py", RULES, before=text)}


def test_fixable_means_the_fixer_rewrites_it():
    """A replace fix rewrites its one literal: a per-device backend string naming nccl is reported,
    not offered as fixable, and a fix leaves it as it was."""
    text = 'import torch.distributed as dist\ndist.init_process_group(backend="cuda:nccl,cpu:gloo")\n'
    found = [f for f in scan_source(text, "t.py", RULES) if f.rule == "nccl-backend"]
    assert found and all(f.manual for f in found)
    assert fix_text(text, fixes_for(found, RULES.by_id())) == (text, 0)
