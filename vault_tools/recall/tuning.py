"""The constants of recall's ranking and filtering in one place (:class:`Tuning`).

Filters (the padded word window) and ranking (every score factor) both read them, so they sit
below both. ``bench/locomo_bench.py`` and ``bench/recall_bench.py`` sweep them (``--tune``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_TUNING", "Tuning"]


@dataclass(frozen=True)
class Tuning:
    """Ranking constants (chosen on ``bench/retrieval_set.py``; the benchmark sweeps them).

    ``window_mode`` says what a time phrase in the question does: ``"exact"`` filters by the
    window as read; ``"pad"`` filters by the window widened by ``pad_before``/``pad_after`` days;
    ``"rank"`` does not filter; ``"pad+rank"`` (the default) merges a padded-window search with an
    unwindowed one. Every mode multiplies a hit ``d`` days outside the window by
    ``max(outside_floor, outside_window ** d)``.
    """

    pool: int = 30  # hits re-ranked per search: max(pool, 2 * limit + 10)
    bm25_b: float = 0.3  # length normalisation (Whoosh BM25F's B): entries are one-liners
    bm25_k1: float = 1.2
    text_boost: float = 1.0
    section_boost: float = 0.3
    before_boost: float = 0.4  # the entry before it (a question this entry answers)
    after_boost: float = 0.3  # the entry after it
    context_terms: int = 2  # query terms the neighbours must share for a hit that matches only through them
    context_floor: float = 0.35  # ... and the share of the best direct match's score it must reach
    speaker_boost: float = 1.0  # a name in the query that is who says an entry ("**Name**: ...")
    later_speaker: float = 0.5  # a later name's speaker boost (the first is the subject; "X and Y": both are)
    speaker_text_factor: float = 0.3  # the other branches of such a name are scaled by this
    answer_factor: float = 0.8  # the share of a question's score the entry right after it (its answer) gets
    answer_top: int = 10  # ... for the questions among this many best hits
    reply_factor: float = 0.8  # ... and for any line among them, when the question asks how someone took it
    # ... and a top line that tells, when the line after it asks (a follow-up question), to the
    # line after that: its answer tells more of the same
    follow_up_factor: float = 0.8
    tag_boost: float = 0.6
    tag_max_share: float = 0.02
    coordination: float = 0.3  # weight of the share of the query's terms a hit has
    recency_weight: float = 0.25  # when the question has time words
    recency_weight_untimed: float = 0.05  # when it has none: most questions about the past are not about now
    importance_weight: float = 0.4
    memory_boost: float = 1.1
    window_mode: str = "pad+rank"
    pad_before: int = 1
    pad_after: int = 3
    outside_window: float = 0.8  # per day outside the word window
    outside_floor: float = 0.35  # the least a strong match far outside the word window keeps
    wide_pool: int = 0  # hits of the unwindowed search: max(wide_pool, limit + 5)
    char_backoff: float = (
        0.0  # a character of a Chinese query's words on its own (backoff_chars); off: see README
    )
    open_task_factor: float = 2.0  # an open task, for "what do I still need to do for the move?"
    translation_weight: float = 0.5  # a word of the question in the other language (recall.bilingual)
    char_max: int = 4
    char_word_df: int = 2  # ... of a query bigram in at most this many entries
    char_max_share: float = 0.01  # ... when the character ends a run in at most this share of entries
    time_word_weight: float = 0.3  # a named period of the question's time phrase, as a term
    chatter_weight: float = 0.3  # a long query's terms outside its last turn (query.ParsedQuery.long)
    weak_outside_window: float = 0.97  # a long query's window: per day outside it ...
    weak_outside_floor: float = 0.85  # ... and the least a hit far outside keeps
    # "recently" / "最近" alone: no bounds of its own, so its window ranks and never filters;
    # per day outside it a hit keeps this much, and at least vague_outside_floor.
    vague_outside_window: float = 0.97
    vague_outside_floor: float = 0.6
    # An entry that only asks ("What genres do you enjoy?"), or holds the question's words only in
    # what it asks ("Nice! Did you plant the tomatoes?"), is no evidence: it scores this much.
    question_factor: float = 0.7
    latest_ratio: float = (
        0.5  # a question about now: same-subject hits within this of the best go newest first
    )
    superseded_factor: float = 0.5  # a MEMORY item another hit says it supersedes ([supersedes:: m-…])
    day_repeat: float = 0.6  # a question across days: each earlier hit of the same day scales a hit by this
    # ... and a question that asks for several things ("What books has Ana read?", "去过哪些城市"),
    # told on different days more often than not: gently
    several_day_repeat: float = 0.9
    event_time: bool = True  # an entry that tells of a time inside the window counts as inside it
    # ... and scores this much more when the window is a short period (fewer days than
    # event_match_days; a year says too little): it names when, as the question does.
    event_match: float = 1.6
    event_match_days: int = 32
    # A question that asks when ("When did she…?", "什么时候…"): an entry that names a time (any
    # time: "yesterday", "last May", "上周") scores this much more; it says when, as asked.
    when_told: float = 1.4
    # ... and one that asks how long ("How long has he had the turtles?", "养了多久"): an entry that
    # names a duration ("for 3 years now", "三年了") scores this much more.
    how_long_told: float = 1.6
    # ... and one that asks how many or how much ("How many turtles…?", "几只"): an entry that gives
    # a number ("3", "two", "twice", "三只") scores this much more.
    how_many_told: float = 1.3
    duplicate_overlap: float = 0.75
    duplicate_overlap_linked: float = 0.45
    hit_overhead_tokens: int = 16  # path, line, date and JSON keys around each hit's text
    browse_pool: int = 500
    # A question about a period and nothing else ("what happened last week?", "上个月做了什么"):
    # the summary of exactly that period first, a shorter one inside it next (summaries.py).
    summary_period: float = 1.5
    summary_inside: float = 1.2


DEFAULT_TUNING = Tuning()
