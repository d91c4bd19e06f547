"""Thin MkDocs adapter: each event calls the kb library (kb/mkdocs/build.py does the work and keeps the
state of a build or a serve session); a problem becomes a failed build, or under ``mkdocs serve``
a printed report while the last good version stays served."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any, Callable, TypeVar
from urllib.parse import urlsplit

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.pages import Page
from mkdocs.utils.templates import TemplateContext

sys.path.insert(0, str(Path(__file__).parent))

from kb.mkdocs.build import CHECK_TIMED, Build, BuildFailed, fail, report  # noqa: E402, F401 - the bench reads CHECK_TIMED
from kb.mkdocs.publish import shown_site  # noqa: E402
from kb.render.printpage import PRINT_PARTS  # noqa: E402
from kb.wiki.urls import built_redirects  # noqa: E402

_build = Build()
T = TypeVar("T")
_log = logging.getLogger("mkdocs.hooks.kb")


def on_startup(*, command: str, dirty: bool) -> None:
    _build.serving = command == "serve"  # where a failed build must not stop the server


def on_serve(server: Any, *, config: MkDocsConfig, builder: Callable[..., None]) -> Any:
    return _build.keep_serving(server, Path(config.site_dir))  # a failed rebuild: the last good site answers


def on_shutdown() -> None:
    _build.shut_down()


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    return _guard(_build.check_config, config)  # the site address and Git host, before any template sees them


def on_nav(nav: Any, *, config: MkDocsConfig, **_: object) -> Any:
    return _guard(_build.follow_reading_path, nav, config)  # previous/next along the README's reading path


def on_pre_build(config: MkDocsConfig) -> None:
    _guard(_build.pre_build, Path(config.config_file_path).parent, _log.info)


def on_page_markdown(markdown: str, *, page: Page, config: MkDocsConfig, files: Any, **_: object) -> str:
    _build.reuse_unchanged(page, config, files)  # under serve: an unchanged page is not converted again
    return _guard(_build.page, markdown, page.file.src_uri, page.meta, page.file.abs_src_path)


def on_page_context(context: TemplateContext, *, page: Page, nav: object, **_: object) -> TemplateContext:
    if page.file.src_uri in PRINT_PARTS:  # a part of the printable handbook: its nav pages, in nav order
        html, problems = _build.printable(nav.pages, page.file.src_uri, page.url, page.content or "")  # type: ignore[attr-defined]
        if problems:
            _guard(report if _build.serving else fail, problems, "printable page")
        page.content = (page.content or "") + html
    return context


def on_env(env: Any, **_: object) -> Any:
    return _build.reuse_templates(env)


def on_post_page(output: str, **_: object) -> str:
    return _build.finish(output)  # theme markup fixes for accessibility, then lighter markup


def on_post_template(output_content: str, **_: object) -> str:
    return _build.finish(output_content)  # the same, for static templates such as 404.html


def on_post_build(config: MkDocsConfig) -> None:
    """The kb.json export, then the built site: its search index compacted (the search plugin has
    written it) and checked (links, anchors, assets, external loads)."""
    _build.export(Path(config.config_file_path).parent, Path(config.site_dir))
    site, maps = Path(config.site_dir), built_redirects(config.plugins, config.use_directory_urls)
    shown = shown_site(site, Path(config.config_file_path).parent, os.environ)
    root_path = urlsplit(config.site_url or "/").path  # the site's links are absolute under it (404.html)
    _guard(_build.check_site, site, shown, config.use_directory_urls, maps, root_path, _log.info)


def _guard(step: Callable[..., T], *args: Any) -> T:
    try:
        return step(*args)
    except BuildFailed as exc:
        raise PluginError(str(exc)) from None
