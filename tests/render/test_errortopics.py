"""The error index by topic: each entry on the page of its topic, every old anchor kept on the
troubleshooting page inside the link to that page."""

import textwrap

from conftest import write_tables
from kb.core.load import load_kb
from kb.render.errortopics import TOPICS, topic_of
from kb.render.render import Ctx, render_markdown

ENTRY = """\
- id: {id}
  message: "{id} went wrong"
  origin: python
  file: torch_tpu/_loader.py
  kind: RuntimeError
  cause: Something.
  fix: Something else.
  page: {page}
  status: confirmed
  sources: [{{id: prim, locator: the wheel}}]
  verified: 2026-11-01
  checked_against: torch-tpu==0.2.0
"""


def test_an_entry_goes_to_the_topic_of_the_longest_start_of_its_page():
    assert topic_of("migrate/device-code.md#device-string").key == "device"
    assert topic_of("migrate/distributed.md#launcher").key == "distributed"
    assert topic_of("migrate/distributed.md#collectives").key == "collectives"
    assert topic_of("migrate/distributed.md#collectives-more").key == "distributed"  # a whole anchor or none
    assert topic_of("migrate/distributed-other.md#x").key == "other"
    assert topic_of("limits/index.md#x").key == TOPICS[-1].key == "other"


def _kb(tmp_path):
    errors = "".join(
        ENTRY.format(id=i, page=p)
        for i, p in (
            ("a", "migrate/torch-compile.md#x"),
            ("b", "limits/index.md#y"),
            ("c", "migrate/torch-compile.md#z"),
        )
    )
    return load_kb(write_tables(tmp_path / "docs" / "data", errors=textwrap.dedent(errors)), shown_root=tmp_path)


def _render(kb, md, src="migrate/troubleshooting.md"):
    return render_markdown(md, Ctx(kb, src), f"docs/{src}", first_line=3)


def test_a_topic_page_shows_only_the_entries_of_its_topic(tmp_path):
    kb = _kb(tmp_path)
    out, problems = _render(kb, "<!-- kb:entries errors topic=compile -->", "migrate/errors/compile.md")
    assert problems == []
    assert "{#err-a}" in out and "{#err-c}" in out and "{#err-b}" not in out
    out, problems = _render(kb, "<!-- kb:entries errors -->")
    assert problems == [] and all(f"{{#err-{i}}}" in out for i in "abc")


def test_an_unknown_or_empty_topic_is_an_error_at_the_line(tmp_path):
    kb = _kb(tmp_path)
    _, problems = _render(kb, "<!-- kb:entries errors topic=numerics -->")
    assert [str(p) for p in problems] == [
        "docs/migrate/troubleshooting.md:3: kb:entries: unknown error topic 'numerics' "
        "(expected one of: device, compile, distributed, collectives, other)"
    ]
    _, problems = _render(kb, "<!-- kb:entries errors topic=device -->")
    assert [str(p) for p in problems] == [
        "docs/migrate/troubleshooting.md:3: kb:entries: no error entry has the topic 'device' (expected at least one)"
    ]


def test_the_index_keeps_every_old_anchor_in_the_link_to_its_topic_page(tmp_path):
    out, problems = _render(_kb(tmp_path), "<!-- kb:error-index -->")
    assert problems == []
    assert '<div class="kb-error-index" markdown>' in out
    assert '- [torch.compile<span id="err-a"></span><span id="err-c"></span>](errors/compile.md): 2 messages' in out
    assert '- [Numerics, limits and other messages<span id="err-b"></span>](errors/other.md): 1 message' in out
    assert "errors/device.md" not in out  # a topic with no entry is not listed
