"""Sensitive text: where secrets and personal data are in a text, in English and Chinese, and redaction.

:func:`find_sensitive` finds them. Findings of kind ``secret`` (API keys, tokens, private keys) and
``credential`` (passwords, PINs, passwords in connection strings) have severity ``secret``;
government ids, card and account numbers, phone numbers, e-mail addresses, postal addresses and
health data have severity ``sensitive``. Patterns with a checksum are validated (Luhn for cards,
mod-97 for IBANs, the check digit and birth date of a Chinese resident id) so that order numbers,
dates, versions and timestamps are not mistaken for them; a keyword next to the number
(``身份证号``, ``account number``) is enough on its own. Placeholders (``sk-...``,
``your-api-key-here``, ``$OPENAI_API_KEY``, ``********``) are not secrets. A password is found in
the words people write it ("my password is swordfish", "password for the NAS: …", "pw: x", a
passphrase of plain words, PINs and door codes, 密码是…, 口令是…, 密码改成了…) unless what follows
the key word reads as prose about the password ("the password is required", "密码是什么"). A
health finding covers its whole clause ("对花生过敏" hides the peanut too); a secret found once is
found wherever else it is repeated. :func:`redact` replaces each finding with
``[REDACTED:<kind>]`` and re-scans its own output until nothing is found.

The detectors of personal data (ids, cards, accounts, phones, addresses, health) are
:mod:`vault_tools.privacy.personal`; those of secrets and credentials are here. Chinese written in
Traditional characters is read as Simplified (:func:`vault_tools.chinese.fold_cjk`).

The policies built on these findings (what may be promoted, what may reach a model) are
:mod:`vault_tools.privacy.rules`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from vault_tools.chinese import fold_cjk
from vault_tools.privacy import personal
from vault_tools.privacy.patterns import Detector, Span
from vault_tools.privacy.patterns import lazy_pattern as _re

Severity = Literal["secret", "sensitive"]

KINDS: tuple[str, ...] = (
    "secret",
    "credential",
    "government_id",
    "card_number",
    "account_number",
    "phone",
    "email",
    "address",
    "health",
)
SECRET_KINDS = frozenset({"secret", "credential"})

PLACEHOLDER = _re(r"\[REDACTED:[a-z_]+\]")
_RANK = {kind: index for index, kind in enumerate(KINDS)}


@dataclass(frozen=True)
class Finding:
    """One piece of sensitive text: its kind, where it is (``text[start:end]``) and how bad it is."""

    kind: str
    start: int
    end: int
    text: str
    severity: Severity


# ---------------------------------------------------------------------------------------------
# Value checks


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _char_classes(value: str) -> int:
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
        )
    )


_PLACEHOLDER_HINT = _re(
    r"(?<![a-z])(?:your|example|placeholder|dummy|redacted)|(?<![a-z])here(?![a-z])"
    r"|xxxx|\.\.\.|\*\*\*|[<>{}$%]|environ|getenv",
    re.IGNORECASE,
)
_SAME_CHAR = _re(r"^(.)\1*$")


def _placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER_HINT.search(value)) or bool(_SAME_CHAR.match(value))


def _random_enough(value: str, min_len: int = 8) -> bool:
    """A key or token: long enough, more than one kind of character or high entropy, no placeholder."""
    if len(value) < min_len or _placeholder(value):
        return False
    if len(value) >= 16 and _entropy(value) < 2.5:
        return False
    return _char_classes(value) >= 2 or (len(value) >= 16 and _entropy(value) >= 3.5)


def _key_like(value: str) -> bool:
    """A value after ``secret:`` or ``token=``: random enough, with a digit unless it is long."""
    return _random_enough(value, 8) and (any(c.isdigit() for c in value) or len(value) >= 16)


def _strongly_random(value: str) -> bool:
    """A bare token next to a key word: letters and digits, long, high entropy."""
    has_letter = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    return has_letter and has_digit and _random_enough(value, 20) and _entropy(value) >= 3.3


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that follow "password:" or "password is" in prose about passwords rather than being one.
_ABOUT_PASSWORDS = _words(
    """
    required optional none null nil empty hidden masked unknown unset same reset changed expired
    protected saved stored manager strength policy length hash hashed encrypted secret password
    passwords passwd pass pwd passphrase pin string text value input field true false yes no tbd
    todo fixme sample test changeme needed missing invalid incorrect wrong correct weak strong
    blank default generated random good bad fine ok okay great long short simple easy hard
    complex complicated secure insecure safe unsafe sensitive insensitive valid right different
    new old temporary permanent known obvious common unique shared public private personal
    memorable guessable unguessable compromised leaked expiring working broken locked unlocked
    forgotten lost useless strict mandatory enabled disabled case characters chars digits letters
    symbols words numbers minimum maximum min max expire expires change update rotate enough
    1password bitwarden lastpass keepass keepassxc keychain dashlane vault
    """
)
# Words that never start a password: articles, pronouns, prepositions, auxiliaries, adverbs.
_FUNCTION_WORDS = _words(
    """
    a an the my your his her our their its this that these those it one i you he she we they me
    mine yours ours theirs in on at to for from with without by of about under over inside behind
    near into onto and or but not nor is was be been being are were has have had will would
    should could can may might must shall do does did also still now then just really very too
    quite pretty super so never always only probably definitely actually basically literally
    somewhere something nothing anything everything elsewhere there here what which who whom
    whose where when why how whatever whichever again already almost even ever more most less
    least much many some any all each every no yet as than like via per if unless until
    """
)
# A word after a password that ends its sentence's business: "my password is swordfish now".
_TAIL_WORDS = _words(
    """
    now btw fyi again today yesterday tonight tomorrow lol haha though too and but so for from
    since until till which don't dont please just if when ok okay
    """
)
_PARTICIPLE = _re(r"[a-z]{3,}(?:ed|ing|ly)", re.IGNORECASE)
_CLAUSE_STOP = _re(r"[#^.,;:!?()\[\]{}\"\n\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]|[ \t]-[ \t]|\u2014")
_PHRASE_WORDS = 7  # a passphrase of more words reads as a sentence


def _password_placeholder(value: str) -> bool:
    """``********``, ``<password>``, ``$PASS``, ``-``: a stand-in rather than a password."""
    if _PLACEHOLDER_HINT.search(value) or not any(c.isalnum() for c in value):
        return True
    return len(value) >= 2 and bool(_SAME_CHAR.match(value))


def _password_like(value: str) -> bool:
    """A password inside a connection string (which holds no "/"): not a placeholder or a word
    about passwords."""
    return len(value) >= 4 and not _placeholder(value) and value.lower() not in _ABOUT_PASSWORDS


def _prose_word(word: str) -> bool:
    lowered = word.lower()
    return lowered in _ABOUT_PASSWORDS or lowered in _FUNCTION_WORDS or bool(_PARTICIPLE.fullmatch(word))


def _clause_after(text: str, position: int) -> str:
    """What follows ``position`` up to the end of its clause (punctuation, a dash, Chinese text)."""
    stop = _CLAUSE_STOP.search(text, position)
    return text[position : stop.start() if stop else len(text)]


def _password_span(text: str, start: int, end: int, value: str) -> tuple[int, int] | None:
    """Where the password that follows ``password:`` / ``password is`` is, or None for prose.

    ``value`` (``text[start:end]``) is the first word after the separator. A word with digits or
    symbols is a password ("hunter2-Staging!"). A plain word is one unless it reads as prose
    ("required", "in", "expired", "the"), and so are the plain words after it up to the end of
    the clause when none of them reads as prose: "correct horse battery staple".
    """
    if _password_placeholder(value) or value.startswith(("/", "~/", "./", "http://", "https://")):
        return None  # "pwd: /home/me" is a directory, a URL is a link
    clause = _clause_after(text, end)
    words = clause.split()
    settled = not words or words[0].lower() in _TAIL_WORDS
    if not value.isalpha():
        if value.lower() in _ABOUT_PASSWORDS:
            return None
        # "password: 12 characters minimum" is a rule; a long value stands whatever follows it
        return (start, end) if len(value) >= 4 or settled else None
    if value.lower() in _FUNCTION_WORDS:
        return None
    phrase = 0 < len(words) < _PHRASE_WORDS and all(w.isalpha() and not _prose_word(w) for w in words)
    phrase_end = end + len(clause.rstrip())
    if _prose_word(value):  # "the password is correct", but "correct horse battery staple"
        return (start, phrase_end) if phrase and len(words) >= 2 else None
    if settled:
        return start, end
    return (start, phrase_end) if phrase else None


# "!" and "?" stay: they end passwords more often than they end a sentence right after one.
_TRAILING_PUNCT = ".,;:)]}>'\"`"


# ---------------------------------------------------------------------------------------------
# Detectors: each yields (start, end, kind) spans of the text it is given


# Keys with a recognisable prefix; group "body" is the random part that must look random.
_KEY_PATTERNS = tuple(
    _re(pattern)
    for pattern in (
        r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-|ant-(?:api|admin)\d\d-)?(?P<body>[A-Za-z0-9_-]{20,})",
        r"(?<![A-Za-z0-9_])gh[pousr]_(?P<body>[A-Za-z0-9]{30,})",
        r"(?<![A-Za-z0-9_])github_pat_(?P<body>[A-Za-z0-9_]{22,})",
        r"(?<![A-Za-z0-9])xox[abposr]-(?P<body>[A-Za-z0-9-]{10,})",
        r"(?<![A-Z0-9])(?:AKIA|ASIA)(?P<body>[A-Z0-9]{16})(?![A-Z0-9])",
        r"(?<![A-Za-z0-9_-])AIza(?P<body>[A-Za-z0-9_-]{35})(?![A-Za-z0-9_-])",
        r"(?<![A-Za-z0-9])glpat-(?P<body>[A-Za-z0-9_-]{20,})",
        r"(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_(?P<body>[A-Za-z0-9]{16,})",
        r"(?<![A-Za-z0-9])whsec_(?P<body>[A-Za-z0-9]{24,})",
    )
)
# Credentials in an HTTP header: only the value is the secret.
_HEADER_PATTERNS = tuple(
    _re(pattern)
    for pattern in (
        r"(?i:\bBearer)[ \t]+(?P<body>[A-Za-z0-9._~+/-]{16,}=*)",
        r"(?i:\bAuthorization)[ \t]*[:=][ \t]*(?:(?i:basic|bearer|token|digest)[ \t]+)?(?P<body>[A-Za-z0-9._~+/-]{8,}=*)",
    )
)
_JWT = _re(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*")
_PEM = _re(
    r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:[\s\S]*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|[ \t]*\r?\n[A-Za-z0-9+/=\s:,-]*)"
)
_BASE64_RUN = _re(r"[A-Za-z0-9+/=]{20,}")
_CONNECTION = _re(
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@?#]{1,64}:(?P<body>[^\s@/?#]{1,128})@[A-Za-z0-9\[]"
)

# An unquoted value: printable ASCII up to a comma, a quote or the next "&key=" / ";key=" pair.
_BARE_VALUE = r"(?:(?![,'\"`]|[;&][\w .-]{0,40}=)[!-~]){1,200}"
_SECRET_WORDS = (
    r"api[ _-]?key|apikey|access[ _-]?key(?:[ _-]?id)?|secret[ _-]?access[ _-]?key|secret[ _-]?key"
    r"|private[ _-]?key|client[ _-]?secret|(?:auth|access|refresh|bearer|api|session)[ _-]?token"
    r"|token|secret"
)
_CODE_WORDS = r"pin(?:[ _-]?code)?|(?:door|gate|alarm|garage|safe|lockbox|keypad|entry|unlock)[ _-]?code"
_PASSWORD_WORDS = rf"password|passwd|passphrase|passcode|pwd|pw|{_CODE_WORDS}"
# What a key word is of, between it and the separator: "the DB password for staging: …".
_QUALIFIER = r"[ \t]+(?:for|of|to|on|at)(?:[ \t]+[\w'.-]{1,30}){1,4}?"
_SEPARATOR = (
    r"\*{0,2}[ \t]*(?:::|:=|=>|->|[:=：])[ \t]*"  # password: x, **pw**: x, [password:: x]
    r"|[ \t]+(?:(?:is|was|has[ \t]+been|got)[ \t]+)?(?:now[ \t]+)?(?:changed|set|reset|updated)[ \t]+to[ \t]+"
    r"|(?:'s|\u2019s|[ \t]+(?:is|was))(?:[ \t]+(?:now|still|currently|actually|just))?[ \t]*[:：]?[ \t]+"
    r"|[ \t]+(?P<to>to)[ \t]+"  # "set the password to x": only after a verb of setting
    r"|[ \t]*[是为][ \t]*"  # "我的password是hunter2"
)
# A key name such as OPENAI_API_KEY, db.password or "API key", then a separator, then the value.
_KEY_VALUE = _re(
    r"(?<![A-Za-z0-9])(?P<key>(?:[A-Za-z0-9]{1,40}[_.-]){0,4}?"
    rf"(?P<word>{_SECRET_WORDS}|{_PASSWORD_WORDS})(?P<suffix>(?:[_.-][A-Za-z0-9]{{1,40}}){{0,4}}))"
    r"(?![A-Za-z0-9])"
    rf"(?:{_QUALIFIER})?(?P<sep>{_SEPARATOR})"
    rf"(?P<value>\"[^\"\n]{{1,200}}\"|'[^'\n]{{1,200}}'|`[^`\n]{{1,200}}`|{_BARE_VALUE})",
    re.IGNORECASE,
)
_SETTING_VERB = _re(
    r"\b(?:change|changed|changing|set|setting|reset|update|updated|switch|switched)\b[^.;!?\n]*$"
)
_NOT_A_KEY_NAME = _re(
    r"(?:^|[_.-])(?:max|min|limit|count|budget|length|len|size|policy|field|hint|type|expiry|expires"
    r"|url|uri|path|file|name|usage|endpoint|env|var|header|param|format|prompt)(?:$|[_.-])",
    re.IGNORECASE,
)
_CN_KEY_VALUE = _re(
    r"(?P<word>密码|口令|暗号|密钥|秘钥|私钥|令牌|验证码|(?i:pin)码|开锁码|解锁码|门禁码)"
    r"(?P<sep>[ \t]*(?:(?:都|也|还|就|仍然|依然|一直)?[是为][ \t]*[:：]?|[:：=]"
    r"|(?:被)?(?:改|换|设|设置|重置|更改|修改)(?:成|为)了?)[ \t]*)"
    rf"(?P<value>\"[^\"\n]{{1,200}}\"|'[^'\n]{{1,200}}'|“[^”\n]{{1,200}}”|「[^」\n]{{1,200}}」|{_BARE_VALUE}"
    r"|[\u4e00-\u9fff][\u4e00-\u9fff0-9A-Za-z]{0,23})"
)
_CN_SECRET_WORDS = frozenset({"密钥", "秘钥", "私钥", "令牌"})
_CN_CODE_WORDS = frozenset({"开锁码", "解锁码", "门禁码"})
# What follows "密码是" in prose about a password: a question, a pronoun, a description.
_CN_PROSE = _re(
    r"^(?:我|你|他|她|它|咱|您|这|那|空|错|对|不|没|无|必|要|需要|应|可以|能|会|在|见|和|跟|与|同|一样"
    r"|相同|默认|原来|原先|之前|以前|旧|新的|初始|自动|随机|正确|多|少|太|很|挺|非常|比较|够|足够|强|弱"
    r"|简单|复杂|长|短|几|数字|字母|大写|小写|符号|特殊|一串|一个|一些|点|按|请|用|去|找|问|看|查|输入|设置)"
    r"|什么|啥|多少|哪|吗|呢|么|位|字符"
)
_CN_UNIT_AFTER = _re(r"[0-9]+[ \t]*(?:位|个|次|天|周|月|年|字|分钟|小时|秒)")
# A key word, up to three short words, then a long random token: "api key for prod 8f3a9b…".
_NEAR_KEY = _re(
    rf"(?<![A-Za-z0-9])(?P<word>{_SECRET_WORDS}|password|passwd|passphrase|密钥|秘钥|私钥|令牌|密码|口令)"
    r"(?:[ \t]*[:：=是为][ \t]*|[ \t]+)(?:[^\s:：=]{1,20}[ \t]+){0,3}?"
    r"(?P<value>[A-Za-z0-9+/_=-]{20,})(?![A-Za-z0-9+/_=-])",
    re.IGNORECASE,
)


def _clean_value(match: re.Match[str]) -> tuple[int, int, str]:
    """The value group without quotes and trailing punctuation, with its position."""
    start, end = match.span("value")
    value = match.group("value")
    if value[:1] in "\"'`" and value[-1:] == value[:1] and len(value) >= 2:
        return start + 1, end - 1, value[1:-1]
    stripped = value.rstrip(_TRAILING_PUNCT)
    return start, start + len(stripped), stripped


def _scan(
    pattern: re.Pattern[str], text: str, accept: Callable[[re.Match[str]], Span | None]
) -> Iterator[Span]:
    """Every accepted match; after a rejected one the search resumes one character later."""
    position = 0
    while position <= len(text):
        match = pattern.search(text, position)
        if match is None:
            return
        span = accept(match)
        if span is not None:
            yield span
            position = max(match.end(), match.start() + 1)
        else:
            position = match.start() + 1


def _keys(text: str) -> Iterator[Span]:
    for pattern in _KEY_PATTERNS:
        for match in pattern.finditer(text):
            if _random_enough(match.group("body"), 8):
                yield match.start(), match.end(), "secret"
    for pattern in _HEADER_PATTERNS:
        for match in pattern.finditer(text):
            if _random_enough(match.group("body"), 8):
                yield match.start("body"), match.end("body"), "secret"
    for match in _JWT.finditer(text):
        yield match.start(), match.end(), "secret"
    for match in _PEM.finditer(text):
        if _BASE64_RUN.search(match.group()):
            yield match.start(), match.end(), "secret"


def _connection_strings(text: str) -> Iterator[Span]:
    for match in _CONNECTION.finditer(text):
        body = match.group("body")
        if _password_like(body):
            yield match.start("body"), match.end("body"), "credential"


def _code_like(value: str) -> bool:
    """A PIN or a door code: four to ten digits, a keypad's ``#`` or ``*`` around them."""
    digits = value.strip("#*")
    return digits.isdigit() and 4 <= len(digits) <= 10


def _accept_key_value(match: re.Match[str]) -> Span | None:
    word = match.group("word").lower()
    affixes = match.group("key")[: match.start("word") - match.start("key")] + match.group("suffix")
    if _NOT_A_KEY_NAME.search(affixes):
        return None
    text = match.string
    if match.group("to") and not _SETTING_VERB.search(text, max(0, match.start() - 40), match.start()):
        return None  # "the password to the NAS" names it; "set the password to x" gives it
    start, end, value = _clean_value(match)
    quoted = start > match.start("value")
    if re.fullmatch(_CODE_WORDS, word, re.IGNORECASE):
        return (start, end, "credential") if _code_like(value) else None
    if re.fullmatch(_PASSWORD_WORDS, word, re.IGNORECASE):
        if quoted:  # 'the password is "password"': a quoted value is the password itself
            return (start, end, "credential") if value and not _password_placeholder(value) else None
        span = _password_span(text, start, end, value)
        return (*span, "credential") if span else None
    return (start, end, "secret") if _key_like(value) else None


def _key_values(text: str) -> Iterator[Span]:
    yield from _scan(_KEY_VALUE, text, _accept_key_value)


def _accept_cn_key_value(match: re.Match[str]) -> Span | None:
    start, end, value = _clean_value(match)
    word = match.group("word")
    if word in _CN_SECRET_WORDS:
        return (start, end, "secret") if _key_like(value) else None
    if word in _CN_CODE_WORDS or word.lower() == "pin码":
        return (start, end, "credential") if _code_like(value) else None
    if start > match.start("value"):  # quoted
        return (start, end, "credential") if value and not _password_placeholder(value) else None
    if _HAN.match(value):  # "口令是芝麻开门", but not "密码是什么" or "密码是我的生日"
        value = value.rstrip("了的啊呀哦啦")
        if len(value) < 2 or _CN_PROSE.search(value):
            return None
        return start, start + len(value), "credential"
    if _password_placeholder(value) or value.lower() in _ABOUT_PASSWORDS:
        return None
    if _CN_UNIT_AFTER.match(match.string, start):  # "密码是8位的" is a rule
        return None
    return start, end, "credential"


def _cn_key_values(text: str) -> Iterator[Span]:
    yield from _scan(_CN_KEY_VALUE, text, _accept_cn_key_value)


def _near_keys(text: str) -> Iterator[Span]:
    def accept(match: re.Match[str]) -> Span | None:
        if _strongly_random(match.group("value")):
            word = match.group("word").lower()
            kind = "credential" if word.startswith("pass") or word in ("密码", "口令") else "secret"
            return match.start("value"), match.end("value"), kind
        return None

    yield from _scan(_NEAR_KEY, text, accept)


# Every pattern of a guarded detector matches only text holding its guard (an ASCII digit, as
# ``\d`` is ASCII here; a Han character for the Chinese key words), so a text without it is
# skipped whole: a question such as "what did we decide about auth?" is checked by six of the
# eleven detectors, and the others' patterns (8 of the 16 ms of compiling them all) are not even
# compiled in a process that never sees a digit. tests/test_privacy.py checks the guards.
_DIGIT = re.compile(r"[0-9]")
_HAN = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True)
class _Guarded:
    """``detect``, run only on a text that ``needs`` matches."""

    needs: re.Pattern[str]
    detect: Detector

    def __call__(self, text: str) -> Iterator[Span]:
        return self.detect(text) if self.needs.search(text) else iter(())


DETECTORS: tuple[Detector, ...] = (
    _keys,
    _connection_strings,
    _key_values,
    _Guarded(_HAN, _cn_key_values),
    _near_keys,
    _Guarded(_DIGIT, personal.government_ids),
    _Guarded(_DIGIT, personal.cards_and_accounts),
    _Guarded(_DIGIT, personal.phones),
    personal.emails,
    _Guarded(_DIGIT, personal.addresses),
    personal.health,
)


# ---------------------------------------------------------------------------------------------
# Finding, redacting


def _mask_placeholders(text: str) -> str:
    """Our own placeholders become NULs of the same length: nothing matches them or across them."""
    return PLACEHOLDER.sub(lambda m: "\x00" * len(m.group()), text)


def _repeats(text: str, spans: Iterable[Span]) -> Iterator[Span]:
    """Every other occurrence of a secret already found: "password: hunter22 … hunter22"."""
    seen: set[str] = set()
    for start, end, kind in spans:
        value = text[start:end]
        if kind not in SECRET_KINDS or len(value) < 4 or value in seen:
            continue
        seen.add(value)
        position = text.find(value)
        while position != -1:
            yield position, position + len(value), kind
            position = text.find(value, position + 1)


def _merge(text: str, spans: Iterable[Span]) -> list[Finding]:
    """Overlapping spans become one finding over their union, of the most severe kind among them."""
    merged: list[Span] = []
    for start, end, kind in sorted(spans):
        if end <= start:
            continue
        if merged and start < merged[-1][1]:
            last_start, last_end, last_kind = merged[-1]
            worst = kind if _RANK[kind] < _RANK[last_kind] else last_kind
            merged[-1] = (last_start, max(last_end, end), worst)
        else:
            merged.append((start, end, kind))
    return [
        Finding(kind, start, end, text[start:end], "secret" if kind in SECRET_KINDS else "sensitive")
        for start, end, kind in merged
    ]


def find_sensitive(text: str) -> list[Finding]:
    """Every secret and piece of sensitive information in ``text``, in order, not overlapping.

    Text already redacted by :func:`redact` is not found again: placeholders match nothing.
    Traditional Chinese is read as Simplified, one character for one ("密碼是…" is "密码是…").
    """
    masked = fold_cjk(_mask_placeholders(text))
    spans = [span for detect in DETECTORS for span in detect(masked)]
    spans.extend(list(_repeats(masked, spans)))
    return _merge(text, spans)


def is_secret(text: str) -> bool:
    """Whether ``text`` holds a secret or a credential."""
    return any(f.severity == "secret" for f in find_sensitive(text))


def is_sensitive(text: str) -> bool:
    """Whether ``text`` holds anything :func:`find_sensitive` finds, secrets included."""
    return bool(find_sensitive(text))


def _replace(text: str, findings: list[Finding]) -> str:
    parts: list[str] = []
    position = 0
    for finding in findings:
        parts.append(text[position : finding.start])
        parts.append(f"[REDACTED:{finding.kind}]")
        position = finding.end
    parts.append(text[position:])
    return "".join(parts)


_REDACT_ROUNDS = 64


def redact(text: str, *, secrets_only: bool = False) -> str:
    """``text`` with every finding replaced by ``[REDACTED:<kind>]``; what goes to a language model.
    ``secrets_only``: secrets and credentials alone, the rest as written (what an agent is handed
    in a direct chat, where a phone number or an allergy is what the person asked about).

    The result is scanned again until nothing is found: a removal can create a word boundary that
    exposes its neighbour ("…901account number 555…"). Each round replaces at least one character
    that is not a placeholder, so this ends; past ``_REDACT_ROUNDS`` (only for text built to chain
    like that) a text that still holds a secret is withheld whole.
    """
    current = text
    for _round in range(_REDACT_ROUNDS):
        findings = [f for f in find_sensitive(current) if f.severity == "secret" or not secrets_only]
        if not findings:
            return current
        current = _replace(current, findings)
    if is_secret(current):
        return "[REDACTED:secret]"
    return current


def describe_kinds(findings: Iterable[Finding]) -> str:
    """The kinds of ``findings``, most severe first: "credential, phone"."""
    return ", ".join(sorted({f.kind for f in findings}, key=_RANK.__getitem__))
