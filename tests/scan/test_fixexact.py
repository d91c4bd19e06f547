"""``--fix`` changes only the spans it rewrites: every other byte of the file stays as read (form
feeds, ``\\r`` line ends, trailing whitespace-only lines), and a file LibCST can't handle (nested
too deeply, or read differently from the text) is a FixError at its line, never a crash."""

from __future__ import annotations

import pytest

from conftest import ROOT
from kb.scan.scan import scan_source
from kb.scan.scanfix import FixError, fix_text, fixes_for
from kb.scan.scanrules import RuleSet, load_rules


@pytest.fixture(scope="module")
def real() -> RuleSet:
    return load_rules(sorted((ROOT / "docs" / "data").glob("migration_rules*.yml")), ROOT)


def fix(real: RuleSet, code: str) -> str:
    return fix_text(code, fixes_for(scan_source(code, "t.py", real), real.by_id()))[0]


@pytest.mark.parametrize(
    "before, after",
    [
        (
            "import torch\n\x0c\ntorch.cuda.synchronize()\n",
            "import torch\n\x0c\ntorch.accelerator.synchronize()\n",
        ),
        (
            "import torch\rtorch.cuda.synchronize()\rx = 1\r",
            "import torch\rtorch.accelerator.synchronize()\rx = 1\r",
        ),
        (
            "import torch\r\ntorch.cuda.synchronize()\nx = 1\r\n",
            "import torch\r\ntorch.accelerator.synchronize()\nx = 1\r\n",
        ),
        (
            "import torch\ntorch.cuda.synchronize()\n   \n\t\n",
            "import torch\ntorch.accelerator.synchronize()\n   \n\t\n",
        ),
        (
            "import torch\ntorch.cuda.synchronize()  \nx = 1 \\\n  + 2   \n\n\n",
            "import torch\ntorch.accelerator.synchronize()  \nx = 1 \\\n  + 2   \n\n\n",
        ),
        (  # the import torch it adds ends like the file's lines
            "from torch.cuda import current_device as here\rx = here()\r",
            "from torch.cuda import current_device as here\rimport torch\r\rx = torch.accelerator.current_device_index()\r",
        ),
    ],
)
def test_bytes_outside_the_fixed_spans_are_unchanged(real, before, after):
    assert fix(real, before) == after


def test_a_form_feed_libcst_drops_on_a_fixed_line_refuses_the_file(real):
    code = "import torch\n\x0ctorch.cuda.synchronize(); torch.cuda.synchronize()\n"
    try:
        out = fix(real, code)
    except FixError as exc:
        assert exc.line == 2 and "not fixed" in exc.message
    else:  # fixed only where the span is certain: every \x0c stays
        assert out.count("\x0c") == 1 and out.replace("accelerator", "cuda") == code


def test_literals_nested_too_deeply_for_libcst_are_a_fix_error_not_a_crash(real):
    code = "import torch\nx = torch.cuda.synchronize(" + "[" * 150 + "]" * 150 + ")\n"
    assert scan_source(code, "t.py", real)  # the scan reads it
    with pytest.raises(FixError) as caught:
        fix(real, code)
    assert "not fixed" in caught.value.message
