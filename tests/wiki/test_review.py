"""The review queue (kb/wiki/review.py): each reason, the command line's exit codes, and the page."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from conftest import MINI_TABLES, write_tables
from kb.__main__ import main
from kb.core.load import load_kb
from kb.mkdocs.project import validate_project
from kb.pages.pages import Page, split_front_matter
from kb.render.render import Ctx, render_markdown, review_note
from kb.wiki.review import Due, Queue, Release, build_today, make_queue, page_sources, release_of, review_queue

D = dt.date.fromisoformat
RELEASE_SOURCE = """\
        - id: pypi-release
          title: torch-tpu 0.2.0 on PyPI
          publisher: PyPI
          url: https://pypi.org/project/torch-tpu/0.2.0/
          published: 2026-12
          accessed: 2026-11-01
          kind: primary
          language: en
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
"""


def page(src_uri: str, text: str) -> Page:
    p = Page(src_uri, f"docs/{src_uri}", text)
    p.meta, p.body, p.body_line, _ = split_front_matter(text, p.shown)
    return p


HOME = page(
    "index.md", "---\nreviewed: 2026-11-01\ndescription: Test page 9.\n---\n# Home\n\nSee [the page](sub/page.md).\n"
)
FIGURE_PAGE = page(
    "sub/page.md",
    "---\ntitle: Page\nreviewed: 2026-11-01\ndescription: Test page 10.\n---\n# Page\n\n<!-- kb:figure tput -->\n",
)
LINK_PAGE = page(
    "sub/link.md",
    "---\nreviewed: 2026-11-01\ndescription: Test page 11.\n---\n# Link\n\nRead <https://example.org/doc>.\n",
)


def kb_with(tmp_path: Path, **tables: str):
    return load_kb(write_tables(tmp_path / "docs" / "data", **tables))


def lines(items: list[Due]) -> list[str]:
    return [str(d) for d in items]


def test_nothing_is_due_when_every_date_is_recent(tmp_path):
    kb = kb_with(tmp_path)
    assert review_queue(kb, [HOME, FIGURE_PAGE, LINK_PAGE], D("2026-12-01")) == []


def test_older_than_max_age(tmp_path):
    kb = kb_with(tmp_path)
    due = review_queue(kb, [HOME], D("2027-03-01"), max_age=90)
    assert (
        lines(due)[0]
        == "docs/data/claims.yml:7: due for review: last verified 2026-11-01, 120 days ago (expected within 90 days)"
    )
    assert "docs/index.md:2: due for review: last reviewed 2026-11-01, 120 days ago (expected within 90 days)" in lines(
        due
    )
    assert len(due) == 1 + sum(len(t) for t in kb.tables.values())  # the page and every record
    assert review_queue(kb, [HOME], D("2027-03-01"), max_age=120) == []  # 120 days is not more than 120


def test_older_than_the_pinned_release(tmp_path):
    kb = kb_with(tmp_path, sources=MINI_TABLES["sources"].rstrip(" ") + RELEASE_SOURCE)
    release = release_of(kb, "torch-tpu", "0.2.0")
    assert release == Release("torch-tpu==0.2.0", D("2026-12-01"), "2026-12")
    due = review_queue(kb, [HOME], D("2026-12-15"), release=release)
    assert (
        "docs/index.md:2: due for review: last reviewed 2026-11-01, before torch-tpu==0.2.0 was published (2026-12)"
        in lines(due)
    )
    # a review in the release's month is not known to be before it: not flagged
    later = review_queue(
        kb,
        [page("a.md", "---\nreviewed: 2026-12-01\ndescription: Test page 12.\n---\n")],
        D("2026-12-15"),
        release=release,
    )
    assert [d.path for d in later if d.src_uri] == []


def test_release_without_a_dated_source_has_no_date(tmp_path):
    kb = kb_with(tmp_path)
    assert release_of(kb, "torch-tpu", "0.2.0") == Release("torch-tpu==0.2.0")
    assert review_queue(kb, [HOME], D("2026-12-15"), release=release_of(kb, "torch-tpu", "0.2.0")) == []


def sources_published(when: str) -> str:
    """The mini KB's two sources, both published on ``when`` (the news report is undated there)."""
    text = MINI_TABLES["sources"].replace("published: 2026-10\n", f"published: {when}\n")
    return text.replace("file: seeds/x.txt\n", f"file: seeds/x.txt\n          published: {when}\n")


def test_a_cited_source_published_after_the_review(tmp_path):
    kb = kb_with(tmp_path, sources=sources_published("2026-11-20"))
    due = {
        d.path + ":" + str(d.line): str(d) for d in review_queue(kb, [HOME, FIGURE_PAGE, LINK_PAGE], D("2026-11-25"))
    }
    why = "cites a source published after it was last reviewed"
    # the figure page places 'tput', which cites 'news'; the link page links to 'prim'; the home page cites nothing
    assert due["docs/sub/page.md:3"] == f"docs/sub/page.md:3: due for review: {why}: 'news' (2026-11-20)"
    assert due["docs/sub/link.md:2"] == f"docs/sub/link.md:2: due for review: {why}: 'prim' (2026-11-20)"
    assert "docs/index.md:2" not in due
    # records: the claim 'wrong' cites both sources
    wrong = [text for text in due.values() if text.startswith("docs/data/claims.yml:") and "sources published" in text]
    assert wrong == [
        "docs/data/claims.yml:19: due for review: cites sources published after it was last verified: "
        "'news' (2026-11-20), 'prim' (2026-11-20)"
    ]


def test_a_month_only_publication_counts_from_its_first_day(tmp_path):
    # published 2026-11 is not known to be after a review on 2026-11-01; 2026-12 is
    kb = kb_with(tmp_path, sources=sources_published("2026-11"))
    assert review_queue(kb, [HOME, FIGURE_PAGE, LINK_PAGE], D("2026-12-15")) == []
    kb = kb_with(tmp_path / "later", sources=sources_published("2026-12"))
    due = lines(review_queue(kb, [LINK_PAGE], D("2026-12-15")))
    why = "cites a source published after it was last reviewed"
    assert f"docs/sub/link.md:2: due for review: {why}: 'prim' (2026-12)" in due


def test_rereading_a_source_alone_makes_nothing_due(tmp_path):
    # both sources re-read (accessed) after every review: nothing in them changed, so nothing is due
    sources = MINI_TABLES["sources"].replace("accessed: 2026-11-01", "accessed: 2026-11-20")
    assert "accessed: 2026-11-20" in sources
    kb = kb_with(tmp_path, sources=sources)
    assert review_queue(kb, [HOME, FIGURE_PAGE, LINK_PAGE], D("2026-11-25")) == []


def test_page_sources_count_links_and_records_placed_by_id_not_tables(tmp_path):
    kb = kb_with(tmp_path)
    assert page_sources(FIGURE_PAGE, kb) == {"news"}
    assert page_sources(LINK_PAGE, kb) == {"prim"}
    table = page(
        "t.md",
        "---\nreviewed: 2026-11-01\ndescription: Test page 13.\n---\n<!-- kb:table figures -->\n\n`<!-- kb:claim dev -->`\n",
    )
    assert page_sources(table, kb) == set()  # tables don't count, nor shortcodes shown as code


def test_build_today_reads_kb_today():
    assert build_today({"KB_TODAY": "2030-01-02"}) == (D("2030-01-02"), [])
    today, problems = build_today({"KB_TODAY": "2030-02-30"})
    assert today == dt.date.today()
    assert [str(p) for p in problems] == [
        "KB_TODAY:1: environment variable KB_TODAY: '2030-02-30' is not a date (expected YYYY-MM-DD)"
    ]


# ---- The command line ----


def test_cli_exit_codes_and_output(mini, capsys):
    assert main(["--root", str(mini), "review", "--today", "2026-12-01"]) == 0
    out = capsys.readouterr()
    assert out.out == ""
    assert "0 item(s) due for review as of 2026-12-01 (max age 90 days)" in out.err

    assert main(["--root", str(mini), "review", "--today", "2026-12-01", "--max-age", "10"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "docs/index.md:2: due for review: last reviewed 2026-11-01, 30 days ago (expected within 10 days)" in out
    assert all(": due for review: " in line for line in out)


@pytest.mark.parametrize(
    "args", [["--today", "2026-13-01"], ["--today", "soon"], ["--max-age", "0"], ["--max-age", "x"]]
)
def test_cli_usage_errors_exit_2(mini, capsys, args):
    with pytest.raises(SystemExit) as exc:
        main(["--root", str(mini), "review", *args])
    assert exc.value.code == 2
    assert "expected" in capsys.readouterr().err


def test_cli_exits_2_when_the_handbook_does_not_validate(mini, capsys):
    (mini / "docs" / "index.md").write_text("# no front matter\n", encoding="utf-8")
    assert main(["--root", str(mini), "review"]) == 2
    assert "docs/index.md:1: no front matter" in capsys.readouterr().err


# ---- The page and the note ----


def test_the_queue_page_lists_each_item_escaped(tmp_path):
    kb = kb_with(tmp_path)
    hostile = Due("docs/data/x|<b>y</b>.yml", 3, "claims record dev", D("2026-01-01"), ("a | b <i>",))
    queue = Queue(
        D("2026-12-01"),
        90,
        Release("torch-tpu==0.2.0", D("2026-10-01"), "2026-10"),
        (
            Due("docs/sub/page.md", 3, "page", D("2026-11-01"), ("why",), "sub/page.md"),
            hostile,
        ),
    )
    out, problems = render_markdown("<!-- kb:review-queue -->", Ctx(kb, "about/review-queue.md", queue), "docs/q.md")
    assert problems == []
    assert "more than 90 days before 2026-12-01, before torch-tpu&#61;&#61;0.2.0 was published &#40;2026-10&#41;" in out
    assert "2 items due:" in out
    assert "| [docs/sub/page.md](../sub/page.md) | 2026-11-01 | why |" in out
    assert "<b>" not in out and "<i>" not in out and "a | b" not in out


def test_the_queue_page_says_when_nothing_is_due_and_waits_for_the_queue(tmp_path):
    kb = kb_with(tmp_path)
    empty = Queue(D("2026-12-01"), 90, None, ())
    out, _ = render_markdown("<!-- kb:review-queue -->", Ctx(kb, "q.md", empty), "docs/q.md")
    assert out.endswith("Nothing is due.\n\n")
    out, problems = render_markdown("<!-- kb:review-queue -->", Ctx(kb, "q.md"), "docs/q.md")
    assert problems == [] and "computed once every page has been read" in out
    _, problems = render_markdown("<!-- kb:review-queue extra -->", Ctx(kb, "q.md", empty), "docs/q.md")
    assert [p.message for p in problems] == ["kb:review-queue: unexpected argument 'extra' (expected none)"]


def test_a_due_page_gets_an_out_of_date_note(tmp_path):
    kb = kb_with(tmp_path)
    queue = make_queue(kb, [HOME, FIGURE_PAGE], D("2027-06-01"))
    note = review_note(Ctx(kb, "sub/page.md", queue))
    assert note.startswith(
        '!!! warning "This page may be out of date"\n\n    Last reviewed 2026-11-01. Due for review: '
    )
    assert "[review queue](../about/review-queue.md)" in note
    assert review_note(Ctx(kb, "sub/page.md", make_queue(kb, [HOME, FIGURE_PAGE], D("2026-11-02")))) == ""
    assert review_note(Ctx(kb, "sub/page.md")) == ""


def test_validate_project_renders_the_queue_as_of_kb_today(mini, monkeypatch):
    (mini / "docs" / "queue.md").write_text(
        "---\nreviewed: 2026-11-01\ndescription: Test page 14.\n---\n# Queue\n\n<!-- kb:review-queue -->\n"
    )
    monkeypatch.setenv("KB_TODAY", "2027-06-01")
    project = validate_project(mini, package=False)
    assert project.problems == []
    assert project.review is not None and project.review.today == D("2027-06-01")
    assert "[docs/sub/page.md](sub/page.md)" in project.pages["queue.md"].rendered


@pytest.mark.build
def test_the_built_site_shows_the_note_and_the_queue():
    from wikisite import wiki_site  # built with KB_TODAY far ahead: every page is due

    site = wiki_site()
    html = (site / "migrate" / "quickstart" / "index.html").read_text(encoding="utf-8")
    title, note = html.index("<h1"), html.index('<p class="admonition-title">This page may be out of date</p>')
    assert title < note < html.index("</article>")
    assert "Last reviewed 2026-11-" in html and "days ago (expected within 90 days)" in html  # kb/render/slim.py
    queue = (site / "about" / "review-queue" / "index.html").read_text(encoding="utf-8")
    plain = re.sub(r'<span class="kb-tok">|</span>|<wbr>', "", queue)  # code in cells is cut into pieces
    assert 'href="../../migrate/quickstart/"' in queue and "docs/data/claims.yml:" in plain


def test_the_handbook_as_of_2026_12_01_shows_no_page_as_due(capsys):
    # the real project: every page was reviewed after the sources it relies on were published and
    # after the pinned release, so no page carries the note (re-reading sources moved no date)
    from conftest import ROOT

    project = validate_project(ROOT, package=False)
    assert project.problems == [] and project.kb is not None
    release = release_of(project.kb, "torch-tpu", "0.2.0")
    assert release.date is not None
    due = review_queue(project.kb, project.pages.values(), D("2026-12-01"), release=release)
    assert [str(d) for d in due if d.src_uri is not None] == []
