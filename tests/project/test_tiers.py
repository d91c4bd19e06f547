"""The test tiers (CONTRIBUTING.md, "Tests"): pytest.ini registers the markers strictly, `./dev test
--quick` leaves out every marked test, and every test that builds the site is marked ``build``, so
the quick tier never starts a build (read from the test files' syntax, not by running them)."""

from __future__ import annotations

import ast
import configparser

from conftest import ROOT

TESTS = ROOT / "tests"
MARKERS = ("browser", "build", "slow")
QUICK = "not browser and not build and not slow"
# What starts a build: these helpers, and any function that runs `kb publish` or `mkdocs serve`
# (or calls one that does).
BUILD_HELPERS = {"buildtools": {"build", "check"}, "wikisite": {"build", "plain_build", "plain_site", "wiki_site"}}
BUILD_WORDS = {"publish", "serve"}


def _marks(decorators: list[ast.expr]) -> set[str]:
    return {ast.unparse(d).removeprefix("pytest.mark.") for d in decorators}


def _called(node: ast.AST) -> set[str]:
    return {n.func.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def _builders(tree: ast.Module) -> set[str]:
    found = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module in BUILD_HELPERS
        for alias in node.names
        if alias.name in BUILD_HELPERS[node.module]
    }
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("test_")]
    changed = True
    while changed:
        changed = False
        for fn in functions:
            words = {n.value for n in ast.walk(fn) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
            uses = _called(fn) | {a.arg for a in fn.args.args}  # a fixture may take a building one
            if fn.name not in found and (uses & found or words & BUILD_WORDS):
                found.add(fn.name)
                changed = True
    return found


def unmarked_builds(source: str) -> list[str]:
    """The test functions in ``source`` that build the site (directly or through a fixture) but are
    not marked ``build``."""
    tree = ast.parse(source)
    builders = _builders(tree)
    module_marks = {
        ast.unparse(node.value).removeprefix("pytest.mark.")
        for node in tree.body
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
    }
    missing = []
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef) or not fn.name.startswith("test_"):
            continue
        uses = _called(fn) | {a.arg for a in fn.args.args}
        if uses & builders and "build" not in _marks(fn.decorator_list) | module_marks:
            missing.append(fn.name)
    return missing


def test_the_markers_are_registered_and_strict():
    config = configparser.ConfigParser()
    config.read(ROOT / "pytest.ini")
    registered = [line.split(":")[0].strip() for line in config["pytest"]["markers"].strip().splitlines()]
    assert registered == list(MARKERS)
    assert "--strict-markers" in config["pytest"]["addopts"].split()


def test_the_quick_tier_leaves_out_every_marker():
    assert f'-m "{QUICK}"' in (ROOT / "dev").read_text(encoding="utf-8")
    assert "item.add_marker(pytest.mark.browser)" in (TESTS / "browser" / "conftest.py").read_text(encoding="utf-8")


def test_every_test_that_builds_the_site_is_marked_build():
    missing = {
        path.name: names
        for path in sorted(TESTS.rglob("test_*.py"))
        if (names := unmarked_builds(path.read_text(encoding="utf-8")))
    }
    assert not missing, f"mark these @pytest.mark.build (./dev test --quick would build the site): {missing}"


def test_the_check_finds_a_build_through_a_fixture_or_a_helper():
    source = (
        "import pytest\nfrom wikisite import plain_site\nfrom buildtools import run\n"
        "def publish(root):\n    return run(['kb', 'publish'], root)\n"
        "@pytest.fixture\ndef site(tmp_path):\n    return publish(tmp_path)\n"
        "@pytest.fixture\ndef page(site):\n    return site / 'index.html'\n"
        "def test_a(page):\n    pass\n"
        "def test_b():\n    plain_site()\n"
        "@pytest.mark.build\ndef test_c():\n    plain_site()\n"
        "def test_d(tmp_path):\n    run(['ls'], tmp_path)\n"
    )
    assert unmarked_builds(source) == ["test_a", "test_b"]
    assert unmarked_builds("import pytest\npytestmark = pytest.mark.build\n" + source.split("\n", 1)[1]) == []
