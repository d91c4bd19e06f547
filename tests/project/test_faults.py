"""Fault injection: copy the real project, break one thing, and expect the build to fail with the
right file and line. The unfaulted copy must pass, so each fault is what makes the difference."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from buildtools import check
from conftest import copy_project


def append(root: Path, rel: str, text: str) -> int:
    """Append ``text`` (starting on a new line) and return the line its first line lands on."""
    path = root / rel
    body = path.read_text(encoding="utf-8")
    if not body.endswith("\n"):
        body += "\n"
    path.write_text(body + text, encoding="utf-8")
    return body.count("\n") + 1


def first(root: Path, table: str, key: str) -> str:
    text = (root / "docs" / "data" / f"{table}.yml").read_text(encoding="utf-8")
    return re.search(rf"^\s*-?\s*{key}:\s*(\S+)", text, re.M).group(1)


def claim(id_: str, source: str = "wheel", status: str = "reported", extra: str = "") -> str:
    return (
        f"- id: {id_}\n  topic: device\n  statement: Injected.\n  status: {status}\n"
        f"  sources:\n    - {{id: {source}, locator: here}}\n{extra}  verified: 2026-11-01\n  checked_against: torch-tpu==0.2.0\n"
    )


FIGURE = (
    "- id: injected-figure\n  metric: Injected\n  value: 1\n  unit: tokens/s\n  conditions: {}\n"
    "  measured_by: vendor\n  claimed_by: V\n  topic: throughput\n  status: reported\n"
    "  sources:\n    - {id: seed-000, locator: here}\n  verified: 2026-11-01\n  checked_against: torch-tpu==0.2.0\n"
)


# Each fault: (what it breaks, the file and line expected, a fragment of the expected message).
def f_page_link(r):
    return (
        f"docs/index.md:{append(r, 'docs/index.md', '[x](no-such-page.md)')}",
        "link to missing page 'no-such-page.md'",
    )


def f_anchor(r):
    line = append(r, "docs/index.md", "[x](reference/sources.md#no-such-anchor)")
    return f"docs/index.md:{line}", "missing anchor '#no-such-anchor'"


def f_image(r):
    return (
        f"docs/index.md:{append(r, 'docs/index.md', '![d](img/missing.png)')}",
        "link to missing file 'img/missing.png'",
    )


def f_unknown_source(r):
    line = append(r, "docs/data/claims.yml", claim("injected-claim", source="no-such-source"))
    return f"docs/data/claims.yml:{line + 5}", "unknown source 'no-such-source'"


def f_duplicate_id(r):
    line = append(r, "docs/data/claims.yml", claim(first(r, "claims", "id")))
    return f"docs/data/claims.yml:{line}", "duplicate id"


def f_orphan_source(r):
    line = append(
        r,
        "docs/data/sources.yml",
        "- {id: injected-orphan, title: T, publisher: P, url: 'https://example.org/x', "
        "accessed: 2026-11-01, kind: news, language: en, verified: 2026-11-01, checked_against: torch-tpu==0.2.0}\n",
    )
    return f"docs/data/sources.yml:{line}", "source 'injected-orphan' is cited by no record"


def f_missing_unit(r):
    line = append(r, "docs/data/figures.yml", FIGURE.replace("  unit: tokens/s\n", ""))
    return f"docs/data/figures.yml:{line}", "missing field 'unit'"


def f_wrong_type(r):
    line = append(r, "docs/data/figures.yml", FIGURE.replace("value: 1", "value: lots"))
    return f"docs/data/figures.yml:{line + 2}", "value: expected a valid number, got string 'lots'"


def f_unknown_key(r):
    line = append(r, "docs/data/claims.yml", claim("injected-claim", extra="  colour: red\n"))
    return f"docs/data/claims.yml:{line + 6}", "unknown key 'colour'"


def f_duplicate_yaml_key(r):
    line = append(r, "docs/data/claims.yml", claim("injected-claim", extra="  topic: again\n"))
    return f"docs/data/claims.yml:{line + 6}", "duplicate key 'topic'"


def f_confirmed_news_only(r):
    line = append(r, "docs/data/claims.yml", claim("injected-claim", source="seed-000", status="confirmed"))
    return f"docs/data/claims.yml:{line + 3}", "'confirmed' but no cited source is primary or vendor-docs"


def f_disputed_one_source(r):
    line = append(
        r,
        "docs/data/claims.yml",
        claim("injected-claim", status="disputed", extra="  conflicts:\n    - {source: wheel, says: x}\n"),
    )
    return f"docs/data/claims.yml:{line + 3}", "'disputed' but conflicts name 1 source(s)"


def f_bad_date(r):
    line = append(r, "docs/data/claims.yml", claim("injected-claim").replace("2026-11-01", "2026-13-45"))
    return f"docs/data/claims.yml:{line + 6}", "'2026-13-45' is not a real date"


def f_malformed_yaml(r):
    line = append(r, "docs/data/glossary.yml", "- id: [broken\n  term: X\n")
    return f"docs/data/glossary.yml:{line + 1}", "malformed YAML"


def f_non_utf8(r):
    path = r / "docs" / "data" / "figures.yml"
    line = path.read_bytes().count(b"\n") + 1
    path.write_bytes(path.read_bytes() + b"# caf\xe9\n")
    return f"docs/data/figures.yml:{line}", "byte 0xe9 is not valid UTF-8"


def f_empty_table(r):
    (r / "docs" / "data" / "hardware.yml").write_text("", encoding="utf-8")
    return "docs/data/hardware.yml:1", "file is empty"


def f_http_source(r):
    path = r / "docs" / "data" / "sources.yml"
    text = path.read_text(encoding="utf-8")
    m = re.search(r"^(\s*)url: https://", text, re.M)
    path.write_text(text[: m.start()] + text[m.start() :].replace("url: https://", "url: http://", 1), encoding="utf-8")
    return f"docs/data/sources.yml:{text.count(chr(10), 0, m.start()) + 1}", "is not an absolute https URL"


def f_unknown_shortcode_id(r):
    return (
        f"docs/index.md:{append(r, 'docs/index.md', '<!-- kb:figure no-such-figure -->')}",
        "unknown figures id 'no-such-figure'",
    )


def f_unknown_shortcode(r):
    return f"docs/index.md:{append(r, 'docs/index.md', '<!-- kb:nosuch x -->')}", "unknown shortcode 'kb:nosuch'"


def f_empty_filter(r):
    line = append(r, "docs/index.md", "<!-- kb:table claims topic=no-such-topic -->")
    return f"docs/index.md:{line}", "no record of table 'claims' has topic 'no-such-topic'"


def f_unregistered_url(r):
    line = append(r, "docs/index.md", "Read https://unregistered.example.com/page first.")
    return f"docs/index.md:{line}", "external URL 'https://unregistered.example.com/page' is not a registered source"


def f_cdn_script(r):
    line = append(
        r, "docs/index.md", '<script src="https://cdn.jsdelivr.net/npm/mermaid/dist/mermaid.min.js"></script>'
    )
    return (
        f"docs/index.md:{line}",
        "external URL 'https://cdn.jsdelivr.net/npm/mermaid/dist/mermaid.min.js' is not a registered source",
    )


def f_registered_url_loaded_as_script(r):
    url = first(r, "sources", "url")
    append(r, "docs/index.md", f'<script src="{url}"></script>')
    return "site/index.html:", f"loads '{url}' from another origin"


def f_css_import(r):
    append(r, "docs/stylesheets/kb.css", '@import url("https://fonts.googleapis.com/css2?family=Roboto");')
    return "site/stylesheets/kb.css:", "from another origin"


def f_raw_html_md_link(r):
    line = append(r, "docs/index.md", '<a href="reference/sources.md">sources</a>')
    return f"docs/index.md:{line}", "raw HTML link 'reference/sources.md' to a Markdown file is a 404"


def f_no_reviewed(r):
    (r / "docs" / "about" / "injected.md").write_text("---\ntitle: Injected\n---\n\n# Injected\n", encoding="utf-8")
    return "docs/about/injected.md:1", "front matter has no 'reviewed:'"


def f_nav_missing_page(r):
    text = (r / "mkdocs.yml").read_text(encoding="utf-8")
    line = text.count("\n", 0, text.index("  - Home: index.md")) + 1
    (r / "mkdocs.yml").write_text(text.replace("  - Home: index.md", "  - Home: index.md\n  - Gone: no-such-page.md"))
    return f"mkdocs.yml:{line + 1}", "nav entry 'no-such-page.md' names no page"


def f_missing_snippet(r):
    line = append(r, "docs/index.md", '```python\n--8<-- "no/such/sample.py"\n```')
    return f"docs/index.md:{line + 1}", "snippet 'no/such/sample.py' not found"


# ---- Hostile input (issue 8): each class fails with its file and line ----


def f_glossary_term_injects_markup(r):
    line = append(
        r,
        "docs/data/glossary.yml",
        '- id: injected-term\n  term: "MFU]: x\\n\\n<script>alert(1)</script>"\n  definition: D.\n'
        "  verified: 2026-11-01\n  checked_against: torch-tpu==0.2.0\n",
    )
    return f"docs/data/glossary.yml:{line + 1}", "can't be a tooltip term"


def f_control_character_in_a_value(r):
    line = append(r, "docs/data/claims.yml", claim("injected-cr").replace("Injected.", '"Injected\\r# heading"'))
    return f"docs/data/claims.yml:{line + 2}", "control character"


def f_mistyped_source_on_a_claim_a_page_shows(r):
    path = r / "docs" / "data" / "claims.yml"
    text = path.read_text(encoding="utf-8")
    at = text.index("{id: wheel,")
    path.write_text(text[:at] + "{id: wheeel," + text[at + len("{id: wheel,") :], encoding="utf-8")
    return f"docs/data/claims.yml:{text.count(chr(10), 0, at) + 1}", "unknown source 'wheeel'"


def f_deep_nesting(r):
    line = append(r, "docs/data/limits.yml", "- " + "[" * 500 + "]" * 500 + "\n")
    return f"docs/data/limits.yml:{line}", "nest"


def f_alias_bomb(r):
    bomb = "".join(f"- &a{i} [{', '.join([f'*a{i - 1}'] * 9) if i else 'x'}]\n" for i in range(9))
    line = append(r, "docs/data/limits.yml", bomb)
    return f"docs/data/limits.yml:{line}", "alias"


def f_symlink_out_of_the_project(r):
    (r / "docs" / "assets" / "passwd.txt").symlink_to("/etc/passwd")
    return "docs/assets/passwd.txt:1", "symlink"


def f_snippet_outside_the_snippets_folder(r):
    line = append(r, "docs/index.md", '```text\n--8<-- "../mkdocs.yml"\n```')
    return f"docs/index.md:{line + 1}", "snippet"


def f_front_matter_title_with_markup(r):
    path = r / "docs" / "about" / "conventions.md"
    path.write_text(
        path.read_text(encoding="utf-8").replace("---\n", '---\ntitle: "<img src=x onerror=alert(1)>"\n', 1)
    )
    return "docs/about/conventions.md:2", "front matter 'title' must be plain text"


def f_script_in_a_page(r):
    append(r, "docs/index.md", "<script>alert(1)</script>")
    return "index.html", "script"


def f_base_href_to_another_origin(r):
    append(r, "docs/index.md", '<base href="//other.example/">')
    return "index.html", "base"


def f_javascript_link(r):
    line = append(r, "docs/index.md", "[click](javascript:alert(1))")
    return f"docs/index.md:{line}", "javascript"


def f_style_attribute_loads_elsewhere(r):
    append(r, "docs/index.md", '<p style="background:URL( //evil.example/x.png )">x</p>')
    return "index.html", "evil.example"


# ---- Windows files (issue 21): CRLF line ends and a byte order mark are read as LF and no mark, so
# a problem in such a file keeps its line, and a lone carriage return still fails at its line ----


def to_windows(root: Path, rel: str) -> None:
    """Save ``rel`` as a Windows editor would: a UTF-8 byte order mark and CRLF line ends."""
    path = root / rel
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n"))  # bytes: a lone \r stays


def f_missing_link_in_a_windows_page(r):
    line = append(r, "docs/index.md", "[x](no-such-page.md)")
    to_windows(r, "docs/index.md")
    return f"docs/index.md:{line}", "link to missing page 'no-such-page.md'"


def f_unknown_source_in_a_windows_table(r):
    line = append(r, "docs/data/claims.yml", claim("injected-claim", source="no-such-source"))
    to_windows(r, "docs/data/claims.yml")
    return f"docs/data/claims.yml:{line + 5}", "unknown source 'no-such-source'"


def f_lone_carriage_return_in_a_windows_page(r):
    line = append(r, "docs/index.md", "A line\rthat a lone carriage return splits in two.")
    to_windows(r, "docs/index.md")
    return f"docs/index.md:{line}", "control character U+000D (carriage return)"


def f_lone_carriage_return_in_a_windows_table(r):
    line = append(r, "docs/data/claims.yml", claim("injected-claim").replace("Injected.", "Injected\rtwice."))
    to_windows(r, "docs/data/claims.yml")
    return f"docs/data/claims.yml:{line + 2}", "control character U+000D (carriage return)"


def f_escape_character_in_a_windows_page(r):
    line = append(r, "docs/index.md", "Colour \x1b[31mred.")
    to_windows(r, "docs/index.md")
    return f"docs/index.md:{line}", "control character U+001B"


# ---- Settings, scripts, valid-but-wrong data and ids (issue 21) ----


def replace_in(root: Path, rel: str, old: str, new: str) -> int:
    """Replace the first ``old`` in ``rel`` and return the line it was on."""
    path = root / rel
    text = path.read_text(encoding="utf-8")
    at = text.index(old)
    path.write_text(text[:at] + new + text[at + len(old) :], encoding="utf-8")
    return text.count("\n", 0, at) + 1


def f_unchecked_env_setting(r):
    line = append(r, "mkdocs.yml", "copyright: !ENV HANDBOOK_COPYRIGHT")
    return (
        f"mkdocs.yml:{line}",
        "'copyright' is read from the environment (!ENV HANDBOOK_COPYRIGHT), which nothing checks",
    )


def f_edit_uri_default_with_encoded_dot_segments(r):
    line = replace_in(
        r, "mkdocs.yml", "[HANDBOOK_EDIT_URI, edit/main/docs/]", "[HANDBOOK_EDIT_URI, 'edit/%2e%2e/%2E./x/']"
    )
    return f"mkdocs.yml:{line}", "is not a path inside the repository"


def f_unlisted_script_in_the_config(r):
    (r / "docs" / "assets" / "extra.js").write_text("document.title = 'x';\n", encoding="utf-8")
    listed = "  - assets/javascripts/code-nav-names.js\n"
    line = replace_in(r, "mkdocs.yml", listed, listed + "  - assets/extra.js\n")
    return f"mkdocs.yml:{line + 1}", "script 'docs/assets/extra.js' is not in docs/assets/vendor/ALLOWLIST"


def f_changed_vendored_script(r):
    with (r / "docs" / "assets" / "vendor" / "iframe-worker" / "shim.js").open("a", encoding="utf-8") as f:
        f.write("\nfetch('/x');\n")
    return "docs/assets/vendor/iframe-worker/shim.js:1", "script changed: its sha256 is"


def f_inline_script_in_an_override(r):
    (r / "overrides" / "main.html").write_text("{% extends 'base.html' %}\n<script>alert(1)</script>\n")
    return "overrides/main.html:2", "an inline script"


def f_nan_figure(r):
    line = replace_in(r, "docs/data/hardware.yml", "hbm_gib: 32", "hbm_gib: .nan")
    return f"docs/data/hardware.yml:{line}", "expected a finite number"


def f_record_verified_in_the_future(r):
    line = append(r, "docs/data/claims.yml", claim("injected-claim").replace("2026-11-01", "2999-01-01"))
    return f"docs/data/claims.yml:{line + 6}", "2999-01-01 is in the future"


def f_page_reviewed_in_the_future(r):
    current = next(ln for ln in (r / "docs/index.md").read_text().splitlines() if ln.startswith("reviewed: "))
    line = replace_in(r, "docs/index.md", current, "reviewed: 2999-12-31")
    return f"docs/index.md:{line}", "'reviewed: 2999-12-31' is in the future"


def f_file_source_outside_the_project(r):
    line = replace_in(r, "docs/data/sources.yml", "file: seeds/000_9a6fa3a74645d3dc.txt", "file: ../../etc/passwd")
    return f"docs/data/sources.yml:{line}", "points outside the project"


def f_filter_alternative_that_names_nothing(r):
    line = append(r, "docs/index.md", "<!-- kb:table figures topic=throughput,througput -->")
    return f"docs/index.md:{line}", "no record of table 'figures' has topic 'througput'"


def f_shortcode_prefix_in_another_case(r):
    line = append(r, "docs/index.md", "<!-- KB:table hardware -->")
    return f"docs/index.md:{line}", "is not a shortcode, so it would show nothing"


def f_table_in_a_subfolder(r):
    (r / "docs" / "data" / "extra").mkdir()
    (r / "docs" / "data" / "extra" / "claims.yml").write_text("[]\n", encoding="utf-8")
    return "docs/data/extra/claims.yml:1", "is in a subfolder of docs/data/, which the loader never reads"


def f_table_with_a_yaml_extension(r):
    (r / "docs" / "data" / "claims.extra.yaml").write_text("[]\n", encoding="utf-8")
    return "docs/data/claims.extra.yaml:1", "unknown table file 'claims.extra.yaml'"


def f_two_headings_with_one_id(r):
    line = append(r, "docs/index.md", "## First {#twice}\n\n## Second {#twice}")
    return f"docs/index.md:{line + 2}", "id 'twice' (the heading's {#id}) is already the id of line"


def f_javascript_link_at_its_line(r):
    line = append(r, "docs/index.md", "[click]( JavaScript&#58;alert(1))")
    return f"docs/index.md:{line}", "runs script (a javascript: URL)"


FAULTS = [f for name, f in sorted(globals().items()) if name.startswith("f_")]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    return copy_project(tmp_path_factory.mktemp("pristine"))


@pytest.mark.build
def test_the_unfaulted_copy_passes(pristine):
    rc, out = check(pristine)
    assert rc == 0, out


def test_there_are_at_least_twenty_distinct_faults():
    assert len(FAULTS) >= 20


@pytest.mark.build
@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.__name__[2:])
def test_fault_fails_with_file_and_line(fault, tmp_path):
    root = copy_project(tmp_path)
    where, what = fault(root)
    rc, out = check(root)
    assert rc != 0, f"{fault.__name__} did not fail the build:\n{out}"
    assert "Traceback" not in out, out
    matches = [line for line in out.splitlines() if where in line and what in line]
    assert matches, f"expected a line with '{where}' and '{what}', got:\n{out}"


@pytest.mark.build
def test_windows_pages_tables_and_snippets_build_to_the_same_site(pristine, tmp_path):
    """CRLF and a byte order mark in a page (front matter and a snippet include), a table and a
    snippet: the build passes, no mark or carriage return reaches the HTML, and the pages are the
    unfaulted copy's; the files themselves are left as they were."""
    root = copy_project(tmp_path)
    page, table, snippet = (
        "docs/figures/measure-your-own.md",
        "docs/data/glossary.yml",
        "snippets/figures/measure_throughput.py",
    )
    assert '--8<-- "figures/measure_throughput.py"' in (root / page).read_text(encoding="utf-8")
    (root / "snippets" / "windows.txt").write_bytes(b"\xef\xbb\xbfIncluded as text.\r\nSecond line.\r\n")
    for rel in (page, table, snippet):
        if rel == page:
            append(root, rel, '\n--8<-- "windows.txt"')
        to_windows(root, rel)
    saved = {rel: (root / rel).read_bytes() for rel in (page, table, snippet)}
    rc, out = check(root)
    assert rc == 0, out
    assert {rel: (root / rel).read_bytes() for rel in saved} == saved
    if not (pristine / "site" / "index.html").is_file():
        assert check(pristine)[0] == 0
    for html in ("figures/measure-your-own/index.html", "reference/glossary/index.html", "index.html"):
        built = (root / "site" / html).read_text(encoding="utf-8")
        assert "\ufeff" not in built and "\r" not in built, html
        if html.startswith("figures/"):
            assert "<p>Included as text.\nSecond line.</p>" in built
            built = built.replace("<p>Included as text.\nSecond line.</p>\n", "")
        assert built == (pristine / "site" / html).read_text(encoding="utf-8"), html
