"""Lighter markup: the same text and styles in fewer bytes, nothing else touched."""

from kb.render.slim import slim_html


def test_name_and_whitespace_spans_in_a_code_block_are_unwrapped():
    html = (
        '<pre><span></span><code><span class="kn">import</span><span class="w"> </span>'
        '<span class="nn">torch</span>\n<span class="n">x</span><span class="o">=</span><span class="mi">1</span>'
        "</code></pre>"
    )
    assert slim_html(html) == (
        '<pre><span></span><code><span class="kn">import</span> <span class="nn">torch</span>\n'
        'x<span class="o">=</span><span class="mi">1</span></code></pre>'
    )


def test_spans_outside_code_blocks_are_left_alone():
    html = '<p><span class="n">x</span> <code class="highlight"><span class="n">y</span></code></p>'
    assert slim_html(html) == html


def test_markdown_punctuation_references_become_characters_in_text_and_attributes():
    html = '<a title="torch&#95;tpu &#40;wheel&#41;" href="a&#95;b/">x&#95;y &#96;z&#96;</a>'
    assert slim_html(html) == '<a title="torch_tpu (wheel)" href="a_b/">x_y `z`</a>'


def test_quotes_markup_and_reference_characters_stay_references():
    html = "<p title='a &#39; b'>&#60;b&#62; &#34; &#38; &&#35;65; &amp&#59;</p>"
    assert slim_html(html) == html


def test_comments_scripts_and_styles_are_copied_as_they_are():
    html = (
        '<!-- a &#95; b --><script type="application/json">{"a": "&#40;"}</script>'
        "<style>a::after{content:'&#41;'}</style><p>&#95;</p>"
    )
    assert slim_html(html) == html.replace("<p>&#95;</p>", "<p>_</p>")


def test_slim_html_twice_is_slim_html_once():
    html = '<pre><code><span class="n">a&#95;b</span></code></pre><p>&#40;</p>'
    once = slim_html(html)
    assert slim_html(once) == once == "<pre><code>a_b</code></pre><p>(</p>"
