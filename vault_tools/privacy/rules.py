"""Privacy isolation: who may see an entry, what may be promoted, what may reach a language model.

The rules, in the order they are applied (DESIGN.md, "Privacy isolation"):

1. Visibility is decided by the chat context, a parameter of every read path that a query cannot
   widen. A *direct* chat with the owner sees every entry of every kind (personal, private and
   shared). A *group* chat, and an *unknown* one (treated as a group), sees only entries whose
   visibility is exactly ``shared`` and never a MEMORY.md item, even one tagged ``#shared``:
   MEMORY.md is personal as a whole. ``private`` entries are never visible outside a direct chat.
   Anything the rules do not name (an unknown kind, visibility or chat) is denied.
2. Sensitive information is found by :func:`vault_tools.privacy.sensitive.find_sensitive` in
   English and Chinese text (see that module for what it finds and how it avoids false alarms).
3. Promotion into MEMORY.md (:func:`may_promote`): an entry holding a secret is never promoted. A
   ``private`` entry is promoted only when the person marked it explicitly (``#remember`` or
   ``[persist:: true]``): MEMORY.md stays on the machine, but it is loaded into every direct
   session, so a private note reaches it only by consent, and the promoter must keep the item
   ``#private`` there. Any other entry with a sensitive finding is promoted only when marked.
4. Language models (:func:`may_send_to_llm`): a private entry or one holding a secret is never
   sent; everything else is sent only through :func:`redact`, which replaces each finding with
   ``[REDACTED:<kind>]`` and re-scans its own output until nothing is found.

Chat names: ``direct`` (aliases ``dm``, ``private``: the DESIGN's "direct (private) chat"),
``group`` (aliases ``multi``, ``multi-user``, ``channel``) and ``unknown``; an empty or missing
value means ``direct``, the owner at their own terminal. Any other value is a usage error rather
than a silent default, so a typo cannot widen what a chat sees.
"""

from __future__ import annotations

from typing import Literal

from vault_tools.errors import UsageError
from vault_tools.notes.model import Entry
from vault_tools.privacy.sensitive import describe_kinds, find_sensitive, is_secret

Chat = Literal["direct", "group", "unknown"]

CHATS: tuple[str, ...] = ("direct", "group", "unknown")
CHAT_ALIASES: dict[str, Chat] = {
    "direct": "direct",
    "dm": "direct",
    "private": "direct",
    "group": "group",
    "multi": "group",
    "multi-user": "group",
    "channel": "group",
    "unknown": "unknown",
}
ENTRY_KINDS = frozenset({"daily", "memory", "note", "summary"})
VISIBILITIES = frozenset({"personal", "private", "shared"})
PERSIST_TRUE = frozenset({"true", "yes", "1", "on"})


# ---------------------------------------------------------------------------------------------
# Chat contexts and visibility


def parse_chat(value: str | None) -> Chat:
    """The chat context named by ``value``: case-insensitive, aliases allowed, empty means direct."""
    if value is None or not value.strip():
        return "direct"
    chat = CHAT_ALIASES.get(value.strip().lower())
    if chat is None:
        raise UsageError(f"unknown chat context {value!r}; use one of: direct, group, unknown")
    return chat


def visible_in(entry_kind: str, visibility: str, chat: Chat, *, include_private: bool = False) -> bool:
    """Whether an entry of this kind and visibility may be shown in ``chat``. Default deny.

    ``#private`` entries never leave the machine (DESIGN rule 4), and whatever recall hands an
    agent goes on to its model, so they are shown only when a person at this machine asks for
    them with ``include_private`` (``vault-tools recall --include-private``), and only in a
    direct chat.
    """
    if entry_kind not in ENTRY_KINDS or visibility not in VISIBILITIES:
        return False
    if chat == "direct":
        return visibility != "private" or include_private
    if chat in ("group", "unknown"):
        return visibility == "shared" and entry_kind != "memory"
    return False


def entry_visible(entry: Entry, chat: Chat, *, include_private: bool = False) -> bool:
    """Whether ``entry`` may be recalled or loaded in ``chat`` (see :func:`visible_in`)."""
    return visible_in(entry.kind, entry.visibility, chat, include_private=include_private)


# ---------------------------------------------------------------------------------------------
# Policies for entries


def explicitly_marked(entry: Entry) -> bool:
    """Whether the person asked for the entry to be kept: ``#remember`` or ``[persist:: true]``."""
    if entry.has_tag("remember"):
        return True
    return entry.fields.get("persist", "").strip().lower() in PERSIST_TRUE


def may_promote(entry: Entry) -> tuple[bool, str]:
    """Whether the maintenance bot may copy ``entry`` into MEMORY.md, and why (see the module rules).

    A promoted private entry must stay ``#private`` in MEMORY.md.
    """
    findings = find_sensitive(entry.raw)
    secrets = [f for f in findings if f.severity == "secret"]
    if secrets:
        return False, f"holds a secret ({describe_kinds(secrets)}); secrets are never promoted"
    marked = explicitly_marked(entry)
    if entry.visibility == "private" and not marked:
        return False, "private entry; promoted only when marked #remember or [persist:: true]"
    if findings and not marked:
        return False, (
            f"holds sensitive information ({describe_kinds(findings)}); "
            "promoted only when marked #remember or [persist:: true]"
        )
    if marked:
        return True, "explicitly marked to remember"
    return True, "no sensitive information"


def may_send_to_llm(entry: Entry) -> bool:
    """Whether ``entry`` may be sent (after :func:`redact`) to a language model: not private, no secret."""
    if entry.visibility not in ("personal", "shared"):
        return False  # private, or anything unknown: default deny
    return not is_secret(entry.raw)
