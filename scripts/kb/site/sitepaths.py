"""Where MkDocs writes a page: shared by the page checks, the redirect stubs and the site check."""

from __future__ import annotations

import posixpath


def built_file(uri: str, directory_urls: bool = True) -> str:
    """The built HTML file (site-relative) of the docs page ``uri`` (``migrate/index.md``)."""
    stem = uri[:-3]
    folder, name = posixpath.split(stem)
    if name == "README":  # MkDocs serves a README.md as its folder's index
        stem = posixpath.join(folder, "index")
    if not directory_urls or stem == "index" or stem.endswith("/index"):
        return stem + ".html"
    return stem + "/index.html"
