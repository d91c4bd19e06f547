"""Page tags: the allowed tags are declared once, as the tags plugin's ``tags_allowed`` in
mkdocs.yml, and every page's ``tags:`` front matter must be a list of names from that list."""

from __future__ import annotations

import re

from ..core.config import ConfigFile, SiteConfig
from ..core.errors import Problem
from ..core.yamlload import Located, YAMLProblem, parse
from .pages import Page

# A tag is a plain name: the theme writes it into pages and URLs, so no markup, spaces or controls.
TAG = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")
_FRONT = re.compile(r"\A---[ \t]*\n(.*?\n)?---[ \t]*\n", re.S)
_PLUGIN_NAMES = ("tags", "material/tags")
CONFIG = "mkdocs.yml"


def allowed_tags(config: ConfigFile) -> tuple[list[str] | None, list[Problem]]:
    """The ``tags_allowed`` list of the tags plugin in mkdocs.yml; None when there is no tags plugin
    (or mkdocs.yml is absent or unreadable: kb/core/config.py reports that)."""
    located = config.located
    if located is None:
        return None, []
    plugins = config.data.get("plugins")
    for i, entry in enumerate(plugins if isinstance(plugins, list) else []):
        if entry in _PLUGIN_NAMES:
            return None, [_no_list(located.line(("plugins", i)))]
        if isinstance(entry, dict):
            for name, options in entry.items():
                if name in _PLUGIN_NAMES:
                    return _allow_list(options, located, ("plugins", i, name))
    return None, []


def _allow_list(
    options: object, located: Located, where: tuple[str | int, ...]
) -> tuple[list[str] | None, list[Problem]]:
    value = options.get("tags_allowed") if isinstance(options, dict) else None
    if not isinstance(value, list) or not value:
        return None, [_no_list(located.line(where))]
    problems = [
        Problem(
            CONFIG,
            located.line((*where, "tags_allowed", i)),
            f"tags_allowed[{i}] {item!r} is not a plain tag name (expected lowercase letters, digits and '-')",
        )
        for i, item in enumerate(value)
        if not (isinstance(item, str) and TAG.fullmatch(item))
    ]
    return [str(item) for item in value], problems


def _no_list(line: int) -> Problem:
    return Problem(
        CONFIG,
        line,
        "the tags plugin has no tags_allowed list (expected 'tags_allowed:' listing every tag a page may use)",
    )


def check_tags(config: SiteConfig, pages: list[Page]) -> list[Problem]:
    """Every page's ``tags:`` is a list of declared tags, each problem at the tag's line.

    When the file scan refused mkdocs.yml (never read), pages with tags are checked for their shape only.
    """
    config_unsafe = config.refused
    allowed, problems = allowed_tags(config.main)
    for page in pages:
        if "tags" in page.meta:
            problems += page_tag_problems(page, allowed, config_unsafe)
    return problems


def page_tag_problems(page: Page, allowed: list[str] | None, config_unsafe: bool = False) -> list[Problem]:
    """The problems of one page's ``tags:``: its shape, and each tag against ``allowed``."""
    located = _front_matter(page)
    value = page.meta["tags"]

    def line(*path: str | int) -> int:
        return located.line(("tags", *path)) + 1  # the front matter starts on the file's line 2

    names = ", ".join(allowed or [])
    if not isinstance(value, list) or not value:
        return [
            Problem(
                page.shown,
                line(),
                "front matter 'tags' must be a non-empty list of tag names (expected e.g. 'tags: [training]'"
                + (f"; one of: {names})" if names else ")"),
            )
        ]
    problems = []
    for i, tag in enumerate(value):
        if not (isinstance(tag, str) and TAG.fullmatch(tag)):
            shown = "an empty string" if tag == "" else repr(tag)
            problems.append(
                Problem(
                    page.shown,
                    line(i),
                    f"tags[{i}] is {shown}, not a plain tag name (expected lowercase letters, digits and '-'"
                    + (f"; one of: {names})" if names else ")"),
                )
            )
        elif allowed is None and not config_unsafe:
            problems.append(
                Problem(
                    page.shown,
                    line(i),
                    f"tag '{tag}' is not declared (expected a tags plugin in {CONFIG} with a tags_allowed list)",
                )
            )
        elif allowed is not None and tag not in allowed:
            problems.append(
                Problem(
                    page.shown,
                    line(i),
                    f"tag '{tag}' is not an allowed tag (expected one of: {names}; "
                    f"a new tag is declared under tags_allowed in {CONFIG})",
                )
            )
    return problems


def _front_matter(page: Page) -> Located:
    """The page's front matter with its lines (it parsed once already, so this can't fail)."""
    m = _FRONT.match(page.text)
    try:
        return parse((m.group(1) or "") if m else "", page.shown)
    except YAMLProblem:
        return Located(page.meta)
