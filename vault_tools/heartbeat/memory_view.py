"""The items of MEMORY.md as a heartbeat plans them: what a new insight repeats or replaces.

:class:`MemoryView` holds the items (as planned so far: a promote adds one) for the two decisions
that compare a new insight with what is kept: a near-duplicate is merged into its item, and an
insight that says something changed, or that states a fact with one value at a time (a new home
or job, :mod:`vault_tools.curation.slots`), supersedes the item it replaces.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from vault_tools.curation import insights, similarity, slots
from vault_tools.curation.insights import Insight, Rules
from vault_tools.heartbeat.edits import heading_category, is_item
from vault_tools.notes import model as notes

__all__ = ["MemoryItem", "MemoryView"]


@dataclass
class MemoryItem:
    key: str
    block_id: str | None
    text: str
    category: str | None
    first_line: str
    tokens: frozenset[str]
    day: dt.date | None = None  # the date it was written under


class MemoryView:
    """The items of MEMORY.md (as planned so far) for deduplication and supersede decisions."""

    def __init__(self, entries: Sequence[notes.Entry], rules: Rules) -> None:
        self.rules = rules
        self.items: dict[str, MemoryItem] = {}
        self.index = similarity.SimilarityIndex()
        self.block_ids: set[str] = set()
        for entry in entries:
            if not is_item(entry):
                continue
            first = entry.raw.splitlines()[0]
            key = entry.block_id or f"line-{entry.content_hash[:10]}"
            self.add(
                MemoryItem(
                    key,
                    entry.block_id,
                    entry.text,
                    heading_category(entry.section),
                    first,
                    similarity.tokens(entry.text),
                    entry.date,
                )
            )

    def add(self, item: MemoryItem) -> None:
        self.items[item.key] = item
        self.index.add(item.key, item.tokens)
        if item.block_id:
            self.block_ids.add(item.block_id)

    def duplicate_of(self, insight: Insight) -> MemoryItem | None:
        if insight.duplicate_of and insight.duplicate_of in self.items:
            return self.items[insight.duplicate_of]
        for key, _score in self.index.near(similarity.tokens(insight.text), self.rules):
            return self.items[key]
        return None

    def superseded_by(self, insight: Insight) -> MemoryItem | None:
        if insight.supersedes:
            item = self.items.get(insight.supersedes)
            return item if item is not None and item.block_id else None
        if insight.model is not None:
            return None
        slot = slots.slot_of(insight.text)  # a new home or job: the old one's item goes
        same = [i for i in self.items.values() if slot and i.block_id and slots.slot_of(i.text) == slot]
        if same:
            return same[0]
        if not insights.changes_something(insight.text):
            return None
        for key, _score in self.index.related(similarity.tokens(insight.text), self.rules):
            item = self.items[key]
            if item.block_id and item.category == insight.category:
                return item
        return None
