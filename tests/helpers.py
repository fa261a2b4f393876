"""Small helpers the test modules share (importable because pytest puts tests/ on sys.path)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path


def write(path: Path, text: str) -> Path:
    """Write ``text`` as UTF-8, creating the folders; return ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def wait_for(predicate: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    """Poll ``predicate`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
