"""One rule for what is prose and what is code, shared by rendering and the page checks."""

from kb.core.mdscan import code_mask, prose_lines


def mask(text: str) -> list[bool]:
    return code_mask(text.split("\n"))


def test_a_longer_fence_is_not_closed_by_a_shorter_one():
    text = "````md\n```\n[x](missing.md)\n```\n````\nprose"
    assert mask(text) == [True, True, True, True, True, False]


def test_tilde_fences_and_fences_inside_tabs():
    text = '=== "GPU"\n\n    ~~~python\n    x = 1\n    ~~~\n\n    prose in the tab'
    assert mask(text) == [False, False, True, True, True, False, False]


def test_a_closing_fence_must_have_nothing_after_it():
    assert mask("```\n``` not a close\n```\nprose") == [True, True, True, False]


def test_indented_code_needs_a_blank_line_and_four_more_columns_than_its_container():
    text = "para\n    not code (continuation)\n\n    code\n    more code\n\nprose"
    assert mask(text) == [False, False, False, True, True, True, False]
    in_list = "- item\n\n    list paragraph\n\n        code in the list\n\nback"
    assert mask(in_list) == [False, False, False, False, True, True, False]


def test_multi_line_html_comments_are_not_prose_but_one_line_shortcodes_are():
    text = "<!-- kb:claim x -->\n<!--\n[x](gone.md)\n-->\nprose"
    assert mask(text) == [False, True, True, True, False]


def test_inline_backticks_after_a_fence_marker_do_not_open_a_fence():
    assert mask("```a` b\nprose") == [False, False]


def test_prose_lines_gives_indexes():
    assert list(prose_lines("a\n```\nb\n```\nc")) == [(0, "a"), (4, "c")]
