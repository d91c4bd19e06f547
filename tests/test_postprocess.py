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
