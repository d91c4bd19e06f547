"""Theme markup fixes: applied once, exactly where expected, nothing else touched."""

from kb.render.postprocess import fix_html


def test_search_dialog_gets_a_name():
    html = '<div class="md-search" data-md-component="search" role="dialog"><p>x</p>'
    assert (
        fix_html(html) == '<div class="md-search" data-md-component="search" role="dialog" aria-label="Search"><p>x</p>'
    )


def test_read_only_checkboxes_are_hidden_from_assistive_technology():
    html = '<li><input type="checkbox" disabled/> Install</li><li><input type="checkbox" checked/></li>'
    assert fix_html(html) == (
        '<li><input type="checkbox" disabled aria-hidden="true" tabindex="-1"/> Install</li>'
        '<li><input type="checkbox" checked/></li>'
    )


def test_other_markup_is_unchanged():
    html = '<p>role="dialog" in text</p>'
    assert fix_html(html) == html


def test_code_in_table_cells_breaks_only_at_spaces_and_after_dots_underscores_and_slashes():
    html = (
        "<p><code>a.b</code></p><table><tr><th>x</th></tr><tr><td>run <code>torchrun --nproc_per_node=N a.py</code> "
        '<code>A&#95;B&amp;c/d</code> <code class="highlight"><span>k</span></code></td></tr></table>'
    )
    tok = '<span class="kb-tok">{}</span>'.format
    assert fix_html(html) == (
        "<p><code>a.b</code></p><table><tr><th>x</th></tr><tr><td>run "
        f"<code>torchrun {tok('--nproc_')}<wbr>per_<wbr>{tok('node=N')} a.<wbr>py</code> "
        f"<code>A&#95;<wbr>{tok('B&amp;c/')}<wbr>d</code> "
        '<code class="highlight"><span>k</span></code></td></tr></table>'
    )


def test_only_pieces_a_line_could_break_inside_keep_a_span():
    html = "<td><code>a-b x|y ok! why? {k} f(&#39;x&#39;)[0]:=1 …</code></td>"
    tok = '<span class="kb-tok">{}</span>'.format
    assert fix_html(html) == (
        f"<td><code>{tok('a-b')} {tok('x|y')} {tok('ok!')} {tok('why?')} {tok('{k}')} "
        f"f(<wbr>{tok('&#39;x&#39;)[0]:=1')} …</code></td>"
    )


def test_abbreviations_inside_code_in_a_cell_stay_as_they_are():
    html = '<td><code><abbr title="Distributed Data Parallel">DDP</abbr>&#40;m, device_ids=x&#41;</code></td>'
    assert fix_html(html) == (
        '<td><code><abbr title="Distributed Data Parallel">DDP</abbr>&#40;<wbr><span class="kb-tok">m,</span> '
        'device_<wbr><span class="kb-tok">ids=x&#41;</span></code></td>'
    )


def test_the_tags_and_a_sections_nav_get_names():
    html = (
        '<nav class="md-nav" data-md-level="1" aria-labelledby="__nav_2_label" aria-expanded="true">\n'
        '  <label class="md-nav__title" for="__nav_2">\n    <span class="md-nav__icon md-icon"></span>\n'
        '    Limits &amp; "roadmap"\n  </label>\n</nav><nav class="md-tags" >'
    )
    assert fix_html(html) == html.replace(
        'aria-expanded="true">', 'aria-expanded="true" aria-label="Limits &amp; &quot;roadmap&quot;">'
    ).replace('<nav class="md-tags"', '<nav class="md-tags" aria-label="Tags"')


def test_a_nav_without_a_title_label_is_left_alone():
    html = '<nav class="md-nav" data-md-level="1" aria-labelledby="x_label"><ul></ul></nav>'
    assert fix_html(html) == html


def test_fix_html_twice_is_fix_html_once():
    html = (
        '<div class="md-search" data-md-component="search" role="dialog"><nav class="md-tags" >x</nav>'
        '<input type="checkbox" disabled/><table><tr><td><code>a.b</code></td></tr></table>'
    )
    once = fix_html(html)
    assert fix_html(once) == once and once.count('aria-label="Tags"') == 1


def test_a_nav_link_named_by_an_underscored_name_may_wrap_after_each_underscore():
    link = '<a href="#env-x" class="md-nav__link">\n    <span class="md-ellipsis">\n      TORCH_TPU_DEFER\n    </span>'
    out = fix_html(link)
    assert "TORCH_<wbr>TPU_<wbr>DEFER" in out and fix_html(out) == out
    titled = '<span class="md-ellipsis">Make it the default: TPU_DEFER_X (outdated spelling)</span>'
    assert "default: TPU_<wbr>DEFER_<wbr>X (outdated" in fix_html(titled)
    words = '<span class="md-ellipsis">Execution modes</span>'
    assert fix_html(words) == words


def test_a_source_link_holds_no_glossary_tooltip_inside_its_own():
    link = '<a class="kb-src" href="s/#src-g" title="GKE sample"><abbr title="Google Kubernetes Engine">GKE</abbr> sample</a>'
    assert fix_html(link) == '<a class="kb-src" href="s/#src-g" title="GKE sample">GKE sample</a>'
    prose = '<p><abbr title="Google Kubernetes Engine">GKE</abbr> runs it</p>'
    assert fix_html(prose) == prose


def _table(columns: int, body: str = "") -> str:
    head = "".join(f"<th>H{i}</th>" for i in range(columns))
    row = body or "".join(f"<td>v{i}</td>" for i in range(columns))
    return f"<table>\n<thead>\n<tr>{head}</tr>\n</thead>\n<tbody>\n<tr>{row}</tr>\n</tbody>\n</table>"


def test_a_wide_tables_cells_after_the_first_carry_their_columns_label():
    out = fix_html(_table(4))
    assert "<td>v0</td>" in out
    for i in (1, 2, 3):
        assert f'<td><span class="kb-label">H{i}:</span> v{i}</td>' in out
    assert fix_html(out) == out  # once only


def test_a_narrow_table_and_an_already_labelled_one_are_left_alone():
    assert fix_html(_table(3)) == _table(3)
    labelled = _table(4, '<td>a</td><td><span class="kb-label">H1:</span> b</td><td>c</td><td>d</td>')
    assert fix_html(labelled) == labelled
