"""Every shell block on a page is run here as written (``data-run``) or says why not (``data-norun``).

The blocks of the worked port are run by tests/content/test_port.py, the Accelerate launch by
tests/content/test_frameworks.py, the rest below. A page's
``~/src/my-training-repo`` is the reader's own repository: it runs with ``HOME`` set to a folder
where that repository holds a copy of the handbook's GPU training script.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import test_port

from conftest import ROOT
from pagecmds import Block, all_marked_blocks, marked_blocks, run_block, shell_blocks

DOCS = ROOT / "docs"
SCAN_PAGE = DOCS / "migrate" / "scan-your-code.md"
SCAN = r"^\./dev scan ~/src/my-training-repo "
SCAN_FIX = r"^\./dev scan --diff ~/src/my-training-repo .*\n\./dev scan --fix  ?~/src/my-training-repo "
SCAN_FORMATS = r"^\./dev scan --format concise ~/src/my-training-repo "
REVIEW = r"^\./dev review( |$)"
BENCH = r"^PYTHONPATH=scripts \.venv/bin/python benchmarks/bench\.py sitecheck "
CHECKS = {
    "docs/migrate/worked-port.md": test_port.CHECKED,
    "docs/migrate/scan-your-code.md": (SCAN, SCAN_FIX, SCAN_FORMATS),
    "docs/about/review-queue.md": (REVIEW,),
    "docs/about/contributing.md": (REVIEW,),
    "docs/about/site-checks.md": (BENCH,),
    "docs/frameworks/accelerate.md": (r"\npython accelerate_tpu\.py$",),  # run by tests/content/test_frameworks.py
}
FINDING = re.compile(r"^  \d+:\d+  TPU\d{3}  (must-change|review|info)  \S+  ", re.M)
CONCISE = re.compile(r"^/\S+/train_gpu\.py:\d+:\d+: TPU\d{3} \S")
DUE = re.compile(r"^\S+:\d+: due for review: \S")
SUMMARY = re.compile(r"^\d+ item\(s\) due for review as of \d{4}-\d\d-\d\d \(max age \d+ days\)$")


def marker_problems(docs: Path) -> list[str]:
    """Each shell block that carries neither marker, both, or a reason too short to be one."""
    problems = []
    for page in sorted(docs.rglob("*.md")):
        for fence in shell_blocks(page):
            where = f"{page.relative_to(docs.parent)}:{fence.line}"
            if (fence.run is None) == (fence.norun is None):
                problems.append(f'{where}: a {fence.lang} block needs one of data-run="FOLDER" or data-norun="WHY"')
            elif fence.norun is not None and len(fence.norun.split()) < 3:
                problems.append(f"{where}: data-norun should say why the tests cannot run it: {fence.norun!r}")
    return problems


def test_every_shell_block_is_run_or_says_why_not():
    assert marker_problems(DOCS) == []


def test_an_unmarked_block_is_found(tmp_path):
    page = tmp_path / "docs" / "p.md"
    page.parent.mkdir()
    page.write_text(
        '```sh\nls\n```\n\n```{.bash title="a.sh" data-norun="needs a TPU VM"}\nx\n```\n\n'
        '    ```console {data-run="."}\n    ls\n    ```\n\n```bash {data-norun="no"}\nx\n```\n'
        "```python\nprint()\n```\n"
    )
    assert marker_problems(tmp_path / "docs") == [
        'docs/p.md:1: a sh block needs one of data-run="FOLDER" or data-norun="WHY"',
        "docs/p.md:13: data-norun should say why the tests cannot run it: 'no'",
    ]
    assert [b.command for b in marked_blocks(page)] == ["ls\n"]


def test_every_run_block_has_one_check():
    blocks = all_marked_blocks(DOCS)
    assert {str(b.page.relative_to(ROOT)) for b in blocks} == set(CHECKS)
    for block in blocks:
        where = f"{block.page.relative_to(ROOT)}:{block.line}"
        patterns = CHECKS[str(block.page.relative_to(ROOT))]
        assert sum(bool(re.search(p, block.command.strip())) for p in patterns) == 1, f"{where}: no check"
        assert (ROOT / block.cwd).is_dir(), f"{where}: data-run names no folder of the handbook"


def page_block(page: Path, pattern: str) -> Block:
    found = [b for b in marked_blocks(page) if re.search(pattern, b.command.strip())]
    assert len(found) == 1, f"{page.name}: expected one block marked data-run matching {pattern}, found {found}"
    assert found[0].cwd == ".", "./dev runs from the handbook's root"
    return found[0]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A reader's home folder with ~/src/my-training-repo, a GPU training script in it."""
    repo = tmp_path / "home" / "src" / "my-training-repo"
    repo.mkdir(parents=True)
    shutil.copy(test_port.GPU, repo / "train_gpu.py")
    return tmp_path / "home"


def test_step_1_scans_the_readers_repository(home):
    """Findings grouped by file, each line:column, code, severity, name; exit 1 on must-change."""
    result = run_block(page_block(SCAN_PAGE, SCAN), ROOT, home=home)
    assert result.returncode == 1, result.stdout + result.stderr[-3000:]
    assert result.stdout.startswith(f"{home}/src/my-training-repo/train_gpu.py\n"), result.stdout[:300]
    assert FINDING.search(result.stdout) and "[fixable]" in result.stdout, result.stdout


@pytest.mark.slow
def test_step_3_prints_the_fixes_then_makes_them(home):
    script = home / "src" / "my-training-repo" / "train_gpu.py"
    before = script.read_text()
    result = run_block(page_block(SCAN_PAGE, SCAN_FIX), ROOT, home=home)
    assert result.returncode == 1, result.stdout + result.stderr[-3000:]  # judgement calls remain
    assert f"--- {script}" in result.stdout or "--- a/" in result.stdout, result.stdout[:500]
    added = re.findall(r"^\+(?!\+\+ )(.*)$", result.stdout, re.M)
    after = script.read_text().splitlines()
    assert added and script.read_text() != before and all(line in after for line in added)


def test_step_6_writes_each_format(home):
    result = run_block(page_block(SCAN_PAGE, SCAN_FORMATS), ROOT, home=home)
    assert result.returncode == 1, result.stdout + result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines and all(CONCISE.match(line) for line in lines), result.stdout
    report = json.loads((home / "scan.json").read_text())
    assert len(report["findings"]) == len(lines)
    sarif = json.loads((home / "scan.sarif").read_text())
    assert sarif["version"] == "2.1.0" and len(sarif["runs"][0]["results"]) == len(lines)


@pytest.mark.slow
@pytest.mark.parametrize("page", ["review-queue.md", "contributing.md"])
def test_the_review_commands_print_one_line_per_item(page):
    """Each command prints `path:line: due for review: why` lines, and a summary on stderr; the
    block's last command asks about a day far enough ahead that something is due, so it exits 1."""
    block = page_block(DOCS / "about" / page, REVIEW)
    result = run_block(block, ROOT)
    lines = result.stdout.splitlines()
    commands = [line for line in block.command.splitlines() if line.strip()]
    summaries = [line for line in result.stderr.splitlines() if SUMMARY.match(line)]
    assert len(summaries) == len(commands), result.stderr
    assert lines and all(DUE.match(line) for line in lines), result.stdout
    assert "--today 2027-03-01" in commands[-1] and result.returncode == 1


# The page's benchmark commands take minutes on their full input (a 1,000-page site, three builds of
# the handbook with and without its hook). The test runs each as written with a smaller input
# appended (argparse keeps an option's last value): the same code paths and the same report lines.
SMALLER = {"sitecheck": " --pages 60 --runs 1", "overhead": " --runs 1"}
BENCH_PAGES = 60 + 2  # the generated pages, the home page and 404.html


def smaller_bench(command: str) -> str:
    """``command`` with each ``bench.py`` line given the smaller input of its mode (each mode once)."""
    lines, seen = [], []
    for line in command.splitlines():
        mode = re.search(r"benchmarks/bench\.py (\w+)", line)
        if mode:
            assert mode[1] in SMALLER, f"no smaller input for bench.py {mode[1]}: add it to SMALLER"
            seen.append(mode[1])
            line += SMALLER[mode[1]]
        lines.append(line)
    assert sorted(seen) == sorted(SMALLER), seen
    return "\n".join(lines) + "\n"


@pytest.mark.build
def test_the_benchmarks_run_and_print_their_timings():
    """A generated site, then the handbook built with and without its hook (one run each)."""
    block = page_block(DOCS / "about" / "site-checks.md", BENCH)
    result = run_block(block._replace(command=smaller_bench(block.command)), ROOT, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert re.search(rf"^generated and built {BENCH_PAGES} HTML pages", result.stdout, re.M), result.stdout
    assert re.search(r"^kb check-site: median \S+ s over 1 runs \(min \S+, max \S+\); 0 problem", result.stdout, re.M)
    assert re.search(r"^mkdocs build without the hook: median \S+ s; with the hook: \S+ s", result.stdout, re.M)
    assert re.search(r"^KB validation \+ shortcode rendering of \d+ pages", result.stdout, re.M)
    assert re.search(r"^built-site check of the real site: median", result.stdout, re.M), result.stdout


def test_the_smaller_bench_input_is_appended_to_each_mode():
    command = "X=1 python benchmarks/bench.py sitecheck --pages 1000\npython benchmarks/bench.py overhead\n"
    assert smaller_bench(command) == (
        "X=1 python benchmarks/bench.py sitecheck --pages 1000 --pages 60 --runs 1\n"
        "python benchmarks/bench.py overhead --runs 1\n"
    )
    with pytest.raises(AssertionError, match="no smaller input for bench.py scan"):
        smaller_bench("python benchmarks/bench.py scan\n")
