"""Progress of a long import: a bar on a terminal, plain periodic lines elsewhere."""

from __future__ import annotations

import time
from typing import Any, TextIO

from tqdm import tqdm

__all__ = ["ProgressDisplay", "duration"]


def duration(seconds: float) -> str:
    """``"16s"``, ``"2m05s"``, ``"1h02m"``."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


class ProgressDisplay:
    """A ``progress(done, total)`` callback that shows rate and time left.

    On a terminal it draws a ``tqdm`` bar; otherwise (a log, a pipe, CI) it
    writes ``imported 300/1000 (42/s, ETA 16s)`` at most every ``interval``
    seconds, and always the last state. Call :meth:`close` when done.

    Args:
        stream: where to write (the CLI uses stderr).
        tty: draw a bar; defaults to ``stream.isatty()``.
        interval: seconds between plain lines.
        verb: the first word of a plain line.
    """

    def __init__(
        self,
        stream: TextIO,
        *,
        tty: bool | None = None,
        interval: float = 5.0,
        verb: str = "imported",
    ) -> None:
        self.stream = stream
        self.tty = stream.isatty() if tty is None else tty
        self.interval = interval
        self.verb = verb
        self.done = 0
        self.total = 0
        self._bar: tqdm[Any] | None = None
        self._first: tuple[float, int] | None = None  # (time, done) of the first report
        self._shown = -1.0
        self._pending = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        self.done, self.total = done, total
        if self._first is None:
            self._first = (now, done)
        if self.tty:
            bar = self._bar
            if bar is None:
                bar = tqdm(
                    total=total,
                    initial=done,
                    unit="item",
                    desc=self.verb,
                    file=self.stream,
                    dynamic_ncols=True,
                    smoothing=0.1,
                )
                self._bar = bar
            bar.total = total
            bar.update(done - bar.n)
            return
        self._pending = True
        if now - self._shown >= self.interval:
            self._line(now)

    def line(self, now: float | None = None) -> str:
        """The plain progress line of the current state."""
        now = time.monotonic() if now is None else now
        text = f"{self.verb} {self.done}/{self.total}"
        if self._first is None:
            return text
        elapsed, count = now - self._first[0], self.done - self._first[1]
        if elapsed <= 0 or count <= 0:
            return text
        rate = count / elapsed
        left = (self.total - self.done) / rate
        return f"{text} ({rate:.0f}/s, ETA {duration(left)})"

    def _line(self, now: float) -> None:
        self.stream.write(self.line(now) + "\n")
        self.stream.flush()
        self._shown, self._pending = now, False

    def close(self) -> None:
        """Finish the bar, or write the last line if it was not shown yet."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self._pending:
            self._line(time.monotonic())
