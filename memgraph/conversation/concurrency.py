"""Threads that inherit memory state: the scope, the config stack, approval handlers.

asyncio tasks copy the context by themselves; a plain ``threading.Thread``
does not. :func:`spawn` and :class:`ContextThreadPoolExecutor` run work in a
copy of the caller's context, so a thread starts with the caller's memory
state and what it changes stays in that thread.
"""

from __future__ import annotations

import contextvars
import functools
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import ParamSpec, TypeVar

__all__ = ["ContextThreadPoolExecutor", "spawn"]

P = ParamSpec("P")
T = TypeVar("T")


def spawn(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
    """Run ``fn`` in a new thread with a copy of the current context.

    The thread starts with this context's scope, config stack and approval
    handlers; what it changes stays in the thread.

    Returns:
        A future holding ``fn``'s result or exception.
    """
    context = contextvars.copy_context()
    future: Future[T] = Future()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            result = context.run(fn, *args, **kwargs)
        except BaseException as exc:
            future.set_exception(exc)
        else:
            future.set_result(result)

    threading.Thread(target=run, name=f"memgraph-{getattr(fn, '__name__', 'task')}").start()
    return future


class ContextThreadPoolExecutor(ThreadPoolExecutor):
    """A thread pool whose tasks each run in a copy of the submitter's context."""

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """Schedule ``fn(*args, **kwargs)`` in a copy of the current context."""
        context = contextvars.copy_context()
        return super().submit(functools.partial(context.run, fn, *args, **kwargs))
