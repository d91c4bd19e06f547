"""Shortcode rendering: output shape, escaping of hostile data, and errors with page lines."""

import re
import textwrap
from html import unescape

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import MINI_TABLES, write_tables
from kb.core.load import load_kb
from kb.render import render as render_module
from kb.render.render import Ctx, abbreviations, render_markdown, text, with_unit


@pytest.fixture
def kb(tmp_path):
    return load_kb(write_tables(tmp_path / "docs" / "data"), shown_root=tmp_path)


def render(kb, md, src="migrate/page.md"):
    return render_markdown(md, Ctx(kb, src), "docs/" + src, first_line=5)


def test_figure_has_value_unit_vendor_label_status_and_source(kb):
    out, problems = render(kb, "Speed: <!-- kb:figure tput --> today.")
    assert problems == []
    assert (
        '<span class="kb-figure" title="Throughput: M; TPU v7; 1 chip; sequence length 5,120; inference">25,700 tokens/s</span>'
        in out
    )
    assert "vendor claim" in out
    assert (
        '[reported](../about/conventions.md#status-reported){ .kb-badge .kb-badge--reported data-search-exclude="1" }'
        in out
    )
    assert (
        '[news](../reference/sources.md#src-news "A news report, Press: para 3"){ .kb-src data-search-exclude="1" }'
        in out
    )
    assert out.endswith(" today.")


def test_table_cells_carry_their_column_label_and_keep_code_tokens_whole(kb):
    out, problems = render(kb, "<!-- kb:table claims status=corrected -->")
    assert problems == []
    assert '<div class="kb-table kb-table--claims kb-table--cards" markdown>' in out and out.rstrip().endswith("</div>")
    row = [line for line in out.splitlines() if 'id="claim-wrong"' in line][0]
    first, evidence = row.strip("| ").split(" | ")
    assert "kb-label" not in first and evidence.startswith('<span class="kb-label">Evidence:</span> [corrected]')


def test_links_are_relative_to_the_page(kb):
    out, _ = render(kb, "<!-- kb:claim dev -->", src="index.md")
    assert "(reference/sources.md#src-prim" in out and "(about/conventions.md#status-confirmed)" in out


def test_table_with_filter_renders_markdown_rows(kb):
    out, problems = render(kb, "<!-- kb:table claims status=corrected -->")
    assert problems == []
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    assert rows[0] == "| Fact | Evidence |"
    assert len(rows) == 3 and 'id="claim-wrong"' in rows[2]
    assert "Reported: The report says xla." in rows[2]


def test_filter_alternatives_and_nested_conditions(kb):
    out, problems = render(kb, "<!-- kb:table figures workload=training,inference -->")
    assert problems == [] and "25,700 tokens/s" in out


def test_hostile_strings_come_out_escaped(tmp_path):
    claims = textwrap.dedent(MINI_TABLES["claims"]).replace(
        'statement: "The device is `tpu`."', 'statement: "<script>alert(1)</script> | *x* [a](b) `<b>`"'
    )
    kb = load_kb(write_tables(tmp_path / "docs" / "data", claims=claims), shown_root=tmp_path)
    out, problems = render(kb, "<!-- kb:claim dev -->\n\n<!-- kb:table claims -->")
    assert problems == []
    assert "<script>" not in out and "<b>" not in out
    assert (
        "&#60;script&#62;alert&#40;1&#41;&#60;/script&#62; &#124; &#42;x&#42; &#91;a&#93;&#40;b&#41; <code>&#60;b&#62;</code>"
        in out
    )


def test_unknown_shortcode_name_id_table_filter_are_errors_with_the_page_line(kb):
    md = "\n".join(
        [
            "<!-- kb:tabel claims -->",
            "<!-- kb:figure nope -->",
            "<!-- kb:table nope -->",
            "<!-- kb:table claims colour=red -->",
            "<!-- kb:table claims status=disputed -->",
            "<!-- kb:figure tput extra=1 -->",
        ]
    )
    out, problems = render(kb, md)
    assert [str(p) for p in problems] == [
        "docs/migrate/page.md:5: unknown shortcode 'kb:tabel' (expected one of: kb:table, kb:figure, kb:claim, "
        "kb:badge, kb:limit, kb:mode, kb:chart, kb:diagram, kb:corrections, kb:entries, kb:error-index, kb:env-summary, kb:undocumented, kb:review-queue, "
        "kb:bench, kb:glossary, kb:sources)",
        "docs/migrate/page.md:6: kb:figure: unknown figures id 'nope' (expected an id from docs/data/figures.yml)",
        "docs/migrate/page.md:7: kb:table: unknown table 'nope' (expected one of: sources, claims, figures, modes, "
        "limits, env_vars, api_map, hardware, integrations, frameworks, glossary, migration_rules, errors, "
        "internal_messages, benchmarks, speed, diagrams)",
        "docs/migrate/page.md:8: kb:table: unknown filter 'colour' for table 'claims' (expected one of: verified, "
        "checked_against, api, env, backend, spelling, current, elsewhere, id, sources, status, conflicts, topic, "
        "statement, corrects, applies_to, cites, cites_kind)",
        "docs/migrate/page.md:9: kb:table: table 'claims' has no record matching 'status=disputed' (expected at least one)",
        "docs/migrate/page.md:10: kb:figure: unexpected argument 'extra' (expected none)",
    ]
    assert out == md  # nothing is half-rendered


def test_shortcodes_in_code_are_left_alone(kb):
    md = "Write `<!-- kb:figure nope -->` inline.\n\n```markdown\n<!-- kb:figure nope -->\n```\n"
    out, problems = render(kb, md)
    assert problems == [] and out == md


def test_corrections_list_news_claims_that_sources_correct(kb):
    out, problems = render(kb, "<!-- kb:corrections -->")
    assert problems == []
    assert "The report says xla." in out and "The device is tpu, not xla." in out


def test_chart_is_static_svg_without_blank_lines(kb):
    out, problems = render(
        kb, "<!-- kb:chart hardware value=hbm_gib -->\n<!-- kb:chart figures workload=inference title=Speed -->"
    )
    assert problems == []
    assert out.count("<svg") == 2 and "<script" not in out
    assert "192 GiB" in out and "25,700 tokens/s &#40;reported&#41;" in out
    for block in out.split("\n\n"):
        if "<svg" in block:
            assert "\n" not in block.strip()


def test_abbreviations_come_from_the_glossary(kb):
    assert abbreviations(kb) == "\n\n*[HBM]: High Bandwidth Memory: Memory next to the chip.\n"


def _used_terms_pairwise(terms: tuple[str, ...], markdown: str) -> set[str]:
    """The glossary's first term finder, kept as the reference: one regex of every term, and the
    terms another term begins with (compared pair by pair) searched for one by one."""
    ordered = sorted(set(terms), key=len, reverse=True)
    any_term = re.compile("(?=(" + "|".join(rf"\b{re.escape(t)}\b" for t in ordered) + "))")
    shadowed = [t for t in ordered if any(o != t and o.startswith(t) for o in ordered)]
    used: set[str] = set()
    for txt in (markdown, unescape(markdown)):
        used.update(m.group(1) for m in any_term.finditer(txt))
        used.update(t for t in shadowed if re.search(rf"\b{re.escape(t)}\b", txt))
    return used


# Word and non-word characters, a non-ASCII letter and digit, and what makes a character reference.
_CHARS = st.sampled_from(list("aAb_1 .-+é٣&;#x") + ["&amp;", "&#65;", "\n"])
_TERM = st.lists(_CHARS, min_size=1, max_size=5).map("".join)


@st.composite
def _terms_and_text(draw: st.DrawFn) -> tuple[tuple[str, ...], str]:
    """Terms, and a text of them, of their first characters as references, and of other characters
    (so that a term often occurs, begins another, or ends inside a word)."""
    terms = draw(st.lists(_TERM, min_size=1, max_size=12))
    referenced = st.sampled_from(terms).map(lambda t: f"&#{ord(t[0])};{t[1:]}")
    pieces = draw(st.lists(st.one_of(_CHARS, st.sampled_from(terms), referenced), max_size=20))
    return tuple(terms), "".join(pieces)


@settings(max_examples=500, deadline=None)
@given(_terms_and_text())
def test_terms_found_as_the_pairwise_finder_finds_them(case):
    terms, markdown = case
    render_module._term_index.cache_clear()
    assert render_module._used_terms(terms, markdown) == _used_terms_pairwise(terms, markdown)


@pytest.mark.parametrize("count", [1_000, 10_000, 100_000])
def test_terms_that_share_their_beginnings_are_found_among_many(count):
    """Terms that share their beginnings (the worst case of the pairwise finder): the one-word terms
    are looked up by word, and the phrases found by one pattern in which a shared beginning is
    written, and tried, once."""
    terms = tuple(f"TPU v{i} chip" if i % 2 else f"TPU{i}" for i in range(count))
    page = " ".join(f"TPU v{i} chip and TPU{i}_x, TPU" for i in range(0, 4_000, 7))
    # "TPU{i}_x" is no word "TPU{i}" (the underscore is a word character); "TPU" alone is no term
    assert render_module._used_terms(terms, page) == {
        f"TPU v{i} chip" for i in range(1, min(count, 4_000), 2) if i % 7 == 0
    }
    words, phrases = render_module._term_index(terms)
    assert phrases is not None and len(words) + len(phrases[1]) == count
    assert phrases[0].pattern.count("TPU") == 1


def test_number_formatting():
    assert with_unit(25700, "tokens/s") == "25,700 tokens/s"
    assert with_unit(52, "%", approx=True) == "~52%"
    assert with_unit(2.5, "x") == "2.5×"
    assert text("a|b") == "a&#124;b"


def test_banner_goes_under_the_title(kb):
    from kb.render.render import banner, with_banner

    note = banner({"reviewed": "2026-11-01", "applies_to": "torch-tpu 0.2.0"}, Ctx(kb, "index.md"))
    assert (
        note
        == '<p class="kb-banner" data-search-exclude="1">Applies to: torch-tpu 0.2.0 · Reviewed: 2026-11-01</p>\n\n'
    )
    assert with_banner("Intro\n# Title\nText", note) == "Intro\n# Title\n\n" + note + "\nText"
    assert with_banner("No title", note) == note + "No title"


def test_entries_give_each_environment_variable_a_heading(tmp_path):
    env = """\
        - id: defer
          name: TORCH_TPU_DEFER_AND_FUSE
          read_by: torch-tpu
          purpose: Turns on <Fused> Eager.
          values: "`1`"
          default: unset
          read_when: at start
          group: execution-modes
          status: confirmed
          sources: [{id: prim, locator: strings}]
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        """
    kb = load_kb(write_tables(tmp_path / "docs" / "data", env_vars=env), shown_root=tmp_path)
    out, problems = render(kb, "<!-- kb:entries env_vars group=execution-modes -->")
    assert problems == []
    assert "### TORCH_TPU_DEFER_AND_FUSE {#env-defer}" in out
    assert "Turns on &#60;Fused&#62; Eager." in out and "**Values:** <code>1</code>" in out
    _, problems = render(kb, "<!-- kb:entries figures -->")
    assert [p.message for p in problems] == [
        "kb:entries: entries supports the tables env_vars and errors only, got 'figures'"
    ]


def test_an_outdated_spelling_is_shown_as_outdated_never_as_an_instruction(tmp_path):
    env = """\
        - id: old
          name: TPU_LAUNCH_BLOCKING
          read_by: torch-tpu
          spelling: outdated
          current: TORCH_TPU_LAUNCH_BLOCKING
          purpose: Pre-release name for synchronous launches.
          values: "`1`"
          default: unset
          read_when: never in 0.2.0
          group: execution-modes
          status: confirmed
          sources: [{id: prim, locator: strings}]
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        """
    kb = load_kb(write_tables(tmp_path / "docs" / "data", env_vars=env), shown_root=tmp_path)
    out, problems = render(kb, "<!-- kb:entries env_vars -->")
    assert problems == []
    assert "### TPU_LAUNCH_BLOCKING (outdated spelling) {#env-old}" in out
    summary, problems = render(kb, "<!-- kb:env-summary -->")
    assert problems == []
    current, outdated = summary.split("Outdated spellings, kept apart")
    assert "env-old" not in current and "| Variable | Read by | Section |" in current
    assert "(../reference/environment-variables.md#env-old)" in outdated and "LAUNCH" in outdated
    assert (
        "**Outdated spelling, not for new code:** the package uses <code>TORCH&#95;TPU&#95;LAUNCH&#95;BLOCKING</code>."
        in out
    )


def test_undocumented_lists_what_the_inventory_has_and_no_record_states(tmp_path):
    data = write_tables(tmp_path / "docs" / "data")
    (data / "package.json").write_text(
        '{"package": "torch-tpu", "version": "0.2.0", "api": ["torch.tpu.spmd_safe"], '
        '"env": ["TORCH_TPU_BASE_PORT", "TORCH_TPU_INTERNAL_X"]}'
    )
    kb = load_kb(data, shown_root=tmp_path)
    out, problems = render(kb, "<!-- kb:undocumented env -->")
    assert problems == []
    assert "2 in the package (torch-tpu 0.2.0), not yet documented" in out
    kind = '<span class="kb-label">Kind:</span>'
    assert (
        f"| `TORCH_TPU_INTERNAL_X` | {kind} internal |" in out
        and f"| `TORCH_TPU_BASE_PORT` | {kind} user-facing |" in out
    )
    (data / "package.json").write_text('{"api": ["<script>"], "env": []}')
    _, problems = render(kb, "<!-- kb:undocumented api -->")
    assert [p.message for p in problems] == [
        "kb:undocumented: docs/data/package.json: api entry '<script>' is not a package name"
    ]


def test_chart_leaves_room_for_the_longest_value_label():
    import re

    from kb.render.charts import _CHAR_W, _W, bar_chart

    svg = bar_chart("T", [("a", 100.0, "25,700 tokens/s (reported)"), ("b", 50.0, "x")])
    right = max(float(x) + float(w) for x, w in re.findall(r'<rect x="([\d.]+)" y="\d+" width="([\d.]+)"', svg))
    assert right + 6 + _CHAR_W * len("25,700 tokens/s (reported)") <= _W


def test_a_renderer_that_fails_is_a_problem_at_the_shortcode_line(kb, monkeypatch):
    import kb.render.render as render_module

    def broken(ctx, pos, kw):
        raise KeyError("ghost")

    monkeypatch.setitem(render_module.RENDERERS, "claim", broken)
    out, problems = render(kb, "text\n<!-- kb:claim dev -->")
    assert [str(p) for p in problems] == ["docs/migrate/page.md:6: kb:claim: could not render (KeyError: 'ghost')"]
    assert out == "text\n<!-- kb:claim dev -->"


@pytest.mark.parametrize(
    ("shortcode", "message"),
    [
        (
            "figures workload=training,inferense",
            "filter 'workload=training,inferense': no record of table 'figures' "
            "has workload 'inferense' (expected one of: hardware, inference, matmul, serving, testing, training)",
        ),
        ("figures model=M,m", "filter 'model=M,m': no record of table 'figures' has model 'm' (expected one of: M)"),
        (
            "claims topic=device,",
            "filter 'topic=device,': no record of table 'claims' has topic '' (expected one of: device)",
        ),
        (
            "claims cites=prim,nope",
            "filter 'cites=prim,nope': no record of table 'claims' has cites 'nope' (expected one of: news, prim)",
        ),
        (
            "claims cites_kind=primary,blog",
            "filter 'cites_kind=primary,blog': no record of table 'claims' has "
            "cites_kind 'blog' (expected one of: community, news, primary, vendor-docs)",
        ),
        (
            "figures approx=no",
            "filter 'approx=no': no record of table 'figures' has approx 'no' (expected one of: false, true)",
        ),
    ],
)
def test_a_filter_alternative_that_names_no_value_is_an_error(kb, shortcode, message):
    """One mistyped alternative would match nothing while the others match: the table would look right."""
    out, problems = render(kb, f"<!-- kb:table {shortcode} -->")
    assert [str(p) for p in problems] == [f"docs/migrate/page.md:5: kb:table: {message}"]


def test_alternatives_that_each_name_a_value_but_match_no_row_together_still_fail(kb):
    out, problems = render(kb, "<!-- kb:table claims status=corrected topic=device cites=prim,news -->")
    assert problems == []
    out, problems = render(kb, "<!-- kb:table figures workload=inference approx=true -->")
    assert [p.message for p in problems] == [
        "kb:table: table 'figures' has no record matching 'workload=inference approx=true' (expected at least one)"
    ]


@pytest.mark.parametrize(
    "written",
    [
        "<!-- KB:table claims -->",
        "<!-- Kb:claim dev -->",
        "<!--kB:figure tput-->",
        "{{ kb:table claims }}",
        "{{KB:claim dev}}",
        "<!-- kb :table claims -->",
    ],
)
def test_a_shortcode_in_another_case_or_form_is_an_error_not_a_silent_comment(kb, written):
    out, problems = render(kb, f"Intro.\n\nSee {written} here.")
    assert [
        (
            p.line,
            "is not a shortcode, so it would show nothing (expected '<!-- kb:NAME ... -->', with 'kb:' "
            "in lower case)" in p.message,
        )
        for p in problems
    ] == [(7, True)]
    assert out.endswith(f"See {written} here.")


def test_a_miscased_shortcode_in_code_is_left_alone(kb):
    out, problems = render(kb, "`<!-- KB:table claims -->`\n\n```text\n<!-- KB:table claims -->\n```")
    assert problems == []


def test_a_source_with_a_cite_is_shown_by_it_in_links_and_conflicts(tmp_path):
    tables = write_tables(tmp_path / "docs" / "data")
    path = tables / "sources.yml"
    path.write_text(path.read_text().replace("publisher: Press\n", "publisher: Press\n  cite: Press report, 2026\n"))
    kb = load_kb(tables, shown_root=tmp_path)
    out, problems = render(kb, "<!-- kb:claim wrong -->")
    assert problems == []
    assert (
        '[Press report, 2026](../reference/sources.md#src-news "A news report, Press: para 2"){ .kb-src data-search-exclude="1" }'
        in out
    )
    table, problems = render(kb, "<!-- kb:table claims status=corrected -->")
    assert problems == []
    assert "Press report, 2026: the device is xla" in table and "news:" not in table


def test_every_source_of_the_handbook_has_its_own_cite():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    kb = load_kb(root / "docs" / "data", shown_root=root)
    cites = {rid: rec.model.cite for rid, rec in kb.index("sources").items()}
    assert [rid for rid, cite in cites.items() if not cite] == []
    assert len(set(cites.values())) == len(cites), "two sources would look the same on a page"


def test_a_filter_alternative_ending_in_a_star_matches_values_that_start_with_it(kb):
    every, problems = render(kb, "<!-- kb:table claims -->")
    assert problems == []
    some, problems = render(kb, "<!-- kb:table claims id=wr* -->")
    assert problems == [] and 'id="claim-wrong"' in some and len(some) < len(every)
    _, problems = render(kb, "<!-- kb:table claims id=zz* -->")
    assert [p.message for p in problems] == [
        "kb:table: filter 'id=zz*': no record of table 'claims' has id 'zz*' (expected one of: "
        + problems[0].message.split("(expected one of: ", 1)[1]
    ]
