"""Personal data in a text: government ids, card and account numbers, phone numbers, e-mail and
postal addresses, health, in English and Chinese (Simplified; :mod:`vault_tools.privacy.sensitive`
folds Traditional first). Each detector yields ``(start, end, kind)`` spans; numbers with a checksum
are validated (Luhn for cards, mod-97 for IBANs, the check digit and birth date of a Chinese
resident id), and a keyword next to a number is enough on its own.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator

from vault_tools.privacy.patterns import Span
from vault_tools.privacy.patterns import lazy_pattern as _re

__all__ = ["addresses", "cards_and_accounts", "emails", "government_ids", "health", "phones"]


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        number = int(char)
        if index % 2:
            number = number * 2 - 9 if number > 4 else number * 2
        total += number
    return total % 10 == 0


def _iban_valid(value: str) -> bool:
    compact = value.replace(" ", "")
    if not 15 <= len(compact) <= 34:
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def _cn_id_valid(value: str) -> bool:
    """The check digit (ISO 7064 MOD 11-2) and the birth date of an 18-character resident id."""
    if len(value) != 18 or not value[:17].isdigit():
        return False
    check = "10X98765432"[sum(int(d) * w for d, w in zip(value[:17], _ID_WEIGHTS, strict=True)) % 11]
    if value[17].upper() != check:
        return False
    try:
        born = dt.date(int(value[6:10]), int(value[10:12]), int(value[12:14]))
    except ValueError:
        return False
    return dt.date(1900, 1, 1) <= born


def _digit_count(value: str) -> int:
    return sum(c.isdigit() for c in value)


_SSN = _re(r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])")
_SSN_KEYWORD = _re(
    r"(?:\bSSN|\bsocial security(?: number| no\.?)?)[ \t]*(?:#|:|is)?[ \t]*(?P<value>\d{3}[- ]?\d{2}[- ]?\d{4})(?!\d)",
    re.IGNORECASE,
)
_CN_ID = _re(
    r"(?<![0-9A-Za-z])[1-9]\d{5}(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx](?![0-9A-Za-z])"
)
# 身份证 (mainland: 18 or 15 digits) and 身分證字號 (Taiwan: a letter, 1/2 or 8/9, then 8 digits;
# only after its name, as its shape alone is that of many order numbers).
_CN_ID_KEYWORD = _re(
    r"身[份分]证(?:字号|号码|号)?[ \t]*(?:是|为|[:：])?[ \t]*"
    r"(?P<value>\d{17}[\dXx]|\d{15}|[A-Z][1289]\d{8})(?![0-9A-Za-z])"
)
_PASSPORT = _re(
    r"(?:\bpassport|护照)(?:[ \t]*(?:no\.?|number|num|#|号码|号))?[ \t]*(?:is|是|为|[:：#])?[ \t]*"
    r"(?P<value>[A-Z]{1,2}\d{6,9}|\d{8,9})(?![0-9A-Za-z])",
    re.IGNORECASE,
)


def government_ids(text: str) -> Iterator[Span]:
    for match in _SSN.finditer(text):
        yield match.start(), match.end(), "government_id"
    for pattern in (_SSN_KEYWORD, _CN_ID_KEYWORD, _PASSPORT):
        for match in pattern.finditer(text):
            yield match.start("value"), match.end("value"), "government_id"
    for match in _CN_ID.finditer(text):
        if _cn_id_valid(match.group()):
            yield match.start(), match.end(), "government_id"


_CARD = _re(r"(?<![\d.#-])[2-6]\d{3}(?:[ -]?\d){9,15}(?!\d)(?![.-]\d)")
_IBAN = _re(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?(?![A-Za-z0-9])")
_ACCOUNT = _re(
    r"(?:\baccount(?:[ \t]*(?:number|num|no\.?))?|\bacct\.?(?:[ \t]*(?:number|no\.?))?|\brouting(?:[ \t]*number)?"
    r"|银行卡号?|银行账号|银行帐号|账号|帐号|账户|帐户|卡号)"
    r"[ \t]*(?:is|是|为|[:：#])?[ \t]*(?P<value>\d(?:[ -]?\d){5,33})(?!\d)",
    re.IGNORECASE,
)


def cards_and_accounts(text: str) -> Iterator[Span]:
    for match in _CARD.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and _luhn(digits):
            yield match.start(), match.end(), "card_number"
    for match in _IBAN.finditer(text):
        if _iban_valid(match.group()):
            yield match.start(), match.end(), "account_number"
    for match in _ACCOUNT.finditer(text):
        yield match.start("value"), match.end("value"), "account_number"


_PHONE_PATTERNS = tuple(
    _re(pattern)
    for pattern in (
        # Chinese mobile, optionally +86 / 0086
        r"(?<![\d+#])(?:(?:\+|00)86[ -]?)?1[3-9]\d(?:[ -]?\d{4}){2}(?!\d)",
        # international: +<country> and groups
        r"(?<![\w+])\+\d{1,3}[ -]?(?:\(\d{1,4}\)[ -]?)?\d{1,4}(?:[ -]?\d{2,4}){1,4}(?!\d)",
        # North American (555) 123-4567, 555-123-4567, 555.123.4567
        r"(?<![\d(])\(\d{3}\)[ ]?\d{3}[-. ]\d{4}(?!\d)",
        r"(?<![\d.-])\d{3}-\d{3}-\d{4}(?![\d-])",
        r"(?<![\d.])\d{3}\.\d{3}\.\d{4}(?![\d.])",
        # Chinese landline 010-12345678
        r"(?<![\d-])0\d{2,3}-\d{7,8}(?![\d-])",
    )
)
_PHONE_KEYWORD = _re(
    r"(?:\b(?:phone|telephone|tel|mobile|cell|fax)|电话|手机号?|座机|联系方式)"
    r"(?:[ \t]*(?:number|no\.?|号码|号))?[ \t]*(?:is|是|为|[:：])?[ \t]*(?P<value>\+?\d[\d ()-]{5,18}\d)(?!\d)",
    re.IGNORECASE,
)


def phones(text: str) -> Iterator[Span]:
    for pattern in _PHONE_PATTERNS:
        for match in pattern.finditer(text):
            if 7 <= _digit_count(match.group()) <= 15:
                yield match.start(), match.end(), "phone"
    for match in _PHONE_KEYWORD.finditer(text):
        if _digit_count(match.group("value")) >= 7:
            yield match.start("value"), match.end("value"), "phone"


_EMAIL = _re(
    r"(?<![\w.+-])(?P<local>[A-Za-z0-9][A-Za-z0-9._%+-]{0,63})@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![A-Za-z0-9-])"
)
_NOT_PERSONAL_MAILBOX = frozenset({"git", "noreply", "no-reply", "donotreply"})


def emails(text: str) -> Iterator[Span]:
    for match in _EMAIL.finditer(text):
        word_start = max(text.rfind(" ", 0, match.start()), text.rfind("\n", 0, match.start())) + 1
        if "://" in text[word_start : match.start()]:
            continue  # user:password@host in a URL, not a mailbox
        if match.group("local").lower() not in _NOT_PERSONAL_MAILBOX:
            yield match.start(), match.end(), "email"


_STREET = (
    r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace"
    r"|Parkway|Pkwy|Highway|Hwy|Circle|Cir|Square|Sq|Alley|Crescent|Close)"
)
_UNIT = r"(?:Apt|Apartment|Suite|Ste|Unit|Room|Rm|Floor|Fl|#)\.?[ \t]*#?[A-Za-z0-9-]{1,6}\b"
_EN_ADDRESS = _re(
    rf"(?<![\w#.-])\d{{1,6}}[A-Za-z]?(?:[ \t]+(?:North|South|East|West|[NSEW]\.?))?"
    rf"(?:[ \t]+(?:[A-Z][a-z'-]+|\d+(?:st|nd|rd|th))){{1,4}}[ \t]+{_STREET}\b\.?"
    rf"(?:[ \t]+(?:NW|NE|SW|SE|N|S|E|W)\b)?(?:,?[ \t]*{_UNIT})?"
)
_EN_UNIT = _re(
    r"(?<![\w#])(?:Apt|Apartment)\.?[ \t]*#?\d{1,5}[A-Za-z]?\b|\bP\.?[ \t]?O\.?[ \t]+Box[ \t]+\d{1,6}\b"
)
_HAN_NAME = r"(?:(?![在住是的到去从于往和与及我你他她们搬家送寄址为了把给就也都还这那里])[\u4e00-\u9fff])"
_CN_ADDRESS = _re(
    rf"(?:{_HAN_NAME}{{2,7}}?(?:省|自治区|特别行政区))?"
    rf"(?:{_HAN_NAME}{{1,7}}?市)?"
    rf"(?:{_HAN_NAME}{{1,7}}?(?:区|县|旗))?"
    rf"(?:{_HAN_NAME}{{1,8}}?(?:镇|乡|街道|村))?"
    rf"{_HAN_NAME}{{1,10}}?(?:路|街|大道|巷|胡同|弄)"
    # Taiwan writes a road's section and its lanes and alleys: 复兴南路一段 390 号, 四段 216 巷 27 弄 16 号
    r"(?:[一二三四五六七八九十0-9]{1,3}段)?(?:[ \t]*\d{1,5}[ \t]*(?:巷|弄))*"
    r"[ \t]*\d{1,5}(?:-\d{1,5})?[ \t]*号(?![线码])"
    rf"(?:[ \t]*{_HAN_NAME}{{1,8}}?(?:小区|大厦|花园|公寓|中心|广场|院))?"
    r"(?:[ \t]*\d{1,5}[ \t]*(?:号楼|栋|幢|座|单元|层|楼|室|户))*"
)
_CN_ESTATE = _re(
    rf"{_HAN_NAME}{{2,10}}?(?:小区|花园|公寓|大厦|家园|新村|社区|苑)[ \t]*\d{{1,4}}[ \t]*(?:号楼|栋|幢|座|期)"
    r"(?:[ \t]*\d{1,4}[ \t]*(?:单元|层|楼))*(?:[ \t]*\d{1,5}[ \t]*(?:室|号|户)?)?"
)
_CN_UNIT = _re(
    r"(?<!\d)\d{1,4}[ \t]*(?:号楼|栋|幢)[ \t]*(?:\d{1,3}[ \t]*单元[ \t]*)?\d{2,5}[ \t]*(?:室|号|户)?"
)


def addresses(text: str) -> Iterator[Span]:
    for pattern in (_EN_ADDRESS, _EN_UNIT, _CN_ADDRESS, _CN_ESTATE, _CN_UNIT):
        for match in pattern.finditer(text):
            yield match.start(), match.end(), "address"


_HEALTH = _re(
    r"\b(?:diagnosed with|medical diagnosis|prescri(?:bed|ption|ptions)|medications?|meds|dosage"
    r"|allerg(?:y|ies|ic)|anaphyla\w*|antidepressants?|depression|depressed|anxiety (?:disorder|attacks?)"
    r"|panic attacks?|adhd|bipolar|schizophreni\w*|diabet(?:es|ic)|cancer|tumou?rs?|chemo(?:therapy)?"
    r"|hiv|hepatitis|asthma|epilep\w*|migraines?|insomnia|pregnan(?:t|cy)|miscarriage|blood pressure"
    r"|hypertension|cholesterol|insulin|surgery|therapist|psychiatrist|therapy sessions?|rehab"
    r"|sick leave|hospitali[sz]ed|doctor'?s appointment|blood test)\b"
    r"|\b\d+(?:\.\d+)?[ \t]?(?:mg|mcg)\b"
    r"|过敏|确诊|诊断为|诊断出|(?<![毛语通弊])病(?!毒|句)|(?<![火弹炸农解])药(?!方)|抑郁|忧郁症|焦虑症|血压|血糖"
    r"|怀孕|孕期|备孕|产检|流产|癌|肿瘤|化疗|手术|住院|病历|处方|剂量|体检|失眠|哮喘|心理咨询|精神科"
    r"|看医生|就医|复诊",
    re.IGNORECASE,
)
_CLAUSE_END = _re(r"[。！？；;!?\n,，]|\.(?=\s|$)")
_CLAUSE_REACH = 120


def health(text: str) -> Iterator[Span]:
    """Health words, widened to their clause: "对花生过敏" hides the peanut, not only the allergy."""
    for match in _HEALTH.finditer(text):
        left = max(0, match.start() - _CLAUSE_REACH)
        before = [m.end() for m in _CLAUSE_END.finditer(text, left, match.start())]
        start = before[-1] if before else left
        after = _CLAUSE_END.search(text, match.end(), match.end() + _CLAUSE_REACH)
        end = after.start() if after else min(len(text), match.end() + _CLAUSE_REACH)
        while start < match.start() and text[start].isspace():
            start += 1
        while end > match.end() and text[end - 1].isspace():
            end -= 1
        yield start, end, "health"
