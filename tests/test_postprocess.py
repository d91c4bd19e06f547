"""Theme markup fixes: applied once, exactly where expected, nothing else touched."""

from kb.postprocess import fix_html


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
