"""Files a browser runs as documents whatever their name says, for the built-site check.

The check reads ``.html``, ``.htm``, ``.xhtml`` and ``.svg`` files as markup. A browser also runs
as a document: XML in the XHTML or SVG namespace (``.xml``, ``.xht``, a feed), XML that names an
XSLT stylesheet (which writes markup no check sees), a gzip-compressed SVG (``.svgz``), and a file
of no known type whose first bytes look like HTML (MIME sniffing). Markup that declares the XHTML
or SVG namespace under a prefix (``<h:script>``) is a script the tag names do not show. Here each
such file is either handed to the check as markup or refused with the reason.
"""

from __future__ import annotations

import mimetypes
import re
from pathlib import Path

from ..core.errors import Problem

XML_MARKUP = (".xhtml", ".svg")  # read as pages by the check, and parsed as XML by a browser
XML = (".xml", ".xht", ".rss", ".atom", ".rdf")  # read as pages here when in the XHTML or SVG namespace
REFUSED = {
    ".svgz": "compressed SVG: a browser runs it as a document this check does not inflate (expected a plain .svg)",
    ".xsl": "XSLT stylesheet: it writes markup no check sees (expected no XSLT in the site)",
    ".xslt": "XSLT stylesheet: it writes markup no check sees (expected no XSLT in the site)",
}
HEAD_BYTES = 512  # what a browser sniffs
_SNIFFED = "no known type, and it starts like HTML: a browser may sniff it as a page (expected .html)"

_NAMESPACE = r"""\s*=\s*["']\s*http://www\.w3\.org/(?:1999/xhtml|2000/svg)\s*["']"""
_ACTIVE = re.compile(rb"xmlns" + _NAMESPACE.encode(), re.I)  # the default namespace: tag names tell
_PREFIXED = re.compile(rb"xmlns:([\w.-]{1,40})" + _NAMESPACE.encode(), re.I)
_XSLT = re.compile(rb"<\?xml-stylesheet|http://www\.w3\.org/1999/XSL/Transform", re.I)
# The HTML signatures of the WHATWG MIME Sniffing standard (a tag, then a space or '>').
_SNIFFED_HTML = re.compile(
    rb"\s*<(?:!doctype\s+html|html|head|script|iframe|h1|div|font|table|a|style|title|b|body|br|p|!--)[\s>]", re.I
)
_TYPES = mimetypes.MimeTypes(filenames=())  # the standard library's own table, not the machine's


def document_types(site: Path, files: set[str], max_bytes: int) -> tuple[list[str], list[Problem]]:
    """Of ``files`` (site-relative), the XML ones to read as markup, and a problem for each refused."""
    found = [(rel, why) for rel in sorted(files) if (why := _why_refused(site, rel, max_bytes))]
    markup = [rel for rel, (_, why) in found if why == "markup"]
    return markup, [Problem(f"site/{rel}", *why) for rel, why in found if why[1] != "markup"]


def _why_refused(site: Path, rel: str, max_bytes: int) -> tuple[int, str] | None:
    """The line and reason to refuse ``rel``, "markup" to read it as a page, or None to leave it."""
    suffix = Path(rel).suffix.lower()
    if suffix in REFUSED:
        return 1, REFUSED[suffix]
    sniffed = suffix not in XML and _TYPES.guess_type(rel, strict=False)[0] is None
    if not (suffix in XML_MARKUP or suffix in XML or sniffed):
        return None  # HTML pages (an xmlns there means nothing), styles, scripts, images, data
    try:
        with open(site / rel, "rb") as f:
            data = f.read(HEAD_BYTES if sniffed else max_bytes)
    except OSError:
        return None  # the check reports an unreadable file itself
    if sniffed:
        return (1, _SNIFFED) if _SNIFFED_HTML.match(data) else None
    prefixed = _PREFIXED.search(data)
    if prefixed:
        name = prefixed.group(1).decode("ascii", "replace")
        why = f"the XHTML or SVG namespace under the prefix '{name}:' (expected it as the default namespace)"
        return data.count(b"\n", 0, prefixed.start()) + 1, why
    xslt = _XSLT.search(data) if suffix in XML else None
    if xslt:
        why = "names an XSLT stylesheet: it writes markup no check sees (expected no xml-stylesheet)"
        return data.count(b"\n", 0, xslt.start()) + 1, why
    return (1, "markup") if suffix in XML and (suffix == ".xht" or _ACTIVE.search(data)) else None
