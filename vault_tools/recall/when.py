"""A WHEN argument: the one reader of every date a command takes (``--since``, ``--until``,
``--as-of``, ``note --date``).

Every such argument accepts what recall understands (:func:`vault_tools.recall.timewords.parse_when`):
an ISO day, month or year (``2026-03-14``, ``2026-03``, ``2026``), an age (``7d``, ``2w``, ``3m``,
``1y``, ``3 days ago``) and the time words of English and Chinese ("yesterday", "last week",
"last Friday", "in March", "昨天", "上周", "三天前", "三月"), resolved against today (or the
command's ``--as-of``).

Some of these name one day ("yesterday", "3 days ago", "上周五"), others a period ("last week",
"三月", "2026-03"). Where a period is given, the role of the argument decides:

* ``since`` takes the period's first day, ``until`` its last (``--since "last week"`` is Monday);
* ``as_of`` ("treat this day as today") takes its last day: ``--as-of 2026-03`` is March 31;
* ``date`` (the day whose note ``note`` appends to) refuses it: a note is one day, and guessing
  which day of "last week" was meant would write to the wrong file.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from vault_tools.errors import UsageError

Role = Literal["since", "until", "as_of", "date"]

__all__ = ["HELP", "Role", "parse_day"]

#: The forms, for each option's help text.
HELP = "YYYY-MM-DD, 7d, 3 days ago, yesterday, last week, 上周, 昨天, 三月"
ONE_DAY = "one day: 2026-03-14, yesterday, 3 days ago, last Friday, 昨天, 三天前, 上周五"


def parse_day(value: str, today: dt.date, role: Role, *, option: str | None = None) -> dt.date:
    """The day ``value`` names for an argument of ``role``, relative to ``today``.

    A period gives its first day for ``since``, its last for ``until`` and ``as_of``, and is
    refused for ``date`` (see the module docstring). Raises :class:`UsageError` naming the option
    (``option``, else the role's: ``--as-of``; ``""`` names none) and listing the accepted forms.
    """
    from vault_tools.recall.timewords import parse_when

    name = "--" + role.replace("_", "-") if option is None else option
    prefix = f"{name}: " if name else ""
    try:
        if role == "since":
            return parse_when(value, today, end=False)
        last = parse_when(value, today, end=True)
        if role != "date":
            return last
        first = parse_when(value, today, end=False)
    except UsageError as exc:
        raise UsageError(f"{prefix}{exc}") from None
    if first != last:
        raise UsageError(
            f"{prefix}{value!r} is a period ({first.isoformat()} to {last.isoformat()}), not a day; "
            f"give {ONE_DAY}"
        )
    return last
