"""Messages read from a wheel (raise/warn through ast, native strings), and the errors table held to them."""

import ast
import textwrap

import pytest

from conftest import write_tables
from fakewheel import build_wheel
from kb.core.load import load_kb
from kb.mkdocs.project import validate_project
from kb.render.render import Ctx, render_markdown
from kb.wheel.coverage import undocumented_messages
from kb.wheel.messages import VALUE, covers, found_native, matches, python_messages, user_facing
from kb.wheel.package import inventory
from kb.wheel.wheel import read_wheel

PIN = "torch-tpu==0.2.0"
DEVICE = "torch_tpu/_internal/device/_device_module.py"
NATIVE = "torch_tpu/csrc/common/glue_2_13_0/libpywrap_2_13_0_common.so"


def harvest(source: str) -> list[tuple[int, str, str]]:
    tree = ast.parse(textwrap.dedent(source))
    return [(m.line, m.kind, m.text) for m in python_messages("torch_tpu/m.py", tree)]


def test_message_expressions_are_read_with_values_as_ellipsis():
    found = harvest("""\
        import warnings
        PREFIX = "<TorchTpu/X> "
        WHOLE = PREFIX + "a constant message"
        def f(x, n):
            if x:
                raise ValueError(f"index {x!r} is out of range for {n} devices")
            if n:
                raise TypeError("bad keyword arguments: {}".format(n))
            if n > 2:
                raise RuntimeError("got %s of %d things" % (x, n))
            warnings.warn(f"{PREFIX}the host is slow")
            raise RuntimeError(WHOLE)
        """)
    assert found == [
        (6, "ValueError", f"index {VALUE} is out of range for {VALUE} devices"),
        (8, "TypeError", f"bad keyword arguments: {VALUE}"),
        (10, "RuntimeError", f"got {VALUE} of {VALUE} things"),
        (11, "warning", "<TorchTpu/X> the host is slow"),
        (12, "RuntimeError", "<TorchTpu/X> a constant message"),
    ]


def test_a_message_kept_in_a_local_name_is_followed_until_it_is_reassigned():
    found = harvest("""\
        def wrapper(name, reason, stage):
            if reason:
                msg = f"{name} is internal to the framework and can't be called."
                raise RuntimeError(f"{msg} {reason}" if reason else msg)
            msg = stage.format(name)
            warn(msg)
        """)
    assert found == [(4, "RuntimeError", f"{VALUE} is internal to the framework and can't be called. {VALUE}")]


def test_calls_without_words_of_their_own_are_not_messages():
    assert harvest("def f(e):\n    raise ValueError(e)\n    raise KeyError(f'{e}')\n    raise X('short')\n") == []


def test_the_wheel_index_holds_python_messages_and_native_sentences(tmp_path):
    index = read_wheel(build_wheel(tmp_path))
    device = [(m.kind, m.text) for m in index.messages if m.file == DEVICE]
    assert (
        "RuntimeError",
        "cannot access or re-initialize TPU in a forked subprocess. "
        "To use TPU with multiprocessing, you must use the 'spawn' start method",
    ) in device
    assert (
        "ValueError",
        f"Cannot set TPU device to index {VALUE}, current process is bound to device index 0.",
    ) in device
    assert index.native_texts["timeout in barrier options is not supported"] == NATIVE
    assert "TORCH_TPU_DEFER_AND_FUSE" not in index.native_texts  # a name, not a sentence
    facing = {m.text: m.kind for m in user_facing(index.messages, index.native_texts)}
    assert facing["timeout in barrier options is not supported"] == "native"  # distinctive: "not supported"
    assert "expected a TPU device" not in facing  # a sentence, but not a distinctive one
    assert [m for m in inventory(index)["messages"] if m["kind"] == "RuntimeError"] == [
        {
            "text": "cannot access or re-initialize TPU in a forked subprocess. "
            "To use TPU with multiprocessing, you must use the 'spawn' start method",
            "kind": "RuntimeError",
            "where": f"{DEVICE}:22",
        }
    ]


def test_matching_an_entry_against_the_wheel():
    text = f"Cannot set TPU device to index {VALUE}, current process is bound to device index {VALUE}."
    assert matches(f"index {VALUE}, current process is bound", text)
    assert not matches("index 3, current process is bound", text)
    assert found_native(f"{VALUE}(): sparse operators are not supported", ["(): sparse operators are not supported"])
    assert not found_native("sparse operators are supported", ["(): sparse operators are not supported"])
    assert covers(
        "cannot access TPU in a forked subprocess. To use spawn", " cannot access TPU in a forked subprocess. "
    )
    assert not covers("the barrier is not supported here", " is not supported")  # too short to count


ENTRY = """\
    - id: fork
      message: "{message}"
      origin: {origin}
      file: {file}
      kind: {kind}
      cause: A forked worker touched the TPU.
      fix: Use spawn.
      page: sub/page.md#details
      status: confirmed
      sources: [{{id: prim, locator: the wheel}}]
      verified: 2026-11-01
      checked_against: torch-tpu==0.2.0
    """
FORK = "cannot access or re-initialize TPU in a forked subprocess."


def entry(message=FORK, origin="python", file=DEVICE, kind="RuntimeError"):
    text = ENTRY.format(message=message, origin=origin, file=file, kind=kind)
    return text if kind else text.replace("      kind: \n", "")


@pytest.fixture
def project(mini, tmp_path_factory):
    (mini / "torch-tpu.pin").write_text(PIN + "\n")
    wheel = build_wheel(tmp_path_factory.mktemp("wheel"))

    def run(errors):
        write_tables(mini / "docs" / "data", errors=errors)
        return [str(p) for p in validate_project(mini, wheel=wheel).problems]

    return run


def test_entries_whose_text_is_in_the_wheel_pass(project):
    assert project(entry()) == []
    assert project(entry(f"Cannot set TPU device to index {VALUE}, current", kind="ValueError")) == [
        "docs/data/errors.yml:1: errors[0]: a message with a value in it (written …) needs 'variable' saying "
        "what the value is, and 'variable' needs a … in the message"
    ]
    with_value = entry(f"Cannot set TPU device to index {VALUE}, current", kind="ValueError")
    assert project(with_value.replace("      origin:", "      variable: the index asked for\n      origin:")) == []
    native = entry("timeout in barrier options is not supported", "native", NATIVE, "")
    assert project(native) == []


def test_a_message_not_in_the_wheel_fails_at_its_line(project):
    expected = (
        "docs/data/errors.yml:2: message text not found in torch-tpu 0.2.0 (expected the words exactly as "
        f"a raise or warn of {DEVICE} has them, each value formatted into it written …)"
    )
    assert project(entry("cannot access or re-initialise TPU in a forked subprocess.")) == [expected]
    # the right words in another file of the wheel are not enough
    assert project(entry(file="torch_tpu/_loader.py")) == [expected.replace(DEVICE, "torch_tpu/_loader.py")]
    assert project(entry("timeout in barrier options is supported", "native", NATIVE, "")) == [
        "docs/data/errors.yml:2: message text not found in torch-tpu 0.2.0 (expected the words exactly as "
        "a string of the native libraries has them, each value formatted into it written …)"
    ]


def test_a_wrong_class_or_file_fails_at_its_line(project):
    assert project(entry(kind="ValueError")) == [
        f"docs/data/errors.yml:5: errors[0].kind: {DEVICE} raises it as RuntimeError (line 22), "
        "not ValueError (expected the same)"
    ]
    assert project(entry(file="torch_tpu/_internal/nope.py")) == [
        "docs/data/errors.yml:4: errors[0].file: 'torch_tpu/_internal/nope.py' is not a python file of torch-tpu "
        "0.2.0 (expected the wheel path of the .py file that prints the message)"
    ]
    assert project(entry().replace("sub/page.md#details", "sub/page.md#gone")) == [
        "docs/data/errors.yml:8: errors[0].page: no anchor '#gone' in docs/sub/page.md (expected the section it explains)"
    ]


def test_entries_render_as_headings_and_the_rest_as_undocumented(tmp_path):
    data = write_tables(tmp_path / "docs" / "data", errors=entry(FORK + " <b>*x*</b>"))
    (data / "package.json").write_text(
        '{"api": [], "env": [], "messages": ['
        f'{{"text": "{FORK} To use TPU", "kind": "RuntimeError", "where": "{DEVICE}:22"}}, '
        f'{{"text": "timeout in barrier options is not supported", "kind": "native", "where": "{NATIVE}"}}]}}'
    )
    kb = load_kb(data, shown_root=tmp_path)
    out, problems = render_markdown("<!-- kb:entries errors -->", Ctx(kb, "migrate/t.md"), "docs/migrate/t.md")
    assert problems == []
    heading = next(line for line in out.splitlines() if line.startswith("### "))
    assert heading == (
        "### RuntimeError: cannot access or re-initialize TPU in a forked subprocess. "
        "&#60;b&#62;&#42;x&#42;&#60;/b&#62; {#err-fork}"
    )
    assert "**Cause.** A forked worker touched the TPU." in out and "**Fix.** Use spawn." in out
    assert "**See** [sub/page.md&#35;details](../sub/page.md#details)" in out

    kb = load_kb(write_tables(data, errors=entry()), shown_root=tmp_path)
    out, problems = render_markdown("<!-- kb:undocumented messages -->", Ctx(kb, "r.md"), "docs/r.md")
    assert problems == []
    assert (
        "1 message torch-tpu  can print has no entry yet" in out
        and "timeout in barrier options is not supported" in out
    )
    assert "forked" not in out  # covered by the entry
    assert [m["kind"] for m in undocumented_messages(kb, {"messages": []})] == []
