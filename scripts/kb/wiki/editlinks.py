"""The team's Git host, for the "Edit this page" and "View source" actions, and the site's address.

mkdocs.yml reads ``repo_url`` from ``HANDBOOK_REPO_URL`` and ``edit_uri`` from ``HANDBOOK_EDIT_URI``
(default ``edit/main/docs/``). Without a repository URL the site shows no actions and no
repository link. MkDocs 1.6 renders its templates without autoescaping, so both values are held
to a narrow form here before they reach an attribute.

``site_url`` comes from ``HANDBOOK_SITE_URL``: with it, MkDocs writes a full sitemap.xml and a
canonical link on every page; without it, the sitemap lists no page and no page has a canonical link.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import yaml

from ..core.config import SiteConfig
from ..core.errors import Problem, escape_text

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


def _plain_url(value: str, schemes: tuple[str, ...]) -> bool:
    """An absolute URL with one of ``schemes`` and a host, no user name, query or fragment, and
    only characters that can't break out of an HTML attribute."""
    parts = urlsplit(value) if _URL_CHARS.fullmatch(value) else None
    return not (
        parts is None
        or parts.scheme not in schemes
        or not parts.hostname
        or "@" in parts.netloc
        or parts.query
        or "#" in value
    )


def check_repo_url(
    value: str | None, line: int = 1, origin: str = f"from {REPO_VAR}", shown: str = "mkdocs.yml"
) -> list[Problem]:
    """Problems with a repository URL: absolute https, a host, nothing that breaks out of an attribute."""
    if not value or _plain_url(value, ("https",)):
        return []
    return [
        Problem(
            shown,
            line,
            f"repo_url ({origin}) {value!r} is not an absolute https URL of a repository (expected "
            "https://HOST/GROUP/PROJECT, without a user name, query or fragment, spaces, quotes, < > or `; "
            "unset it for a site without edit links)",
        )
    ]


def check_site_url(
    value: str | None, line: int = 1, origin: str = f"from {SITE_VAR}", shown: str = "mkdocs.yml"
) -> list[Problem]:
    """Problems with the site's address: absolute http(s), a host, nothing that breaks out of an attribute."""
    if not value or _plain_url(value, ("https", "http")):
        return []
    return [
        Problem(
            shown,
            line,
            f"site_url ({origin}) {value!r} is not the absolute URL the site is served at (expected "
            "https://HOST/PATH/, without a user name, query or fragment, spaces, quotes, < > or `; "
            "unset it for a site without a sitemap or canonical links)",
        )
    ]


def check_edit_uri(
    value: str | None, line: int = 1, origin: str = f"from {EDIT_VAR}", shown: str = "mkdocs.yml"
) -> list[Problem]:
    """Problems with an edit path: relative to the repository URL, plain characters only, and no
    '..' segment, also when its dots are percent-encoded (``%2e%2e``, ``%2E.``, a ``%2f`` slash)."""
    if value is None or value == "":
        return []
    decoded = unquote(value)
    if not _EDIT_CHARS.fullmatch(value) or decoded.startswith("//") or ".." in decoded.split("/"):
        return [
            Problem(
                shown,
                line,
                f"edit_uri ({origin}) {value!r} is not a path inside the repository (expected something like "
                f"'{DEFAULT_EDIT_URI}' or '-/edit/main/docs/': letters, digits and . _ ~ / ? = % + -, "
                "no scheme, no '//' and no '..' segment, percent-encoded or not)",
            )
        ]
    return []


def check_settings(repo_url: str | None, edit_uri: str | None, text: str, site_url: str | None = None) -> list[Problem]:
    """The three values, located at their keys in ``text``, mkdocs.yml's text ("" when unreadable)."""
    return (
        check_site_url(site_url, _line_of(text, "site_url"))
        + check_repo_url(repo_url, _line_of(text, "repo_url"))
        + check_edit_uri(edit_uri, _line_of(text, "edit_uri"))
    )


# ---- Settings read from the environment (``!ENV``), checked with the value MkDocs will use ----

Check = Callable[[str | None, int, str, str], list[Problem]]
# Every setting that may come from the environment, and its check. A ``!ENV`` anywhere else is
# refused: a setting nobody checks must not be set by a variable.
ENV_SETTINGS: dict[str, Check] = {"repo_url": check_repo_url, "edit_uri": check_edit_uri, "site_url": check_site_url}
_EXPECTED = {
    "repo_url": "https://HOST/GROUP/PROJECT",
    "edit_uri": f"a path such as '{DEFAULT_EDIT_URI}'",
    "site_url": "https://HOST/PATH/",
}
_TYPES = {bool: "a boolean", int: "a number", float: "a number", type(None): "null", list: "a list", dict: "a mapping"}


@dataclass(frozen=True)
class EnvSetting:
    """One ``!ENV`` in a config file: where it is, the variables it names, and its YAML node."""

    shown: str
    key: str  # the setting's key path, dotted ('repo_url', 'extra.analytics.property')
    line: int
    names: tuple[str, ...]
    node: yaml.Node


def env_settings(text: str, shown: str) -> list[EnvSetting]:
    """Every ``!ENV`` node of a config file's text, composed by MkDocs' own YAML loader."""
    loader = _mkdocs_loader()(text)
    try:
        root = loader.get_single_node()
    finally:
        loader.dispose()
    found = []
    for key, node in _walk(root, ""):
        if node.tag == "!ENV":
            children = node.value if isinstance(node, yaml.SequenceNode) else [node]
            names = children[:-1] if len(children) > 1 else children
            found.append(EnvSetting(shown, key, node.start_mark.line + 1, tuple(str(c.value) for c in names), node))
    return found


def _walk(node: yaml.Node | None, key: str) -> Iterator[tuple[str, yaml.Node]]:
    if node is None:
        return
    yield key, node
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            yield from _walk(v, f"{key}.{k.value}" if key else str(k.value))
    elif isinstance(node, yaml.SequenceNode) and node.tag != "!ENV":
        for i, v in enumerate(node.value):
            yield from _walk(v, f"{key}[{i}]")


def env_value(setting: EnvSetting) -> Any:
    """The value MkDocs will use for ``setting`` now: its ``!ENV`` constructor on this environment."""
    loader = _mkdocs_loader()("")
    try:
        return loader.yaml_constructors["!ENV"](loader, setting.node)
    finally:
        loader.dispose()


def check_env_setting(setting: EnvSetting) -> list[Problem]:
    """One ``!ENV`` setting, with the value MkDocs will read: a string, and one its check accepts."""
    check = ENV_SETTINGS.get(setting.key)
    if check is None:
        return [
            Problem(
                setting.shown,
                setting.line,
                f"'{setting.key}' is read from the environment (!ENV {', '.join(setting.names)}), which nothing "
                f"checks (expected !ENV only on {', '.join(ENV_SETTINGS)}; "
                "add a check in scripts/kb/wiki/editlinks.py)",
            )
        ]
    if _python_tag(setting.node):
        return [Problem(setting.shown, setting.line, f"'{setting.key}': a !!python tag (expected plain YAML)")]
    var = next((name for name in setting.names if name in os.environ), None)
    origin = f"from {var}" if var else "its default in " + setting.shown
    raw = os.environ.get(var, "") if var else None
    try:
        value = env_value(setting)
    except yaml.YAMLError as exc:
        return [
            Problem(
                setting.shown,
                setting.line,
                f"'{setting.key}': {escape_text(str(exc))} (expected !ENV NAME or !ENV [NAME, ..., DEFAULT])",
            )
        ]
    if isinstance(value, str) or (value is None and not raw):
        return check(value, setting.line, origin, setting.shown)
    shown_value = repr(raw) if var else repr(value)
    kind = _TYPES.get(type(value), f"a {type(value).__name__}")
    return [
        Problem(
            setting.shown,
            setting.line,
            f"{setting.key} ({origin}) {shown_value} reads as {kind}, as MkDocs parses it as YAML "
            f"(expected {_EXPECTED[setting.key]} as text, or {var or 'the variable'} unset for the default)",
        )
    ]


def _mkdocs_loader() -> Any:
    """MkDocs' YAML loader class, with its ``!ENV`` and ``!relative`` tags (imported only here: the
    rest of kb, the scanner's package included, runs without MkDocs)."""
    from mkdocs.utils.yaml import get_yaml_loader

    return get_yaml_loader()


def _python_tag(node: yaml.Node) -> bool:
    """Whether ``node`` or a node inside it has a ``!!python/...`` tag (which constructs objects)."""
    if str(node.tag).startswith("tag:yaml.org,2002:python/"):
        return True
    if isinstance(node, yaml.SequenceNode):
        return any(_python_tag(child) for child in node.value)
    if isinstance(node, yaml.MappingNode):
        return any(_python_tag(k) or _python_tag(v) for k, v in node.value)
    return False


def check_environment(config: SiteConfig) -> list[Problem]:
    """Every ``!ENV`` of mkdocs.yml and mkdocs.offline.yml, with the value the next build will
    read from this environment (``python -m kb validate``)."""
    problems: list[Problem] = []
    for file in config.files:
        if file.text is None or file.located is None:
            continue  # absent or unreadable (kb/core/config.py reports that): MkDocs' loader never sees it
        try:
            settings = env_settings(file.text, file.name)
        except yaml.YAMLError:
            continue  # our reader parsed it within its limits; MkDocs' own reader will report its error
        for setting in settings:
            problems += check_env_setting(setting)
    return problems
