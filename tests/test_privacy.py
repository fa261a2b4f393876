from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault_tools.errors import UsageError
from vault_tools.notes import model as notes
from vault_tools.privacy.rules import (
    CHATS,
    entry_visible,
    explicitly_marked,
    may_promote,
    may_send_to_llm,
    parse_chat,
    visible_in,
)
from vault_tools.privacy.sensitive import (
    DETECTORS,
    PLACEHOLDER,
    Finding,
    find_sensitive,
    is_secret,
    is_sensitive,
    redact,
)


def entries(
    tmp_path: Path, body: str, *, name: str = "memory/2026-03-10.md", front: str = ""
) -> list[notes.Entry]:
    path = tmp_path / "vault" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    header = f"---\n{front}\n---\n" if front else ""
    path.write_text(header + body, encoding="utf-8")
    return notes.read_note(path, tmp_path / "vault").entries


def entry(tmp_path: Path, body: str, *, name: str = "memory/2026-03-10.md", front: str = "") -> notes.Entry:
    (only,) = entries(tmp_path, body, name=name, front=front)
    return only


# ---------------------------------------------------------------------------------------------
# Chat contexts


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "direct"),
        ("", "direct"),
        ("   ", "direct"),
        ("direct", "direct"),
        ("DIRECT", "direct"),
        (" Direct ", "direct"),
        ("dm", "direct"),
        ("private", "direct"),
        ("group", "group"),
        ("Group", "group"),
        ("multi", "group"),
        ("multi-user", "group"),
        ("channel", "group"),
        ("unknown", "unknown"),
        ("UNKNOWN", "unknown"),
    ],
)
def test_parse_chat(value: str | None, expected: str) -> None:
    assert parse_chat(value) == expected
    assert parse_chat(value) in CHATS


@pytest.mark.parametrize("value", ["public", "groups", "direct-ish", "everyone", "*", "direct,group", "私聊"])
def test_parse_chat_rejects_anything_else(value: str) -> None:
    with pytest.raises(UsageError, match="direct, group, unknown"):
        parse_chat(value)


# ---------------------------------------------------------------------------------------------
# The visibility table: every chat x every kind x every visibility, as explicit rows


VISIBILITY_TABLE = [
    # chat, kind, visibility, visible
    ("direct", "daily", "personal", True),
    ("direct", "daily", "private", False),
    ("direct", "daily", "shared", True),
    ("direct", "memory", "personal", True),
    ("direct", "memory", "private", False),
    ("direct", "memory", "shared", True),
    ("direct", "note", "personal", True),
    ("direct", "note", "private", False),
    ("direct", "note", "shared", True),
    ("group", "daily", "personal", False),
    ("group", "daily", "private", False),
    ("group", "daily", "shared", True),
    ("group", "memory", "personal", False),
    ("group", "memory", "private", False),
    ("group", "memory", "shared", False),  # MEMORY.md is personal even when an item says #shared
    ("group", "note", "personal", False),
    ("group", "note", "private", False),
    ("group", "note", "shared", True),
    ("unknown", "daily", "personal", False),
    ("unknown", "daily", "private", False),
    ("unknown", "daily", "shared", True),
    ("unknown", "memory", "personal", False),
    ("unknown", "memory", "private", False),
    ("unknown", "memory", "shared", False),
    ("unknown", "note", "personal", False),
    ("unknown", "note", "private", False),
    ("unknown", "note", "shared", True),
]


def test_the_visibility_table_covers_every_combination() -> None:
    combos = {(c, k, v) for c, k, v, _ in VISIBILITY_TABLE}
    assert len(combos) == len(VISIBILITY_TABLE) == len(CHATS) * 3 * 3


@pytest.mark.parametrize(("chat", "kind", "visibility", "visible"), VISIBILITY_TABLE)
def test_visibility_table(chat: str, kind: str, visibility: str, visible: bool) -> None:
    assert visible_in(kind, visibility, parse_chat(chat)) is visible


@pytest.mark.parametrize(("chat", "kind", "visibility", "visible"), VISIBILITY_TABLE)
def test_include_private_opens_private_entries_to_the_owner_only(
    chat: str, kind: str, visibility: str, visible: bool
) -> None:
    widened = visible_in(kind, visibility, parse_chat(chat), include_private=True)
    owner_sees_private = chat == "direct" and visibility == "private"
    assert widened is (visible or owner_sees_private)


@pytest.mark.parametrize(
    ("kind", "visibility", "chat"),
    [
        ("daily", "public", "direct"),
        ("daily", "", "direct"),
        ("daily", "Shared", "group"),
        ("daily", "SHARED", "unknown"),
        ("archive", "shared", "group"),
        ("archive", "personal", "direct"),
        ("", "shared", "group"),
        ("daily", "shared", "everyone"),
        ("daily", "shared", ""),
        ("note", "personal", "Direct"),
    ],
)
def test_anything_the_rules_do_not_name_is_denied(kind: str, visibility: str, chat: str) -> None:
    assert visible_in(kind, visibility, chat) is False  # type: ignore[arg-type]


def test_entry_visible_on_real_notes(tmp_path: Path) -> None:
    daily = entries(
        tmp_path,
        "- 09:00 standup notes\n- 10:00 team lunch on Friday #shared\n- 11:00 therapy thoughts #private\n"
        "- 12:00 shared and private #shared #private\n- 13:00 opted in [visibility:: shared]\n",
    )
    assert [e.visibility for e in daily] == ["personal", "shared", "private", "private", "shared"]
    assert [entry_visible(e, "direct") for e in daily] == [True, True, False, False, True]
    assert [entry_visible(e, "direct", include_private=True) for e in daily] == [True] * 5
    assert [entry_visible(e, "group") for e in daily] == [False, True, False, False, True]
    assert [entry_visible(e, "unknown") for e in daily] == [False, True, False, False, True]

    shared_note = entries(
        tmp_path,
        "- plan for the offsite\n- except this #private\n",
        name="memory/2026-03-11.md",
        front="visibility: shared",
    )
    assert [entry_visible(e, "group") for e in shared_note] == [True, False]

    private_note = entries(
        tmp_path,
        "- tagged shared but the note is private #shared\n",
        name="memory/2026-03-12.md",
        front="visibility: private",
    )
    assert [entry_visible(e, "group") for e in private_note] == [False]
    assert [entry_visible(e, "direct") for e in private_note] == [False]
    assert [entry_visible(e, "direct", include_private=True) for e in private_note] == [True]

    memory = entries(
        tmp_path, "# Memory\n\n- 2026-03-10: team uses Postgres #shared\n- likes tea\n", name="MEMORY.md"
    )
    assert [e.kind for e in memory] == ["memory", "memory"]
    assert [entry_visible(e, "group") for e in memory] == [False, False]
    assert [entry_visible(e, "unknown") for e in memory] == [False, False]
    assert [entry_visible(e, "direct") for e in memory] == [True, True]


# ---------------------------------------------------------------------------------------------
# Detection: false positives


FALSE_POSITIVES = [
    "no API key needed",
    "set OPENAI_API_KEY in your env",
    "use sk-... as the key",
    "sk-...",
    "your-api-key-here",
    "api_key: your-api-key-here",
    "OPENAI_API_KEY=sk-...",
    "export OPENAI_API_KEY=$OPENAI_API_KEY",
    "token: ${GITHUB_TOKEN}",
    "Authorization: Bearer <token>",
    "password: ********",
    "password field is required",
    "the password is required",
    "reset your password via the link",
    "the token budget is 2000",
    "max_tokens=2000",
    "pin_memory=True",
    "the secret to good pasta is salt",
    "postgres://user:password@localhost/db",
    "密码要定期更换",
    "密码是什么？忘了",
    "用户名和密码都不能为空",
    "令牌桶算法限流",
    "version 1.2.3.4",
    "2026-03-10 09:15",
    "ISO timestamp 2026-03-10T09:15:00Z",
    "timestamp 1712345678901",
    "order #12345",
    "order #13812345678 shipped",
    "call at 10:30",
    "commit 3f9a2c1d",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "UUID 123e4567-e89b-12d3-a456-426614174000",
    "IP 192.168.1.100 port 5432",
    "pi is 3.14159265358979",
    "git clone git@github.com:org/repo.git",
    "pip install openai==1.40.0",
    "released v2.10.3 on 2026-03-10",
    "PR #4521 fixed the token counting bug",
    "Diagnosed the flaky test: a race in the watcher",
    "我知道3号要开会",
    "这里3号线很挤",
    "版本 3.2.1 发布了",
    "会议定在2026年3月10日 14:00",
    "这段代码有毛病",
    "电脑中了病毒",
    "Main Street is busy today",
    "my account settings page",
    "- 2026-03-10: Chose a vector database [importance:: 0.9] [source:: [[2026-03-10]]] ^m-3f9a2c",
    "review again [expires:: 2026-04-01]",
    "paid $1,234.56 and ¥5000",
    "10:00-11:30, then 2026-03-10 to 2026-03-17",
    "ISBN 978-3-16-148410-0",
    "3月10号开会",
    "ran pwd: /home/me",
]


def test_false_positive_corpus_is_large_enough() -> None:
    assert len(FALSE_POSITIVES) >= 30


@pytest.mark.parametrize("text", FALSE_POSITIVES)
def test_false_positives_are_not_flagged(text: str) -> None:
    assert find_sensitive(text) == []
    assert not is_secret(text)
    assert not is_sensitive(text)
    assert redact(text) == text


# ---------------------------------------------------------------------------------------------
# Passwords in prose: what people write, caught; what people write about passwords, left alone

PASSWORDS_IN_PROSE = [
    # (text, the password that must be found)
    ("my password is swordfish", "swordfish"),
    ("the DB password for staging: hunter2-Staging!", "hunter2-Staging!"),
    ("pw: x", "x"),
    ("wifi pw is hunter2", "hunter2"),
    ("passphrase is correct horse battery staple", "correct horse battery staple"),
    ("my passphrase: correct horse battery staple", "correct horse battery staple"),
    ("my PIN is 4821", "4821"),
    ("my password for the NAS is swordfish #homelab", "swordfish"),
    ("- router [pw:: swordfish] ^r1", "swordfish"),
    ("bank PIN: 4821", "4821"),
    ("password for the NAS: tr0ub4dor", "tr0ub4dor"),
    ("the password for the guest wifi is swordfish", "swordfish"),
    ("the password to my laptop is swordfish", "swordfish"),
    ("the admin password on the router was swordfish", "swordfish"),
    ("the password's swordfish", "swordfish"),
    ("Password = swordfish", "swordfish"),
    ("**Password**: swordfish", "swordfish"),
    ("my password is now swordfish", "swordfish"),
    ("my password is swordfish now, don't tell anyone", "swordfish"),
    ("set the router password to swordfish", "swordfish"),
    ("changed my password to Hunter2!", "Hunter2!"),
    ("reset the NAS password to swordfish yesterday", "swordfish"),
    ("the wifi password was changed to swordfish", "swordfish"),
    ("new password: swordfish", "swordfish"),
    ('the password is "password"', "password"),
    ("the password is 'correct'", "correct"),
    ("passcode is 2580", "2580"),
    ("the door code is 4821#", "4821"),
    ("garage code: 1357", "1357"),
    ("alarm code is 0852", "0852"),
    ("user bob / password: hunter2", "hunter2"),
    ("My Wi-Fi password is HomeNet2024, guest network too", "HomeNet2024"),
    ("改了密码，新密码：Qwerty123", "Qwerty123"),
    ("the password was 12345678 until today", "12345678"),
    ("我的password是hunter2", "hunter2"),
    ("密码是swordfish", "swordfish"),
    ("密码是 abc123，别告诉别人", "abc123"),
    ("密码：abc", "abc"),
    ("密码:abc", "abc"),
    ("登录密码为xyz", "xyz"),
    ("口令是芝麻开门", "芝麻开门"),
    ("暗号是天王盖地虎", "天王盖地虎"),
    ("WiFi密码是guest2024", "guest2024"),
    ("家里路由器的密码是 hunter2", "hunter2"),
    ("支付密码：135790", "135790"),
    ("密码改成了hunter2", "hunter2"),
    ("把WiFi密码改为 swordfish", "swordfish"),
    ("新密码是Xy7kLm9", "Xy7kLm9"),
    ("所有账号的密码都是abc123", "abc123"),
    ("密码是“芝麻开门”", "芝麻开门"),
    ("门禁密码是 4821#", "4821"),
    ("PIN码是4821", "4821"),
    ("开锁码：2580", "2580"),
]

PROSE_ABOUT_PASSWORDS = [
    "I changed my password yesterday",
    "remember to reset the password",
    "password manager is 1Password",
    "my password manager is Bitwarden",
    "the password is required",
    "the password is wrong",
    "the password is too short",
    "the password is in 1Password",
    "the password is on the sticky note",
    "the password is the same as before",
    "the password is stored in the vault",
    "the password was reset",
    "the password was changed yesterday",
    "my password is weak",
    "the password is case sensitive",
    "the password is expiring soon",
    "the password expired",
    "password policy: 12 characters minimum",
    "password: required",
    "password strength: strong",
    "forgot the wifi password again",
    "the password for the NAS is in the drawer",
    "password for the NAS: see 1Password",
    "password: check the wiki",
    "the password for the NAS is written on the router",
    "passwords must be 12 characters",
    "the passphrase is long",
    "the passphrase is correct",
    "the PIN is 4 digits",
    "the PIN is on the back of the card",
    "what's the wifi password?",
    "password is 16 characters long",
    "set the password to expire every 90 days",
    "reset the password to the default",
    "the password to the NAS",
    "git asks for a password: use the token",
    "my password is my dog's name",
    "password: 2FA enabled",
    "boarding pass: 12A",
    "set a password to protect the file",
    "remember to change the password to something stronger",
    "Password reset link: https://example.com/reset",
    "The password is: on the fridge",
    "use a password to log in",
    "PW: 5 pages",
    "新密码是什么",
    "密码：在1Password里",
    "the password is strong enough",
    "密码忘了，明天去重置",
    "密码要定期更换",
    "密码是什么？忘了",
    "用户名和密码都不能为空",
    "密码错误",
    "密码不对",
    "密码是对的",
    "密码为空",
    "密码是空的",
    "密码太简单了",
    "忘记密码了",
    "密码要包含数字和字母",
    "密码是8位的",
    "密码至少8位",
    "密码：见1Password",
    "密码在抽屉里",
    "密码是我的生日",
    "密码还是原来的",
    "密码是多少来着？",
    "密码是六位数字",
    "改密码了",
    "密码管理器用的是1Password",
]


def test_the_password_tables_are_large_and_bilingual() -> None:
    han = re.compile(r"[\u4e00-\u9fff]")
    assert len(PASSWORDS_IN_PROSE) >= 40 and len(PROSE_ABOUT_PASSWORDS) >= 40
    for table in ([text for text, _ in PASSWORDS_IN_PROSE], PROSE_ABOUT_PASSWORDS):
        chinese = [text for text in table if han.search(text)]
        assert 15 <= len(chinese) <= len(table) - 15


@pytest.mark.parametrize(("text", "password"), PASSWORDS_IN_PROSE)
def test_a_password_in_prose_is_a_secret(text: str, password: str) -> None:
    assert is_secret(text)
    found = [f.text for f in find_sensitive(text) if f.kind == "credential"]
    assert any(password in f for f in found), found
    redacted = redact(text)
    assert "[REDACTED:credential]" in redacted
    assert password not in redacted.replace("[REDACTED:credential]", "")


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("the door code is 1234567890", True),
        ("the door code is 12345678901", False),
        ("the gate code is *2580#", True),
        ("the gate code is X2580X", False),
        ("mysql://root:abc@localhost/db", False),
        ("密钥：abc", False),  # a key must look random
        ("开锁码是abcd", False),  # a code is digits
        ('密码是"********"', False),
        ("密码是“********”", False),
    ],
)
def test_codes_and_connection_passwords_have_bounds(text: str, found: bool) -> None:
    assert is_secret(text) is found, find_sensitive(text)


@pytest.mark.parametrize(
    ("text", "exactly"),
    [('WiFi密码是"guest"', "guest"), ("口令是芝麻开门了", "芝麻开门"), ("PIN码：4821", "4821")],
)
def test_a_chinese_password_finding_is_the_password_alone(text: str, exactly: str) -> None:
    assert [(f.kind, f.text) for f in find_sensitive(text)] == [("credential", exactly)]


@pytest.mark.parametrize("text", PROSE_ABOUT_PASSWORDS)
def test_prose_about_passwords_is_not_a_secret(text: str) -> None:
    assert not is_secret(text), find_sensitive(text)


# ---------------------------------------------------------------------------------------------
# Detection: true positives (text, kind, the part that must be found and must not survive redact)

PEM_BLOCK = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEA7bq1k2lV8zVbQ1mYQ8Xw9l0m3n4o5p6q7r8s9t0u1v2w3x4y\n"
    "-----END RSA PRIVATE KEY-----"
)
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)

TRUE_POSITIVES = [
    # secrets
    (
        "my key is sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
        "secret",
        "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
    ),
    (
        "OPENAI_API_KEY=sk-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb3dEf6hIj9kLm",
        "secret",
        "sk-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb3dEf6hIj9kLm",
    ),
    ("claude: sk-ant-api03-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "secret", "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"),
    ("ghp_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb3d", "secret", "ghp_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb3d"),
    ("oauth gho_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb3d", "secret", "gho_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb3d"),
    (
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopQRST",
        "secret",
        "11ABCDEFG0123456789_abcdefghijklmnopQRST",
    ),
    ("slack xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "secret", "AbCdEfGhIjKlMnOpQrStUvWx"),
    ("aws AKIA2E0A8F3B244C9986", "secret", "AKIA2E0A8F3B244C9986"),
    ("maps AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "secret", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
    ("gitlab glpat-9fX2kL7mQ1vR4tZ8pW3s", "secret", "glpat-9fX2kL7mQ1vR4tZ8pW3s"),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "secret", "4eC39HqLyjWDarjtT1zdp7dc"),
    ("restricted rk_live_4eC39HqLyjWDarjtT1zdp7dc", "secret", "4eC39HqLyjWDarjtT1zdp7dc"),
    (f"session {JWT}", "secret", JWT),
    (
        f"deploy key:\n{PEM_BLOCK}",
        "secret",
        "MIIEowIBAAKCAQEA7bq1k2lV8zVbQ1mYQ8Xw9l0m3n4o5p6q7r8s9t0u1v2w3x4y",
    ),
    ("Authorization: Bearer 9fX2kL7mQ1vR4tZ8pW3sY6uB", "secret", "9fX2kL7mQ1vR4tZ8pW3sY6uB"),
    (
        "webhook https://api.example.com/v1?token=9fX2kL7mQ1vR4tZ8pW3sY6uB&x=1",
        "secret",
        "9fX2kL7mQ1vR4tZ8pW3sY6uB",
    ),
    ("the api key for prod 8f3a9b2c7d1e4f5a6b7c8d9e0f1a2b3c", "secret", "8f3a9b2c7d1e4f5a6b7c8d9e0f1a2b3c"),
    ('client_secret = "Zq8vL2pX9wR4tY7u"', "secret", "Zq8vL2pX9wR4tY7u"),
    ("API密钥：8f3a9b2c7d1e4f5a6b7c8d9e0f1a2b3c", "secret", "8f3a9b2c7d1e4f5a6b7c8d9e0f1a2b3c"),
    ("服务器令牌是 Zq8vL2pX9wR4tY7uK3", "secret", "Zq8vL2pX9wR4tY7uK3"),
    # credentials
    ("password: hunter2!", "credential", "hunter2!"),
    ("my password is Tr0ub4dor&3", "credential", "Tr0ub4dor&3"),
    ("pwd=s3cr3tP@ss", "credential", "s3cr3tP@ss"),
    ("passwd: correcthorse", "credential", "correcthorse"),
    ("- router [password:: hunter22]", "credential", "hunter22"),
    ("Server=db;User Id=sa;Password=Pass123;Database=app", "credential", "Pass123"),
    ("PIN: 4821", "credential", "4821"),
    ("密码是abc12345", "credential", "abc12345"),
    ("WiFi密码：guest2024", "credential", "guest2024"),
    ("口令：Xy7#kLm9", "credential", "Xy7#kLm9"),
    ("银行卡密码为 837261", "credential", "837261"),
    ("postgres://admin:S3cretPass@db.internal:5432/app", "credential", "S3cretPass"),
    ("mysql://root:toor1234@localhost/db", "credential", "toor1234"),
    ("redis://default:s3cr@cache.internal:6379", "credential", "s3cr"),
    # government ids
    ("SSN 123-45-6789", "government_id", "123-45-6789"),
    ("social security number: 123456789", "government_id", "123456789"),
    ("身份证号 11010519491231002X", "government_id", "11010519491231002X"),
    ("她的身份证是110101199003074514", "government_id", "110101199003074514"),
    ("id 440308199901010012 on file", "government_id", "440308199901010012"),
    ("护照号码 E12345678", "government_id", "E12345678"),
    ("passport number: 123456789", "government_id", "123456789"),
    # cards and accounts
    ("visa 4111 1111 1111 1111", "card_number", "4111 1111 1111 1111"),
    ("card 5500-0000-0000-0004", "card_number", "5500-0000-0000-0004"),
    ("amex 378282246310005", "card_number", "378282246310005"),
    ("银行卡 6222021234567890128", "card_number", "6222021234567890128"),
    ("IBAN DE89 3704 0044 0532 0130 00", "account_number", "DE89 3704 0044 0532 0130 00"),
    ("wire to GB82WEST12345698765432", "account_number", "GB82WEST12345698765432"),
    ("account number 12345678901", "account_number", "12345678901"),
    ("账号：6217001234567890", "account_number", "6217001234567890"),
    # phones
    ("手机 13812345678", "phone", "13812345678"),
    ("call +86 138 1234 5678", "phone", "+86 138 1234 5678"),
    ("office (555) 123-4567", "phone", "(555) 123-4567"),
    ("call 555-123-4567", "phone", "555-123-4567"),
    ("London +44 20 7946 0958", "phone", "+44 20 7946 0958"),
    ("电话：010-12345678", "phone", "010-12345678"),
    ("tel: 020 7946 0958", "phone", "020 7946 0958"),
    # e-mail
    ("write to alice@example.com", "email", "alice@example.com"),
    ("王芳的邮箱 wangfang@163.com", "email", "wangfang@163.com"),
    ("王芳的邮箱wangfang@163.com", "email", "wangfang@163.com"),
    ("我的phone是13912345678", "phone", "13912345678"),
    ("住在123 Main Street附近", "address", "123 Main Street"),
    ("他有diabetes，要控制饮食", "health", "diabetes"),
    # addresses
    ("lives at 123 Main Street", "address", "123 Main Street"),
    ("moved to Apt 4B", "address", "Apt 4B"),
    ("1600 Pennsylvania Avenue NW, Washington", "address", "1600 Pennsylvania Avenue NW"),
    ("北京市朝阳区建国路88号", "address", "北京市朝阳区建国路88号"),
    ("我住在上海市浦东新区世纪大道100号", "address", "上海市浦东新区世纪大道100号"),
    ("阳光小区3号楼2单元501室", "address", "阳光小区3号楼2单元501室"),
    ("寄到广东省深圳市南山区科技园路1号", "address", "广东省深圳市南山区科技园路1号"),
    # health
    ("Bob was diagnosed with type 2 diabetes", "health", "type 2 diabetes"),
    ("takes 20 mg of lisinopril daily", "health", "lisinopril"),
    ("allergic to penicillin", "health", "penicillin"),
    ("prescription refill on Friday", "health", "prescription"),
    ("对花生过敏", "health", "花生"),
    ("确诊了新冠", "health", "新冠"),
    ("最近有点抑郁", "health", "抑郁"),
    ("血压有点高", "health", "血压"),
    ("她怀孕了", "health", "怀孕"),
    ("每天吃药", "health", "吃药"),
]


def test_true_positive_corpus_is_large_enough() -> None:
    assert len(TRUE_POSITIVES) >= 40
    assert {kind for _, kind, _ in TRUE_POSITIVES} == {
        "secret",
        "credential",
        "government_id",
        "card_number",
        "account_number",
        "phone",
        "email",
        "address",
        "health",
    }


@pytest.mark.parametrize(("text", "kind", "needle"), TRUE_POSITIVES)
def test_true_positives_are_found_and_redacted(text: str, kind: str, needle: str) -> None:
    findings = find_sensitive(text)
    assert kind in {f.kind for f in findings}
    assert any(needle in f.text for f in findings if f.kind == kind)
    assert is_sensitive(text)
    assert is_secret(text) is (kind in ("secret", "credential"))
    redacted = redact(text)
    assert needle not in redacted
    assert f"[REDACTED:{kind}]" in redacted
    assert find_sensitive(redacted) == []
    assert redact(redacted) == redacted


@pytest.mark.parametrize(
    ("text", "kind", "needle"),
    [
        ("我的密碼是 hunter2abc", "credential", "hunter2abc"),
        ("NAS 的密碼：Tr0ub4dor&3", "credential", "Tr0ub4dor&3"),
        ("我對花生過敏，嚴重時要用 EpiPen。", "health", "過敏"),
        ("我得了憂鬱症，醫生說要慢慢來。", "health", "憂鬱症"),
        ("我家地址是台北市大安區復興南路一段390號", "address", "復興南路"),
        ("我的手機號碼是 0912345678", "phone", "0912345678"),
        ("我的身分證字號是 A123456789", "government_id", "A123456789"),
    ],
)
def test_traditional_chinese_is_read_as_simplified_and_redacted_as_written(
    text: str, kind: str, needle: str
) -> None:
    findings = [f for f in find_sensitive(text) if f.kind == kind]
    assert findings and any(needle in f.text for f in findings)
    redacted = redact(text)
    assert needle not in redacted and f"[REDACTED:{kind}]" in redacted
    assert redacted.split("[REDACTED")[0] == text.split(findings[0].text)[0]  # the rest as written


@pytest.mark.parametrize(
    "text", ["Ticket A123456789 closed", "訂單編號 B234567890 已出貨", "這首歌讓我有點憂鬱"]
)
def test_traditional_chinese_lookalikes_are_not_flagged(text: str) -> None:
    assert find_sensitive(text) == []


def test_findings_carry_position_text_and_severity() -> None:
    text = "wifi password: hunter22, call 13812345678"
    secret, phone = find_sensitive(text)
    assert secret == Finding("credential", 15, 23, "hunter22", "secret")
    assert phone == Finding("phone", 30, 41, "13812345678", "sensitive")
    assert text[secret.start : secret.end] == secret.text


def test_redact_keeps_everything_around_the_findings() -> None:
    text = "09:15 Met Li Lei (13812345678, lilei@example.com) about the Q3 plan; key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t"
    assert redact(text) == (
        "09:15 Met Li Lei ([REDACTED:phone], [REDACTED:email]) about the Q3 plan; key [REDACTED:secret]"
    )


def test_a_secret_repeated_elsewhere_is_redacted_everywhere() -> None:
    text = "router password: Zebra-42-Blue\nremember Zebra-42-Blue is also the NAS login"
    findings = find_sensitive(text)
    assert [f.text for f in findings] == ["Zebra-42-Blue", "Zebra-42-Blue"]
    assert "Zebra-42-Blue" not in redact(text)


def test_health_findings_cover_their_clause_not_the_whole_note() -> None:
    text = "Lunch with Anna, she is allergic to shellfish. Then the design review."
    assert redact(text) == "Lunch with Anna, [REDACTED:health]. Then the design review."
    assert redact("周末去爬山，对花生过敏，要带药。") == "周末去爬山，[REDACTED:health]，[REDACTED:health]。"


def test_overlapping_findings_merge_into_the_most_severe() -> None:
    text = "diagnosed with asthma, password: Inhaler99"
    kinds = [f.kind for f in find_sensitive(text)]
    assert kinds == ["health", "credential"]
    merged = find_sensitive("allergic to penicillin password Zq8vL2pX9wR4tY7uK3mN")
    assert [f.kind for f in merged] == ["credential"]
    assert merged[0].severity == "secret"


# ---------------------------------------------------------------------------------------------
# Checksums: Luhn, resident id, IBAN


@pytest.mark.parametrize(
    "number",
    [
        "4111111111111111",
        "5500000000000004",
        "378282246310005",
        "6011111111111117",
        "3530111333300000",
        "6222021234567890128",
        "4111-1111-1111-1111",
        "5500 0000 0000 0004",
    ],
)
def test_luhn_valid_card_numbers_are_found(number: str) -> None:
    assert [f.kind for f in find_sensitive(f"card {number} exp 04/29")] == ["card_number"]


@pytest.mark.parametrize(
    "number",
    ["4111111111111112", "5500000000000005", "378282246310006", "6222021234567890127", "4111 1111 1111 1112"],
)
def test_luhn_invalid_numbers_are_not_cards(number: str) -> None:
    assert find_sensitive(f"ref {number}") == []


def test_digit_runs_that_are_not_cards() -> None:
    assert find_sensitive("ref 1234567890123") == []  # starts with 1: no card network
    assert find_sensitive("#4111111111111111") == []  # an issue or order number


@pytest.mark.parametrize(
    "number", ["11010519491231002X", "11010519491231002x", "110101199003074514", "440308199901010012"]
)
def test_resident_ids_with_a_valid_check_digit_are_found(number: str) -> None:
    (finding,) = find_sensitive(f"id {number}")
    assert finding.kind == "government_id" and finding.text == number


@pytest.mark.parametrize(
    "number",
    [
        "110105194912310021",  # wrong check digit
        "110101199003074515",  # wrong check digit
        "110101199013074514",  # month 13
        "110101199002304517",  # 30 February
    ],
)
def test_resident_ids_with_a_bad_check_digit_or_date_are_not_found_bare(number: str) -> None:
    assert not any(f.kind == "government_id" for f in find_sensitive(f"ref {number}"))


def test_a_resident_id_keyword_is_enough_even_with_a_typo() -> None:
    (finding,) = find_sensitive("身份证号：110101199003074515")
    assert finding.kind == "government_id"


@pytest.mark.parametrize(
    ("iban", "found"),
    [
        ("DE89 3704 0044 0532 0130 00", True),
        ("DE89370400440532013000", True),
        ("GB82WEST12345698765432", True),
        ("FR1420041010050500013M02606", True),
        ("DE89 3704 0044 0532 0130 01", False),
        ("GB82WEST12345698765433", False),
        ("GB00WEST12345698765432", False),
    ],
)
def test_iban_mod_97(iban: str, found: bool) -> None:
    found_kinds = {f.kind for f in find_sensitive(f"pay {iban} today")}
    assert ("account_number" in found_kinds) is found


# ---------------------------------------------------------------------------------------------
# Policies: explicit marks, promotion, language models


@pytest.mark.parametrize(
    ("body", "marked"),
    [
        ("- keep this #remember", True),
        ("- keep this #Remember", True),
        ("- keep this #remember/people", True),
        ("- keep this [persist:: true]", True),
        ("- keep this [persist:: TRUE]", True),
        ("- keep this [persist:: yes]", True),
        ("- keep this [persist:: false]", False),
        ("- keep this #remembered", False),
        ("- remember to buy milk", False),
        ("- keep this", False),
    ],
)
def test_explicitly_marked(tmp_path: Path, body: str, marked: bool) -> None:
    assert explicitly_marked(entry(tmp_path, body)) is marked


def test_a_note_level_remember_tag_marks_every_entry(tmp_path: Path) -> None:
    assert explicitly_marked(entry(tmp_path, "- Bob 13812345678\n", front="tags: [remember]"))


SECRET_KEY = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"

PROMOTION_TABLE = [
    # body, front matter, allowed, reason contains
    ("- Chose PostgreSQL for billing", "", True, "no sensitive"),
    ("- Chose PostgreSQL for billing #remember", "", True, "explicitly marked"),
    ("- Team offsite is in Hangzhou #shared", "", True, "no sensitive"),
    (f"- prod key {SECRET_KEY}", "", False, "secret"),
    (f"- prod key {SECRET_KEY} #remember", "", False, "secret"),
    ("- wifi password: guest2024 [persist:: true]", "", False, "credential"),
    ("- Bob's phone 13812345678", "", False, "phone"),
    ("- Bob's phone 13812345678 #remember", "", True, "explicitly marked"),
    ("- Bob's phone 13812345678 [persist:: true]", "", True, "explicitly marked"),
    ("- Bob's phone 13812345678 [persist:: false]", "", False, "sensitive"),
    ("- Bob's phone 13812345678 #remember/people", "", True, "explicitly marked"),
    ("- Bob's phone 13812345678 #shared", "", False, "sensitive"),
    ("- allergic to penicillin", "", False, "health"),
    ("- allergic to penicillin [persist:: yes]", "", True, "explicitly marked"),
    ("- 对花生过敏", "", False, "health"),
    ("- 对花生过敏 #remember", "", True, "explicitly marked"),
    ("- 家住北京市朝阳区建国路88号", "", False, "address"),
    ("- visa 4111 1111 1111 1111 #remember", "", True, "explicitly marked"),
    ("- a thought to keep to myself #private", "", False, "private"),
    ("- a thought to keep to myself #private #remember", "", True, "explicitly marked"),
    ("- Mum's number 13812345678 #private #remember", "", True, "explicitly marked"),
    ("- bank pin: 4821 #private #remember", "", False, "secret"),
    ("- plan the trip", "visibility: private", False, "private"),
    ("- plan the trip [persist:: true]", "visibility: private", True, "explicitly marked"),
    ("- plan the trip", "visibility: shared", True, "no sensitive"),
]


@pytest.mark.parametrize(("body", "front", "allowed", "reason"), PROMOTION_TABLE)
def test_may_promote(tmp_path: Path, body: str, front: str, allowed: bool, reason: str) -> None:
    ok, why = may_promote(entry(tmp_path, body + "\n", front=front))
    assert ok is allowed
    assert reason in why


LLM_TABLE = [
    # body, front matter, file, may send
    ("- Chose PostgreSQL for billing", "", "memory/2026-03-10.md", True),
    ("- Bob's phone 13812345678", "", "memory/2026-03-10.md", True),  # sent only redacted
    ("- allergic to penicillin #remember", "", "memory/2026-03-10.md", True),
    (f"- prod key {SECRET_KEY}", "", "memory/2026-03-10.md", False),
    (f"- prod key {SECRET_KEY} #remember", "", "memory/2026-03-10.md", False),
    ("- 密码是abc12345", "", "memory/2026-03-10.md", False),
    ("- a thought #private", "", "memory/2026-03-10.md", False),
    ("- a thought [visibility:: private]", "", "memory/2026-03-10.md", False),
    ("- a thought", "visibility: private", "memory/2026-03-10.md", False),
    ("- offsite in Hangzhou #shared", "", "memory/2026-03-10.md", True),
    (f"- shared deploy token {SECRET_KEY} #shared", "", "memory/2026-03-10.md", False),
    ("- 2026-03-10: prefers tea", "", "MEMORY.md", True),
    ("- 2026-03-10: prefers tea #private", "", "MEMORY.md", False),
]


@pytest.mark.parametrize(("body", "front", "name", "allowed"), LLM_TABLE)
def test_may_send_to_llm(tmp_path: Path, body: str, front: str, name: str, allowed: bool) -> None:
    assert may_send_to_llm(entry(tmp_path, body + "\n", name=name, front=front)) is allowed


# ---------------------------------------------------------------------------------------------
# Properties

FRAGMENTS = [
    *(text for text, _, _ in TRUE_POSITIVES),
    *FALSE_POSITIVES,
    "password: ",
    "密码是",
    "token=",
    "api key ",
    "Bearer ",
    "://",
    "@",
    ":",
    "#",
    " ",
    "\n",
    "，",
    "。",
    "[REDACTED:secret]",
    "[REDACTED:",
    "sk-",
    "4111",
    "138",
    "-",
    "Zq8vL2pX9wR4tY7uK3",
]
TEXTS = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=16)), max_size=8).map("".join)


@settings(derandomize=True, database=None, max_examples=400, deadline=None)
@given(TEXTS)
def test_redact_leaves_no_secret_and_never_raises(text: str) -> None:
    redacted = redact(text)
    assert not any(f.severity == "secret" for f in find_sensitive(redacted))
    for finding in find_sensitive(text):
        if finding.severity == "secret":  # short ones may spell part of a placeholder: "[REDACTED:..."
            assert finding.text not in PLACEHOLDER.sub("\x00", redacted)
    assert redact(redacted) == redacted


@settings(derandomize=True, database=None, max_examples=200, deadline=None)
@given(TEXTS)
def test_findings_are_ordered_disjoint_and_match_the_text(text: str) -> None:
    findings = find_sensitive(text)
    for finding in findings:
        assert text[finding.start : finding.end] == finding.text
        assert finding.severity == ("secret" if finding.kind in ("secret", "credential") else "sensitive")
    for before, after in itertools.pairwise(findings):
        assert before.end <= after.start


def _without(text: str) -> list[str]:
    """``text``, and it without ASCII digits, without Han characters, without either."""
    digitless = re.sub(r"[0-9]", "", text)
    return [text, digitless, re.sub(r"[\u4e00-\u9fff]", "", text), re.sub(r"[\u4e00-\u9fff]", "", digitless)]


def assert_guards_lose_nothing(text: str) -> None:
    for detector in DETECTORS:
        unguarded = getattr(detector, "detect", detector)
        for variant in _without(text):
            assert list(detector(variant)) == list(unguarded(variant)), (unguarded.__name__, variant)


def test_detectors_skipped_for_text_without_a_digit_or_han_lose_no_finding_of_the_corpus() -> None:
    assert any(hasattr(detector, "detect") for detector in DETECTORS)
    for text in [*(text for text, _, _ in TRUE_POSITIVES), *FALSE_POSITIVES]:
        assert_guards_lose_nothing(text)


@settings(derandomize=True, database=None, max_examples=400, deadline=None)
@given(TEXTS)
def test_detectors_skipped_for_text_without_a_digit_or_han_lose_no_finding(text: str) -> None:
    assert_guards_lose_nothing(text)
