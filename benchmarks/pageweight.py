"""Page weight (issues 39 and 37): the HTML size of every built page, heaviest first, against its
limit (150,000 bytes for a content page, 1,000,000 for a part of the printable handbook), and the
search index's size; with ``--print``, Chromium's load and print-to-PDF times of each print page.

  PYTHONPATH=scripts .venv/bin/python benchmarks/bench.py weight [--site DIR] [--top N] [--print]

Without ``--site`` the project is built first, into a temporary folder.
"""

from __future__ import annotations

import functools
import http.server
import socketserver
import threading
import time
from pathlib import Path

from kb.render.printpage import PRINT_PARTS

CONTENT_LIMIT = 150_000
PRINT_LIMIT = 1_000_000
PRINT_URLS = {src.removesuffix(".md") + "/" for src in PRINT_PARTS}
CHROMIUM = "/usr/bin/chromium"


def url_of(site: Path, page: Path) -> str:
    """The page's URL path under the site ('' for the home page), as directory URLs serve it."""
    folder = page.parent.relative_to(site).as_posix()
    return "" if folder == "." else folder + "/"


def weigh(site: Path, top: int) -> list[str]:
    """Print the heaviest pages and the totals; return the pages over their limit."""
    pages = sorted(((p.stat().st_size, url_of(site, p)) for p in site.rglob("index.html")), reverse=True)
    over = []
    print(f"{'bytes':>10}  {'limit':>9}  page")
    for rank, (size, url) in enumerate(pages):
        limit = PRINT_LIMIT if url in PRINT_URLS else CONTENT_LIMIT
        if size > limit:
            over.append(f"/{url}: {size:,} bytes (limit {limit:,})")
        if rank < top or size > limit:
            print(f"{size:>10,}  {limit:>9,}  /{url}{'  OVER' if size > limit else ''}")
    index = site / "search" / "search_index.json"
    total = sum(size for size, _ in pages)
    print(f"{len(pages)} pages, {total:,} bytes of HTML; heaviest content page {_heaviest(pages):,} bytes")
    if index.is_file():
        print(f"search index: {index.stat().st_size:,} bytes")
    print(f"pages over their limit: {len(over)}" + "".join(f"\n  {line}" for line in over))
    return over


def heaviest(site: Path) -> tuple[int, int]:
    """The bytes of the heaviest content page and of the heaviest part of the printable handbook."""
    pages = [(p.stat().st_size, url_of(site, p)) for p in site.rglob("index.html")]
    return _heaviest(pages), max((size for size, url in pages if url in PRINT_URLS), default=0)


def _heaviest(pages: list[tuple[int, str]]) -> int:
    return max((size for size, url in pages if url not in PRINT_URLS), default=0)


def print_times(site: Path) -> None:
    """Load each print page in Chromium from a local server, then print it to PDF; both timed."""
    from playwright.sync_api import sync_playwright

    handler = functools.partial(_Quiet, directory=str(site))
    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        origin = f"http://127.0.0.1:{server.server_address[1]}"
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
            ctx = browser.new_context()
            ctx.route(lambda url: not url.startswith(origin), lambda route: route.abort())
            for url in sorted(PRINT_URLS):
                page = ctx.new_page()
                start = time.perf_counter()
                page.goto(f"{origin}/{url}", wait_until="load", timeout=300_000)
                loaded = time.perf_counter() - start
                start = time.perf_counter()
                pdf = page.pdf()
                printed = time.perf_counter() - start
                sheets = pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages")
                elements = page.evaluate("document.getElementsByTagName('*').length")
                print(
                    f"/{url}: loaded in {loaded:.1f} s, printed to PDF in {printed:.1f} s: "
                    f"{sheets} sheets, {elements:,} elements"
                )
                page.close()
            browser.close()
        server.shutdown()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass
