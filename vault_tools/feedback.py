"""What a long command tells a person while it works: a line at once when it waits, bars on a terminal.

A command that must wait (MEMORY.md saved moments ago, a git lock another process holds) says so on
stderr as the wait begins, with what it waits for and for how long at most, unless ``--quiet``: a
person who ran it, or reads a scheduler's log, knows why nothing happens. Progress bars (tqdm, on
stderr) are drawn only when stderr is a terminal and neither ``--json`` nor ``--quiet`` was given
(:func:`wants_bars`); everywhere else they cost nothing. Library code takes a :class:`Feedback` and
defaults to :data:`SILENT`, so tests and agents calling the library see nothing.
"""

from __future__ import annotations

import sys
from typing import Any, Protocol, TextIO


class Bar(Protocol):
    def update(self, n: int = 1) -> Any: ...

    def set_description(self, desc: str | None = None, refresh: bool = True) -> None: ...

    def close(self) -> None: ...


class NoBar:
    """A progress bar that draws nothing."""

    def update(self, n: int = 1) -> None:
        pass

    def set_description(self, desc: str | None = None, refresh: bool = True) -> None:
        pass

    def close(self) -> None:
        pass


def is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def wants_bars(stream: Any, *, as_json: bool, quiet: bool) -> bool:
    """Progress bars only for a person at a terminal: stderr a TTY, and neither --json nor --quiet."""
    return not as_json and not quiet and is_terminal(stream)


class Feedback:
    """Where a command's waits and progress go (``stream`` defaults to stderr at the time of use)."""

    def __init__(self, stream: TextIO | None = None, *, bars: bool = False, quiet: bool = False) -> None:
        self._stream = stream
        self.bars = bars and not quiet
        self.quiet = quiet

    @classmethod
    def for_command(cls, *, as_json: bool, quiet: bool, stream: TextIO | None = None) -> Feedback:
        """Waits said unless --quiet; bars when :func:`wants_bars` says so."""
        target = stream if stream is not None else sys.stderr
        return cls(stream, bars=wants_bars(target, as_json=as_json, quiet=quiet), quiet=quiet)

    @property
    def stream(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stderr

    def say(self, message: str) -> None:
        """One line on stderr, now (not under --quiet)."""
        if not self.quiet:
            print(message, file=self.stream, flush=True)

    def bar(self, total: int | None, what: str, unit: str = "it", *, delay: float = 0.5) -> Bar:
        """A tqdm bar of ``total`` ``unit``s, drawn after ``delay`` seconds and erased when closed."""
        if not self.bars:
            return NoBar()
        from tqdm import tqdm

        return tqdm(total=total, desc=what, unit=unit, delay=delay, file=self.stream, leave=False)


SILENT = Feedback(quiet=True)
