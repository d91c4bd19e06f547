"""Holding the KB, pages and samples to a wheel: every mismatch is a Problem with its file:line."""

import textwrap

import pytest

from conftest import MINI_TABLES, write_tables
from fakewheel import build_wheel
from kb.mkdocs.project import validate_project
from kb.pages.namecheck import Allowed, check_python_sample, check_shell_sample, constraint_problems
from kb.wheel.wheel import ENV_TOKEN, read_wheel

PIN = "torch-tpu==0.2.0"


def claim(extra: str, statement: str = "The device is `tpu`.", id_: str = "c9") -> str:
    """The mini claims table plus one claim with ``extra`` fields (YAML, two-space indented)."""
    return (
        textwrap.dedent(MINI_TABLES["claims"])
        + textwrap.dedent(f"""\
        - id: {id_}
          topic: modes
          statement: "{statement}"
          status: confirmed
          sources:
            - {{id: prim, locator: intro}}
          verified: 2026-11-01
          checked_against: {PIN}
        """)
        + textwrap.indent(textwrap.dedent(extra), "  ")
    )


@pytest.fixture
def project(mini, tmp_path_factory):
    (mini / "torch-tpu.pin").write_text(PIN + "\n")
    wheel = build_wheel(tmp_path_factory.mktemp("wheel"))

    def run(**tables):
        write_tables(mini / "docs" / "data", **tables)
        return [str(p) for p in validate_project(mini, wheel=wheel).problems]

    return run


def test_the_mini_project_passes(project):
    assert project(claims=claim("api: [torch.tpu.EagerMode.DEFER_AND_FUSE]\nenv: [TORCH_TPU_DEFER_AND_FUSE]\n")) == []


def test_a_renamed_api_name_fails_at_its_line(project):
    problems = project(claims=claim("api: [torch.tpu.EagerMode.DEFER_AND_FUSED]\n"))
    assert problems == [
        "docs/data/claims.yml:29: claims[2].api[0]: 'torch.tpu.EagerMode.DEFER_AND_FUSED' is not in torch-tpu==0.2.0 "
        "(expected a name the wheel defines, e.g. torch.tpu.precision)"
    ]


def test_a_renamed_env_var_fails_at_its_line(project):
    problems = project(claims=claim("env: [TORCH_TPU_DEFER_AND_FUSE_X]\n"))
    assert problems == [
        "docs/data/claims.yml:29: claims[2].env[0]: 'TORCH_TPU_DEFER_AND_FUSE_X' is not in torch-tpu==0.2.0 "
        "(expected a name the wheel defines in its code or string tables)"
    ]


def test_an_unknown_backend_fails(project):
    assert project(claims=claim("backend: [xla]\n")) == [
        "docs/data/claims.yml:29: claims[2].backend[0]: 'xla' is not in torch-tpu==0.2.0 "
        "(expected a name the wheel defines, one of the backend names the wheel registers)"
    ]


def test_a_name_in_prose_is_checked_too(project):
    problems = project(
        claims=claim("", statement="Launch with `python -m torch_tpu._internal.distributed.launchers.x`.")
    )
    assert len(problems) == 1
    assert problems[0].startswith(
        "docs/data/claims.yml:23: claims[2].statement: names "
        "'torch_tpu._internal.distributed.launchers.x', which is not in torch-tpu==0.2.0"
    )


def test_an_outdated_spelling_needs_a_current_name_the_wheel_has(project):
    ok = project(
        claims=claim(
            "spelling: outdated\ncurrent: TORCH_TPU_LAUNCH_BLOCKING\n",
            statement="Old notebooks set `TPU_LAUNCH_BLOCKING=1`.",
        )
    )
    assert ok == []
    missing = project(claims=claim("spelling: outdated\n", statement="Old notebooks set `TPU_LAUNCH_BLOCKING=1`."))
    assert missing == [
        "docs/data/claims.yml:29: claims[2].spelling: spelling: outdated without 'current' "
        "(expected the name the package uses)"
    ]
    wrong = project(claims=claim("spelling: outdated\ncurrent: TORCH_TPU_BLOCKING\n", statement="Old: `TPU_X`."))
    assert wrong == [
        "docs/data/claims.yml:30: claims[2].current: current name 'TORCH_TPU_BLOCKING' is not in "
        "torch-tpu==0.2.0 either"
    ]


def test_names_another_project_owns_are_declared_under_elsewhere(project):
    statement = "vLLM reads `TPU_TORCH_TPU_EAGER_MODE`."
    assert len(project(claims=claim("", statement=statement))) == 1
    assert project(claims=claim("elsewhere: [TPU_TORCH_TPU_EAGER_MODE]\n", statement=statement)) == []


def test_checked_against_must_be_the_pin(project):
    head, _, tail = claim("").rpartition(f"checked_against: {PIN}")
    problems = project(claims=head + "checked_against: torch-tpu==0.1.0" + tail)
    assert problems == [
        "docs/data/claims.yml:28: claims[2].checked_against: 'torch-tpu==0.1.0' is not the pinned "
        "release (expected torch-tpu==0.2.0)"
    ]


def test_a_wheel_locator_must_name_a_file_in_the_wheel(project):
    head, _, tail = claim("").rpartition("{id: prim, locator: intro}")
    table = head + "{id: wheel, locator: torch_tpu/device/_device_module.py}" + tail
    sources = textwrap.dedent(MINI_TABLES["sources"]) + textwrap.dedent("""\
        - id: wheel
          title: torch-tpu 0.2.0 wheel
          publisher: PyPI
          url: https://pypi.org/project/torch-tpu/0.2.0/
          accessed: 2026-11-01
          kind: primary
          language: en
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        """)
    problems = project(claims=table, sources=sources)
    assert problems == [
        "docs/data/claims.yml:26: claims[2].sources[0].locator: locator names "
        "'torch_tpu/device/_device_module.py', which is not a file in the wheel (expected a path "
        "such as torch_tpu/_internal/..., or a .so file name)"
    ]
    fixed = table.replace("torch_tpu/device/", "torch_tpu/_internal/device/")
    assert project(claims=fixed, sources=sources) == []


def test_an_env_var_record_that_torch_tpu_reads_must_be_in_the_wheel(project):
    env = textwrap.dedent(f"""\
        - id: dbg
          name: TORCH_TPU_INTERNAL_ENABLE_DEBUG_CHECKS
          read_by: torch-tpu
          purpose: Bounds checks.
          values: "1"
          default: unset
          read_when: start
          group: debugging
          status: confirmed
          sources:
            - {{id: prim, locator: x}}
          verified: 2026-11-01
          checked_against: {PIN}
        """)
    assert project(env_vars=env) == [
        "docs/data/env_vars.yml:2: env_vars[0].name: 'TORCH_TPU_INTERNAL_ENABLE_DEBUG_CHECKS' is not in "
        "torch-tpu==0.2.0 (expected a variable the wheel reads, or 'spelling: outdated' with 'current:')"
    ]
    outdated = env + "  spelling: outdated\n  current: TORCH_TPU_LAUNCH_BLOCKING\n"
    assert project(env_vars=outdated) == []
    current_marked_outdated = outdated.replace("TORCH_TPU_INTERNAL_ENABLE_DEBUG_CHECKS", "TORCH_TPU_DEFER_AND_FUSE")
    assert project(env_vars=current_marked_outdated) == [
        "docs/data/env_vars.yml:2: env_vars[0].name: 'TORCH_TPU_DEFER_AND_FUSE' is marked outdated but "
        "torch-tpu==0.2.0 has it (expected it current)"
    ]


def test_pages_are_scanned_with_their_file_line(project, mini):
    page = mini / "docs" / "sub" / "page.md"
    page.write_text(page.read_text() + "\nSet `TORCH_TPU_LAUNCH_BLOCKNG=1`.\n")
    assert project() == [
        "docs/sub/page.md:11: names 'TORCH_TPU_LAUNCH_BLOCKNG', which is not in the pinned wheel "
        "(expected a name the wheel has, or one a KB record marks outdated)"
    ]


@pytest.fixture
def index(tmp_path):
    return read_wheel(build_wheel(tmp_path))


def test_version_ranges_must_equal_the_metadata(index):
    assert constraint_problems("needs torch>=2.11.0,<=2.15.0 and Python >=3.11", index) == []
    assert constraint_problems("pip install torch==2.13.0", index) == []
    assert constraint_problems("torch>=2.10", index) == [
        "states 'torch>=2.10' but the wheel's METADATA says Requires-Dist torch >=2.11.0,<=2.15.0 (expected the same)"
    ]
    assert constraint_problems("pip install torch==2.10.0", index) == [
        "'torch==2.10.0' is outside the wheel's Requires-Dist torch >=2.11.0,<=2.15.0"
    ]
    assert constraint_problems("Python >= 3.12", index) == [
        "states 'Python >= 3.12' but the wheel's METADATA says Requires-Python >=3.11 (expected the same)"
    ]


def test_python_samples_are_read_through_ast(index):
    source = textwrap.dedent("""\
        import os
        import torch
        from torch.tpu import distributed as d
        import torch_tpu._internal.execution_mode as em
        # torch.tpu.not_checked_in_comments()
        os.environ["TORCH_TPU_INTERNAL_ENABLE_DEBUG_CHECKS"] = "1"
        d.set_tpu_launch_env(nproc_per_node=4)
        torch.tpu.set_eager_modee(em.EagerMode.DEFER_NEVER)
        print("torch.tpu.in_a_string_is_prose")
        x = em.EagerMode.DEFER_AND_FUSE.value
        """)
    assert [str(p) for p in check_python_sample("s.py", source, index, Allowed())] == [
        "s.py:6: uses env var 'TORCH_TPU_INTERNAL_ENABLE_DEBUG_CHECKS', which is not in the pinned wheel",
        "s.py:8: uses name 'torch.tpu.set_eager_modee', which is not in the pinned wheel",
    ]


def test_shell_samples_are_read_as_tokens_without_comments(index):
    source = textwrap.dedent("""\
        # python -m torch_tpu._internal.distributed.launchers.singlehost_wrapper  (old)
        eval "$(python -m torch.tpu.distributed)"
        export TORCH_TPU_DEFER_AND_FUSE=1 TPU_LAUNCH_BLOCKING=1
        python -m torch_tpu._internal.distributed.launchers.singlehost_wrapper
        """)
    assert [str(p) for p in check_shell_sample("l.sh", source, index, Allowed())] == [
        "l.sh:3: uses env var 'TPU_LAUNCH_BLOCKING', which is not in the pinned wheel",
        "l.sh:4: runs module 'torch_tpu._internal.distributed.launchers.singlehost_wrapper', which is not in the "
        "pinned wheel",
    ]


def test_a_shell_line_that_reads_an_env_var_is_checked_too(index):
    # '$' before the name is the shell reading it: coverage.py's pattern once skipped it, wheel.py's didn't
    source = 'echo "$TPU_NOT_A_VARIABLE" ${TORCH_TPU_NOR_THIS:-1} $TORCH_TPU_DEFER_AND_FUSE\n'
    assert [str(p) for p in check_shell_sample("l.sh", source, index, Allowed())] == [
        "l.sh:1: uses env var 'TPU_NOT_A_VARIABLE', which is not in the pinned wheel",
        "l.sh:1: uses env var 'TORCH_TPU_NOR_THIS', which is not in the pinned wheel",
    ]
    assert ENV_TOKEN.findall("XTPU_A TPU_B_ $TPU_C _TPU_D TPU_E9") == ["TPU_C", "TPU_E9"]
