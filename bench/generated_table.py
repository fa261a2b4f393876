"""The command line shared by the scripts that generate a shipped data table from a pinned package.

``python bench/SCRIPT.py`` writes the table; ``--check`` only compares it with what the script
would write (exit 1 when they differ). The tests compare ``render()`` with the shipped file too.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def write_or_check(
    argv: list[str] | None,
    description: str | None,
    table: Path,
    render: Callable[[], str],
    header: str,
    rows: str,
    script: str,
) -> int:
    """Write ``render()`` to ``table``, or with ``--check`` say whether the shipped one is current."""
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="only compare with the shipped table")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        same = table.read_text(encoding="utf-8") == text
        print(f"{table}: {'up to date' if same else f'differs; run bench/{script}'}")
        return 0 if same else 1
    table.write_text(text, encoding="utf-8")
    print(f"wrote {table}: {text.count(chr(10)) - header.count(chr(10))} {rows}")
    return 0
