"""What a person's entries tell a week's summary (summaries/told.py): news with content first,
the same thing once, in English and Chinese."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from helpers import write

from vault_tools.config import load_config
from vault_tools.notes.model import read_note
from vault_tools.summaries import text as summary_text
from vault_tools.summaries import told
from vault_tools.summaries.text import Period
from vault_tools.summaries.write import Options, summarize


def summary_bullets(vault: Path, notes: dict[str, str], week: str = "2026-W10") -> list[str]:
    for day, text in notes.items():
        write(vault / "memory" / f"{day}.md", text)
    period = Period.parse(week)
    summarize(load_config(vault), Options(period=period, as_of=period.end + dt.timedelta(days=1)))
    text = (vault / "memory/summaries" / f"{week}.md").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.startswith("- ")]


FILLER_EN = [
    "It's been a wild ride but I'm gonna make it.",
    "Won't quit, even when it's hard.",
    "Gonna keep pushing and make my dreams come true.",
    "Moments like this remind me why I keep going.",
    "Honestly I'm feeling hopeful about everything lately.",
]


def chat(lines: list[tuple[str, str]], day: str = "2026-03-04") -> dict[str, str]:
    turns = "".join(f"- 19:00 **{who}**: {text}\n" for who, text in lines)
    return {day: f"---\ndate: {day}\n---\n## 19:00 · Chat\n\n{turns}"}


@pytest.fixture
def busy_week(monkeypatch: pytest.MonkeyPatch) -> None:
    """The share of the notes' words a summary may spend, without the floor that keeps all of a
    quiet week: these chats stand for a busy week's."""
    monkeypatch.setattr(summary_text, "SUMMARY_MIN_WORDS", 0)


@pytest.mark.usefixtures("busy_week")
def test_a_chat_week_keeps_the_news_with_content_and_leaves_out_resolve(tmp_path: Path) -> None:
    """Under a tight budget a person's bullet says what happened (a new job, a place, a name), not
    their pep talk, however many lines of it they said."""
    lines: list[tuple[str, str]] = [("Priya", "Hey Tomas! How was your week?")]
    lines += [("Tomas", "I signed the lease for a bakery on Elm Street in Leeds yesterday!")]
    for filler in FILLER_EN:
        lines += [("Priya", "That's great, Tomas!"), ("Tomas", filler)]
    lines += [("Priya", "I adopted a greyhound named Biscuit from the shelter in Harrogate.")]
    lines += [("Tomas", "Thanks for asking, Priya! Next month I open the bakery with my brother Idris.")]
    for filler in FILLER_EN:
        lines += [("Priya", f"So true, Tomas. {filler}")]
    bullets = summary_bullets(tmp_path / "chat", chat(lines))
    tomas = next(b for b in bullets if b.startswith("- **Tomas**: "))
    priya = next(b for b in bullets if b.startswith("- **Priya**: "))
    assert "signed the lease for a bakery on Elm Street in Leeds yesterday" in tomas
    assert "open the bakery with my brother Idris" in tomas
    assert "adopted a greyhound named Biscuit from the shelter in Harrogate" in priya
    for resolve in ("gonna make it", "Won't quit", "remind me", "Thanks", "Priya"):
        assert resolve not in tomas
    assert "That's great" not in priya and "So true" not in priya


FILLER_ZH = [
    "最近真的挺累的，但是我会坚持下去。",
    "不管多难都不会放弃的。",
    "我相信一切都会好起来的。",
    "每天都在努力，希望梦想成真。",
    "有时候想想，还是觉得很值得。",
]


def test_a_chinese_chat_week_keeps_the_news_with_content(tmp_path: Path) -> None:
    """Resolve and hope (坚持下去、不会放弃、梦想成真) say nothing specific: the week's statements
    are the news alone, and its summary keeps them and nothing else."""
    lines: list[tuple[str, str]] = [("小周", "阿梅，最近怎么样？")]
    lines += [("阿梅", "我昨天在杭州西湖边租下了一间面包店！")]
    for filler in FILLER_ZH:
        lines += [("小周", "太好了，阿梅！"), ("阿梅", filler)]
    lines += [("小周", "我上周从昆明的救助站领养了一只叫豆豆的猫。")]
    lines += [("阿梅", "谢谢关心，小周！下个月和我哥哥一起开张。")]
    bullets = summary_bullets(tmp_path / "zh-chat", chat(lines))
    amei = next(b for b in bullets if b.startswith("- **阿梅**："))
    zhou = next(b for b in bullets if b.startswith("- **小周**"))  # an English week: "**小周**: "
    assert "昨天在杭州西湖边租下了一间面包店" in amei
    assert "下个月和我哥哥一起开张" in amei
    assert "领养了一只叫豆豆的猫" in zhou
    for resolve in ("坚持下去", "不会放弃", "好起来", "梦想成真", "谢谢", "小周"):
        assert resolve not in amei
    assert "太好了" not in zhou


def test_the_same_news_twice_is_said_once(tmp_path: Path) -> None:
    """A person who tells the same thing twice in other words gets it once in their bullet (lines
    said twice on different days are one insight already: this is two sentences of one turn)."""
    lines = [
        (
            "Tomas",
            "I adopted a rescue greyhound named Biscuit on Saturday. "
            "So yes, Biscuit the rescue greyhound is now mine since Saturday.",
        ),
        ("Priya", "Oh lovely! What's he like?"),
        ("Tomas", "I started evening classes in Portuguese at the library."),
        ("小周", "我周六在救助站领养了一只叫豆豆的灰狗。对，豆豆这只救助站的灰狗从周六起归我了。"),
    ]
    bullets = summary_bullets(tmp_path / "twice", chat(lines))
    tomas = next(b for b in bullets if b.startswith("- **Tomas**: "))
    zhou = next(b for b in bullets if b.startswith("- **小周**"))  # an English week: "**小周**: "
    assert tomas.count("greyhound") == 1 and "Portuguese" in tomas
    assert zhou.count("灰狗") == 1


def test_a_quiet_weeks_chatter_is_left_out_though_words_are_left(tmp_path: Path) -> None:
    """The budget of a quiet week has room for every line; a summary still says the news only."""
    lines = [
        ("Tomas", "I started evening classes in Portuguese at the library."),
        ("Tomas", "Moments like this remind me why I keep going."),
        ("Tomas", "Glad that you are on my side."),
        ("小周", "我上周从昆明的救助站领养了一只叫豆豆的猫。"),
        ("Tomas", "I'm so glad your bakery in Leeds keeps busy."),  # about the listener
        ("小周", "有时候想想，还是觉得很值得。"),
        ("小周", "我真替你的面包店高兴，生意这么好。"),
    ]
    bullets = summary_bullets(tmp_path / "quiet", chat(lines))
    assert any("evening classes in Portuguese" in b for b in bullets)
    assert any("领养了一只叫豆豆的猫" in b for b in bullets)
    for chatter in ("remind me", "on my side", "bakery", "值得", "面包店"):
        assert not any(chatter in b for b in bullets)


def test_rare_words_weigh_more_than_the_weeks_small_talk() -> None:
    """A word said in few of the period's entries is specific; one said in most is small talk."""
    rarity = told.Rarity({"week": 9, "bakery": 1}, 10)
    assert rarity.weight(["bakery"]) > 3 * rarity.weight(["week"])
    assert told.worth("signed the lease for the bakery", True, rarity) > told.worth(
        "signed the lease for the bakery", False, rarity
    )


def test_a_statement_that_says_again_what_is_kept_brings_little_new() -> None:
    """New content is counted in words, and in Chinese in bigrams with a character not said yet
    (the bigrams where two said words meet are not news)."""
    from vault_tools.curation.salience import content_words
    from vault_tools.summaries.text import NEW_SHARE, new_share, remember

    kept: set[str] = set()
    remember(kept, content_words("周六在救助站领养了一只叫豆豆的灰狗"))
    assert new_share(content_words("豆豆这只救助站的灰狗从周六起归我了"), kept) < NEW_SHARE
    assert new_share(content_words("周日去山里露营，带上了豆豆"), kept) > NEW_SHARE
    kept = set()
    remember(kept, content_words("adopted a rescue greyhound named Biscuit on Saturday"))
    assert new_share(content_words("Biscuit the rescue greyhound is mine since Saturday"), kept) < NEW_SHARE
    assert new_share(content_words("started evening classes in Portuguese"), kept) > NEW_SHARE


def test_a_months_summary_tells_a_persons_weeks_apart(tmp_path: Path) -> None:
    """A month gives a person a bullet per week they said something in, each citing its own
    note, in the order they happened: not one line that runs through the whole month."""
    weeks = {
        "2026-03-03": [
            ("Tomas", "I signed the lease for a bakery on Elm Street in Leeds."),
            ("Priya", "我领养了一只叫豆豆的灰狗。"),
        ],
        "2026-03-17": [
            ("Tomas", "We opened the bakery with my brother Idris on Saturday."),
            ("Priya", "我带豆豆去哈罗盖特参加比赛，跑了第一名。"),
        ],
    }
    notes: dict[str, str] = {}
    for day, lines in weeks.items():
        notes |= chat(lines, day)
    bullets = summary_bullets(tmp_path, notes, week="2026-03")
    tomas = [b for b in bullets if b.startswith("- **Tomas**")]
    priya = [b for b in bullets if b.startswith("- **Priya**")]
    assert len(tomas) == len(priya) == 2
    assert "lease" in tomas[0] and "[[2026-03-03|" in tomas[0] and "2026-03-17" not in tomas[0]
    assert "opened the bakery" in tomas[1] and "[[2026-03-17|" in tomas[1]
    assert "灰狗" in priya[0] and "第一名" in priya[1]


@pytest.mark.usefixtures("busy_week")
def test_notes_about_a_person_keep_the_statements_worth_most_per_word(tmp_path: Path) -> None:
    """Short notes an agent writes about someone: under a tight budget the week's events with
    content go in before a long line the heartbeat scores high (#remember) but that says little."""
    lines = [
        "Priya said that her whole family always thought that the old house on the hill was a wonderful "
        "and important place for all of them, and that it still means a great deal to everyone #remember",
        "Priya signed the lease for a bakery on Elm Street in Leeds.",
        "Priya ran the Leeds half marathon in 1:52.",
        "The weather was grey all week.",
    ]
    body = "".join(f"- {9 + n}:00 {line}\n" for n, line in enumerate(lines))
    bullets = summary_bullets(tmp_path, {"2026-03-04": f"---\ndate: 2026-03-04\n---\n## Notes\n\n{body}"})
    text = "\n".join(bullets)
    assert "lease for a bakery" in text and "half marathon" in text
    assert "old house" not in text


@pytest.mark.parametrize(
    ("person", "long", "short"),
    [
        (
            "小林",
            "说他们全家一直都觉得山上那座老房子是个很重要、很有意义的地方，大家到现在都很怀念",
            ["签了面包店的租约", "跑了半程马拉松"],
        ),
        (
            "Priya",
            "said the old house on the hill still means a great deal to the whole family",
            ["signed the lease", "ran a half marathon"],
        ),
    ],
)
def test_a_persons_statements_are_budgeted_by_worth_per_word_not_by_their_entrys_score(
    tmp_path: Path, person: str, long: str, short: list[str]
) -> None:
    """The statements of notes about a person share their entry's score, so the score cannot tell
    them apart: the budget takes them by what they tell per word."""
    note = tmp_path / "memory" / "2026-03-04.md"
    write(note, "- 09:00 a note\n")
    (entry,) = read_note(note, tmp_path).entries

    def statement(text: str, score: float, worth: float) -> summary_text.Bullet:
        return summary_text.Bullet("events", person, text, score, (entry,), person=True, worth=worth)

    bullets = [statement(long, 0.9, 2.0), *(statement(text, 0.5, 3.0) for text in short)]
    budget = sum(summary_text.words(text) + 1 for text in short)
    kept = [b.text for b in summary_text.within_budget(bullets, budget)]
    assert kept == short


@pytest.mark.parametrize(
    ("guess", "marker"),
    [
        ("I bet you were thrilled when everything finally worked out!", "thrilled"),
        ("我猜你终于搬进了新家。", "新家"),
        ("So glad to hear you finally moved into the new flat in Porto!", "Porto"),
    ],
)
def test_a_guess_about_the_listener_is_not_news_of_the_speaker(
    tmp_path: Path, guess: str, marker: str
) -> None:
    """ "I bet you…", 我猜你…: what the speaker imagines of the listener, though it tells of
    something that happened, is not what happened to the speaker."""
    lines = [("Tomas", "I signed the lease for a bakery on Elm Street in Leeds."), ("Priya", guess)]
    lines += [("Priya", "我领养了一只叫豆豆的灰狗。")]
    bullets = "\n".join(summary_bullets(tmp_path, chat(lines)))
    assert "signed the lease for a bakery" in bullets and "灰狗" in bullets
    assert marker not in bullets
