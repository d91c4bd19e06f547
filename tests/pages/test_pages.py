"""Page rules on the Markdown sources: front matter, links, anchors, snippets, URLs, nav."""

import pytest

from kb.mkdocs.project import validate_project
from kb.pages.pages import split_front_matter


def page(mini, rel, body, front=None):
    if front is None:
        front = f"---\nreviewed: 2026-11-01\ndescription: What {rel} covers.\n---\n"  # body at line 5
    path = mini / "docs" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(front + body, encoding="utf-8")


def problems(mini):
    return [str(p) for p in validate_project(mini).problems]


def test_the_mini_project_is_valid(mini):
    assert problems(mini) == []


@pytest.mark.parametrize(
    "front, expected",
    [
        ("", "docs/x.md:1: no front matter (expected a '---' block with 'reviewed: YYYY-MM-DD')"),
        (
            "---\ntitle: X\ndescription: X.\n---\n",
            "docs/x.md:1: front matter has no 'reviewed:' (expected 'reviewed: YYYY-MM-DD')",
        ),
        (
            "---\ntitle: X\nreviewed: 29/11/2026\ndescription: X.\n---\n",
            "docs/x.md:3: 'reviewed: 29/11/2026' is not an ISO date (expected YYYY-MM-DD)",
        ),
        (
            "---\nreviewed: 2026-02-30\ndescription: X.\n---\n",
            "docs/x.md:2: 'reviewed: 2026-02-30' is not an ISO date (expected YYYY-MM-DD)",
        ),
    ],
)
def test_front_matter(mini, front, expected):
    page(mini, "x.md", "# X\n", front=front)
    assert problems(mini) == [expected]


def test_broken_link_anchor_image_and_raw_html(mini):
    page(
        mini,
        "x.md",
        "\n".join(
            [
                "# X",
                "[a](missing.md)",
                "[b](sub/page.md#nope)",
                "![c](img/none.png)",
                '<a href="sub/gone.md">d</a>',
                "[e](sub/page.md#details) [f](#x) `[g](ignored.md)`",
                "[h](/abs.md)",
            ]
        ),
    )
    assert problems(mini) == [
        "docs/x.md:6: link to missing page 'missing.md' (expected docs/missing.md to exist)",
        "docs/x.md:7: link to missing anchor '#nope' in sub/page.md (expected a heading or id with that name)",
        "docs/x.md:8: link to missing file 'img/none.png' (expected docs/img/none.png to exist)",
        "docs/x.md:9: raw HTML link 'sub/gone.md' to a Markdown file is a 404 in the browser (expected a Markdown "
        "link [text](page.md), which MkDocs rewrites)",
        "docs/x.md:11: absolute link '/abs.md' (expected a path relative to this page)",
    ]


def test_anchors_from_headings_attr_lists_duplicates_and_rendered_tables(mini):
    page(
        mini,
        "x.md",
        "\n".join(
            [
                "# X",
                "## `torch.compile` on TPU",
                "## Same",
                "## Same",
                "## Custom {#my-id}",
                "<!-- kb:table figures -->",
                "[1](#torchcompile-on-tpu) [2](#same_1) [3](#my-id) [4](#fig-tput) [5](../docs/x.md)",
            ]
        ),
    )
    assert problems(mini) == [
        "docs/x.md:11: link '../docs/x.md' leaves the docs folder (expected a page or file inside docs/)"
    ]


def test_external_urls_must_be_registered_sources(mini):
    page(
        mini,
        "x.md",
        "# X\n\nSee https://example.org/doc and https://evil.example.com/x.\n"
        "```\ncurl http://insecure.example.com/\n```\n",
    )
    assert problems(mini) == [
        "docs/x.md:7: external URL 'https://evil.example.com/x' is not a registered source "
        "(expected a url from docs/data/sources.yml; add the source there first)",
        "docs/x.md:9: external URL 'http://insecure.example.com/' is not https (expected a registered https source URL)",
    ]


def test_snippet_includes_must_exist(mini):
    (mini / "snippets").mkdir()
    (mini / "snippets" / "ok.py").write_text("print('ok')\n")
    page(mini, "x.md", '# X\n\n```python\n--8<-- "ok.py"\n```\n\n```python\n--8<-- "gone.py"\n```\n')
    assert problems(mini) == ["docs/x.md:12: snippet 'gone.py' not found (expected snippets/gone.py to exist)"]


def test_nav_entries_and_pages_outside_the_nav(mini):
    (mini / "mkdocs.yml").write_text("site_name: t\nnav:\n  - Home: index.md\n  - Gone: gone.md\n")
    assert problems(mini) == [
        "docs/sub/page.md:1: page is not in the nav (expected an entry for 'sub/page.md' in mkdocs.yml)",
        "mkdocs.yml:4: nav entry 'gone.md' names no page (expected docs/gone.md to exist)",
    ]


@pytest.mark.parametrize(
    "front, message",
    [
        ('title: "<script>alert(1)</script>"', "front matter 'title' must be plain text on one line"),
        ('description: "a & b"', "front matter 'description' must be plain text on one line"),
        ("template: evil.html", "unknown front matter key 'template'"),
        ("hide: [navigation, everything]", "front matter 'hide' must list some of:"),
    ],
)
def test_front_matter_is_plain_and_known(tmp_path, front, message):
    described = "" if front.startswith("description:") else "description: A page.\n"
    text = f"---\nreviewed: 2026-11-01\n{front}\n{described}---\n\n# Page\n"
    meta, body, line, problems = split_front_matter(text, "docs/p.md")
    assert [(p.path, p.line) for p in problems] == [("docs/p.md", 3)]
    assert problems[0].message.startswith(message)


def test_a_raw_html_link_with_an_encoded_script_url_is_named_as_such(mini):
    page = mini / "docs" / "sub" / "page.md"
    page.write_text(page.read_text() + '\n<a href="&#106;avascript:alert(1)">x</a>\n')
    problems = [str(p) for p in validate_project(mini).problems]
    assert problems == [
        "docs/sub/page.md:11: raw HTML link '&#106;avascript:alert(1)' uses a script or data URL "
        "(expected a page or https link)"
    ]


def test_a_scanner_rule_must_link_to_a_section_that_exists(mini):
    rules = mini / "docs" / "data" / "migration_rules.yml"
    api = mini / "docs" / "data" / "api_map.yml"
    api.write_text(
        "- {id: a, topic: t, gpu: g, tpu: t, change: same, note: n, status: confirmed,\n"
        "   sources: [{id: prim, locator: x}], verified: 2026-11-01, checked_against: torch-tpu==0.2.0}\n"
    )
    rules.write_text(
        "- id: r\n  code: TPU101\n  match: {call: '*.cuda'}\n  severity: review\n  message: M\n  suggestion: S\n"
        "  page: sub/page.md#no-such-section\n  rests_on: {table: api_map, id: a}\n  status: confirmed\n"
        "  sources: [{id: prim, locator: x}]\n  verified: 2026-11-01\n  checked_against: torch-tpu==0.2.0\n"
    )
    problems = [str(p) for p in validate_project(mini).problems]
    assert problems == [
        "docs/data/migration_rules.yml:7: migration_rules[0].page: no anchor '#no-such-section' in docs/sub/page.md "
        "(expected the section it explains)"
    ]
    rules.write_text(rules.read_text().replace("#no-such-section", "#details"))
    assert validate_project(mini).problems == []


# ---- Ids once per page, no script links, no review date in the future (issue 21) ----


def test_a_repeated_id_fails_at_the_line_that_repeats_it(mini):
    page(
        mini,
        "x.md",
        "\n".join(
            [
                "# X",  # line 5
                "## One {#same}",
                "## Two {#same}",
                "## Setup",
                "A paragraph.",
                "{: #setup }",  # line 10: an attr_list id equal to the heading's own id
                '<div id="one-more" markdown>',
                "## One more",  # line 12: the heading's own id, already the div's
                "</div>",
                "## Setup",  # toc numbers it setup_1: no clash
            ]
        ),
    )
    assert problems(mini) == [
        "docs/x.md:7: id 'same' (the heading's {#id}) is already the id of line 6 (the heading's {#id}) "
        "(expected each id once on a page: a link to #same reaches only the first)",
        "docs/x.md:10: id 'setup' (an attr_list {#id}) is already the id of line 8 (the heading's own id) "
        "(expected each id once on a page: a link to #setup reaches only the first)",
        "docs/x.md:12: id 'one-more' (the heading's own id) is already the id of line 11 (an HTML id=) "
        "(expected each id once on a page: a link to #one-more reaches only the first)",
    ]


def test_ids_in_code_and_repeated_heading_texts_are_not_repeats(mini):
    page(mini, "x.md", "# X\n\n## Same\n\n## Same\n\n`{#x}` and `{#x}`\n\n```\n## X\n```\n")
    assert problems(mini) == []


@pytest.mark.parametrize(
    "link",
    [
        "[a](javascript:alert(1))",
        "[a](JavaScript:alert(1))",
        "[a](<javascript:alert(1)>)",
        "[a](java&#x09;script:alert(1))",
        "[a](&#106;avascript:alert(1))",
        "[a](vbscript:msgbox)",
        "[a][ref]\n\n[ref]: javascript:alert(1)",
        "<a href=javascript:alert(1)>a</a>",
    ],
)
def test_a_script_link_is_reported_at_its_page_and_line(mini, link):
    page(mini, "x.md", "# X\n\n" + link + "\n")
    found = problems(mini)
    line = 7 + link.count("\n")
    assert found and all(p.startswith(f"docs/x.md:{line}: ") for p in found), found
    assert any("runs script" in p or "uses a script or data URL" in p for p in found), found


def test_a_script_link_in_code_is_not_a_link(mini):
    page(mini, "x.md", "# X\n\n`[a](javascript:alert(1))`\n\n```\n[a](javascript:x)\n```\n")
    assert problems(mini) == []


def test_a_review_date_in_the_future_is_refused(mini, monkeypatch):
    import datetime as dt

    import kb.core.validate

    monkeypatch.setattr(kb.core.validate, "build_date", lambda: dt.date(2026, 11, 10))
    page(mini, "x.md", "# X\n", front="---\ntitle: X\ndescription: A page for the test.\nreviewed: 2026-11-11\n---\n\n")
    assert problems(mini) == ["docs/x.md:4: 'reviewed: 2026-11-11' is in the future (expected a date up to 2026-11-10)"]
    monkeypatch.setattr(kb.core.validate, "build_date", lambda: dt.date(2026, 11, 11))
    assert problems(mini) == []


@pytest.mark.parametrize(
    "front, expected",
    [
        (
            "---\nreviewed: 2026-11-01\n---\n",
            "docs/x.md:1: front matter has no 'description:' (expected one sentence on what this page "
            "covers, its own, shown by search engines and link previews)",
        ),
        (
            "---\nreviewed: 2026-11-01\ndescription:\n---\n",
            "docs/x.md:3: front matter 'description' is empty (expected one sentence on what this page "
            "covers, its own, shown by search engines and link previews)",
        ),
        (
            "---\nreviewed: 2026-11-01\ndescription: '  '\n---\n",
            "docs/x.md:3: front matter 'description' is empty (expected one sentence on what this page "
            "covers, its own, shown by search engines and link previews)",
        ),
    ],
)
def test_every_page_needs_a_description(mini, front, expected):
    page(mini, "x.md", "# X\n", front=front)
    assert problems(mini) == [expected]


def test_two_pages_may_not_share_a_description(mini):
    page(mini, "a.md", "# A\n", front="---\nreviewed: 2026-11-01\ndescription: Same words.\n---\n\n")
    page(mini, "b.md", "# B\n", front="---\ntitle: B\nreviewed: 2026-11-01\ndescription: Same  words.\n---\n\n")
    assert problems(mini) == [
        "docs/b.md:4: front matter 'description' is the same as docs/a.md's (line 3) (expected one sentence "
        "on what this page covers, its own, shown by search engines and link previews)"
    ]
