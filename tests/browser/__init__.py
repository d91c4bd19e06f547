"""Browser tests of the built site (Playwright driving Debian's Chromium): see conftest.py."""
