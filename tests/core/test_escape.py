"""Each escaping context: what comes out, and what is refused."""

import pytest

from kb.core.escape import UnsafeValue, abbr_line, attr, https_url, link_title, md_rich, md_text, number, one_line


@pytest.mark.parametrize(
    "value, expected",
    [
        ("plain torch-tpu 0.2.0", "plain torch-tpu 0.2.0"),
        ("a | b", "a &#124; b"),
        ("[x](y){: onclick=z }", "&#91;x&#93;&#40;y&#41;&#123;: onclick&#61;z &#125;"),
        ("<b>&</b>", "&#60;b&#62;&#38;&#60;/b&#62;"),
        ("*a* _b_ ~c~ ^d^", "&#42;a&#42; &#95;b&#95; &#126;c&#126; &#94;d&#94;"),
        ("# h", "&#35; h"),
        ("1. list", "1&#46; list"),
        ("2026-11-30", "2026-11-30"),
        ("- item", "&#45; item"),
        (": def", "&#58; def"),
        ("a\rb\nc\td\x00e", "a b c d e"),
        ("bidi\u202eflip", "bidi flip"),
    ],
)
def test_md_text(value, expected):
    assert md_text(value) == expected


def test_md_rich_keeps_paired_backticks_as_code_and_escapes_inside():
    assert md_rich("use `torch.tpu.precision` now") == "use <code>torch.tpu.precision</code> now"
    assert md_rich("`<b>`") == "<code>&#60;b&#62;</code>"
    assert md_rich("one ` tick") == "one &#96; tick"


def test_attribute_and_link_title_leave_no_quote_or_bracket():
    assert attr('x" onload="y') == "x&#34; onload&#61;&#34;y"
    assert link_title('t") [a](b)') == "t&#34;&#41; &#91;a&#93;&#40;b&#41;"


@pytest.mark.parametrize(
    "url, expected",
    [
        ("https://docs.example.org/a/b?q=1#frag", "https://docs.example.org/a/b?q=1#frag"),
        ("HTTPS://Example.org/x", "https://example.org/x"),
        ("https://h.org/x)<svg/onload=1>", "https://h.org/x%29%3Csvg/onload=1%3E"),
        ("https://h.org/a b", "https://h.org/a%20b"),
    ],
)
def test_https_url_is_reserialised(url, expected):
    assert https_url(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "http://h.org/",
        "//h.org/x",
        "https://user:pw@h.org/",
        "https://h.org:99999/",
        "https://h/",
    ],
)
def test_https_url_refuses(url):
    with pytest.raises(UnsafeValue):
        https_url(url)


def test_abbreviation_lines():
    assert abbr_line("MFU", "Model FLOPs\nUtilisation `x`") == "*[MFU]: Model FLOPs Utilisation x"
    for bad in ("A]B", "*x", "a\\b", ""):
        with pytest.raises(UnsafeValue):
            abbr_line(bad, "tip")


def test_numbers_are_lossless():
    assert [number(v) for v in (25700, 25700.0, 2.5, 0.016, 1234.5678)] == [
        "25,700",
        "25,700",
        "2.5",
        "0.016",
        "1,234.5678",
    ]


def test_one_line():
    assert one_line("a\r\n\u2028b  c") == "a b c"
