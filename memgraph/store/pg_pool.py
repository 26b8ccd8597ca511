"""Connections to PostgreSQL shared by every scope handle of a process.

A service holds thousands of scopes (one :class:`~memgraph.store.postgres.PostgresStore`
each, opened and closed as users come and go); a connection per handle would
cost a server process per scope and a login per reopen. Handles instead take
a connection from the process's :class:`Pool` for one piece of work and give
it back, so a process keeps about as many connections as it runs calls at
once (idle ones beyond :data:`MAX_IDLE` are closed). A handle holding its
scope's lock keeps one connection for the whole ``with`` block: the advisory
lock belongs to that session.

A statement whose reply nobody waits for (releasing the lock after a write)
is sent with :func:`send_and_forget`; the connection reads that reply before
it is used again.

After ``fork()`` the child forgets the connections it inherited (they belong
to the parent's sessions) without ever closing them, and opens its own.
"""

from __future__ import annotations

import atexit
import os
import select
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memgraph.store.pg_schema import connect

if TYPE_CHECKING:
    from psycopg import Connection

__all__ = ["MAX_IDLE", "Pool", "close_idle", "pool_for", "send_and_forget"]

MAX_IDLE = 8
"""Idle connections a process keeps per DSN; more are closed when given back."""

_unread: weakref.WeakSet[Any] = weakref.WeakSet()  # connections owing us a reply
_inherited: list[Any] = []  # a parent's connections, kept so they are never finalized here


class Pool:
    """Idle connections to one DSN (see the module docstring)."""

    def __init__(self, dsn: str, opener: Callable[[str], Connection[tuple[Any, ...]]]) -> None:
        self.dsn = dsn
        self._open = opener
        self._idle: list[Connection[tuple[Any, ...]]] = []
        self._lock = threading.Lock()

    def take(self) -> Connection[tuple[Any, ...]]:
        """An open connection: an idle one, or a new one.

        Raises:
            StoreUnavailable: the server cannot be reached.
        """
        while True:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                return self._open(self.dsn)
            if _usable(conn):
                return conn
            conn.close()

    def give(self, conn: Connection[tuple[Any, ...]]) -> None:
        """Return ``conn`` after use (a broken or surplus connection is closed)."""
        if conn.closed or conn.broken:
            conn.close()
            return
        if conn in _unread or conn.info.transaction_status == _idle_status():
            with self._lock:
                if len(self._idle) < MAX_IDLE:
                    self._idle.append(conn)
                    return
        conn.close()

    def discard_idle(self) -> None:
        """Close every idle connection (after one was lost: the server may have restarted)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def forget_inherited(self) -> None:
        """In a forked child: drop the parent's connections without closing them."""
        _inherited.extend(self._idle)
        for conn in self._idle:
            _detach(conn)
        self._idle = []
        self._lock = threading.Lock()


_pools: dict[str, Pool] = {}
_pools_lock = threading.Lock()


def pool_for(dsn: str) -> Pool:
    """The process's pool of connections to ``dsn``."""
    with _pools_lock:
        pool = _pools.get(dsn)
        if pool is None:
            pool = _pools[dsn] = Pool(dsn, connect)
        return pool


def close_idle() -> None:
    """Close every idle connection of every pool (at exit; safe to call any time)."""
    with _pools_lock:
        pools = list(_pools.values())
    for pool in pools:
        pool.discard_idle()


atexit.register(close_idle)


def send_and_forget(conn: Connection[tuple[Any, ...]], query: bytes, params: list[bytes]) -> None:
    """Send ``query`` without waiting for its reply (read before ``conn`` is used again).

    For statements whose outcome changes nothing for the caller, such as
    releasing an advisory lock: the server runs it as soon as it arrives, and
    the caller saves the round trip. A failure to send is ignored: the
    connection is then broken and will not be reused.
    """
    pgconn = conn.pgconn
    try:
        pgconn.send_query_params(query, params)
        while pgconn.flush() == 1:  # a few bytes: this returns at once in practice
            select.select([], [pgconn.socket], [], 1.0)
    except Exception:  # the connection is broken; give() closes it
        return
    _unread.add(conn)


def _usable(conn: Connection[tuple[Any, ...]]) -> bool:
    """Read any reply we did not wait for; True when ``conn`` is ready for a statement."""
    if conn.closed or conn.broken:
        return False
    if conn in _unread:
        _unread.discard(conn)
        pgconn = conn.pgconn
        try:
            while pgconn.get_result() is not None:
                pass
        except Exception:  # a dead connection: open another
            return False
    return bool(conn.info.transaction_status == _idle_status())


def _idle_status() -> Any:
    from psycopg import pq

    return pq.TransactionStatus.IDLE


def _detach(conn: Connection[tuple[Any, ...]]) -> None:
    """Point a forked child's copy of ``conn``'s socket at /dev/null, so that
    nothing the child does (finalizing it at exit) reaches the parent's session."""
    try:
        fd = conn.pgconn.socket
        null = os.open(os.devnull, os.O_RDWR)
        try:
            os.dup2(null, fd)
        finally:
            os.close(null)
    except Exception:  # nothing to protect
        pass


def _after_fork_in_child() -> None:
    global _pools_lock
    _pools_lock = threading.Lock()
    for pool in _pools.values():
        pool.forget_inherited()
    _pools.clear()
    for conn in list(_unread):
        _inherited.append(conn)
        _detach(conn)
    _unread.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
