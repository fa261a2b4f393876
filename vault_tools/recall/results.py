"""What recall returns: hits, near-duplicates folded together, highlights, a token budget.

Near-duplicates (the same fact in a daily note and in MEMORY.md, found by word overlap, helped by
the MEMORY item's ``[source:: [[date]]]``) collapse into the better hit, which names the other
places in ``also_in``. Hits are then added in rank order while their estimated tokens
(:mod:`vault_tools.tokens`) fit ``max_tokens``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vault_tools.recall.ranking import day_of
from vault_tools.tokens import count_tokens, truncate_to_tokens

if TYPE_CHECKING:
    from vault_tools.recall.ranking import Candidate
    from vault_tools.recall.tuning import Tuning

__all__ = ["Hit", "RecallResult", "collapse_duplicates", "highlight_spans", "mark", "shape", "to_hit"]


@dataclass(frozen=True)
class Hit:
    """One recalled entry (or several places of the same fact, collapsed)."""

    id: str
    path: str  # relative to the vault, POSIX
    line: int
    end_line: int
    date: str | None  # ISO date
    source: str  # "daily" | "memory" | "note" | "summary"
    section: str
    tags: list[str]
    score: float
    text: str
    also_in: list[str]  # other places ("path:line") of the same fact, collapsed into this hit
    explain: dict[str, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "path": self.path,
            "line": self.line,
            "end_line": self.end_line,
            "date": self.date,
            "source": self.source,
            "section": self.section,
            "tags": list(self.tags),
            "score": round(self.score, 4),
            "text": self.text,
            "also_in": list(self.also_in),
        }
        if self.explain is not None:
            data["explain"] = {k: round(v, 4) for k, v in self.explain.items()}
        return data


@dataclass
class RecallResult:
    """What :func:`vault_tools.recall.recall.recall` found, with the filters it applied and anything the
    caller should know."""

    query: str
    filters: dict[str, Any]
    stale: bool
    results: list[Hit]
    warnings: list[str]
    terms: list[str] = field(default_factory=list)  # the analyzed keywords, for highlighting

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` schema: query, filters, stale, results, warnings."""
        return {
            "query": self.query,
            "filters": dict(self.filters),
            "stale": self.stale,
            "results": [hit.to_dict() for hit in self.results],
            "warnings": list(self.warnings),
        }

    def render(self, *, color: bool = False, explain: bool = False) -> str:
        """Human output: ``path:line  date`` then the text with matched words highlighted."""
        on, off = ("\x1b[1;33m", "\x1b[0m") if color else ("**", "**")
        lines: list[str] = []
        ahead = self.filters.get("ahead")
        if ahead and self.results:  # the dates shown are when each line was written, not the day ahead
            days = (
                ahead["since"]
                if ahead["since"] == ahead["until"]
                else f"{ahead['since']} to {ahead['until']}"
            )
            lines.append(f"Noted for {days} ({ahead['phrase']}), soonest first:")
        for hit in self.results:
            head = f"{hit.path}:{hit.line}"
            if hit.date:
                head += f"  {hit.date}"
            if hit.section:
                head += f"  [{hit.section}]"
            lines.append(f"\x1b[36m{head}\x1b[0m" if color else head)
            lines += ["  " + row for row in mark(hit.text, self.terms, on, off).splitlines() or [""]]
            if hit.also_in:
                lines.append("  also in: " + ", ".join(hit.also_in))
            if explain and hit.explain:
                parts = ", ".join(f"{k} {v:.3g}" for k, v in hit.explain.items())
                lines.append(f"  score {hit.score:.4g} = {parts}")
        if not self.results:
            lines.append("No matching entries.")
        return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Near-duplicates


_LINK_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})")


def content_words(text: str) -> frozenset[str]:
    """The analyzed terms of ``text`` without stop words: what two statements of a fact share."""
    from vault_tools.index.analysis import query_terms

    return frozenset(query_terms(text))


def overlap(a: frozenset[str], b: frozenset[str]) -> tuple[float, float]:
    """(containment of the smaller set in the larger, Jaccard) of two statements' words."""
    if not a or not b:
        return 0.0, 0.0
    common = len(a & b)
    return common / min(len(a), len(b)), common / len(a | b)


def same_fact(a: Candidate, b: Candidate, tuning: Tuning) -> bool:
    """Whether two hits state one fact: word for word, or most words shared (fewer when linked).

    A MEMORY item that names the other hit's day as its ``[source:: [[date]]]`` needs only
    ``duplicate_overlap_linked`` containment; otherwise both containment ``duplicate_overlap``
    and Jaccard 0.5 are needed, and at least four words, so two short notes that share a
    topic word are not folded into one.
    """
    kinds = (a.fields.get("kind"), b.fields.get("kind"))
    if "summary" in kinds:
        # A summary is its own hit (what a period held), unless a bullet of it restates the line
        # it links to: then the two are one fact.
        if not _summary_links(a, b):
            return False
        return overlap(a.words, b.words)[0] >= tuning.duplicate_overlap_linked
    if a.fields.get("text") == b.fields.get("text"):
        return True
    if a.fields.get("path") == b.fields.get("path"):
        return False  # two entries of one file are two things said
    contained, jaccard = overlap(a.words, b.words)
    if min(len(a.words), len(b.words)) < 4:
        return False
    if _linked(a, b):
        return contained >= tuning.duplicate_overlap_linked
    return contained >= tuning.duplicate_overlap and jaccard >= 0.5


def _summary_links(a: Candidate, b: Candidate) -> bool:
    """Whether a summary bullet links the day of the other hit (a daily note's, a MEMORY item's
    source, a day another summary's bullet links too)."""
    summary, other = (a, b) if a.fields.get("kind") == "summary" else (b, a)
    if other.fields.get("kind") == "summary":  # a week's and a month's bullet citing the same line
        cited = [set(re.findall(r"\[\[(\d{4}-\d{2}-\d{2})", str(c.fields.get("text", "")))) for c in (a, b)]
        return bool(cited[0] & cited[1])
    day = day_of(other.fields)
    days = {day.isoformat()} if day is not None and other.fields.get("kind") == "daily" else set()
    if other.fields.get("kind") == "memory":
        days.update(_LINK_DATE.findall(_source_field(other.fields)))
    text = str(summary.fields.get("text", ""))
    return any(f"[[{d}" in text for d in days)


def _linked(a: Candidate, b: Candidate) -> bool:
    """Whether a MEMORY item names the other hit's daily note as its source."""
    for item, other in ((a, b), (b, a)):
        if item.fields.get("kind") != "memory" or other.fields.get("kind") != "daily":
            continue
        source = _source_field(item.fields)
        day = day_of(other.fields)
        if day is not None and day.isoformat() in _LINK_DATE.findall(source):
            return True
    return False


def _source_field(stored: dict[str, Any]) -> str:
    import json

    try:
        fields = json.loads(stored.get("fields") or "{}")
    except ValueError:
        return ""
    return str(fields.get("source", "")) if isinstance(fields, dict) else ""


def collapse_duplicates(ranked: list[Candidate], tuning: Tuning) -> list[Candidate]:
    """Fold each hit into a better-ranked one that states the same fact (``also_in`` names it)."""
    kept: list[Candidate] = []
    for candidate in ranked:
        candidate.words = content_words(str(candidate.fields.get("text", "")))
        better = next((k for k in kept if same_fact(k, candidate, tuning)), None)
        if better is None:
            kept.append(candidate)
        else:
            better.also_in.append(candidate.place)
            better.also_in.extend(candidate.also_in)
    return kept


# ---------------------------------------------------------------------------------------------
# Highlighting


def highlight_spans(text: str, terms: Iterable[str]) -> list[tuple[int, int]]:
    """Character spans of ``text`` whose analyzed terms are among ``terms`` (merged, sorted).

    ``text`` is analyzed as the index does, so what matched is what is marked: "Bought" for
    the query term ``buy`` (an irregular form's lemma), 粮 ending a run for the term 粮.
    """
    from vault_tools.index.analysis import text_analyzer

    wanted = set(terms)
    if not wanted or not text:
        return []
    spans: list[tuple[int, int]] = []
    for token in text_analyzer()(text, chars=True, mode="index"):
        if token.text in wanted or (len(token.text) == 2 and token.text[0] in wanted):
            spans.append((token.startchar, token.endchar))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def mark(text: str, terms: Iterable[str], on: str, off: str) -> str:
    """``text`` with every matched span wrapped in ``on``/``off`` (unless it already is: a
    transcript's ``**Name**:`` stays as written, not ``****Name****``)."""
    out: list[str] = []
    last = 0
    for start, end in highlight_spans(text, terms):
        if text[max(0, start - len(on)) : start] == on and text[end : end + len(off)] == off:
            continue
        out += [text[last:start], on, text[start:end], off]
        last = end
    out.append(text[last:])
    return "".join(out)


def to_hit(candidate: Candidate, explain: bool) -> Hit:
    stored = candidate.fields
    day = day_of(stored)
    tags = [t for t in str(stored.get("tags") or "").split(",") if t]
    parts = dict(candidate.parts)
    parts["score"] = candidate.score
    return Hit(
        id=str(stored.get("id", "")),
        path=str(stored.get("path", "")),
        line=int(stored.get("start_line", 0)),
        end_line=int(stored.get("end_line", 0)),
        date=day.isoformat() if day else None,
        source=str(stored.get("kind", "note")),
        section=str(stored.get("section", "")),
        tags=tags,
        score=candidate.score,
        text=str(stored.get("text", "")),
        also_in=list(dict.fromkeys(candidate.also_in)),
        explain=parts if explain else None,
    )


def shape(
    ranked: list[Candidate],
    limit: int,
    budget: int,
    explain: bool,
    warnings: list[str],
    tuning: Tuning,
    *,
    secrets: bool = False,
) -> list[Hit]:
    """The hits to return: near-duplicates collapsed, secrets withheld (unless ``secrets``: the
    owner at the terminal), then as many as fit ``budget`` tokens."""
    from vault_tools.privacy.sensitive import redact

    # Collapse duplicates among the top of the list only: what can still be shown.
    head = collapse_duplicates(ranked[: limit * 2 + 5], tuning)
    hits: list[Hit] = []
    spent = 0
    left_out = 0
    for candidate in head[:limit]:
        hit = to_hit(candidate, explain)
        if not secrets:  # what recall returns goes on to the agent's model
            hit = dataclasses.replace(hit, text=redact(hit.text, secrets_only=True))
        cost = count_tokens(hit.text) + tuning.hit_overhead_tokens
        if spent + cost > budget:
            room = budget - spent - tuning.hit_overhead_tokens
            if room >= 24 or not hits:
                hit = dataclasses.replace(hit, text=truncate_to_tokens(hit.text, max(room, 1)))
                hits.append(hit)
                spent += count_tokens(hit.text) + tuning.hit_overhead_tokens
                left_out = len(head[:limit]) - len(hits)
            else:
                left_out = len(head[:limit]) - len(hits)
            break
        hits.append(hit)
        spent += cost
    if left_out:
        warnings.append(
            f"{left_out} more result(s) left out to fit the token budget of {budget}; "
            "raise --max-tokens or narrow the query"
        )
    return hits
