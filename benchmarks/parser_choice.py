"""Which HTML parser the built-site check stands on: parse every HTML file of a built site and
select every element that carries a URL or an id, with each candidate, in one process.

  python benchmarks/parser_choice.py SITE [--runs 3]

Each parser that is not installed is skipped (html5-parser needs lxml built from source against
the system libxml2, so it is not in any requirements file; install it by hand to measure it).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

XPATH = "//*[@href or @src or @srcset or @id or @style or @action]"
CSS = "[href],[src],[srcset],[id],[style],[action]"


def selectolax(text: str) -> int:
    from selectolax.lexbor import LexborHTMLParser

    return len(LexborHTMLParser(text).css(CSS))


def lxml_html(text: str) -> int:
    import lxml.html

    return len(lxml.html.document_fromstring(text).xpath(XPATH))


def html5_parser(text: str) -> int:
    import html5_parser as h5

    return len(h5.parse(text, line_number_attr="data-line").xpath(XPATH))


PARSERS: dict[str, Callable[[str], int]] = {
    "selectolax (lexbor)": selectolax,
    "lxml (libxml2)": lxml_html,
    "html5-parser (gumbo)": html5_parser,
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("site", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    texts = [p.read_text(encoding="utf-8") for p in sorted(args.site.rglob("*.html"))]
    print(f"{len(texts)} HTML files, {sum(map(len, texts)) / 2**20:.1f} MiB")
    for name, parse in PARSERS.items():
        try:
            parse("<p>")
        except (ImportError, RuntimeError) as exc:
            print(f"{name}: skipped ({exc})")
            continue
        times, found = [], 0
        for _ in range(args.runs):
            start = time.perf_counter()
            found = sum(map(parse, texts))
            times.append(time.perf_counter() - start)
        print(f"{name}: median {statistics.median(times):.3f} s, {found} elements")


if __name__ == "__main__":
    main()
