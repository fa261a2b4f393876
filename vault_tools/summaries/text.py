"""What a summary says: its period, its bullets chosen by the heartbeat's rules, its Markdown.

Design
------
:func:`build_summary` gets the period's usable entries (see :func:`usable`: never a ``#private``
one, never one holding a secret, not the chatter the heartbeat skips) and reads them with the
heartbeat's own rules (:func:`vault_tools.curation.insights.rules_insights`): each entry's category
and score; near-duplicates said on several days become one bullet citing every day. It states
what happened to whom, not the week's lines again:

* **Who.** A bullet is about its entry's speaker (a transcript), else its first topic tag, else
  the person the note is about ("Melanie ran a race", "小林搬到了杭州": a name that opens two
  entries or more as their subject, :mod:`vault_tools.summaries.people`), else its section heading.
* **What.** Of a person, every statement they make of themselves becomes a candidate clause,
  weighed by what a reader learns from it (:mod:`vault_tools.summaries.told`: its words rare in
  the period, the more when it tells an event; names, dates, news of the last days), cut to the
  clauses that carry it (:func:`vault_tools.curation.clauses.said`: no greeting, thanks,
  vocative, reaction, question back, hedge, media annotation, nor the "I" or name the bullet
  already says). Of a topic, each entry's news (:func:`news`): its event sentences, those of the
  last days first, else its strongest statement.
* **How much.** As many as fit :data:`SUMMARY_SHARE` of what the notes state
  (:func:`within_budget`): open threads first; of a chat, the clauses worth most per word; of
  notes, the news, the heartbeat's strongest first. A chat's clause worth far less than the
  period's best is chatter and is left out even when words are left (:data:`LEAST_WORTH`), and
  one that mostly says again what is kept of its person is left out (:data:`NEW_SHARE`).
* **One bullet per person.** A person's statements of the period are joined into one bullet in
  the order said ("**Caroline**: went to a support group yesterday; applied to adoption agencies"),
  a topic's into one per section; a statement that repeats one already there adds only its sources.

Bullets go under Decisions, Events, Lessons, Preferences and Open threads (open tasks, and dated
items still ahead when the period ended, told by the sentence that names the day; a person's
bullet that joins several sections goes under Events), most important first, grouped by topic
with the topic whose best item matters most first. A short overview paragraph on top counts the
entries and names the main topics: the line a question about the period finds first.

:func:`render_summary` writes it out: front matter (``type: summary``, the period, its first and
last day, how many entries it read from how many notes, its visibility, ``shared`` only when
every entry read is shared, and ``generated_hash``, a hash of everything else it wrote), a
title, the overview and the sections, in the language most of the period's entries are in. Every
bullet ends with Obsidian links to its sources: ``[[2026-03-10#^billing-db|Mar 10]]`` to the block
where the entry has a block id, else ``[[2026-03-10#Work|Mar 10]]`` to its heading, else the note.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from vault_tools.curation import clauses, insights, salience, similarity
from vault_tools.errors import UsageError
from vault_tools.notes import edit as note_edit
from vault_tools.notes import model as notes
from vault_tools.notes.generated import HASH_KEY, content_hash
from vault_tools.privacy import sensitive
from vault_tools.summaries import told
from vault_tools.summaries.people import names_in, people_of, subject_name

if TYPE_CHECKING:
    from vault_tools.config import Config

SUMMARY_DIR = "memory/summaries"
SectionKey = Literal["decisions", "events", "lessons", "preferences", "open"]
SECTIONS: tuple[SectionKey, ...] = ("decisions", "events", "lessons", "preferences", "open")
SECTION_OF_CATEGORY: dict[str, SectionKey] = {
    "decision": "decisions",
    "fact": "events",
    "lesson": "lessons",
    "preference": "preferences",
    "todo": "open",
}
HEADINGS = {
    "en": {
        "decisions": "Decisions",
        "events": "Events",
        "lessons": "Lessons",
        "preferences": "Preferences",
        "open": "Open threads",
    },
    "zh": {
        "decisions": "决定",
        "events": "事件",
        "lessons": "教训",
        "preferences": "偏好",
        "open": "待办与后续",
    },
}
# Bullets per section of a week; a month gets twice as many.
WEEK_LIMITS: dict[SectionKey, int] = {
    "decisions": 8,
    "events": 12,
    "lessons": 6,
    "preferences": 6,
    "open": 10,
}
BULLET_CHARS = 240
MAX_LINKS = 3
META_TAGS = frozenset(
    {"daily", "remember", "shared", "private", "temporary", "decision", "lesson", "todo", "important"}
    | {"summary", "决定", "教训", "重要", "记住"}
)
LINK_UNSAFE = re.compile(r"[#|^\[\]:%]")
MONTHS_EN = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
PERIOD_NAME = re.compile(r"^(\d{4})-W(\d{2})$|^(\d{4})-(\d{2})$")


# ---------------------------------------------------------------------------------------------
# Periods


@dataclass(frozen=True)
class Period:
    """A calendar week (Monday..Sunday, ISO numbered) or month."""

    kind: Literal["week", "month"]
    name: str  # 2026-W10 or 2026-03
    start: dt.date
    end: dt.date

    @classmethod
    def week_of(cls, day: dt.date) -> Period:
        year, week, _weekday = day.isocalendar()
        start = day - dt.timedelta(days=day.weekday())
        return cls("week", f"{year}-W{week:02d}", start, start + dt.timedelta(days=6))

    @classmethod
    def month_of(cls, day: dt.date) -> Period:
        start = day.replace(day=1)
        end = dt.date(start.year + start.month // 12, start.month % 12 + 1, 1) - dt.timedelta(days=1)
        return cls("month", start.strftime("%Y-%m"), start, end)

    @classmethod
    def parse(cls, text: str) -> Period:
        """``2026-W10`` or ``2026-03``; a UsageError naming both forms otherwise."""
        match = PERIOD_NAME.match(text.strip())
        try:
            if match and match[1]:
                return cls.week_of(dt.date.fromisocalendar(int(match[1]), int(match[2]), 1))
            if match:
                return cls.month_of(dt.date(int(match[3]), int(match[4]), 1))
        except ValueError:
            pass
        raise UsageError(f"{text!r} is not a week (2026-W10) or a month (2026-03)")

    @property
    def rel_path(self) -> str:
        return f"{SUMMARY_DIR}/{self.name}.md"

    def closed(self, as_of: dt.date) -> bool:
        return self.end < as_of

    def title(self, language: str) -> str:
        if language == "zh":
            span = f"{self.start.month}月{self.start.day}日–{self.end.month}月{self.end.day}日"
            if self.kind == "week":
                return f"{self.start.isocalendar()[0]}年第{self.start.isocalendar()[1]}周（{span}）"
            return f"{self.start.year}年{self.start.month}月"
        span = f"{day_label(self.start, 'en')} – {day_label(self.end, 'en')}"
        if self.kind == "week":
            return f"Week {self.start.isocalendar()[1]}, {self.start.isocalendar()[0]} ({span})"
        return self.start.strftime("%B %Y")


def last_closed_week(as_of: dt.date) -> Period:
    return Period.week_of(as_of - dt.timedelta(days=as_of.weekday() + 1))


def last_closed(kind: Literal["week", "month"], as_of: dt.date) -> Period:
    """The last week or month that ended before ``as_of``."""
    if kind == "week":
        return last_closed_week(as_of)
    return Period.month_of(as_of.replace(day=1) - dt.timedelta(days=1))


def closed_periods(days: Sequence[dt.date], as_of: dt.date) -> list[Period]:
    """Every closed week and month that holds one of ``days``, oldest first (weeks before months)."""
    found: dict[str, Period] = {}
    for day in days:
        for period in (Period.week_of(day), Period.month_of(day)):
            if period.closed(as_of):
                found.setdefault(period.name, period)
    return sorted(found.values(), key=lambda p: (p.end, p.kind == "month"))


def day_label(day: dt.date, language: str) -> str:
    return f"{day.month}月{day.day}日" if language == "zh" else f"{MONTHS_EN[day.month - 1]} {day.day}"


# ---------------------------------------------------------------------------------------------
# The summary


@dataclass(frozen=True)
class Bullet:
    section: SectionKey
    topic: str
    text: str
    score: float
    sources: tuple[notes.Entry, ...]
    ahead: dt.date | None = None  # an open thread's next date, after the period
    person: bool = False  # the topic is who the text is about: "**Caroline**: went to …"
    news: bool = True  # an event, decision, plan, lesson or preference: what a summary is for
    worth: float = 0.0  # what a reader learns from it (summaries/told.py): the budget's order


@dataclass
class Summary:
    period: Period
    language: str
    entries: int  # entries read (private ones and chatter left out)
    notes: int  # daily notes they came from
    visibility: str
    bullets: list[Bullet]
    topics: list[tuple[str, int]]  # the main topics of the period and how many entries each
    generator: str  # "rules" or "model <name>"
    scores: dict[str, float] = field(default_factory=dict)  # entry id -> the rules' score


def period_entries(vault: Path, period: Period, warnings: list[str]) -> list[notes.Entry]:
    """The entries of the period's daily notes, in date and file order (unreadable notes warned)."""
    found: list[notes.Entry] = []
    for path in notes.iter_note_paths(vault):
        rel = notes.relative_posix(path, vault)
        kind, day = notes.classify(rel)
        if kind != "daily" or day is None or not period.start <= day <= period.end:
            continue
        try:
            note = notes.read_note(path, vault)
        except OSError as exc:
            warnings.append(f"{path}: could not be read ({exc.strerror or exc}); left out of the summary")
            continue
        warnings.extend(str(w) for w in note.warnings)
        found.extend(note.entries)
    found.sort(key=lambda e: (e.date or dt.date.min, e.rel_path, e.start_line))
    return found


def usable(entry: notes.Entry) -> bool:
    """Whether a summary may draw from ``entry``: not private, no secret, not chatter."""
    if entry.visibility == "private" or holds_secret(entry.raw):
        return False
    return insights.skip_reason(entry) is None


@functools.lru_cache(maxsize=16384)
def holds_secret(raw: str) -> bool:
    """:func:`vault_tools.privacy.sensitive.is_secret`, once per text (a week and its month share
    their entries)."""
    return sensitive.is_secret(raw)


def topic_of(entry: notes.Entry, people: frozenset[str] = frozenset()) -> str:
    """Who says the entry (a transcript: what happened to whom), else its first topic tag (not a
    marker such as #remember), else the person it is about (one of ``people``, see
    :func:`people_of`: its subject, else the only one it names, as in "Pottery is a big part of
    Melanie's life"), else its section heading."""
    if entry.speaker:
        return entry.speaker
    for tag in insights.inline_tags(entry.raw):
        name = tag.rstrip("/")
        if name.split("/")[0].lower() not in META_TAGS and not name.isdigit():
            return name
    text = insights.spoken_text(entry)
    about = subject_name(text)
    if about is not None and about in people:
        return about
    named = names_in(text, people)
    return named[0] if len(named) == 1 else entry.section.strip()


def topic_label(topic: str) -> str:
    last = topic.split("/")[-1]
    return last[:1].upper() + last[1:] if last.isascii() else last


OPEN_TASK = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+\[ \]")
DONE_TASK = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+\[[xX]\]")


def is_open_task(entry: notes.Entry) -> bool:
    return bool(OPEN_TASK.match(entry.raw))


def build_summary(
    config: Config, period: Period, entries: Sequence[notes.Entry], rules: insights.Rules
) -> Summary:
    """The extractive (rules) summary of ``entries``, the period's usable entries."""
    candidates = [insights.analyse(e, rules) for e in entries]
    found, scores = insights.rules_insights(candidates, candidates, rules)
    people = people_of(entries)
    listeners = people | {e.speaker for e in entries if e.speaker}
    rarity = told.Rarity.of(entries)
    bullets = [b for insight in found for b in rules_bullets(insight, period, people, listeners, rarity)]
    budget = word_budget(sum(statement_words(e) for e in entries))
    return Summary(
        period=period,
        language=language_of(entries),
        entries=len(entries),
        notes=len({e.rel_path for e in entries}),
        visibility=visibility_of(entries),
        bullets=select(bullets, period, budget),
        topics=main_topics(entries),
        generator="rules",
        scores={key: value for key, (value, _rule) in scores.items()},
    )


def rules_bullets(
    insight: insights.Insight,
    period: Period,
    people: frozenset[str],
    listeners: frozenset[str],
    rarity: told.Rarity,
) -> list[Bullet]:
    """The bullets of one insight: for a person (the speaker of a turn, the subject of a note),
    one per statement it makes of them, each weighed (:mod:`vault_tools.summaries.told`), for
    the budget to keep the clauses worth most and :func:`merge_same_things` to join them into the
    person's bullet; else (a topic, an open thread) the one bullet of :func:`rules_bullet`."""
    bullet = rules_bullet(insight, period, people)
    if bullet is None:
        return []
    if not bullet.person or bullet.section == "open":
        return [dataclasses.replace(bullet, worth=told.worth(bullet.text, bullet.news, rarity))]
    said_by = insight.lead or max(insight.sources, key=lambda e: (e.date or dt.date.min, e.start_line))
    return [
        dataclasses.replace(
            bullet,
            text=insights.short(statement.text, BULLET_CHARS),
            score=insight.score + NEWS_BOOST * statement.news,
            news=statement.news > 0 or bullet.section != "events",
            worth=statement.worth,
        )
        for statement in told.statements_of(said_by, bullet.topic, listeners, rarity)
    ]


def rules_bullet(
    insight: insights.Insight, period: Period, people: frozenset[str] = frozenset()
) -> Bullet | None:
    """The bullet of one insight (None: it says nothing of its person but pleasantries)."""
    lead = max(insight.sources, key=lambda e: (e.date or dt.date.min, e.start_line))
    said_by = insight.lead or lead
    topic = topic_of(said_by, people)
    person = bool(said_by.speaker) or topic in people
    text, value = news(said_by, topic if person else None)
    if not text and person:
        return None  # nothing of the person but pleasantries
    text = text or notes.SPEAKER.sub("", insight.text, count=1).strip()
    ahead = ahead_of(insight.sources, period.end)
    done = all(DONE_TASK.match(e.raw) for e in insight.sources)
    if any(is_open_task(e) for e in insight.sources) or (ahead is not None and not done):
        section: SectionKey = "open"
        if ahead is not None:
            naming = sentence_naming(ahead[2], ahead[1])  # "Follow up with Jonas on Monday."
            text = clauses.gist(naming, topic if person else None) if naming else text
    elif done:
        section = "events"  # a done task is something that happened
    else:
        section = SECTION_OF_CATEGORY[insight.category]
    when = ahead[0] if ahead is not None else None
    score = insight.score + NEWS_BOOST * value
    told = value > 0 or section != "events"
    text = insights.short(text, BULLET_CHARS)
    return Bullet(section, topic, text, score, insight.sources, when, person, told)


#: At most this many sentences of one entry in its bullet: the news, not the line again.
NEWS_SENTENCES = 2
#: A bullet that tells an event (someone did, started, changed or plans something) ranks above one
#: that only states something: a summary says what happened.
NEWS_BOOST = 0.3


def news(entry: notes.Entry, subject: str | None) -> tuple[str, int]:
    """What ``entry`` tells, in few words: a sentence its author labelled ("Lesson: …", "教训：…")
    first, then its event sentences (someone did, started, changed or plans something; those of
    the last days first), else its strongest statement (about a person:
    one that says something of them, a name or a date), each cut to the
    clauses that carry it (:func:`vault_tools.curation.clauses.gist`; "" when it states
    nothing), and how much news it is: 2 an event of the last days, 1 an event, 0 none."""
    read = insights.entry_sentences(entry)
    statements = [s for s in read if s.usable and not s.text.endswith((":", "："))]
    events = [
        s for s in statements if (s.event and (s.disclosure or s.names or s.dated)) or clauses.ongoing(s.text)
    ]
    ranked = sorted(events, key=lambda s: (-clauses.recent(s.text), -s.strength))
    if subject is not None:  # about a person: what they say of themselves, not "Dogs are the best."
        statements = [s for s in statements if s in events or told.says_of(s, subject)]
    # "Lesson: X. <the story>": the author's label says which sentence is the point.
    labelled = [s for s in statements if insights.LABEL.match(insights.plain(s.text))]
    chosen = (
        labelled + [s for s in ranked if s not in labelled]
        or sorted(statements, key=lambda s: -s.strength)[:1]
    )
    kept = [s for s in statements if s in chosen[:NEWS_SENTENCES]]
    parts = [clauses.gist(insights.strip_label(insights.plain(s.text)), subject) for s in kept]
    value = (1 + clauses.recent(ranked[0].text)) if ranked else 0
    return join_clauses([p for p in parts if p]), value


def join_clauses(parts: Sequence[str]) -> str:
    """Statements joined into one line, each followed by the semicolon of its own language."""
    if not parts:
        return ""
    joined = [f"{p}{'；' if insights.is_chinese(p) else '; '}" for p in parts[:-1]]
    return "".join(joined) + parts[-1]


def ahead_of(entries: Sequence[notes.Entry], end: dt.date) -> tuple[dt.date, str, notes.Entry] | None:
    """The soonest day after the period that one of ``entries`` names (a thread still open), the
    words that name it, and the entry."""
    from vault_tools.recall.upcoming import dates_of

    found = [(day, phrase, e) for e in entries for day, phrase in dates_of(e) if day > end]
    return min(found, key=lambda t: t[0]) if found else None


def sentence_naming(entry: notes.Entry, phrase: str) -> str | None:
    """The sentence of ``entry`` that holds ``phrase`` (tags and fields off), when it is shorter."""
    for sentence in insights.sentences(insights.body_text(entry)):
        if phrase in sentence:
            flat = insights.plain(sentence.lstrip("-*+ "))
            return flat if len(flat) < len(insights.plain(entry.text)) else None
    return None


#: A summary says in at most this share of the words what the period's notes state (their
#: sentences less questions, pleasantries and words to the listener): what happened, not the
#: week's lines again.
SUMMARY_SHARE = 0.38
SUMMARY_MIN_WORDS = 80  # a quiet week's few bullets are all kept


def word_budget(stated: int) -> int:
    """How many words a summary may spend, its notes stating ``stated`` words (a month as its
    weeks: halving it measured as a month of open threads and little else)."""
    return max(SUMMARY_MIN_WORDS, round(SUMMARY_SHARE * stated))


def statement_words(entry: notes.Entry) -> int:
    """How many words ``entry`` states (CJK characters count as half a word each)."""
    read = insights.entry_sentences(entry)
    return sum(words(s.text) for s in read if s.usable)


def words(text: str) -> int:
    return len(text.split()) + len(similarity.CJK_CHAR.findall(text)) // 2


def within_budget(bullets: list[Bullet], budget: int) -> list[Bullet]:
    """The bullets that matter most (:func:`budget_order`) whose words fit ``budget``, each kept
    whole. A bullet that joins its person's costs its words, one that stands alone its link too;
    one that mostly says again what is already kept of its person or topic is left out."""
    ranked = sorted(bullets, key=budget_order)
    kept: list[Bullet] = []
    said: dict[str, set[str]] = {}
    spent = 0
    chat = [density(b) for b in bullets if said_in_a_chat(b) and b.section != "open"]
    floor = LEAST_WORTH * max(chat, default=0.0)
    for bullet in ranked:
        if said_in_a_chat(bullet) and bullet.section != "open" and density(bullet) < floor:
            continue  # chatter: says little next to the period's news, even when words are left
        content = salience.content_words(bullet.text)
        before = said.setdefault(bullet.topic, set())
        repeated = content and new_share(content, before) < NEW_SHARE
        if kept and repeated and bullet.section != "open":
            continue  # the same thing again
        cost = words(bullet.text) + (1 if bullet.person else 2)
        if spent + cost <= budget or not kept:
            kept.append(bullet)
            spent += cost
            remember(before, content)
    chosen = {id(b) for b in kept}  # by identity: comparing bullets field by field is quadratic
    return [b for b in bullets if id(b) in chosen]


#: In a chat, a clause worth less per word than this share of the period's best is chatter
#: ("gonna make it", "it's been a wild ride"): left out even when the budget has words left.
LEAST_WORTH = 0.2
#: A statement joins the summary only when at least this share of its content words is not yet
#: in what is kept of its person or topic.
NEW_SHARE = 0.5


def budget_order(bullet: Bullet) -> tuple[bool, bool, float, float, dt.date, str]:
    """Which bullets the budget takes first: open threads; then, of a chat, the clauses worth most
    per word; of notes, the news (events, decisions, plans, lessons, preferences): a person's
    statements by worth per word (they share their entry's score), a topic's bullets the
    heartbeat's strongest first, then by worth per word."""
    opened = bullet.section != "open"
    if said_in_a_chat(bullet):
        return (opened, False, -density(bullet), 0.0, first_day(bullet), bullet.text)
    if bullet.person:
        return (opened, not bullet.news, -density(bullet), -bullet.score, first_day(bullet), bullet.text)
    return (opened, not bullet.news, -bullet.score, -density(bullet), first_day(bullet), bullet.text)


def new_share(content: frozenset[str], before: set[str]) -> float:
    """The share of ``content`` (content words and CJK bigrams) not in ``before`` (see
    :func:`remember`). A bigram made of characters already said is not new ("豆豆这只灰狗" after
    "一只叫豆豆的灰狗": 这只 is)."""
    new = [w for w in content - before if not similarity.CJK_CHAR.match(w) or any(c not in before for c in w)]
    return len(new) / len(content)


def remember(before: set[str], content: frozenset[str]) -> None:
    """Add ``content`` to what is said, and the CJK characters of its bigrams."""
    before |= content
    before.update(c for word in content for c in word if similarity.CJK_CHAR.match(c))


def said_in_a_chat(bullet: Bullet) -> bool:
    """Whether ``bullet`` comes from turns of a conversation. In a chat the past tense is
    everywhere ("it made me realize"), so an event is one weight of a clause's worth; in a
    person's own notes a sentence that tells an event is the news, and goes first."""
    return any(e.speaker for e in bullet.sources)


def density(bullet: Bullet) -> float:
    """What a reader learns from ``bullet`` per word it costs."""
    return bullet.worth / (words(bullet.text) + 1)


#: What one person did in the period becomes one bullet (what a topic did: one per section), at
#: most this many statements in the order they were said; more start another bullet.
MERGE_AT_MOST = 30


def same_thing(a: Bullet, b: Bullet) -> bool:
    """Whether ``b`` joins ``a``'s bullet: the same person (any section but open threads) or the
    same topic and section, and no date ahead."""
    if not a.topic or a.topic != b.topic or a.ahead or b.ahead:
        return False
    return a.section == b.section or (a.person and "open" not in (a.section, b.section))


def merge_same_things(bullets: list[Bullet], by_week: bool = False) -> list[Bullet]:
    """One bullet per person, or per topic and section (``by_week``: and per week, so a month's
    summary says what happened to someone week by week, not in one long line): their statements
    joined, in the order said (a statement that repeats one already there adds only its sources)."""
    ordered = sorted(bullets, key=lambda b: (first_day(b), min(e.start_line for e in b.sources)))
    if by_week:  # in date order, so each week's bullets come together
        weeks = itertools.groupby(ordered, key=lambda b: first_day(b).isocalendar()[:2])
        return [merged for _week, week_bullets in weeks for merged in merge_same_things(list(week_bullets))]
    groups: list[list[Bullet]] = []
    for bullet in ordered:
        home = next((g for g in groups if len(g) < MERGE_AT_MOST and same_thing(g[-1], bullet)), None)
        if home is None:
            groups.append([bullet])
        elif not any(repeats(bullet.text, b.text) for b in home):
            home.append(bullet)
        else:  # the same news again: one clause, citing both
            home.append(dataclasses.replace(bullet, text=""))
    return [joined(group) for group in groups]


def repeats(a: str, b: str) -> bool:
    """Whether two statements say the same (near-duplicates by their words)."""
    return similarity.jaccard(similarity.tokens(a), similarity.tokens(b)) >= 0.7


def joined(group: list[Bullet]) -> Bullet:
    if len(group) == 1:
        return group[0]
    first = group[0]
    sources = tuple({e.id: e for b in group for e in b.sources}.values())
    text = join_clauses([b.text for b in group if b.text])
    section = first.section if all(b.section == first.section for b in group) else "events"
    score = max(b.score for b in group)
    return dataclasses.replace(first, section=section, text=text, score=score, sources=sources)


def select(bullets: list[Bullet], period: Period, budget: int | None = None) -> list[Bullet]:
    """The most important bullets of each section, grouped by topic (see the module docstring)."""
    factor = 2 if period.kind == "month" else 1
    if budget is not None:
        bullets = merge_same_things(within_budget(bullets, budget), by_week=period.kind == "month")
    chosen: list[Bullet] = []
    for section in SECTIONS:
        members = [b for b in bullets if b.section == section]
        members.sort(key=lambda b: (-b.score, -len(b.sources), -bool(b.topic), first_day(b), b.text))
        members = members[: WEEK_LIMITS[section] * factor]
        best: dict[str, float] = {}
        order: dict[str, int] = {}
        for number, bullet in enumerate(members):
            best.setdefault(bullet.topic, bullet.score)
            order.setdefault(bullet.topic, number)
        members.sort(key=lambda b: (-best[b.topic], order[b.topic], first_day(b), -b.score))
        chosen += members
    return chosen


def first_day(bullet: Bullet) -> dt.date:
    return min((e.date for e in bullet.sources if e.date), default=dt.date.min)


def language_of(entries: Sequence[notes.Entry]) -> str:
    chinese = sum(insights.is_chinese(e.text) for e in entries)
    return "zh" if entries and chinese * 2 > len(entries) else "en"


def visibility_of(entries: Sequence[notes.Entry]) -> str:
    """``shared`` only when every entry read is shared (DESIGN rule 5); else ``personal``."""
    return "shared" if entries and all(e.visibility == "shared" for e in entries) else "personal"


def main_topics(entries: Sequence[notes.Entry], limit: int = 4) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for entry in entries:
        topic = topic_of(entry)
        if topic and topic in {t.rstrip("/") for t in insights.inline_tags(entry.raw)}:
            counts[topic] = counts.get(topic, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [(topic, count) for topic, count in ranked[:limit] if count > 1]


# ---------------------------------------------------------------------------------------------
# Rendering


def note_link(entry: notes.Entry, language: str) -> str:
    """An Obsidian link to the entry: its block, else its heading, else its note."""
    name = entry.rel_path.rsplit("/", 1)[-1].removesuffix(".md")
    label = day_label(entry.date, language) if entry.date else name
    if entry.block_id:
        return f"[[{name}#^{entry.block_id}|{label}]]"
    heading = entry.section.strip()
    if heading and not LINK_UNSAFE.search(heading):
        return f"[[{name}#{heading}|{label}]]"
    return f"[[{name}|{label}]]"


def bullet_line(bullet: Bullet, language: str) -> str:
    sources = sorted(bullet.sources, key=lambda e: (e.date or dt.date.min, e.rel_path, e.start_line))
    links = list(dict.fromkeys(note_link(e, language) for e in sources))
    shown = ", ".join(links[:MAX_LINKS]) + (f" +{len(links) - MAX_LINKS}" if len(links) > MAX_LINKS else "")
    if bullet.person:
        topic = f"**{bullet.topic}**：" if language == "zh" else f"**{bullet.topic}**: "
    else:
        topic = f"**{topic_label(bullet.topic)}** · " if bullet.topic else ""
    text = clauses.strip_media(" ".join(bullet.text.split()))
    if bullet.ahead is not None and bullet.section == "open":
        weekday = "一二三四五六日"[bullet.ahead.weekday()]
        when = f"周{weekday} " if language == "zh" else f"{bullet.ahead.strftime('%a')}, "
        text += f" → {when}{day_label(bullet.ahead, language)}"
    return f"- {topic}{text} ({shown})"


def overview(summary: Summary) -> str:
    """The line a question about the period finds first: how much, about what, what came of it."""
    counts = {s: sum(1 for b in summary.bullets if b.section == s) for s in SECTIONS}
    names = ("、" if summary.language == "zh" else ", ").join(
        f"{topic_label(t)} ({n})" for t, n in summary.topics
    )
    if summary.language == "zh":
        parts = [f"共 {summary.entries} 条记录，来自 {summary.notes} 篇日记。"]
        if names:
            parts.append(f"主要话题：{names}。")
        tally = [f"{counts[k]} {word}" for k, word in OUTCOMES_ZH if counts[k]]
        return "".join(parts) + ("，".join(tally) + "。" if tally else "")
    plural = "y" if summary.entries == 1 else "ies"
    parts = [f"{summary.entries} entr{plural} from {summary.notes} daily note{'s' * (summary.notes != 1)}."]
    if names:
        parts.append(f"Most about: {names}.")
    tally = [f"{counts[k]} {word}{'s' * (counts[k] != 1)}" for k, word in OUTCOMES_EN if counts[k]]
    if tally:
        parts.append(", ".join(tally) + ".")
    return " ".join(parts)


OUTCOMES_EN: tuple[tuple[SectionKey, str], ...] = (
    ("decisions", "decision"),
    ("lessons", "lesson"),
    ("open", "open thread"),
)
OUTCOMES_ZH: tuple[tuple[SectionKey, str], ...] = (
    ("decisions", "项决定"),
    ("lessons", "条教训"),
    ("open", "件待办与后续"),
)


def render_summary(summary: Summary) -> str:
    """The file's text, ``generated_hash`` included (a hash of every other line)."""
    period = summary.period
    front = [
        "---",
        "type: summary",
        f"period: {period.name}",
        f"from: {period.start.isoformat()}",
        f"to: {period.end.isoformat()}",
        f"entries: {summary.entries}",
        f"notes: {summary.notes}",
        f"visibility: {summary.visibility}",
        "tags: [summary]",
        f"generator: {note_edit.yaml_scalar(summary.generator)}",
        f"{HASH_KEY}: @",
        "---",
    ]
    body = [f"# {period.title(summary.language)}", "", overview(summary)]
    for section in SECTIONS:
        members = [b for b in summary.bullets if b.section == section]
        if members:
            body += ["", f"## {HEADINGS[summary.language][section]}", ""]
            body += [bullet_line(b, summary.language) for b in members]
    text = "\n".join([*front, *body]) + "\n"
    return text.replace(f"{HASH_KEY}: @", f"{HASH_KEY}: {content_hash(text)}", 1)
