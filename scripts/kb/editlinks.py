"""The team's Git host, for the "Edit this page" and "View source" actions, and the site's address.

mkdocs.yml reads ``repo_url`` from ``HANDBOOK_REPO_URL`` and ``edit_uri`` from ``HANDBOOK_EDIT_URI``
(default ``edit/main/docs/``). Without a repository URL the site shows no actions and no
repository link. MkDocs 1.6 renders its templates without autoescaping, so both values are held
to a narrow form here before they reach an attribute.

``site_url`` comes from ``HANDBOOK_SITE_URL``: with it, MkDocs writes a full sitemap.xml and a
canonical link on every page; without it, the sitemap lists no page and no page has a canonical link.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from .errors import Problem

REPO_VAR = "HANDBOOK_REPO_URL"
EDIT_VAR = "HANDBOOK_EDIT_URI"
SITE_VAR = "HANDBOOK_SITE_URL"
DEFAULT_EDIT_URI = "edit/main/docs/"

# Characters that may appear in a URL without quoting and can't end an HTML attribute or tag.
_URL_CHARS = re.compile(r"[A-Za-z0-9._~:/?#\[\]@!$()*+,;=%-]+")
# An edit path is relative to the repository URL: no scheme, no '//' host, no fragment.
_EDIT_CHARS = re.compile(r"[A-Za-z0-9._~/?=%+-]+")


def _line_of(config_text: str, key: str) -> int:
    """The line of ``key:`` in mkdocs.yml (1 when it isn't there)."""
    m = re.search(rf"^{re.escape(key)}\s*:", config_text, re.M)
    return config_text.count("\n", 0, m.start()) + 1 if m else 1


def check_repo_url(value: str | None, line: int = 1) -> list[Problem]:
    """Problems with a repository URL: absolute https, a host, nothing that breaks out of an attribute."""
    if not value:
        return []
    parts = urlsplit(value) if _URL_CHARS.fullmatch(value) else None
    if (
        parts is None
        or parts.scheme != "https"
        or not parts.hostname
        or "@" in parts.netloc
        or parts.query
        or "#" in value
    ):
        return [
            Problem(
                "mkdocs.yml",
                line,
                f"repo_url (from {REPO_VAR}) {value!r} is not an absolute https URL of a repository (expected "
                "https://HOST/GROUP/PROJECT, without a user name, query or fragment, spaces, quotes, < > or `; "
                "unset it for a site without edit links)",
            )
        ]
    return []


def check_site_url(value: str | None, line: int = 1) -> list[Problem]:
    """Problems with the site's address: absolute http(s), a host, nothing that breaks out of an attribute."""
    if not value:
        return []
    parts = urlsplit(value) if _URL_CHARS.fullmatch(value) else None
    if (
        parts is None
        or parts.scheme not in ("https", "http")
        or not parts.hostname
        or "@" in parts.netloc
        or parts.query
        or "#" in value
    ):
        return [
            Problem(
                "mkdocs.yml",
                line,
                f"site_url (from {SITE_VAR}) {value!r} is not the absolute URL the site is served at (expected "
                "https://HOST/PATH/, without a user name, query or fragment, spaces, quotes, < > or `; "
                "unset it for a site without a sitemap or canonical links)",
            )
        ]
    return []


def check_edit_uri(value: str | None, line: int = 1) -> list[Problem]:
    """Problems with an edit path: relative to the repository URL, plain characters only."""
    if value is None or value == "":
        return []
    if not _EDIT_CHARS.fullmatch(value) or value.startswith("//") or ".." in value.split("/"):
        return [
            Problem(
                "mkdocs.yml",
                line,
                f"edit_uri (from {EDIT_VAR}) {value!r} is not a path inside the repository (expected something like "
                f"'{DEFAULT_EDIT_URI}' or '-/edit/main/docs/': letters, digits and . _ ~ / ? = % + -, "
                "no scheme, no '//' and no '..')",
            )
        ]
    return []


def check_settings(
    repo_url: str | None, edit_uri: str | None, root: Path, site_url: str | None = None
) -> list[Problem]:
    """The three values, located at their keys in mkdocs.yml."""
    try:
        text = (root / "mkdocs.yml").read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""  # the nav check reports an unreadable mkdocs.yml
    return (
        check_site_url(site_url, _line_of(text, "site_url"))
        + check_repo_url(repo_url, _line_of(text, "repo_url"))
        + check_edit_uri(edit_uri, _line_of(text, "edit_uri"))
    )


def check_environment(environ: Mapping[str, str], root: Path) -> list[Problem]:
    """The three variables as the next build will read them (``python -m kb validate``)."""
    return check_settings(environ.get(REPO_VAR), environ.get(EDIT_VAR), root, environ.get(SITE_VAR))
