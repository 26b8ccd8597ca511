"""Small file helpers for crash-safe, owner-only storage, and for derived files.

A *derived* file (an index rebuilt from a scope's primary files) is written
with :func:`seal`: an 8-byte magic naming its kind and version, the CRC-32 of
the body, then the body. :func:`read_derived` verifies both and hands back the
body, or ``None`` (logging once) when the file is missing, of another kind or
version, or damaged: the caller then rebuilds it from the primary files and
never decides anything from a file that failed its check.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import queue
import secrets
import struct
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

from memgraph.errors import StoreConflict, StoreUnavailable

__all__ = [
    "AtomicWrite",
    "DerivedUnusable",
    "FileLock",
    "atomic_write",
    "ensure_dir",
    "fsync_dir",
    "read_derived",
    "seal",
    "unseal",
]

log = logging.getLogger("memgraph")

DIR_MODE = 0o700
FILE_MODE = 0o600


def ensure_dir(path: Path) -> None:
    """Create ``path`` (and parents) owner-only if missing."""
    try:
        if path.is_dir():  # the usual case: one stat, not one per parent
            return
        # ``mkdir(parents=True)`` would create the parents with default permissions.
        for directory in [*reversed(path.parents), path]:
            if not directory.is_dir():
                directory.mkdir(mode=DIR_MODE, exist_ok=True)
    except OSError as exc:
        raise StoreUnavailable(f"cannot create memory directory {str(path)!r}: {exc}") from exc


def fsync_dir(path: Path) -> None:
    """Make a rename or file creation inside ``path`` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    """Write every byte of ``data`` to ``fd`` (``os.write`` may write fewer)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _temporary(path: Path) -> Path:
    """A temporary name beside ``path``, of its own per call (writers in other threads
    or processes never share it)."""
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def _write_synced(tmp: Path, data: bytes | memoryview) -> None:
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _unavailable(path: Path, tmp: Path, exc: OSError) -> StoreUnavailable:
    with contextlib.suppress(OSError):
        os.unlink(tmp)
    return StoreUnavailable(
        f"could not write {str(path)!r}: {exc}; the previous version is unchanged"
    )


def atomic_write(path: Path, data: bytes | memoryview) -> None:
    """Replace ``path`` with ``data`` so that a crash leaves the old or the new file.

    The temporary file has a name of its own per call (writers in other threads
    or processes never share it) and is removed when the write fails.

    Raises:
        StoreUnavailable: the file could not be written (a full disk, an I/O
            error); ``path`` is unchanged.
    """
    tmp = _temporary(path)
    try:
        _write_synced(tmp, data)
        os.replace(tmp, path)
        fsync_dir(path.parent)
    except OSError as exc:
        raise _unavailable(path, tmp, exc) from exc


_datasync = getattr(os, "fdatasync", os.fsync)  # macOS has no fdatasync

SYNC_EVERY = 8 << 20
"""Bytes :class:`AtomicWrite` writes before syncing them: the disk takes the file while
it is still being made, so less is left for the final ``fsync``."""


class AtomicWrite:
    """:func:`atomic_write` in two steps: the temporary file is written and synced by
    a thread of its own from the start (``write`` and ``fsync`` release the GIL, so
    the caller's work goes on meanwhile), and :meth:`finish` moves it into place.
    Until then ``path`` is unchanged; :meth:`cancel` (or a failed write) removes the
    temporary file.

    ``data``: the whole content; without it the content is handed over in parts with
    :meth:`put` while it is being made. What is handed over must not change until
    the write is finished."""

    def __init__(self, path: Path, data: bytes | memoryview | None = None) -> None:
        self.path = path
        self._tmp = _temporary(path)
        self._error: OSError | None = None
        self._parts: queue.SimpleQueue[bytes | bytearray | memoryview | None] = queue.SimpleQueue()
        if data is not None:
            self._parts.put(data)
        self._thread = threading.Thread(target=self._write, name="memgraph-write", daemon=True)
        self._thread.start()

    def put(self, part: bytes | bytearray | memoryview) -> None:
        """Append ``part`` to the file's content (written in order, in the background)."""
        self._parts.put(part)

    def _write(self) -> None:
        fd: int | None = None
        ended = False  # the end of the content was taken from the queue
        try:
            fd = os.open(self._tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
            unsynced = 0
            while (part := self._parts.get()) is not None:
                write_all(fd, part)
                unsynced += len(part)
                if unsynced >= SYNC_EVERY:
                    _datasync(fd)
                    unsynced = 0
            ended = True
            os.fsync(fd)
        except OSError as exc:
            self._error = exc
            while not ended and self._parts.get() is not None:  # let go of the rest
                pass
        finally:
            if fd is not None:
                os.close(fd)

    def finish(self) -> None:
        """Wait for the write, then replace ``path`` with the written file.

        Raises:
            StoreUnavailable: the file could not be written; ``path`` is unchanged.
        """
        self._parts.put(None)
        self._thread.join()
        try:
            if self._error is not None:
                raise self._error
            os.replace(self._tmp, self.path)
            fsync_dir(self.path.parent)
        except OSError as exc:
            raise _unavailable(self.path, self._tmp, exc) from exc

    def cancel(self) -> None:
        """Wait for the write and remove it; ``path`` stays as it was."""
        self._parts.put(None)
        self._thread.join()
        with contextlib.suppress(OSError):
            os.unlink(self._tmp)


# ------------------------------------------------------------------- derived files
_SEAL = struct.Struct("<8sI")


class DerivedUnusable(ValueError):
    """A derived file is of another kind or version, or fails its checksum."""


def seal(magic: bytes, body: bytes | memoryview) -> bytes:
    """A derived file's bytes: ``magic`` (8 bytes: kind and version), the CRC-32 of
    ``body``, then ``body``."""
    if len(magic) != 8:
        raise ValueError(f"a derived file's magic is 8 bytes, got {magic!r}")
    return _SEAL.pack(magic, zlib.crc32(body)) + bytes(body)


def unseal(magic: bytes, data: bytes | memoryview) -> memoryview:
    """The body of a file :func:`seal` wrote with ``magic``.

    Raises:
        DerivedUnusable: another magic (kind or version), or the checksum fails.
    """
    view = memoryview(data)
    if len(view) < _SEAL.size:
        raise DerivedUnusable(f"{len(view)} bytes, shorter than its {_SEAL.size}-byte header")
    found, crc = _SEAL.unpack_from(view)
    if found != magic:
        raise DerivedUnusable(f"kind or version {found!r}, expected {magic!r}")
    body = view[_SEAL.size :]
    if zlib.crc32(body) != crc:
        raise DerivedUnusable("its checksum does not match its content")
    return body


_warned: set[tuple[str, str]] = set()


def read_derived(path: Path, magic: bytes) -> memoryview | None:
    """The verified body of the derived file ``path``, or None when it is missing or
    unusable (logged once per file and reason): the caller rebuilds it."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        problem = f"unreadable ({exc})"
    else:
        try:
            return unseal(magic, data)
        except DerivedUnusable as exc:
            problem = str(exc)
    if (str(path), problem) not in _warned:
        _warned.add((str(path), problem))
        log.warning(
            "memgraph: ignoring %s, which is derived data: %s; rebuilding it", path, problem
        )
    return None


class FileLock:
    """An exclusive, cross-process lock on a file (``flock``), with a timeout."""

    def __init__(self, path: Path, scope: str) -> None:
        self.path = path
        self.scope = scope
        self._fd: int | None = None

    @contextlib.contextmanager
    def hold(self, timeout: float) -> Iterator[None]:
        """Hold the lock for the ``with`` block.

        Raises:
            StoreConflict: another process kept the lock for ``timeout`` seconds.
        """
        ensure_dir(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        deadline = time.monotonic() + timeout
        delay = 0.001
        acquired = False
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                        raise StoreUnavailable(f"cannot lock {str(self.path)!r}: {exc}") from exc
                    if time.monotonic() >= deadline:
                        raise StoreConflict(
                            f"scope {self.scope!r} is locked by another writer; gave up after "
                            f"{timeout:g} s (raise `lockTimeout` in the memory config or "
                            "serialize the writers)"
                        ) from None
                    time.sleep(delay)
                    delay = min(delay * 2, 0.05)
            acquired = True
            self._fd = fd
            yield
        finally:
            if acquired:  # a failed attempt must not release a hold of this object
                self._fd = None
                with contextlib.suppress(OSError):
                    fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None
