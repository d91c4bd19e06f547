"""Said once (kb/pages/saidonce.py): a run of more than 40 words typed on two pages fails, at its line."""

from __future__ import annotations

from pathlib import Path

from kb.core.errors import Problem
from kb.pages.saidonce import check_said_once, paragraphs

ROOT = Path(__file__).resolve().parents[2]
# 45 words, none of them code.
LONG = (
    "Reading a value on the host makes the runtime compile and run every pending operation first, "
    "so a loop that logs its loss on every step waits for the device on every step; log every "
    "hundred steps instead, or sum on the device and read once at the end."
)


def test_a_long_paragraph_typed_on_two_pages_is_a_problem_at_the_second():
    one = f"# One\n\nIntro.\n\n{LONG}\n"
    wrapped = LONG.replace(" so ", " so\n")
    two = f"# Two\n\nOther words here.\n\nAnd then:\n{wrapped}\n"
    problems = check_said_once([("docs/one.md", one, 5), ("docs/two.md", two, 4)])
    assert problems == [
        Problem(
            "docs/two.md",
            8,
            "this paragraph repeats more than 40 words of docs/one.md:9: say it once, in a snippet "
            "(--8<--) or a KB record, and include it in both places",
        )
    ]


def test_forty_words_in_common_are_not_a_duplicate():
    words = LONG.split()
    forty = " ".join(words[:40])
    assert check_said_once([("a.md", f"{forty} alpha\n", 1), ("b.md", f"{forty} beta\n", 1)]) == []
    assert len(check_said_once([("a.md", f"{forty} alpha\n", 1), ("b.md", f"{forty} alpha\n", 1)])) == 1


def test_markup_and_case_do_not_hide_a_duplicate():
    marked = LONG.replace("host", "[host](x.md#host)").replace("Reading", "**READING**")
    assert len(check_said_once([("a.md", LONG, 1), ("b.md", f"- {marked}", 1)])) == 1


def test_code_includes_shortcodes_headings_and_tables_are_not_prose():
    body = "\n".join(
        [
            "```text",
            LONG,
            "```",
            "",
            f"<!-- kb:claim x {LONG} -->",
            '--8<-- "a/b.txt"',
            f"## {LONG}",
            f"| {LONG} |",
        ]
    )
    assert list(paragraphs("a.md", body)) == []
    assert check_said_once([("a.md", body, 1), ("b.md", LONG, 1)]) == []


def test_a_list_item_is_a_paragraph_of_its_own():
    found = list(paragraphs("a.md", "Lead in.\n- first item\n  goes on\n- second\n", 10))
    assert [(p.line, p.words) for p in found] == [
        (10, ("lead", "in")),
        (11, ("first", "item", "goes", "on")),
        (13, ("second",)),
    ]


def test_the_handbook_says_each_paragraph_once():
    from kb.mkdocs.project import validate_project

    project = validate_project(ROOT, package=False)
    said_twice = [p for p in project.problems if "repeats more than 40 words" in p.message]
    assert said_twice == []
