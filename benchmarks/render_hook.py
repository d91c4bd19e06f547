"""A benchmark-only MkDocs hook: scripts/hooks.py without its checks.

peers.py builds with it (1) the faulty project, which our own hook would refuse before building,
so that the built site holds the faults for the site-level checkers, and (2) the clean project, as
the base that mkdocs-htmlproofer-plugin's added time is measured against. Every event of the real
hook is used as is (rendering, banner, glossary, print page, theme fixes), except two:
``on_pre_build`` validates without failing, and ``on_post_build`` writes the ``kb.json`` export
but does not run the built-site check: a build with our hook minus a build with this one is the
time the check adds. A shortcode that does not render stays in the page as written.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import hooks as _real  # noqa: E402

from kb.mkdocs.export import export_project  # noqa: E402
from kb.mkdocs.project import validate_project  # noqa: E402

for _name in dir(_real):
    if _name.startswith("on_") and _name not in ("on_pre_build", "on_post_build"):
        globals()[_name] = getattr(_real, _name)


def on_pre_build(config: MkDocsConfig) -> None:
    project = validate_project(Path(config.config_file_path).parent, package=False)
    if project.kb is None:
        raise SystemExit("render_hook: the KB itself does not load, so nothing can be rendered")
    _real._build.project = project


def on_post_build(config: MkDocsConfig) -> None:
    """The real hook's export, without its built-site check."""
    export_project(_real._build.project, Path(config.config_file_path).parent, Path(config.site_dir))
