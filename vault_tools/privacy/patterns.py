"""Regular expressions for the detectors of :mod:`vault_tools.privacy.sensitive`, compiled on first use."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, cast

__all__ = ["Detector", "Span", "lazy_pattern"]

#: Where a detector found something: ``(start, end, kind)`` in the text it was given.
Span = tuple[int, int, str]
Detector = Callable[[str], Iterator[Span]]


class _LazyPattern:
    """A regex compiled on first use: recall only needs the chat rules, not the detectors."""

    def __init__(self, pattern: str, flags: int) -> None:
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        return getattr(self._compiled, name)


def lazy_pattern(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """ASCII \\b, \\w, \\d and \\s: "邮箱bob@x.com" has a word boundary before "bob" and "２" is no digit."""
    return cast("re.Pattern[str]", _LazyPattern(pattern, flags | re.ASCII))
