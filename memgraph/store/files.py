"""Small file helpers for crash-safe, owner-only storage."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from memgraph.errors import StoreConflict, StoreUnavailable

__all__ = ["FileLock", "atomic_write", "ensure_dir", "fsync_dir"]

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


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so that a crash leaves the old or the new file."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)


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
