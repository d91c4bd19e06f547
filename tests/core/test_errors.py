"""The one formatter: a problem prints as one line of visible text, whatever its path and message echo."""

import unicodedata

import pytest

from buildtools import validate
from conftest import copy_project
from kb.core.errors import Problem, escape_text, format_problems


@pytest.mark.parametrize(
    "raw, shown",
    [
        ("plain ASCII", "plain ASCII"),
        ("Diátaxis — 東京 ✓ \U0001f600 a\u00a0b", "Diátaxis — 東京 ✓ \U0001f600 a\u00a0b"),  # visible text stays
        ("a\nb\rc\td", "a\\nb\\rc\\td"),
        ("\x1b[2J\x00\x7f\x9b", "\\x1b[2J\\x00\\x7f\\x9b"),
        ("x\u202ey\u2066z\u200b\ufeff", "x\\u202ey\\u2066z\\u200b\\ufeff"),
        ("\u2028\u2029\U000e0041\ud800", "\\u2028\\u2029\\U000e0041\\ud800"),
        # soft hyphen, Mongolian vowel separator, annotation anchor: format characters a terminal may draw as nothing
        ("a\u00adb\u180ec\ufff9d", "a\\xadb\\u180ec\\ufff9d"),
        # default-ignorable but not format: reserved, fillers, variation selectors (hidden bytes after an emoji)
        ("\u2065\u3164\u115f\ufe0f\U000e0100\U000e0fff", "\\u2065\\u3164\\u115f\\ufe0f\\U000e0100\\U000e0fff"),
    ],
)
def test_escape_text(raw, shown):
    assert escape_text(raw) == shown


def test_no_control_format_or_separator_character_survives():
    for code in range(0x110000):
        ch = chr(code)
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            assert escape_text(ch).startswith("\\") and escape_text(ch).isprintable(), f"U+{code:04X}"


def test_a_problem_prints_the_invisible_characters_as_escapes():
    problem = Problem("docs/a\u00ad.md", 1, "term 'x\u180ey\ufff9' \u2065")
    assert str(problem) == "docs/a\\xad.md:1: term 'x\\u180ey\\ufff9' \\u2065"


def test_path_and_message_are_both_escaped_on_one_line():
    problem = Problem("docs/a\u202e.md", 3, "link to 'x\x1b[31m\ny'")
    assert str(problem) == "docs/a\\u202e.md:3: link to 'x\\x1b[31m\\ny'"
    assert format_problems([problem, problem]) == str(problem)


def test_validate_never_prints_raw_esc_or_bidi_controls_from_a_page_or_a_table(tmp_path):
    root = copy_project(tmp_path)
    page = root / "docs" / "index.md"
    text = page.read_text(encoding="utf-8")
    line = text.count("\n") + 1 + (not text.endswith("\n"))
    page.write_text(text + ("" if text.endswith("\n") else "\n") + "[x](no\x1b[31mpage.md) [y](a\u202eb.md)\n")
    table = root / "docs" / "data" / "glossary.yml"
    table.write_text(
        table.read_text(encoding="utf-8")
        + '- id: injected\n  term: "X\x1b[2J\u202e"\n  definition: D.\n'
        + "  verified: 2026-11-01\n  checked_against: torch-tpu==0.2.0\n",
        encoding="utf-8",
    )
    result = validate(root)
    out = result.stdout + result.stderr
    assert result.returncode == 1 and "Traceback" not in out, out
    assert "\x1b" not in out and "\u202e" not in out, out
    assert f"docs/index.md:{line}: link to missing page 'no\\x1b[31mpage.md'" in out, out
    assert f"docs/index.md:{line}: link to missing page 'a\\u202eb.md'" in out, out
    assert "docs/data/glossary.yml:" in out and "U+001B" in out, out
