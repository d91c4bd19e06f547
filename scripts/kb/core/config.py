"""The project's MkDocs configuration, read once per check of a project and passed down.

``mkdocs.yml`` and ``mkdocs.offline.yml`` are read and parsed here, each with the line of every value
(``ConfigLoader`` reads MkDocs' tags such as ``!ENV`` as text), and every check that needs them (the
nav, tags, scripts, settings read from the environment, stable URLs) takes the ``SiteConfig``. A file
that can't be read or parsed is reported once, here, and the checks see it as absent.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import Problem
from .yamlload import ConfigLoader, Located, YAMLProblem, parse, read_text

MAIN = "mkdocs.yml"
OFFLINE = "mkdocs.offline.yml"  # the file:// bundle's config (./dev offline)
CONFIGS = (MAIN, OFFLINE)


@dataclass(frozen=True)
class ConfigFile:
    """One configuration file: its text and parsed values when it could be read (else ``None``)."""

    name: str
    text: str | None = None
    located: Located | None = None
    problems: tuple[Problem, ...] = ()  # why it could not be read or parsed

    @property
    def data(self) -> dict[str, object]:
        """The top-level mapping (empty when the file is absent, unreadable or not a mapping)."""
        found = self.located.data if self.located is not None else None
        return found if isinstance(found, dict) else {}


@dataclass(frozen=True)
class SiteConfig:
    """Both configuration files of a project; ``refused``: the file scan reported mkdocs.yml
    (outside the project, a FIFO, too large), so it was never read."""

    root: Path
    main: ConfigFile
    offline: ConfigFile
    refused: bool = False

    @property
    def files(self) -> tuple[ConfigFile, ConfigFile]:
        return self.main, self.offline

    @property
    def problems(self) -> list[Problem]:
        return [p for f in self.files for p in f.problems]


def read_file(root: Path, name: str) -> ConfigFile:
    path = root / name
    if not path.is_file():  # absent, or a folder or device the file scan reports
        return ConfigFile(name)
    try:
        text = read_text(path, name)
        return ConfigFile(name, text, parse(text, name, ConfigLoader))
    except YAMLProblem as exc:
        return ConfigFile(name, problems=(exc.problem,))


def read_config(root: Path, refused: bool = False) -> SiteConfig:
    """Read and parse both files of the project at ``root`` (mkdocs.yml not at all when ``refused``)."""
    main = ConfigFile(MAIN) if refused else read_file(root, MAIN)
    return SiteConfig(root, main, read_file(root, OFFLINE), refused)
