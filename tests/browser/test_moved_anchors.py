"""A link published before the error index moved to its own pages still lands on its entry:
migrate/troubleshooting/#err-ID keeps the id inside the link to the entry's new page, and
moved-anchors.js goes on to #err-ID there, served and from the file:// bundle."""

from __future__ import annotations

from .support import HANG_MS

OLD = "migrate/troubleshooting"
ENTRY = "err-forked-subprocess"  # docs/data/errors.yml: explained on migrate/distributed.md
NEW = "migrate/errors/distributed"
AT_ENTRY = f"() => location.hash === '#{ENTRY}' && !!document.getElementById('{ENTRY}')"


def test_an_old_entry_link_lands_on_the_entry_served(new_context, origin):
    page = new_context().new_page()
    page.goto(f"{origin}/{OLD}/#{ENTRY}")
    page.wait_for_url(f"{origin}/{NEW}/#{ENTRY}", timeout=HANG_MS)
    assert page.evaluate(AT_ENTRY)
    assert page.locator(f"h3#{ENTRY}").is_visible()


def test_an_old_entry_link_lands_on_the_entry_offline(new_context, offline_site):
    page = new_context().new_page()
    page.goto((offline_site / f"{OLD}.html").as_uri() + f"#{ENTRY}")
    page.wait_for_url(f"**/{NEW}.html#{ENTRY}", timeout=HANG_MS)
    assert page.evaluate(AT_ENTRY)


def test_an_anchor_of_the_page_itself_stays(new_context, origin):
    page = new_context().new_page()
    page.goto(f"{origin}/{OLD}/#error-messages")
    page.wait_for_timeout(500)
    assert page.url == f"{origin}/{OLD}/#error-messages"
