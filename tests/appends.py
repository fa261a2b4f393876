"""Random saves of a note for the append properties (test_note_tail, test_index_tail): appends of
every shape the parser cares about, and edits that are not appends."""

from __future__ import annotations

import random

FRONT_MATTER = "---\ndate: 2026-03-20\ntags: [daily]\n---\n"
WORDS = ["heron", "otter", "deploy", "postgres", "kiwi", "walrus", "部署", "数据库", "乌龙茶", "上周"]

# Appends: each a function of (rng, n) giving the text to append; the parser's cases are all here:
# a new bullet, a continuation of the last one (indented, after blank lines, lazy), a heading, a
# paragraph, a fence opened and closed, a private or shared line (they are not neighbours of
# everything), a speaker, a duplicate line, a line that an append turns into a heading.


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.sample(WORDS, 3)) + f" w{n}"


APPENDS = {
    "bullet": lambda rng, n: f"- {rng.randrange(24):02d}:{rng.randrange(60):02d} {_words(rng, n)}\n",
    "chinese": lambda rng, n: f"- 朋友说{rng.choice(WORDS)}很好 第{n}条\n",
    "continuation": lambda rng, n: f"  and more about {_words(rng, n)}\n",
    "blank then indented": lambda rng, n: f"\n\n  indented after blanks {n}\n",
    "lazy line": lambda rng, n: f"lazy continuation {n}\n",
    "heading": lambda rng, n: f"\n## Section {n % 3}\n- under a new heading {_words(rng, n)}\n",
    "paragraph": lambda rng, n: f"\nA paragraph {_words(rng, n)}\nits second line\n",
    "fence open": lambda rng, n: f"```\ncode {n}\n",
    "fence close": lambda rng, n: "```\n",
    "private": lambda rng, n: f"- secret {n} #private\n",
    "shared": lambda rng, n: f"- for everyone {_words(rng, n)} #shared\n",
    "speaker": lambda rng, n: f"- **Alice**: what about {_words(rng, n)}?\n- **Bob**: ok {n}\n",
    "duplicate": lambda rng, n: "- the same line every time\n",
    "fields": lambda rng, n: f"- item {n} [importance:: 0.{n % 10}] ^b-{n}\n",
    "blank": lambda rng, n: "\n",
    "partial": lambda rng, n: f"- 10:{n % 60:02d} half a line {n}",  # no line ending: the next save ends it
    "hash only": lambda rng, n: "#",  # with " Title\n" next it is a heading
    "rule": lambda rng, n: "---\n",
}


def base_note(rng: random.Random, entries: int, *, front_matter: bool = True) -> str:
    lines = [FRONT_MATTER if front_matter else "", "# 2026-03-20\n\n## Morning\n"]
    for n in range(entries):
        lines.append(APPENDS[rng.choice(["bullet", "bullet", "chinese", "continuation", "private"])](rng, n))
    return "".join(lines)


def random_append(rng: random.Random, text: str, n: int) -> tuple[str, str]:
    """(the shape, the text with something appended)."""
    if not text.endswith("\n"):  # a partial last line: end it (or not yet)
        shape = rng.choice(["end the line", "end the line", "continue the line"])
        return shape, text + (" Title\n" if shape == "end the line" and text.endswith("#") else f" {n}\n")
    shape = rng.choice(list(APPENDS))
    return shape, text + APPENDS[shape](rng, n)


def random_edit(rng: random.Random, text: str, n: int) -> tuple[str, str]:
    """(the shape, the text edited so that the old one is not a prefix of it)."""
    lines = text.splitlines(keepends=True)
    shape = rng.choice(["insert mid-file", "delete a line", "edit the last line", "front matter"])
    body = next((i + 1 for i, line in enumerate(lines) if line.startswith("# ")), 0)
    if shape == "front matter" and text.startswith("---"):
        lines.insert(1, rng.choice(["visibility: shared\n", "tags: [birds]\n", f"mood: m{n}\n"]))
    elif shape == "insert mid-file" or len(lines) < body + 3:
        lines.insert(rng.randrange(body, len(lines) + 1), f"- 09:00 inserted {n}\n")
    elif shape == "delete a line":
        del lines[rng.randrange(body, len(lines))]
    else:
        lines[-1] = f"- replaced last line {n}\n"
    return shape, "".join(lines)


def crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")
