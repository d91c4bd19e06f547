"""Packages the scanner's rules: kb/scan/rules/ in the wheel is a copy of docs/data/migration_rules*.yml.

Everything else is declared in pyproject.toml; this file only adds that copy to the build step.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).parent


class BuildWithRules(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "kb" / "scan" / "rules"
        target.mkdir(parents=True, exist_ok=True)
        tables = sorted((HERE / "docs" / "data").glob("migration_rules*.yml"))
        if not tables:
            raise SystemExit("setup.py: docs/data/migration_rules.yml is missing")
        for table in tables:
            shutil.copyfile(table, target / table.name)


setup(cmdclass={"build_py": BuildWithRules})
