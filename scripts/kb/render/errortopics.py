"""The error index's pages: each message of docs/data/errors*.yml has its entry on the page of its
topic, which follows from the page that explains it (its ``page`` field), so that no page of the
index grows past the weight a reader's browser loads quickly (issue 39: 150 KB of HTML).

The troubleshooting page keeps every entry's old anchor (``#err-ID``) inside the link to the
entry's topic page (kb/render/render.py ``sc_error_index``), so a published link still lands on its
topic, and assets/javascripts/moved-anchors.js takes the reader on to the entry itself.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Topic:
    """One page of the error index: its key (the shortcode's ``topic=``), title and docs path, and
    the ``page`` values of the entries it holds (a whole value, or a page that any anchor follows)."""

    key: str
    title: str
    src_uri: str
    explained_on: tuple[str, ...]


# In the order of the nav. An entry goes to the topic with the longest start of its page value;
# an entry no topic claims goes to the last one.
TOPICS: tuple[Topic, ...] = (
    Topic(
        "device",
        "Install, device and environment",
        "migrate/errors/device.md",
        ("migrate/quickstart.md", "migrate/device-code.md", "reference/environment-variables.md"),
    ),
    Topic("compile", "torch.compile", "migrate/errors/compile.md", ("migrate/torch-compile.md",)),
    Topic("distributed", "Distributed setup and launch", "migrate/errors/distributed.md", ("migrate/distributed.md",)),
    Topic(
        "collectives",
        "Collectives, FSDP2 and DTensor",
        "migrate/errors/collectives.md",
        ("migrate/distributed.md#collectives", "migrate/distributed.md#fsdp2-dtensor"),
    ),
    Topic("other", "Numerics, limits and other messages", "migrate/errors/other.md", ()),
)
BY_KEY = {t.key: t for t in TOPICS}


def topic_of(page: str) -> Topic:
    """The topic of an entry whose ``page`` field is ``page``."""
    best, length = TOPICS[-1], -1
    for topic in TOPICS:
        for start in topic.explained_on:
            if (page == start or page.startswith(start + "#")) and len(start) > length:
                best, length = topic, len(start)
    return best
