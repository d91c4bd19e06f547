"""Only known scripts run (kb/site/allowlist.py): every script outside the pages is the theme's own or
listed with its sha256 in docs/assets/vendor/ALLOWLIST."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT
from kb.core.config import read_config
from kb.site.allowlist import ALLOWLIST, check_scripts, read_allowlist

SHIM = "docs/assets/vendor/iframe-worker/shim.js"


def project(tmp_path: Path, config: str = "site_name: S\n", listed: str | None = None) -> Path:
    """A project with one vendored script, listed (unless ``listed`` says otherwise)."""
    script = tmp_path / "docs" / "assets" / "vendor" / "lib" / "lib.js"
    script.parent.mkdir(parents=True)
    script.write_text("console.log(1);\n", encoding="utf-8")
    digest = hashlib.sha256(script.read_bytes()).hexdigest()
    text = f"# comment\n{digest}  docs/assets/vendor/lib/lib.js\n" if listed is None else listed
    (tmp_path / ALLOWLIST).write_text(text, encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(config, encoding="utf-8")
    (tmp_path / "overrides" / "partials").mkdir(parents=True)
    return tmp_path


def found(root: Path) -> list[str]:
    return [str(p) for p in check_scripts(read_config(root))]


def test_the_real_project_lists_the_vendored_iframe_worker():
    listed, problems = read_allowlist(ROOT)
    assert problems == [] and SHIM in listed
    assert check_scripts(read_config(ROOT)) == []


def test_the_list_is_in_sha256sum_format():
    result = subprocess.run(["sha256sum", "--check", "--quiet", ALLOWLIST], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_listed_script_passes_everywhere_it_is_used(tmp_path):
    config = "site_name: S\nextra_javascript:\n  - assets/vendor/lib/lib.js\nextra:\n  polyfills: [assets/vendor/lib/lib.js]\n"
    root = project(tmp_path, config)
    (root / "overrides" / "main.html").write_text(
        "{% extends 'base.html' %}\n<script src=\"{{ 'assets/vendor/lib/lib.js' | url }}\"></script>\n",
        encoding="utf-8",
    )
    assert found(root) == []


def test_an_unlisted_script_fails_with_its_path_and_sha256(tmp_path):
    root = project(tmp_path, "site_name: S\nextra_javascript:\n  - assets/evil.js\n")
    (root / "docs" / "assets" / "evil.js").write_text("alert(1)\n", encoding="utf-8")
    digest = hashlib.sha256(b"alert(1)\n").hexdigest()
    expected = (
        f"script 'docs/assets/evil.js' is not in {ALLOWLIST} (expected the line '{digest}  docs/assets/evil.js' "
        "there, once you have checked the file: only listed scripts run)"
    )
    assert found(root) == [f"docs/assets/evil.js:1: {expected}", f"mkdocs.yml:3: {expected}"]


def test_a_changed_script_fails_with_the_expected_sha256(tmp_path):
    root = project(tmp_path)
    listed = hashlib.sha256(b"console.log(1);\n").hexdigest()
    (root / "docs/assets/vendor/lib/lib.js").write_text("console.log(2);\n", encoding="utf-8")
    actual = hashlib.sha256(b"console.log(2);\n").hexdigest()
    assert found(root) == [
        f"docs/assets/vendor/lib/lib.js:1: script changed: its sha256 is {actual} (expected {listed}, as "
        f"{ALLOWLIST}:2 lists it; check the new file, then update that line)"
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("abc  docs/x.js", "'abc  docs/x.js' is not a script line (expected '<sha256 in hex>  <path>')"),
        ("0" * 64 + "  docs/none.js", "'docs/none.js' names no file in the project (expected a path to a script)"),
        ("0" * 64 + "  ../outside.js", "'../outside.js' names no file in the project (expected a path to a script)"),
    ],
)
def test_a_bad_line_of_the_list_fails_at_its_line(tmp_path, line, message):
    root = project(tmp_path)
    text = (root / ALLOWLIST).read_text(encoding="utf-8") + line + "\n"
    (root / ALLOWLIST).write_text(text, encoding="utf-8")
    assert found(root) == [f"{ALLOWLIST}:3: {message}"]


def test_a_script_of_another_origin_in_the_config_is_refused(tmp_path):
    root = project(tmp_path, "site_name: S\nextra_javascript:\n  - path: https://cdn.example/x.js\n")
    assert found(root) == [
        "mkdocs.yml:3: script 'https://cdn.example/x.js' is not a file of the site (expected a path under docs/)"
    ]


def test_the_offline_config_is_checked_too(tmp_path):
    root = project(tmp_path)
    (root / "mkdocs.offline.yml").write_text(
        "INHERIT: mkdocs.yml\nextra:\n  polyfills:\n    - x.js\n", encoding="utf-8"
    )
    assert found(root) == [
        f"mkdocs.offline.yml:4: script 'docs/x.js' names no file (expected a script listed in {ALLOWLIST})"
    ]


def test_override_scripts_inline_computed_or_unlisted_are_refused(tmp_path):
    root = project(tmp_path)
    (root / "overrides" / "assets").mkdir()
    (root / "overrides" / "assets" / "extra.js").write_text("x\n", encoding="utf-8")
    (root / "overrides" / "main.html").write_text(
        "{% extends 'base.html' %}\n<script>alert(1)</script>\n<script src=\"{{ path }}\"></script>\n"
        "<SCRIPT src='{{ \"assets/extra.js\" | url }}'></SCRIPT>\n",
        encoding="utf-8",
    )
    problems = found(root)
    assert [p.split(": ", 1)[0] for p in problems] == [
        "overrides/assets/extra.js:1",
        "overrides/main.html:2",
        "overrides/main.html:3",
        "overrides/main.html:4",
    ]
    assert "an inline script (expected src naming a script" in problems[1]
    assert "a script from '{{ path }}'" in problems[2]
    assert "script 'overrides/assets/extra.js' is not in" in problems[3]


def test_the_themes_own_script_passes(tmp_path):
    material = pytest.importorskip("material")
    bundle = next((Path(material.__file__).parent / "templates" / "assets" / "javascripts").glob("bundle.*.js"))
    rel = bundle.relative_to(Path(material.__file__).parent / "templates").as_posix()
    root = project(tmp_path)
    (root / "overrides" / "main.html").write_text(
        f"<script src=\"{{{{ '{rel}' | url }}}}\"></script>\n", encoding="utf-8"
    )
    assert found(root) == []
