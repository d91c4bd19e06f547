"""Small fixes to the theme's HTML output, for accessibility (axe: serious or critical).

Material's search dialog has no accessible name, and pymdownx.tasklist renders read-only
checkboxes with no label. Both are theme markup, not page content: nothing a page author wrote
is changed.
"""

from __future__ import annotations

_SEARCH_DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'
_TASK_CHECKBOX = '<input type="checkbox" disabled/>'


def fix_html(html: str) -> str:
    """Name the search dialog; hide read-only task-list checkboxes from assistive technology."""
    html = html.replace(_SEARCH_DIALOG, _SEARCH_DIALOG[:-1] + ' aria-label="Search">', 1)
    return html.replace(_TASK_CHECKBOX, '<input type="checkbox" disabled aria-hidden="true" tabindex="-1"/>')
