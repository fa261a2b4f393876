"""Files the bot generates (the summaries) record a hash of their text, so a person's edit shows.

The bot writes ``generated_hash: <16 hex digits>`` into the front matter of a file it generates:
the hash of the file's text without that line. A file whose text no longer matches it (or that
has none) was edited by a person and is theirs: the bot never writes it again, and sync commits it
as the person's.
"""

from __future__ import annotations

import hashlib
import re

HASH_KEY = "generated_hash"
HASH_LINE = re.compile(rf"^{HASH_KEY}:[^\n]*\n?", re.MULTILINE)


def content_hash(text: str) -> str:
    """The hash of a generated file's text without its ``generated_hash`` line."""
    return hashlib.sha256(HASH_LINE.sub("", text, count=1).encode("utf-8")).hexdigest()[:16]


def recorded_hash(text: str) -> str | None:
    match = re.search(rf"^{HASH_KEY}:[ \t]*([0-9a-f]+)[ \t]*\r?$", text, re.MULTILINE)
    return match[1] if match else None


def edited_by_a_person(text: str) -> bool:
    """A generated file whose text no longer matches the hash the bot recorded (or that has none)."""
    recorded = recorded_hash(text)
    return recorded is None or recorded != content_hash(text)
