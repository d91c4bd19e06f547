"""The warning filters of troubleshooting.md#warning-filters, run on this interpreter.

torch-tpu is never imported: each TorchTPU warning is issued here with the prefix and the
built-in class the wheel gives it (read from the wheel's torch_tpu/_internal/warnings.py), from
an imported module as the wheel's warnings are, after the filter the wheel appends at import.
The page's code block runs as shipped; its shell filters run through PYTHONWARNINGS and -W.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from conftest import ROOT

PAGE = ROOT / "docs" / "migrate" / "troubleshooting.md"
SNIPPET = ROOT / "snippets" / "warnings" / "filter_warnings.py"
CLAIMS = ROOT / "docs" / "data" / "claims.warnings.yml"
TREE_LINE = re.compile(r"^(?P<lead>[ │├└─]*)(?P<name>[A-Z][A-Za-z]+)$")

# An imported module of the user's that triggers every TorchTPU warning, after the filter
# torch-tpu installs at import (_tcmalloc_check.install_default_filters, appended).
EMITTER = """\
import re
import warnings

warnings.filterwarnings("once", message=re.escape("<TorchTpu/Performance/TcMalloc/> "),
                        category=UserWarning, append=True)


def emit(cases):
    for message, deprecated in cases:
        try:
            warnings.warn(message, DeprecationWarning if deprecated else UserWarning)
        except Warning as exc:
            print("raised:", str(exc).split(">")[0] + ">")
"""


def wheel_prefixes(wheel: Path) -> list[str]:
    """The prefix of every category in the tree that the wheel's warnings module documents."""
    with zipfile.ZipFile(wheel) as archive:
        doc = archive.read("torch_tpu/_internal/warnings.py").decode()
        tcmalloc = archive.read("torch_tpu/_tcmalloc_check.py").decode()
    tree = doc.split("hierarchy:", 1)[1].split("Prefix format", 1)[0]
    paths: list[list[str]] = []
    for line in tree.strip().splitlines():
        m = TREE_LINE.match(line.strip("\n").removeprefix("  "))
        if m:
            depth = len(m["lead"]) // 4
            parent = paths[-1] if paths else []
            paths.append([*parent[:depth], m["name"]])
    prefixes = ["<" + "".join(f"{seg}/" for seg in path) + ">" for path in paths]
    assert '"<TorchTpu/Performance/TcMalloc/> "' in tcmalloc  # the prefix the tree gives, written out
    return prefixes


def cases(prefixes: list[str]) -> list[tuple[str, bool]]:
    """One warning per category, with the class the wheel issues it with."""
    return [(f"{p} a message", p.startswith("<TorchTpu/ApiStage/DeprecatedApi/")) for p in prefixes]


def run(tmp_path: Path, main: str, prefixes: list[str], *python_args: str, env: dict[str, str] | None = None):
    (tmp_path / "user_module.py").write_text(EMITTER)
    script = tmp_path / "main.py"
    script.write_text(f"{main}\nimport user_module\nuser_module.emit({cases(prefixes)!r})\n")
    full_env = dict(os.environ)
    full_env.pop("PYTHONWARNINGS", None)
    full_env.update(env or {})
    result = subprocess.run(
        [sys.executable, *python_args, str(script)],
        cwd=tmp_path,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    shown = {p for p in prefixes if f"UserWarning: {p}" in result.stderr or f"DeprecationWarning: {p}" in result.stderr}
    raised = set(re.findall(r"^raised: (\S+)$", result.stdout, re.M))
    return shown, raised


@pytest.mark.slow  # reads the real wheel (downloaded once)
def test_the_kb_names_every_category_the_wheel_defines(real_wheels):
    prefixes = wheel_prefixes(real_wheels)
    assert "<TorchTpu/Performance/TcMalloc/>" in prefixes and "<TorchTpu/>" in prefixes, prefixes
    parents = {p for p in prefixes if any(q != p and q.startswith(p[:-1]) for q in prefixes)}
    claims = {rec["id"]: rec for rec in yaml.safe_load(CLAIMS.read_text())}
    stated = set(re.findall(r"`(<TorchTpu/[^`]*>)`", claims["warning-categories"]["statement"]))
    assert stated == (set(prefixes) - parents) | {"<TorchTpu/>"}, sorted(stated ^ set(prefixes))


@pytest.mark.slow  # reads the real wheel (downloaded once)
def test_without_a_filter_a_deprecation_from_an_imported_module_is_hidden(tmp_path, real_wheels):
    prefixes = wheel_prefixes(real_wheels)
    shown, raised = run(tmp_path, "", prefixes)
    deprecated = {p for p in prefixes if p.startswith("<TorchTpu/ApiStage/DeprecatedApi/")}
    assert deprecated and shown == set(prefixes) - deprecated and not raised
    shown, _ = run(tmp_path, "", prefixes, "-W", "default:<TorchTpu/ApiStage/DeprecatedApi/")
    assert shown == set(prefixes)


@pytest.mark.slow  # reads the real wheel (downloaded once)
def test_the_pages_code_filters_do_what_the_page_says(tmp_path, real_wheels):
    """filter_warnings.py, as the page includes it: performance hidden, correctness an error,
    deprecations shown, the rest as before; it runs with torch 2.13 imported, as shipped."""
    page = PAGE.read_text(encoding="utf-8")
    assert '--8<-- "warnings/filter_warnings.py"' in page
    prefixes = wheel_prefixes(real_wheels)
    shown, raised = run(tmp_path, SNIPPET.read_text(), prefixes)
    performance = {p for p in prefixes if p.startswith("<TorchTpu/Performance/")}
    assert raised == {"<TorchTpu/Correctness/>"}
    assert shown == set(prefixes) - performance - raised


def shell_filters() -> list[tuple[str, str]]:
    """(form, filter) of each line of the page's shell block under #warning-filters."""
    section = PAGE.read_text(encoding="utf-8").split("{#warning-filters}", 1)[1].split("\n### ", 1)[0]
    found = re.findall(r'^(PYTHONWARNINGS)="([^"]+)" python \S+$|^python (-W) "([^"]+)" \S+$', section, re.M)
    return [(a or c, b or d) for a, b, c, d in found]


@pytest.mark.slow  # reads the real wheel (downloaded once)
def test_the_pages_shell_filters_do_what_the_page_says(tmp_path, real_wheels):
    prefixes = wheel_prefixes(real_wheels)
    forms = shell_filters()
    assert [form for form, _ in forms] == ["PYTHONWARNINGS", "-W"], forms
    deprecated = {p for p in prefixes if p.startswith("<TorchTpu/ApiStage/DeprecatedApi/")}
    performance = {p for p in prefixes if p.startswith("<TorchTpu/Performance/")}
    shown, raised = run(tmp_path, "", prefixes, env={"PYTHONWARNINGS": forms[0][1]})
    assert shown == set(prefixes) - deprecated - performance and not raised
    shown, raised = run(tmp_path, "", prefixes, "-W", forms[1][1])
    assert raised == set(prefixes) and not shown
