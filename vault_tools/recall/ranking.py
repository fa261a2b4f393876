"""Ranking: the keyword branches of a query, their weights, and the score of each hit.

A query's terms are OR-ed over an entry's text, its neighbours' text (backing off: see
:func:`keyword_clauses`), its section heading, its tags and its speaker (BM25F with per-field
boosts, scored by :mod:`vault_tools.index.scorer`). The best :attr:`Tuning.pool` hits are then
re-scored: ``bm25 x coordination x recency x importance x source x window x event``
(:func:`rescore`); *event* favours, for a question about a short period, an entry that names a
time inside it ("finished it last Sunday") over one that was only written then. Every constant is
in :class:`vault_tools.recall.tuning.Tuning`, chosen on ``bench/locomo_bench.py`` and
``bench/recall_bench.py``, which sweep them.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vault_tools.index.scorer import Clause
    from vault_tools.recall.filters import Window
    from vault_tools.recall.query import ParsedQuery
    from vault_tools.recall.tuning import Tuning

__all__ = [
    "Candidate",
    "KeywordPart",
    "asks_only_about",
    "backoff_chars",
    "day_of",
    "demote_superseded",
    "keyword_clauses",
    "keyword_parts",
    "keyword_query",
    "lend_to_answers",
    "matched_share",
    "only_asks",
    "prefer_latest",
    "prefer_open_tasks",
    "rank_order",
    "rescore",
    "sort_day",
    "speaker_terms",
    "spread_days",
    "term_weight",
]


#: One OR branch of a query's keywords: (field, term, boost).
KeywordPart = tuple[str, str, float]


def keyword_parts(parsed: ParsedQuery, tuning: Tuning, searcher: Any = None) -> list[KeywordPart]:
    """(field, term, boost) of each OR branch of the query's keywords; empty when it only browses.

    The terms go over text, section and tags. With a ``searcher``, a term is matched against
    section headings and tag names only where it is on at most ``tag_max_share`` of the entries:
    a heading or tag on everything (``## Work``, ``#work``) ranks nothing and costs a long
    posting list.
    """
    from vault_tools.index import documents as ix
    from vault_tools.recall.bilingual import translated_terms

    if not parsed.terms:
        return []
    most = tuning.tag_max_share * max(1, searcher.doc_count()) if searcher is not None else math.inf

    def useful(field: str, term: str) -> bool:
        return searcher is None or 0 < searcher.doc_frequency(field, term) <= most

    speakers = speaker_terms(parsed, searcher) if tuning.speaker_boost > 0 else {}
    parts: list[KeywordPart] = []
    for term in parsed.terms:
        factor = tuning.speaker_text_factor if term in speakers else 1.0
        factor *= term_weight(parsed, term, tuning)
        parts.append((ix.F_TEXT, term, tuning.text_boost * factor))
        for field_name, boost in ((ix.F_BEFORE, tuning.before_boost), (ix.F_AFTER, tuning.after_boost)):
            if boost > 0:
                parts.append((field_name, term, boost * factor))
        if tuning.section_boost > 0 and (len(term) == 1 or useful(ix.F_SECTION, term)):
            parts.append((ix.F_SECTION, term, tuning.section_boost))
    names = list(dict.fromkeys(speakers.values()))
    subjects = {*names[:1], *co_subjects(parsed.keywords, names)}
    for word in names:
        parts.append(
            (ix.F_SPEAKER, word, tuning.speaker_boost * (1.0 if word in subjects else tuning.later_speaker))
        )
    if tuning.tag_boost > 0:
        words = [w for w in dict.fromkeys(parsed.words) if useful(ix.F_TAGS, w)]
        parts += [(ix.F_TAGS, word, tuning.tag_boost) for word in words]
    parts += [(ix.F_TEXT, char, tuning.char_backoff) for char in backoff_chars(parsed, tuning, searcher)]
    if tuning.translation_weight > 0 and not parsed.long:
        weight = tuning.text_boost * tuning.translation_weight
        parts += [(ix.F_TEXT, term, weight) for term in translated_terms(parsed.keywords, parsed.terms)]
    return parts


def backoff_chars(parsed: ParsedQuery, tuning: Tuning, searcher: Any) -> list[str]:
    """The characters of a Chinese query's words searched on their own, weighted low.

    Words that share one character meet no bigram (跑步 and 慢跑, 讨厌 and 厌恶, 拍照 and 照片).
    So the characters of a query bigram that the notes (almost) never write as such
    (:attr:`Tuning.char_word_df` entries at most) are searched alone too (as a character or
    any bigram it starts), at :attr:`Tuning.char_backoff`: at most :attr:`Tuning.char_max` of
    them, each ending a run in at most :attr:`Tuning.char_max_share` of the entries (a common
    one is slow to search and says nothing). A bigram the notes do write needs no back-off, and
    costs none.
    """
    from vault_tools.index import documents as ix
    from vault_tools.index.analysis import is_cjk_char

    if tuning.char_backoff <= 0 or searcher is None:
        return []
    rare_words = [
        t
        for t in parsed.terms
        if len(t) == 2
        and t not in parsed.time_terms
        and searcher.doc_frequency(ix.F_TEXT, t) <= tuning.char_word_df
    ]
    chars = {ch for t in rare_words for ch in t if is_cjk_char(ch)}
    chars -= set(parsed.terms)
    if not chars:
        return []
    most = tuning.char_max_share * max(1, searcher.doc_count())
    frequency = {ch: searcher.doc_frequency(ix.F_TEXT, ch) for ch in chars}
    rare = sorted((ch for ch in chars if 0 < frequency[ch] <= most), key=lambda ch: (frequency[ch], ch))
    return rare[: tuning.char_max]


def term_weight(parsed: ParsedQuery, term: str, tuning: Tuning) -> float:
    """How much a query term counts: less when it is in a long query's chatter, not its last turn,
    or a name of the period the question asks about ("summer" of "in summer 2021")."""
    if term in parsed.time_terms:
        return tuning.time_word_weight
    return tuning.chatter_weight if parsed.long and term not in parsed.focus else 1.0


def co_subjects(keywords: str, names: Sequence[str]) -> set[str]:
    """The names the question joins with "and" ("What do Ana and Ben both like?"): each is a
    subject, not the first one's listener or topic ("What did Ana tell Ben?"), so each gets the
    first name's speaker boost."""
    if len(names) < 2:
        return set()
    name = "|".join(re.escape(n) for n in names)
    joined = re.finditer(rf"\b({name})\s*(?:\band\b|&)\s*({name})\b", keywords.lower())
    return {n for m in joined for n in m.groups()}


def speaker_terms(parsed: ParsedQuery, searcher: Any) -> dict[str, str]:
    """Analyzed term -> query word, for the query's words that name who says some entry."""
    from vault_tools.index import documents as ix
    from vault_tools.index.analysis import tokenize

    if searcher is None:
        return {}
    found: dict[str, str] = {}
    for word in dict.fromkeys(parsed.words):
        if searcher.doc_frequency(ix.F_SPEAKER, word) > 0:
            for term in tokenize(word):
                found[term] = word
    return found


def keyword_query(parts: Sequence[KeywordPart]) -> Any:
    """:func:`keyword_parts` as one Whoosh ``Or`` query; None when the query only browses.

    The neighbours' fields are left out: their back-off rule (see :func:`keyword_clauses`) is
    the block scorer's, so Whoosh's matchers (the fallback) rank by the entry's own words.
    """
    from whoosh.query import Or, Term

    from vault_tools.index import documents as ix
    from vault_tools.index.analysis import term_query

    own = [(field, term, boost) for field, term, boost in parts if field not in ix.NEIGHBOUR_FIELDS]
    if not own:
        return None
    return Or(
        [
            Term(field, term, boost=boost)
            if field in (ix.F_TAGS, ix.F_SPEAKER)
            else term_query(term, field).with_boost(boost)
            for field, term, boost in own
        ]
    )


def keyword_clauses(parts: Sequence[KeywordPart], searcher: Any) -> list[Clause]:
    """:func:`keyword_parts` for :class:`vault_tools.index.scorer.BlockScorer`: the branches of
    :func:`keyword_query`.

    A single CJK character stands for itself and every bigram it starts, as in
    :class:`vault_tools.index.analysis.CjkCharQuery`. A neighbour's clause backs off: it counts only
    for entries whose own text lacks the term (see :meth:`vault_tools.index.scorer.BlockScorer.scores`).
    """
    from vault_tools.index import documents as ix
    from vault_tools.index.analysis import cjk_char_terms, is_cjk_char
    from vault_tools.index.scorer import Clause

    reader = searcher.reader()
    clauses = []
    for field_name, term, boost in parts:
        texts: tuple[str, ...] = (term,)
        if field_name not in (ix.F_TAGS, ix.F_SPEAKER) and is_cjk_char(term):
            texts = tuple(cjk_char_terms(reader, field_name, term))
        unless = ix.F_TEXT if field_name in ix.NEIGHBOUR_FIELDS else None
        clauses.append(Clause(field_name, texts, boost, unless))
    return clauses


@dataclass
class Candidate:
    fields: dict[str, Any]
    bm25: float
    matched: float = 1.0  # idf-weighted share of the query's terms this hit contains
    score: float = 0.0
    parts: dict[str, float] = field(default_factory=dict)
    also_in: list[str] = field(default_factory=list)
    words: frozenset[str] = frozenset()

    @property
    def place(self) -> str:
        return f"{self.fields.get('path', '')}:{self.fields.get('start_line', 0)}"


def day_of(stored: dict[str, Any]) -> dt.date | None:
    value = str(stored.get("datetime") or "")
    try:
        return dt.date.fromisoformat(value[:10]) if value else None
    except ValueError:
        return None


def rescore(
    candidate: Candidate,
    *,
    as_of: dt.date,
    half_life: float,
    window: Window,
    tuning: Tuning,
    question: ParsedQuery | None = None,
) -> None:
    """Combine BM25F with recency, importance, source and the word window (see module doc).

    ``question``: the query as read. Without keywords it browses, so a summary of the asked period
    is what answers it. When it asks when ("When did…?", "什么时候…"), an entry that names a time
    (:func:`vault_tools.recall.timewords.mentioned_spans`) scores :attr:`Tuning.when_told` times as
    much, unless it already has the event bonus of a window; an entry that only asks, or holds the
    question's words only in what it asks (:func:`asks_only_about`), scores
    :attr:`Tuning.question_factor`; when it asks how long ("How long…?",
    "多久"), an entry that names a duration (:func:`names_duration`) scores :attr:`Tuning.how_long_told`;
    when it asks how many ("How many…?", "几只"), one that gives a number (:func:`names_number`)
    scores :attr:`Tuning.how_many_told`.
    """
    browsing = question is not None and not question.terms
    asks_when = question is not None and question.asks_when
    asks_how_long = question is not None and question.asks_how_long
    asks_how_many = question is not None and question.asks_how_many
    stored = candidate.fields
    kind = stored.get("kind", "note")
    day = day_of(stored)
    timed = (window.core_since or window.core_until) and not window.weak
    weight = tuning.recency_weight if timed else tuning.recency_weight_untimed
    if kind == "memory":
        recency = 1.0
    elif day is None:
        recency = 1.0 - weight / 2
    else:
        age = max(0, (as_of - day).days)
        recency = 1.0 - weight + weight * 0.5 ** (age / half_life)
    importance = stored.get("importance")
    value = float(importance) if importance is not None else 0.5
    value = min(1.0, max(0.0, value)) if math.isfinite(value) else 0.5
    importance_factor = 1.0 + tuning.importance_weight * (value - 0.5)
    source = tuning.memory_boost if kind == "memory" else 1.0
    if kind == "summary" and browsing:
        source = _summary_preference(stored, day, window, tuning)
    outside = _days_outside(day, window)
    dated = window.core_since is not None or window.core_until is not None
    told = dated and tuning.event_time and not browsing and tells_of_window(stored, day, window)
    if outside and told:
        outside = 0  # written later (or earlier) about a time inside the window
    if window.weak:
        window_factor = (
            max(tuning.weak_outside_floor, tuning.weak_outside_window**outside) if outside else 1.0
        )
    elif window.vague:
        window_factor = (
            max(tuning.vague_outside_floor, tuning.vague_outside_window**outside) if outside else 1.0
        )
    else:
        window_factor = max(tuning.outside_floor, tuning.outside_window**outside) if outside else 1.0
    coordination = 1.0 - tuning.coordination + tuning.coordination * candidate.matched
    text = str(stored.get("text", ""))
    asking = only_asks(text) or (question is not None and asks_only_about(text, question.terms))
    asks = tuning.question_factor if not browsing and asking else 1.0
    candidate.parts = {
        "bm25": candidate.bm25,
        "coordination": coordination,
        "recency": recency,
        "importance": importance_factor,
        "source": source,
        "window": window_factor,
    }
    if asks != 1.0:
        candidate.parts["asks"] = asks
    short = not (window.weak or window.vague) and window.shorter_than(tuning.event_match_days)
    event = tuning.event_match if told and short else 1.0
    if event != 1.0:
        candidate.parts["event"] = event  # names a time inside the window: what the question asks
    elif asks_how_long and not browsing and names_duration(str(stored.get("text", ""))):
        event = tuning.how_long_told
        candidate.parts["names_how_long"] = event  # "How long…?" is answered by "for 3 years now"
    elif asks_how_many and not browsing and names_number(str(stored.get("text", ""))):
        event = tuning.how_many_told
        candidate.parts["names_number"] = event  # "How many…?" is answered by "the 2 younger kids"
    elif asks_when and day is not None and not browsing and _mentions(str(stored.get("text", "")), day):
        event = tuning.when_told
        candidate.parts["names_when"] = event  # "When did…?" is answered by an entry that says when
    candidate.score = (
        candidate.bm25 * coordination * recency * importance_factor * source * window_factor * asks * event
    )


_SPEAKER_LABEL = re.compile(r"^\*\*[^*\n]{1,40}\*\*\s*[:：]\s*|^\*\*[^*\n]{1,40}[:：]\*\*\s*")
_SENTENCE_END = re.compile(r"[.!?。！？…]+[\"'”’)）]*\s*")


def only_asks(text: str) -> bool:
    """Whether an entry only asks (every sentence a question): in a log, the assistant's "What
    genres do you enjoy?" repeats the words of the question and holds no answer."""
    body = _SPEAKER_LABEL.sub("", text.strip(), count=1)
    ends = [m.group(0).strip() for m in _SENTENCE_END.finditer(body)]
    return bool(ends) and body.rstrip().endswith(QUESTION_MARKS) and all("?" in e or "？" in e for e in ends)


def asks_only_about(text: str, terms: Sequence[str]) -> bool:
    """Whether the query's words an entry holds are all in the sentences it asks with ("Great
    news! Did you paint it yourself?" holds "paint" only in a question): it asks about the topic,
    and what it asks is no evidence of it."""
    from vault_tools.index.analysis import tokenize

    if not terms or not any(mark in text for mark in QUESTION_MARKS):
        return False
    body = _SPEAKER_LABEL.sub("", text.strip(), count=1)
    wanted = set(terms)
    asked = told = False
    start = 0
    for end in [*(m.end() for m in _SENTENCE_END.finditer(body)), len(body)]:
        sentence = body[start:end]
        start = end
        if not sentence.strip() or not wanted.intersection(tokenize(sentence)):
            continue
        if any(mark in sentence for mark in QUESTION_MARKS):
            asked = True
        else:
            told = True
    return asked and not told


#: What marks an entry as asking: its answer is most often the entry right after it.
QUESTION_MARKS = ("?", "？")


def lend_to_answers(
    ranked: list[Candidate],
    fetch: Callable[[str], dict[str, Any] | None],
    tuning: Tuning,
    *,
    replies: bool = False,
) -> list[Candidate]:
    """``ranked`` (best first) with each question's answer ranked right behind it.

    In a conversation, and in notes kept as questions and answers, a line that asks shares the
    question's words while the line after it holds the answer, often in other words. So an
    entry among the :attr:`Tuning.answer_top` best that asks lends :attr:`Tuning.answer_factor`
    of its score to the entry right after it (same file and section, stored as ``next``), when
    that scores less on its own. ``fetch`` gives an entry's stored fields by id, or None when the
    search's filters (chat, dates, tags) leave it out: a lent score never shows an entry the
    search could not.

    ``replies``: the question asks how someone took what was said ("What did Ben think about
    the piano?", "阿杰觉得卖钢琴这件事怎么样？"), and the answer is the reply to the line that
    tells it, whether that line asks or not ("I sold the piano." / "It deserves to be
    played!"): every entry among the best lends :attr:`Tuning.reply_factor` to the one after it.

    A line among the best that tells, followed by a line that asks (a follow-up: "I got promoted!"
    / "Congrats! What's the new role?"), lends :attr:`Tuning.follow_up_factor` to the line after
    the follow-up when the same person says it ("Team lead for the data platform."): it tells
    more of the same, in words of its own. Only turns of a conversation (``**Name**: …``) do.
    """
    if tuning.answer_factor <= 0:
        return ranked
    lender = _Lender(ranked, fetch)
    for source in ranked[: tuning.answer_top]:
        next_id = source.fields.get("next")
        if not next_id:
            continue
        asks = _asks(source.fields)
        if asks or (replies and tuning.reply_factor > 0):
            lender.lend(
                lender.entry(str(next_id)), source, tuning.answer_factor if asks else tuning.reply_factor
            )
        elif tuning.follow_up_factor > 0 and _speaker(source.fields):  # a turn of a conversation
            lender.lend(lender.follow_up_answer(source, str(next_id)), source, tuning.follow_up_factor)
    if lender.lent:
        ranked.sort(key=rank_order)
    return ranked


class _Lender:
    """The entries of a ranked list by id, and the ones a lent score adds to it (see :func:`lend_to_answers`)."""

    def __init__(self, ranked: list[Candidate], fetch: Callable[[str], dict[str, Any] | None]) -> None:
        self.ranked = ranked
        self.fetch = fetch
        self.by_id = {str(c.fields.get("id")): c for c in ranked}
        self.shown = set(self.by_id)
        self.lent = False

    def entry(self, entry_id: str) -> Candidate | None:
        """A ranked entry, or one the filters let through (shown only once something is lent to it)."""
        found = self.by_id.get(entry_id)
        if found is None:
            fields = self.fetch(entry_id)
            if fields is None:
                return None
            found = self.by_id[entry_id] = Candidate(fields, 0.0)
        return found

    def follow_up_answer(self, source: Candidate, next_id: str) -> Candidate | None:
        """The line after the follow-up question that comes after ``source``, said by its speaker."""
        follow_up = self.entry(next_id)
        after = follow_up.fields.get("next") if follow_up is not None else None
        if follow_up is None or not after or not _asks(follow_up.fields):
            return None
        answer = self.entry(str(after))
        return answer if answer is not None and _speaker(answer.fields) == _speaker(source.fields) else None

    def lend(self, answer: Candidate | None, source: Candidate, factor: float) -> None:
        """Raise ``answer`` to ``factor`` of ``source``'s score (as if it did not only ask) when
        it scores less on its own."""
        if answer is None:
            return
        score = source.score / source.parts.get("asks", 1.0) * factor
        if answer.score >= score:
            return
        answer.score = score
        answer.parts = {**answer.parts, "answers": source.score, "score_lent": factor}
        self.lent = True
        answer_id = str(answer.fields.get("id"))
        if answer_id not in self.shown:
            self.shown.add(answer_id)
            self.ranked.append(answer)


def _speaker(stored: dict[str, Any]) -> str:
    """Who says an entry ("**Ana**: …"), lower-cased; empty for a plain note line."""
    from vault_tools.notes.model import SPEAKER

    found = SPEAKER.match(str(stored.get("text", "")))
    return next((g for g in found.groups() if g), "").strip().lower() if found else ""


def _asks(stored: dict[str, Any]) -> bool:
    text = str(stored.get("text", ""))
    return any(mark in text for mark in QUESTION_MARKS)


def demote_superseded(ranked: Sequence[Candidate], tuning: Tuning) -> None:
    """Scale down a MEMORY item that another hit supersedes (the heartbeat's ``[supersedes:: m-…]``)."""
    import json

    named = set()
    for candidate in ranked:
        raw = candidate.fields.get("fields")
        if raw and "supersedes" in str(raw):
            try:
                value = json.loads(str(raw)).get("supersedes", "")
            except (ValueError, AttributeError):
                continue
            named.add(str(value).strip().lstrip("^"))
    if not named:
        return
    for candidate in ranked:
        if candidate.fields.get("block_id") in named:
            candidate.score *= tuning.superseded_factor
            candidate.parts = {**candidate.parts, "superseded": tuning.superseded_factor}


def prefer_open_tasks(ranked: list[Candidate], tuning: Tuning) -> list[Candidate]:
    """A question about what is still to do, on a topic: its open tasks score
    :attr:`Tuning.open_task_factor` times as much (the line saying it was done still competes)."""
    for candidate in ranked:
        if candidate.fields.get("task") == "open":
            candidate.score *= tuning.open_task_factor
            candidate.parts["open_task"] = tuning.open_task_factor
    return sorted(ranked, key=rank_order)


def prefer_latest(ranked: list[Candidate], terms: Sequence[str], tuning: Tuning) -> list[Candidate]:
    """For a question about now: among the best hits that hold every query word the best hit
    holds (one subject) and score within :attr:`Tuning.latest_ratio` of the best of them, the
    newest ranks first.

    "What is my coffee order?" finds "a flat white" (February) and "switched to a cortado"
    (October): both say "coffee order", and the later one is what holds now.
    """
    from vault_tools.index.analysis import tokenize

    if tuning.latest_ratio >= 1.0 or not ranked or not terms:
        return ranked
    top = ranked[: tuning.answer_top]
    held = [set(terms) & set(tokenize(str(c.fields.get("text", "")))) for c in top]
    wanted = held[0]  # the subject: the query words the best hit says
    members = [c for c, words in zip(top, held, strict=True) if wanted and wanted <= words]
    if len(members) < 2:
        return ranked
    best = max(c.score for c in members)
    close = [c for c in members if c.score >= tuning.latest_ratio * best]
    scores = sorted((c.score for c in close), reverse=True)
    moved = False
    for candidate, score in zip(sorted(close, key=lambda c: -sort_day(c.fields)), scores, strict=True):
        if candidate.score != score:
            candidate.parts = {**candidate.parts, "latest": score / max(candidate.score, 1e-12)}
            candidate.score = score
            moved = True
    if moved:
        ranked.sort(key=rank_order)
    return ranked


def spread_days(ranked: list[Candidate], tuning: Tuning, repeat: float | None = None) -> list[Candidate]:
    """For a question across days: each hit scaled by :attr:`Tuning.day_repeat` (or ``repeat``)
    per better hit of the same day, so the top of the list covers more days instead of
    near-copies of one."""
    factor = tuning.day_repeat if repeat is None else repeat
    if factor >= 1.0:
        return ranked
    seen: dict[int, int] = {}
    for candidate in ranked:  # best first: a day's best hit keeps its score
        day = sort_day(candidate.fields)
        repeats = seen.get(day, 0)
        if repeats and day:
            candidate.score *= factor**repeats
            candidate.parts = {**candidate.parts, "same_day": factor**repeats}
        seen[day] = repeats + 1
    ranked.sort(key=rank_order)
    return ranked


def matched_share(stored: dict[str, Any], weights: dict[str, float]) -> float:
    """The share of the query's terms (weighted by idf) found in a hit's text, section or tags."""
    from vault_tools.index.analysis import tokenize

    total = sum(weights.values())
    if not total:
        return 1.0
    text = f"{stored.get('text', '')} {stored.get('section', '')} {str(stored.get('tags') or '').replace(',', ' ')}"
    have = set(tokenize(text))
    found = 0.0
    for term, weight in weights.items():
        if term in have or (len(term) == 1 and any(t.startswith(term) for t in have)):
            found += weight
    return found / total


def rank_order(candidate: Candidate) -> tuple[float, int]:
    """The sort key of a ranked list: best score first, then the newer entry."""
    return (-round(candidate.score, 9), -sort_day(candidate.fields))


def sort_day(stored: dict[str, Any]) -> int:
    day = day_of(stored)
    return day.toordinal() if day else 0


def _summary_preference(stored: dict[str, Any], end: dt.date | None, window: Window, tuning: Tuning) -> float:
    """How much a summary's period answers a question about the window (1.0: not at all).

    The period is read from the file's name (``2026-W10.md``, ``2026-03.md``); its last day is
    the entry's date.
    """
    if end is None or window.core_since is None or window.core_until is None:
        return 1.0
    name = str(stored.get("path", "")).rsplit("/", 1)[-1].removesuffix(".md")
    try:
        if "-W" in name:
            year, week = name.split("-W")
            start = dt.date.fromisocalendar(int(year), int(week), 1)
        else:
            start = dt.date.fromisoformat(f"{name}-01")
    except ValueError:
        return 1.0
    if (start, end) == (window.core_since, window.core_until):
        return tuning.summary_period
    if window.core_since <= start and end <= window.core_until:
        return tuning.summary_inside
    return 1.0


def tells_of_window(stored: dict[str, Any], day: dt.date | None, window: Window) -> bool:
    """Whether an entry tells of a time inside the word window ("last Friday" in a note of the
    Thursday after it), a period no longer than the window or a month."""
    if day is None:
        return False
    lo, hi = window.core_since or dt.date.min, window.core_until or dt.date.max
    longest = max(31, (hi - lo).days + 1) if window.core_since and window.core_until else 366
    for since, until in _mentions(str(stored.get("text", "")), day):
        if since <= hi and lo <= until and (until - since).days < longest:
            return True
    return False


@functools.lru_cache(maxsize=8192)
def _mentions(text: str, day: dt.date) -> list[tuple[dt.date, dt.date]]:
    from vault_tools.recall.timewords import mentioned_spans

    return mentioned_spans(text, day)


# A duration as people tell it: "for 3 years now", "over two months", "since I was a kid",
# "三年了", "已经两个月", "整整一年". A date ("2023年", "in May") is no duration.
_DURATION = re.compile(
    r"(?i:\b(?:for|over|nearly|almost|about|around)\s+(?:\d+|a|an|one|two|three|four|five|six|seven|eight"
    r"|nine|ten|eleven|twelve|several|a\s+few|few|many|a\s+couple\s+of|couple\s+of)\s+"
    r"(?:years?|months?|weeks?|days?|hours?|decades?)\b"
    r"|\bsince\s+(?:\d{4}|i\s+was|we\s+were|childhood|high\s+school|college)\b"
    r"|\b\d+\s+(?:years?|months?|weeks?)\s+(?:now|already)\b)"
    r"|(?:已经|整整|有)[\d一二两三四五六七八九十几多半]+\s*(?:年|个月|周|个星期|天)"
    r"|[\d一二两三四五六七八九十几多半]+\s*(?:年|个月|周|个星期|天)(?:了|之久|多了)"
)


def names_duration(text: str) -> bool:
    """Whether ``text`` names how long something lasted ("I've had them for 3 years now", "养了三年了")."""
    from vault_tools.index.analysis import fold_cjk

    return _DURATION.search(fold_cjk(text)) is not None


# A number as people write it: digits anywhere ("3", "5%", "止损设在5%"), number words, "twice",
# or a Chinese numeral with its measure word ("三只", "两次"; 三月 is a month, not a count).
_NUMBER = re.compile(
    r"\d|(?i:\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|dozen|both"
    r"|couple|several|first|second|third|fourth|fifth|once|twice)\b)"
    r"|[一二两三四五六七八九十]+\s*(?:个|只|次|本|位|条|家|所|辆|台|年|岁|张|件|块)"
)


def names_number(text: str) -> bool:
    """Whether an entry's text (without its speaker label) gives a number ("3 years", "twice", "三只")."""
    from vault_tools.index.analysis import fold_cjk

    return _NUMBER.search(fold_cjk(_SPEAKER_LABEL.sub("", text.strip(), count=1))) is not None


def _days_outside(day: dt.date | None, window: Window) -> int:
    """How many days ``day`` lies outside the word window (0 inside, or when there is none)."""
    if window.core_since is None and window.core_until is None:
        return 0
    if day is None:
        return 3  # an undated note cannot be placed in time: rank it like a near miss
    if window.core_since is not None and day < window.core_since:
        return (window.core_since - day).days
    if window.core_until is not None and day > window.core_until:
        return (day - window.core_until).days
    return 0
