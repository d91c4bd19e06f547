"""Files under docs/, snippets/ and mkdocs.yml are checked before any is read (kb.core.files), and the
pipeline (kb.mkdocs.project) gates rendering on a sound KB while the page checks that need no KB run."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from buildtools import HANG_S, deadline
from conftest import write_tables
from kb.core.files import check_files, scan_project
from kb.mkdocs.project import validate_project
from kb.render import render


def problems(root: Path) -> list[str]:
    with deadline(HANG_S):
        return [str(p) for p in check_files(root)]


def validate(root: Path) -> list[str]:
    with deadline(HANG_S):
        return [str(p) for p in validate_project(root, package=False).problems]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the project, with a secret in it."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.md").write_text(
        "---\nreviewed: 2026-11-01\ndescription: Test page 3.\n---\n# SECRET-TEXT\n", encoding="utf-8"
    )
    return folder


@pytest.fixture
def project(mini: Path) -> Path:
    """The mini project moved one level down, so tmp_path/outside is outside it."""
    root = mini / "project"
    root.mkdir()
    (mini / "docs").rename(root / "docs")
    return root


def test_a_clean_project_has_no_problems_and_lists_its_pages(project):
    scan = scan_project(project)
    assert scan.problems == []
    assert scan.pages == [project / "docs" / "index.md", project / "docs" / "sub" / "page.md"]


# ---- Symlinks ----


def test_symlinks_that_leave_the_project_anywhere_under_docs(project, outside):
    docs = project / "docs"
    (docs / "leak.md").symlink_to(outside / "secret.md")
    (docs / "assets").mkdir()
    (docs / "assets" / "logo.png").symlink_to(outside / "secret.md")
    (docs / "data" / "glossary.x.yml").symlink_to(outside / "secret.md")
    (docs / "vendor").symlink_to(outside)
    (docs / "passwd.txt").symlink_to("/etc/passwd")
    assert problems(project) == [
        f"docs/assets/logo.png:1: symlink leaves the project (points to '{outside}/secret.md'; expected a file inside the project folder)",
        f"docs/data/glossary.x.yml:1: symlink leaves the project (points to '{outside}/secret.md'; expected a file inside the project folder)",
        f"docs/leak.md:1: symlink leaves the project (points to '{outside}/secret.md'; expected a file inside the project folder)",
        "docs/passwd.txt:1: symlink leaves the project (points to '/etc/passwd'; expected a file inside the project folder)",
        f"docs/vendor:1: symlink leaves the project (points to '{outside}'; expected a file inside the project folder)",
    ]


def test_relative_symlinks_that_climb_out_and_snippets_and_mkdocs_yml(project, outside):
    (project / "docs" / "up.md").symlink_to("../../outside/secret.md")
    (project / "snippets").mkdir()
    (project / "snippets" / "run.py").symlink_to(outside / "secret.md")
    (project / "mkdocs.yml").symlink_to(outside / "secret.md")
    assert problems(project) == [
        "docs/up.md:1: symlink leaves the project (points to '../../outside/secret.md'; expected a file inside the project folder)",
        f"mkdocs.yml:1: symlink leaves the project (points to '{outside}/secret.md'; expected a file inside the project folder)",
        f"snippets/run.py:1: symlink leaves the project (points to '{outside}/secret.md'; expected a file inside the project folder)",
    ]


def test_a_symlink_inside_the_project_is_fine(project):
    (project / "docs" / "alias.md").symlink_to("sub/page.md")
    (project / "docs" / "more").symlink_to("sub")
    scan = scan_project(project)
    assert scan.problems == []
    assert project / "docs" / "alias.md" in scan.pages and project / "docs" / "more" / "page.md" in scan.pages


def test_folders_that_link_into_each_other(project):
    docs = project / "docs"
    (docs / "x").mkdir()
    (docs / "y").mkdir()
    (docs / "x" / "to-y").symlink_to("../y")
    (docs / "y" / "to-x").symlink_to("../x")
    assert problems(project) == [
        "docs/x/to-y/to-x:1: symlink loop: leads back into 'docs/x' (expected a folder outside this one, inside the project)",
        "docs/y/to-x/to-y:1: symlink loop: leads back into 'docs/y' (expected a folder outside this one, inside the project)",
    ]


def test_symlink_loops_and_broken_links(project):
    docs = project / "docs"
    (docs / "a.png").symlink_to("b.png")
    (docs / "b.png").symlink_to("a.png")
    (docs / "up").symlink_to("..")
    (docs / "sub" / "self").symlink_to(".")
    (docs / "gone.png").symlink_to("nowhere.png")
    (docs / ".#index.md").symlink_to("someone@host.1234:1700000000")  # an editor's lock file: ignored
    assert problems(project) == [
        "docs/a.png:1: symlink loop (expected a link that ends at a file inside the project)",
        "docs/b.png:1: symlink loop (expected a link that ends at a file inside the project)",
        "docs/gone.png:1: broken symlink (points to 'nowhere.png'; expected an existing file)",
        "docs/sub/self:1: symlink loop: points to '.', a folder that contains it (expected a folder outside this one, inside the project)",
        "docs/up:1: symlink loop: points to '..', a folder that contains it (expected a folder outside this one, inside the project)",
    ]


# ---- Names, kinds and sizes ----


def test_files_named_like_pages_that_are_not_pages_and_raw_html(project):
    docs = project / "docs"
    (docs / "folder.md").mkdir()
    for name in ("old.md.bak", "draft.md~", "page.markdown", "comp.mdx", "raw.html", "Old.HTM", "Shout.MD"):
        (docs / name).write_text("x", encoding="utf-8")
    (docs / "fine.md.png").write_bytes(b"")  # covered by the leftover rule too: a page's copy
    assert problems(project) == [
        "docs/Old.HTM:1: raw HTML file would be copied into the site unchecked and could carry script (expected a Markdown page)",
        "docs/Shout.MD:1: page name ends in '.MD' (expected lower-case '.md')",
        "docs/comp.mdx:1: Markdown file with the extension '.mdx' is not checked like a page (expected a '.md' page, listed in the nav)",
        "docs/draft.md~:1: leftover copy of a page (would be published as is; expected it removed, or kept outside docs/)",
        "docs/fine.md.png:1: leftover copy of a page (would be published as is; expected it removed, or kept outside docs/)",
        "docs/folder.md:1: folder named like a page 'folder.md' (expected a .md name for files only)",
        "docs/old.md.bak:1: leftover copy of a page (would be published as is; expected it removed, or kept outside docs/)",
        "docs/page.markdown:1: Markdown file with the extension '.markdown' is not checked like a page (expected a '.md' page, listed in the nav)",
        "docs/raw.html:1: raw HTML file would be copied into the site unchecked and could carry script (expected a Markdown page)",
    ]


def test_a_fifo_is_reported_and_never_opened(project):
    os.mkfifo(project / "docs" / "pipe.md")
    os.mkfifo(project / "docs" / "sub" / "pipe.css")
    assert problems(project) == [
        "docs/pipe.md:1: not a regular file (a FIFO, socket or device; expected a file)",
        "docs/sub/pipe.css:1: not a regular file (a FIFO, socket or device; expected a file)",
    ]
    assert "docs/pipe.md:1: not a regular file (a FIFO, socket or device; expected a file)" in validate(project)


def test_a_file_too_large(project):
    with (project / "docs" / "video.mp4").open("wb") as handle:
        handle.truncate(6_000_000)  # sparse: no disk used
    assert problems(project) == ["docs/video.mp4:1: file is 6.0 MB (expected at most 5 MB)"]


# ---- The pipeline: nothing unsafe is read; the KB gates rendering; page checks run anyway ----


def test_a_page_that_links_out_of_the_project_is_never_read(project, outside):
    (project / "docs" / "leak.md").symlink_to(outside / "secret.md")
    project_result = validate_project(project, package=False)
    assert (
        f"docs/leak.md:1: symlink leaves the project (points to '{outside}/secret.md'; expected a file inside the project folder)"
        in [str(p) for p in project_result.problems]
    )
    assert "leak.md" not in project_result.pages
    assert not any("SECRET-TEXT" in page.text for page in project_result.pages.values())


NAV = "site_name: T\nnav:\n  - index.md\n  - sub/page.md\n"
INDEX = """\
---
reviewed: 2026-11-01
description: The home page.
---
# Home

See [the page](sub/page.md#details), [a KB anchor](sub/page.md#made-by-a-shortcode) and
[the source](https://example.org/doc).

[missing](nope.md) and [no anchor](#nowhere)

--8<-- "missing.py"
"""


def test_a_kb_with_broken_references_gates_rendering_but_page_checks_still_run(mini):
    (mini / "mkdocs.yml").write_text(NAV.replace("  - sub/page.md\n", "  - gone.md\n"), encoding="utf-8")
    (mini / "docs" / "index.md").write_text(INDEX, encoding="utf-8")
    (mini / "docs" / "sub" / "page.md").write_text("# no front matter\n\n<!-- kb:figure tput -->\n")
    claims = (
        (mini / "docs" / "data" / "claims.yml")
        .read_text()
        .replace("{id: prim, locator: intro}", "{id: nope, locator: x}", 1)
    )
    (mini / "docs" / "data" / "claims.yml").write_text(claims)
    result = validate_project(mini, package=False)
    assert result.kb is None  # nothing may render from it
    assert [str(p) for p in result.problems] == [
        "docs/data/claims.yml:4: claims[0].status: 'confirmed' but no cited source is primary or vendor-docs (expected a primary or vendor-docs source, or status 'reported')",
        "docs/data/claims.yml:6: claims[0].sources[0].id: unknown source 'nope' (expected an id from docs/data/sources.yml)",
        "docs/index.md:10: link to missing anchor '#nowhere' in index.md (expected a heading or id with that name)",
        "docs/index.md:10: link to missing page 'nope.md' (expected docs/nope.md to exist)",
        "docs/index.md:12: snippet 'missing.py' not found (expected snippets/missing.py to exist)",
        "docs/sub/page.md:1: no front matter (expected a '---' block with 'reviewed: YYYY-MM-DD')",
        "docs/sub/page.md:1: page is not in the nav (expected an entry for 'sub/page.md' in mkdocs.yml)",
        "mkdocs.yml:4: nav entry 'gone.md' names no page (expected docs/gone.md to exist)",
    ]
    assert "<!-- kb:figure tput -->" in result.pages["sub/page.md"].rendered  # left as written


def test_a_kb_that_does_not_load_still_lets_the_page_checks_run(mini):
    write_tables(mini / "docs" / "data", hardware="- id: v7\n  name: [\n")
    (mini / "docs" / "index.md").write_text(INDEX.replace("[missing](nope.md) and ", ""), encoding="utf-8")
    assert validate(mini) == [
        "docs/data/hardware.yml:3: malformed YAML: while parsing a flow node did not find expected node content (expected valid YAML)",
        "docs/index.md:10: link to missing anchor '#nowhere' in index.md (expected a heading or id with that name)",
        "docs/index.md:12: snippet 'missing.py' not found (expected snippets/missing.py to exist)",
    ]


def test_a_sound_kb_renders_and_checks_everything(mini):
    (mini / "mkdocs.yml").write_text(NAV, encoding="utf-8")
    (mini / "docs" / "index.md").write_text(INDEX, encoding="utf-8")
    result = validate_project(mini, package=False)
    assert result.kb is not None
    assert [str(p) for p in result.problems] == [
        "docs/index.md:7: link to missing anchor '#made-by-a-shortcode' in sub/page.md (expected a heading or id with that name)",
        "docs/index.md:10: link to missing anchor '#nowhere' in index.md (expected a heading or id with that name)",
        "docs/index.md:10: link to missing page 'nope.md' (expected docs/nope.md to exist)",
        "docs/index.md:12: snippet 'missing.py' not found (expected snippets/missing.py to exist)",
    ]
    assert "25,700" in result.pages["sub/page.md"].rendered or "25700" in result.pages["sub/page.md"].rendered


def test_a_renderer_that_crashes_is_a_problem_at_the_shortcode_line(mini, monkeypatch):
    def broken(ctx, pos, kw):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setitem(render.RENDERERS, "figure", broken)
    found = validate(mini)
    assert len(found) == 1 and found[0].startswith("docs/sub/page.md:9: kb:figure: ")
    assert "(ZeroDivisionError: division by zero)" in found[0]


class _Exploding:
    def finditer(self, text):
        raise RuntimeError("boom")


def test_a_crash_outside_the_renderers_is_still_a_problem_at_its_line(mini, monkeypatch):
    monkeypatch.setattr(render, "_INLINE_CODE", _Exploding())  # used by render.py for each shortcode line
    assert validate(mini) == [
        "docs/sub/page.md:9: the page could not be checked (RuntimeError: boom) "
        "(expected it to work: this is a bug in scripts/kb, please report it with this page)"
    ]


def test_a_crash_in_the_page_checks_is_a_problem_at_line_1(mini, monkeypatch):
    import kb.mkdocs.project

    def broken(markdown):
        raise KeyError("anchors")

    monkeypatch.setattr(kb.mkdocs.project, "page_anchors", broken)
    assert validate(mini) == [
        "docs/index.md:1: the page could not be checked (KeyError: 'anchors') "
        "(expected it to work: this is a bug in scripts/kb, please report it with this page)",
        "docs/sub/page.md:1: the page could not be checked (KeyError: 'anchors') "
        "(expected it to work: this is a bug in scripts/kb, please report it with this page)",
    ]


def test_pages_refuse_invisible_characters_but_keep_tabs(mini):
    page = mini / "docs" / "sub" / "page.md"
    page.write_text(page.read_text() + "\n```make\nall:\n\techo ok\n```\n\nPay \u202e01$\u202c now.\n")
    assert validate(mini) == [
        "docs/sub/page.md:16: invisible bidi control U+202E (RIGHT-TO-LEFT OVERRIDE) (expected visible text: "
        "it can make a line read differently from what it holds; 1 more in this file)"
    ]


def test_bad_front_matter_yaml_is_held_to_the_same_limits(mini):
    (mini / "docs" / "index.md").write_text(
        "---\nreviewed: 2026-11-01\napplies_to: &a [x]\ndescription: Test page 4.\n---\n# Home\n"
    )
    assert validate(mini) == [
        "docs/index.md:3: anchor '&a' (expected no anchors or aliases: write each value out)",
    ]


def test_a_page_past_the_size_or_line_limit_is_reported_and_links_to_it_still_resolve(mini):
    page = mini / "docs" / "sub" / "page.md"
    page.write_text(
        "---\nreviewed: 2026-11-01\ndescription: Test page 5.\n---\n# Page\n\n" + "x" * 4_001 + "\n", encoding="utf-8"
    )
    big = mini / "docs" / "big.md"
    big.write_text(
        "---\nreviewed: 2026-11-01\ndescription: Test page 6.\n---\n# Big\n\n" + "Some text.\n" * 26_000,
        encoding="utf-8",
    )
    assert validate(mini) == [
        "docs/big.md:1: page is larger than 256 KB (expected at most that; split it)",
        "docs/sub/page.md:7: line of 4,001 characters (expected at most 4,000; break it, and the page is checked once it fits)",
    ]  # and index.md's link to sub/page.md#details is not reported: the page is there, just unchecked


def test_a_line_of_link_openers_is_cut_short_by_the_line_limit(mini):
    (mini / "docs" / "index.md").write_text(
        "---\nreviewed: 2026-11-01\ndescription: Test page 7.\n---\n# Home\n\n" + "<a " * 80_000 + "\n"
    )
    start = time.perf_counter()
    assert validate(mini) == [
        "docs/index.md:7: line of 240,000 characters (expected at most 4,000; break it, and the page is checked once it fits)"
    ]
    assert time.perf_counter() - start < HANG_S  # the page checks' regular expressions took minutes on this


def test_a_crash_in_the_link_checks_is_a_problem_at_the_page_and_line(mini, monkeypatch):
    import kb.pages.pages

    def broken(target, lineno, page, by_uri, docs):
        raise IndexError("list index out of range")

    monkeypatch.setattr(kb.pages.pages, "_internal", broken)
    assert validate(mini) == [
        "docs/index.md:7: the page could not be checked (IndexError: list index out of range) "
        "(expected it to work: this is a bug in scripts/kb, please report it with this page)"
    ]


class _Broken(dict):
    def get(self, name, default=None):
        raise RuntimeError("registry broke")


def test_a_crash_in_the_shortcode_loop_names_the_shortcode(mini, monkeypatch):
    monkeypatch.setattr(render, "RENDERERS", _Broken(render.RENDERERS))  # outside the renderer's own try
    assert validate(mini) == [
        "docs/sub/page.md:9: kb:figure: the renderer failed (RuntimeError: registry broke) "
        "(expected it to work: this is a bug in scripts/kb, please report it with this page)"
    ]


def test_crash_attribution_survives_a_module_move(mini, monkeypatch):
    """_crash knows kb.pages.pages' and kb.render.render's frames by their namespace, not their name."""
    import kb.pages.pages

    def broken(target, lineno, page, by_uri, docs):
        raise IndexError("list index out of range")

    monkeypatch.setattr(kb.pages.pages, "__name__", "kb.elsewhere.links")
    monkeypatch.setattr(render, "__name__", "kb.elsewhere.shortcodes")
    monkeypatch.setattr(kb.pages.pages, "_internal", broken)
    monkeypatch.setattr(render, "RENDERERS", _Broken(render.RENDERERS))
    assert validate(mini) == [
        "docs/index.md:7: the page could not be checked (IndexError: list index out of range) "
        "(expected it to work: this is a bug in scripts/kb, please report it with this page)",
        "docs/sub/page.md:9: kb:figure: the renderer failed (RuntimeError: registry broke) "
        "(expected it to work: this is a bug in scripts/kb, please report it with this page)",
    ]


def test_mkdocs_yml_that_is_not_utf8_is_a_problem_not_a_traceback(mini):
    (mini / "mkdocs.yml").write_bytes(b"site_name: T\nnav:\n  - caf\xe9.md\n")
    assert validate(mini) == ["mkdocs.yml:3: byte 0xe9 is not valid UTF-8 (expected UTF-8 text)"]


def test_a_file_name_with_a_line_break_cannot_forge_a_report_line(project):
    (project / "docs" / "x\nforged.md:1: all good.png").write_bytes(b"")
    assert problems(project) == [
        "docs/x\\nforged.md:1: all good.png:1: name has a control or invisible character (expected a plain file name)"
    ]


def test_an_invisible_character_in_front_matter_is_reported_once(mini):
    (mini / "docs" / "index.md").write_text(
        "---\nreviewed: 2026-11-01\napplies_to: x\u200by\ndescription: Test page 8.\n---\n# Home\n"
    )
    assert validate(mini) == [
        "docs/index.md:3: invisible format character U+200B (ZERO WIDTH SPACE) (expected visible text)"
    ]
