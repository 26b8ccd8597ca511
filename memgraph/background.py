"""Work run by a thread of its own, whose errors reach the caller who waits for it."""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["InThread"]


class InThread:
    """``work()`` run by a thread of its own from the start; :meth:`result` waits for it
    and raises what it raised."""

    def __init__(self, work: Callable[[], None], name: str = "memgraph-io") -> None:
        self._error: BaseException | None = None
        self._work = work
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._work()
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc

    def wait(self) -> BaseException | None:
        """Wait for the work; what it raised, if anything."""
        self._thread.join()
        return self._error

    def result(self) -> None:
        """Wait for the work; raise what it raised."""
        error = self.wait()
        if error is not None:
            raise error
