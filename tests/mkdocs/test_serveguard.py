"""kb/mkdocs/serveguard.py: a failed rebuild puts the last good site back, also when the copy of that
site is still being made beside the server when the next rebuild starts."""

from __future__ import annotations

from pathlib import Path

from kb.mkdocs.serveguard import LastGood


def test_a_failed_rebuild_restores_the_last_good_site(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("first", "utf-8")
    guard = LastGood(site)

    def good() -> None:
        for old in site.iterdir():
            old.unlink()
        (site / "index.html").write_text("second", "utf-8")
        (site / "big.bin").write_bytes(b"x" * 5_000_000)  # a copy that takes a moment

    def bad() -> None:
        for old in site.iterdir():
            old.unlink()
        (site / "half.html").write_text("half", "utf-8")
        raise SystemExit("strict mode abort")

    try:
        guard.wrap(good)()
        guard.wrap(bad)()  # starts at once: waits for the copy of the good build first
        assert (site / "index.html").read_text("utf-8") == "second"
        assert (site / "big.bin").stat().st_size == 5_000_000
        assert not (site / "half.html").exists()
    finally:
        guard.close()
    assert not Path(guard.copy).exists()
