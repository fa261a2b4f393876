"""Token counts for budgets (``--max-tokens``), estimated without a tokenizer's vocabulary.

Why an estimate: tiktoken downloads its BPE files at run time, and vault-tools works offline.
The estimate walks the text once and charges each run of characters by what it is:

* CJK (Han, kana, hangul): :data:`CJK_PER_CHAR` tokens per character. cl100k splits most Chinese
  characters into one or two byte-level pieces (about 1.2 a character on our notes); o200k holds
  many common words as one token (about 0.8).
* A word of letters: one token, plus one for every :data:`CHARS_PER_EXTRA_PIECE` characters past
  the first :data:`WORD_CHARS_FREE` (long or rare words split into pieces). A word of letters
  outside ASCII (``Bürgeramt``) pays :data:`NON_ASCII_WORD_EXTRA` more, as its bytes merge less.
* A run of digits: one token per :data:`DIGITS_PER_TOKEN` digits (both vocabularies split
  numbers into groups of at most three).
* Punctuation and symbols: one token each (an emoji counts as two); whitespace is free: it is
  merged into the following word's token.

Calibration (``python bench/token_calibration.py``, against ``cl100k_base`` and ``o200k_base``
through the offline ``bpe-openai`` package, which embeds the vocabularies). The constants were
fitted to cl100k, the more expensive of the two for Chinese, so a budget is rarely overrun:

| corpus (entries)        | total, est/cl100k | total, est/o200k | entries within ±15% / ±25% of cl100k |
|-------------------------|-------------------|------------------|--------------------------------------|
| sample vault (138)      | 0.97              | 1.14             | 82% / 97%                            |
| generated vault (3300)  | 1.02              | 1.22             | 84% / 96%                            |
| handmade notes (50)     | 0.94              | 1.36             | 70% / 92%                            |

So: corpus totals within ±6% of cl100k and 14-36% above o200k; a single entry is within ±25% of
cl100k nine times in ten.
"""

from __future__ import annotations

import re

__all__ = ["count_tokens", "count_words", "truncate_to_tokens"]

CJK_PER_CHAR = 1.2
WORD_CHARS_FREE = 7
CHARS_PER_EXTRA_PIECE = 4
NON_ASCII_WORD_EXTRA = 1.0
DIGITS_PER_TOKEN = 3
#: Chinese is written without spaces; segmented running text averages about 1.5-1.7 characters a
#: word, so a budget in words charges CJK text by its characters at this rate.
CJK_CHARS_PER_WORD = 1.6

_CJK = (
    "\u3040-\u30ff\u3100-\u312f\u31a0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f\uff66-\uff9f\U00020000-\U0003134f"
)
_CJK_RUN = re.compile(f"[{_CJK}]+")
# One alternative per kind of run, tried in this order.
_RUN = re.compile(
    rf"(?P<cjk>[{_CJK}]+)"
    r"|(?P<digits>\d+)"
    rf"|(?P<word>[^\W\d_{_CJK}]+)"
    r"|(?P<space>\s+)"
    r"|(?P<emoji>[\U0001F000-\U0001FAFF\u2600-\u27BF])"
    r"|(?P<other>.)",
    re.DOTALL,
)


def _word_cost(word: str) -> float:
    extra = max(0, len(word) - WORD_CHARS_FREE)
    cost = 1.0 + -(-extra // CHARS_PER_EXTRA_PIECE)
    if not word.isascii():
        cost += NON_ASCII_WORD_EXTRA
    return cost


def _costs(text: str) -> list[tuple[int, float]]:
    """(end offset, running total) after each run of ``text``."""
    total = 0.0
    out: list[tuple[int, float]] = []
    for match in _RUN.finditer(text):
        kind = match.lastgroup
        run = match.group()
        if kind == "cjk":
            total += CJK_PER_CHAR * len(run)
        elif kind == "digits":
            total += -(-len(run) // DIGITS_PER_TOKEN)
        elif kind == "word":
            total += _word_cost(run)
        elif kind == "emoji":
            total += 2.0
        elif kind == "other":
            total += 1.0
        out.append((match.end(), total))
    return out


def count_tokens(text: str) -> int:
    """Estimated number of LLM tokens in ``text`` (see the module docstring for the model)."""
    if not text:
        return 0
    costs = _costs(text)
    return round(costs[-1][1]) if costs else 0


def count_words(text: str) -> int:
    """Words in ``text`` as a budget counts them: what whitespace separates, and CJK text at
    :data:`CJK_CHARS_PER_WORD` characters a word ("我上个月搬到了杭州" is not one word)."""
    cjk = sum(len(run) for run in _CJK_RUN.findall(text))
    other = [word for word in _CJK_RUN.sub(" ", text).split() if any(ch.isalnum() for ch in word)]
    return len(other) + round(cjk / CJK_CHARS_PER_WORD)


def truncate_to_tokens(text: str, max_tokens: int, *, ellipsis: str = "…") -> str:
    """The longest prefix of ``text`` that fits ``max_tokens`` (with ``ellipsis`` when cut).

    Cuts at a run boundary (never inside a word), and inside a CJK run at a character.
    """
    if max_tokens <= 0:
        return ""
    if count_tokens(text) <= max_tokens:
        return text
    budget = max_tokens - count_tokens(ellipsis)
    cut = 0
    previous_end = 0
    previous_total = 0.0
    for end, total in _costs(text):
        if total <= budget:
            cut, previous_end, previous_total = end, end, total
            continue
        run = text[previous_end:end]
        if re.fullmatch(f"[{_CJK}]+", run):
            room = int((budget - previous_total) // CJK_PER_CHAR)
            cut = previous_end + max(0, room)
        break
    return text[:cut].rstrip() + ellipsis
