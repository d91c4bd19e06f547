"""Helpers for the browser tests: building the site, serving it, finding Chromium, reporting.

No test logic lives here; the fixtures are in conftest.py and the checks in the test_*.py files.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"

# Debian's Chromium (./dev test apt-installs it). Playwright's own browser downloads are never used.
CHROMIUM_CANDIDATES = ("/usr/bin/chromium",)
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
VIEWPORT = {"width": 1280, "height": 800}
# Playwright's time limits only guard against a hang: at load 4-10 on the shared 2-core machine the
# print page (the whole handbook) took over 20 s to load, and requests were cut off mid-load.
# Speed is reported (and measured in benchmarks/), never asserted.
HANG_MS = 180_000

# Lines for the terminal summary (pytest_terminal_summary in conftest.py), by section title.
REPORT: dict[str, list[str]] = {}


def report(section: str, line: str) -> None:
    REPORT.setdefault(section, []).append(line)


def write_artifact(name: str, data: object) -> Path:
    """Write ``data`` (text, or JSON for anything else) to test-artifacts/NAME."""
    path = ARTIFACTS / name
    path.parent.mkdir(parents=True, exist_ok=True)
    text = data if isinstance(data, str) else json.dumps(data, indent=2, ensure_ascii=False)
    path.write_text(text + ("" if text.endswith("\n") else "\n"), encoding="utf-8")
    return path


def find_chromium() -> str | None:
    for candidate in CHROMIUM_CANDIDATES:
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def build_site(dest: Path, config: str = "mkdocs.yml", extra_env: dict | None = None) -> subprocess.CompletedProcess:
    """A strict build of the project into ``dest`` (never -q: it hides warnings from --strict)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true", **(extra_env or {})}
    env["PYTHONPATH"] = str(ROOT / "scripts")
    args = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", config, "-d", str(dest)]
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def check_site(site: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "scripts")}
    args = [sys.executable, "-m", "kb", "check-site", str(site), *extra]
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now (for a server started later)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


class _Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        """A browser that drops a request (a test navigating away mid-load) is no server error: only
        other errors are printed, as the base class prints them."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class SiteServer:
    """The built site over http on 127.0.0.1, on a free port, in a background thread."""

    def __init__(self, site: Path, port: int = 0):
        handler = functools.partial(_QuietHandler, directory=str(site))
        self.httpd = _Server(("127.0.0.1", port), handler)
        self.httpd.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> SiteServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def page_paths(site: Path) -> list[str]:
    """Every built HTML page as the URL path a reader visits ('' for the home page); redirect stubs
    (which navigate away at once, see redirect_paths) are left out."""
    paths = []
    stubs = set(redirect_paths(site))
    for html in sorted(site.rglob("*.html")):
        rel = html.relative_to(site).as_posix()
        if rel in stubs:
            continue
        if rel == "index.html":
            rel = ""
        elif rel.endswith("/index.html"):
            rel = rel[: -len("index.html")]
        paths.append(rel)
    return paths


def redirect_paths(site: Path) -> list[str]:
    """The redirect stubs mkdocs-redirects wrote into ``site`` (from mkdocs.yml's redirect map)."""
    from kb.core.config import read_config
    from kb.wiki.urls import project_redirects, redirect_pages

    maps = project_redirects(read_config(ROOT))
    stubs = [*redirect_pages(maps, True), *redirect_pages(maps, False)]  # served site, file:// bundle
    return sorted(p for p in stubs if (site / p).is_file())


def url_path_of(src: str) -> str:
    """docs source path -> URL path with directory URLs: 'migrate/index.md' -> 'migrate/'."""
    stem = src[: -len(".md")] if src.endswith(".md") else src
    if stem == "index":
        return ""
    if stem.endswith("/index"):
        return stem[: -len("index")]
    return stem + "/"


def path_of_url(url: str, origin: str) -> str:
    """An absolute URL on the site -> URL path without query or fragment ('' for home)."""
    parts = urlsplit(url)
    path = parts.path.lstrip("/")
    if f"{parts.scheme}://{parts.netloc}" != origin:
        return url
    if path.endswith("index.html"):
        path = path[: -len("index.html")]
    return path


def allowed_request(url: str, origin: str) -> bool:
    """True for the site's own origin and for URLs that never leave the browser."""
    if url.startswith(("data:", "blob:", "about:")):
        return True
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" == origin


def median_ms(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def copy_file(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dest)


def anchor_pages(site: Path, prefix: str) -> dict[str, str]:
    """Each heading's ``id="PREFIX…"`` of the built pages -> the URL path of the page that holds it
    (so a test follows an entry wherever the pages put it; an old anchor kept on another page to
    forward a link is no heading)."""
    found: dict[str, str] = {}
    pattern = re.compile(rf'<h[1-6][^>]*\bid="{re.escape(prefix)}([^"]+)"')
    for path in page_paths(site):
        html = site / (path + "index.html" if path == "" or path.endswith("/") else path)
        for anchor in pattern.findall(html.read_text(encoding="utf-8")):
            found.setdefault(anchor, path)
    return found
