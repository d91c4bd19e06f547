"""History that reads: every commit subject is at most 72 characters, with the detail in the body.

Commits up to FROM (the last one with a longer subject, 2026-12-06) are left as they are: shortening
them would rewrite every hash after them, the ones .git-blame-ignore-revs lists included."""

from __future__ import annotations

import subprocess

import pytest

from conftest import ROOT

FROM = "96b1acb"  # the newest commit whose subject is over 72 characters; the rule holds after it
LIMIT = 72


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_every_commit_subject_since_the_rule_is_at_most_72_characters():
    if _git("cat-file", "-e", f"{FROM}^{{commit}}").returncode != 0:
        pytest.skip(f"no git history holding {FROM} here (an export or a shallow clone)")
    log = _git("log", "--format=%h %s", f"{FROM}..HEAD")
    assert log.returncode == 0, log.stderr
    long = [line for line in log.stdout.splitlines() if len(line.split(" ", 1)[1]) > LIMIT]
    assert long == [], f"subjects over {LIMIT} characters (put the detail in the body):\n" + "\n".join(long)
