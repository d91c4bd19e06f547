"""Where the HTML5 parser reads markup differently from a hand-written tokenizer, and files a
browser runs as documents whatever their name: each is read the way the browser reads it."""

import pytest
from test_sitecheck_hostile import CONTENT_LINE, page, run

# (content, what must be said): each reported at the content line.
SPEC = [
    # entities decoded in URLs, with and without ';', and NUL and controls inside a scheme
    ('<a href="jav&#x61;script:alert(1)">x</a>', "javascript: URL in href= of <a>"),
    ('<a href="jav&#97script:alert(1)">x</a>', "javascript: URL"),
    ('<a href="&Tab;javascript:alert(1)">x</a>', "javascript: URL"),
    ('<a href="javascript&#x3a;alert(1)">x</a>', "javascript: URL"),
    # attributes without whitespace between them, a slash between them, upper case everywhere
    ('<img src="img/a.png"onerror="alert(1)">', "event handler attribute 'onerror'"),
    ("<img src='img/a.png'/onerror=alert(1)>", "event handler attribute 'onerror'"),
    ('<IMG SRC="img/a.png" ONERROR="alert(1)">', "event handler attribute 'onerror'"),
    # a duplicate attribute: the first one counts, so the second can't hide a script URL behind it
    ('<a href="javascript:alert(1)" href="#top">x</a>', "javascript: URL"),
    # a script in SVG is a script; so is one in MathML's HTML island
    ("<svg><script>alert(1)</script></svg>", "<script> in page content"),
    ("<svg><desc><script>alert(1)</script></desc></svg>", "<script> in page content"),
    ("<math><mi><script>alert(1)</script></mi></math>", "<script> in page content"),
    # '</p >' is a plain end tag; what follows it is read as markup
    ("<p>x</p ><script>alert(1)</script>", "<script> in page content"),
    # a NUL in a tag name does not end it, and one inside text changes nothing after it
    ("<p>\x00</p><script>alert(1)</script>", "<script> in page content"),
    # an unclosed comment runs to the end of the file, swallowing the theme's tail with it
    ("<!-- unclosed <script>alert(1)</script>", "comment hides the end tag '</script'"),
    # '<!-->' and '<!--->' are whole (empty) comments: a comment right after them is read on its own
    ("<!--><!-- </script> -->", "comment hides the end tag '</script'"),
    ("<!---><!-- </style> -->", "comment hides the end tag '</style'"),
]


@pytest.mark.parametrize(("content", "expected"), SPEC, ids=[c[:50] for c, _ in SPEC])
def test_markup_is_read_as_the_html5_parser_reads_it(tmp_path, content, expected):
    out = run(tmp_path, {"index.html": page(content)})
    assert any(line.startswith(f"site/index.html:{CONTENT_LINE}: ") and expected in line for line in out), out


def test_text_in_a_raw_text_element_is_not_markup(tmp_path):
    # Inside <textarea>, <title> and <xmp> as the HTML5 parser reads them, '<script>' is text...
    quiet = "<textarea><script>alert(1)</script></textarea><title><img src=x onerror=alert(1)></title>"
    assert run(tmp_path, {"index.html": page(quiet)}) == []


def test_markup_in_raw_text_that_innerhtml_would_turn_into_markup_is_reported(tmp_path):
    # ...but in <xmp> or <noembed> it comes back as markup once copied through innerHTML.
    out = run(tmp_path, {"index.html": page('<xmp><img src="img/a.png" onerror=alert(1)></xmp>')})
    assert any("'onerror'" in line and f":{CONTENT_LINE}:" in line for line in out), out


# ---- files a browser runs as documents ----

SVG_SCRIPT = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
XHTML_SCRIPT = '<html xmlns="http://www.w3.org/1999/xhtml"><body><script>alert(1)</script></body></html>'
