"""PostgreSQL plumbing for :mod:`memgraph.store.postgres`: DSNs, connections, errors, schema.

The schema lives in one PostgreSQL schema (``memgraph`` unless told otherwise)
and is created and upgraded on first use by numbered migrations
(:data:`MIGRATIONS`). Each migration runs in its own transaction under a
transaction-level advisory lock, and records itself in ``schema_version``, so
many app servers starting at once apply each migration exactly once.

psycopg is imported lazily: memgraph does not need it unless a store is a DSN.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from memgraph.errors import (
    ConfigError,
    StoreConflict,
    StoreCorrupt,
    StoreError,
    StoreUnavailable,
)

if TYPE_CHECKING:
    from psycopg import Connection

__all__ = [
    "DEFAULT_SCHEMA",
    "DSN_PREFIXES",
    "LATEST_VERSION",
    "MIGRATIONS",
    "advisory_key",
    "connect",
    "ensure_schema",
    "is_dsn",
    "mask_dsn",
    "translate_errors",
]

DSN_PREFIXES = ("postgresql://", "postgres://")
DEFAULT_SCHEMA = "memgraph"
CONNECT_TIMEOUT = 10
_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")

# (version, description, SQL). ``{s}`` is the quoted schema name. Never edit a
# released migration: add the next number instead.
MIGRATIONS: list[tuple[int, str, str]] = [
    (
        1,
        "scopes, commits, episodes, vectors, summaries",
        """
        CREATE TABLE {s}.scopes (
            scope             text PRIMARY KEY,
            epoch             bigint NOT NULL DEFAULT 0,
            last_seq          bigint NOT NULL DEFAULT 0,
            checkpoint_seq    bigint NOT NULL DEFAULT 0,
            checkpoint        json,
            checkpoint_bytes  bigint NOT NULL DEFAULT 0,
            journal_bytes     bigint NOT NULL DEFAULT 0,
            vector_model      text,
            vector_dim        integer NOT NULL DEFAULT 0,
            vector_count      integer NOT NULL DEFAULT 0,
            vector_generation bigint NOT NULL DEFAULT 0,
            updated_at        timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE {s}.commits (
            scope        text NOT NULL REFERENCES {s}.scopes (scope) ON DELETE CASCADE,
            seq          bigint NOT NULL,
            at           text NOT NULL,
            next_id      bigint NOT NULL,
            ops          json NOT NULL,
            vector_model text,
            vector_dim   integer NOT NULL DEFAULT 0,
            vector_ids   text[],
            vector_data  bytea,
            PRIMARY KEY (scope, seq)
        );
        ALTER TABLE {s}.commits ALTER COLUMN vector_data SET STORAGE EXTERNAL;
        CREATE TABLE {s}.episodes (
            scope   text NOT NULL REFERENCES {s}.scopes (scope) ON DELETE CASCADE,
            id      text NOT NULL,
            ordinal bigint GENERATED ALWAYS AS IDENTITY,
            record  json NOT NULL,
            PRIMARY KEY (scope, id)
        );
        CREATE INDEX episodes_order ON {s}.episodes (scope, ordinal);
        CREATE TABLE {s}.vectors (
            scope     text NOT NULL REFERENCES {s}.scopes (scope) ON DELETE CASCADE,
            row_index integer NOT NULL,
            obs_id    text NOT NULL,
            data      bytea NOT NULL,
            PRIMARY KEY (scope, row_index)
        );
        ALTER TABLE {s}.vectors ALTER COLUMN data SET STORAGE EXTERNAL;
        CREATE TABLE {s}.summaries (
            scope      text PRIMARY KEY,
            summary    json NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now()
        );
        """,
    ),
    (
        2,
        "coarse: the approximate (IVF) vector index of the checkpointed rows",
        """
        CREATE TABLE {s}.coarse (
            scope     text PRIMARY KEY REFERENCES {s}.scopes (scope) ON DELETE CASCADE,
            lists     integer NOT NULL,
            dim       integer NOT NULL,
            centroids bytea NOT NULL,
            labels    bytea NOT NULL
        );
        ALTER TABLE {s}.coarse ALTER COLUMN centroids SET STORAGE EXTERNAL;
        ALTER TABLE {s}.coarse ALTER COLUMN labels SET STORAGE EXTERNAL;
        """,
    ),
    (
        3,
        "images: checkpoints as graph.json bytes with their index, read lazily; derived",
        """
        ALTER TABLE {s}.scopes ADD COLUMN image_generation bigint NOT NULL DEFAULT 0;
        CREATE TABLE {s}.images (
            scope          text NOT NULL REFERENCES {s}.scopes (scope) ON DELETE CASCADE,
            generation     bigint NOT NULL,
            document       bytea NOT NULL,
            document_index bytea,
            vector_ids     bytea,
            created_at     timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (scope, generation)
        );
        ALTER TABLE {s}.images ALTER COLUMN document SET STORAGE EXTERNAL;
        ALTER TABLE {s}.images ALTER COLUMN document_index SET STORAGE EXTERNAL;
        ALTER TABLE {s}.images ALTER COLUMN vector_ids SET STORAGE EXTERNAL;
        CREATE TABLE {s}.derived (
            scope      text NOT NULL REFERENCES {s}.scopes (scope) ON DELETE CASCADE,
            name       text NOT NULL,
            data       bytea NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (scope, name)
        );
        ALTER TABLE {s}.derived ALTER COLUMN data SET STORAGE EXTERNAL;
        """,
    ),
]
LATEST_VERSION = MIGRATIONS[-1][0]


def is_dsn(value: str) -> bool:
    """True when a ``memory.store`` setting names a PostgreSQL database."""
    return value.startswith(DSN_PREFIXES)


# The password of a URI runs from the first ':' of its user part to the *last* '@'
# (a raw '@', '/', '#' or '?' may be part of it: libpq and people write them
# unescaped). Reaching past an '@' that belongs to the query masks more than the
# password, never less.
_URI_PASSWORD = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://[^:@/?#]*):(.*)@", re.DOTALL)
_PARAM_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^&\s]*)", re.IGNORECASE)


def mask_dsn(dsn: str) -> str:
    """``dsn`` with its password (in the URI or a ``password=`` parameter) shown as ``***``."""
    return _PARAM_PASSWORD.sub(r"\1***", _URI_PASSWORD.sub(r"\1:***@", dsn))


def _passwords(dsn: str) -> list[str]:
    found: list[str] = []
    match = _URI_PASSWORD.match(dsn)
    if match and match.group(2):
        found += [match.group(2), unquote(match.group(2))]
    for param in _PARAM_PASSWORD.finditer(dsn):
        value = param.group(2).strip("'")
        if value:
            found += [value, unquote(value)]
    # libpq ends the user part at the first raw '@' and the host at a '/', '?' or '#',
    # so its messages may quote a piece of the password ("could not resolve host
    # 'Secret@127.0.0.1'"): each piece between such characters is masked too.
    found += [piece for p in list(found) for piece in re.split(r"[@/?#:]", p) if len(piece) >= 3]
    return sorted({p for p in found if p}, key=len, reverse=True)


def scrub(text: str, dsn: str) -> str:
    """``text`` with the DSN and every form of its password masked."""
    text = text.replace(dsn, mask_dsn(dsn))
    for password in _passwords(dsn):
        text = text.replace(password, "***")
    return text


def validate_schema_name(schema: str) -> str:
    """Return ``schema`` if it is a plain lower-case identifier.

    Raises:
        ConfigError: it is not (it is spliced into SQL, so nothing else is accepted).
    """
    if not isinstance(schema, str) or not _SCHEMA_NAME.fullmatch(schema):
        raise ConfigError(
            f"invalid PostgreSQL schema name {schema!r}: use lower-case letters, digits "
            "and underscores, starting with a letter or underscore (at most 63)"
        )
    return schema


def advisory_key(*parts: str) -> int:
    """A signed 64-bit advisory-lock key for ``parts`` (stable across processes)."""
    digest = hashlib.blake2b("\x00".join(("memgraph", *parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def import_psycopg() -> Any:
    """The psycopg module.

    Raises:
        StoreUnavailable: psycopg is not installed.
    """
    try:
        import psycopg
    except ImportError as exc:
        raise StoreUnavailable(
            "memory.store is a PostgreSQL DSN but the driver is missing; install it with "
            "`pip install 'memgraph-kg[postgres]'` (psycopg 3)"
        ) from exc
    return psycopg


def connect(dsn: str) -> Connection[tuple[Any, ...]]:
    """An autocommit connection to ``dsn`` (10 s connect timeout unless the DSN sets one).

    Raises:
        ConfigError: ``dsn`` is not a valid connection string.
        StoreUnavailable: the server cannot be reached or refused the login.
    """
    psycopg = import_psycopg()
    from psycopg.conninfo import conninfo_to_dict

    try:
        params = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as exc:
        raise ConfigError(
            f"memory.store {mask_dsn(dsn)!r} is not a valid PostgreSQL DSN: "
            f"{scrub(str(exc), dsn)}; use postgresql://user@host:port/database"
        ) from None
    extra: dict[str, Any] = {}
    if "connect_timeout" not in params:
        extra["connect_timeout"] = CONNECT_TIMEOUT
    if "application_name" not in params:
        extra["application_name"] = "memgraph"
    try:
        connection: Connection[tuple[Any, ...]] = psycopg.connect(dsn, autocommit=True, **extra)
    except psycopg.Error as exc:
        raise StoreUnavailable(
            f"cannot connect to PostgreSQL at {mask_dsn(dsn)!r}: {scrub(str(exc).strip(), dsn)}; "
            "check that the server is running and memory.store (or MEMGRAPH_STORE) is right"
        ) from None
    return connection


@contextlib.contextmanager
def translate_errors(dsn: str, what: str) -> Iterator[None]:
    """Turn psycopg's exceptions raised while doing ``what`` into memgraph's store errors.

    Conflicts (lock timeouts, duplicate keys, serialization failures,
    deadlocks) become :class:`StoreConflict`; lost or refused connections
    :class:`StoreUnavailable`; damaged stored values :class:`StoreCorrupt`;
    anything else from the database :class:`StoreUnavailable`. Messages never
    show the DSN's password.
    """
    psycopg = import_psycopg()
    from psycopg import errors as pg

    try:
        yield
    except StoreError:
        raise
    except (
        pg.LockNotAvailable,
        pg.UniqueViolation,
        pg.SerializationFailure,
        pg.DeadlockDetected,
    ) as exc:
        raise StoreConflict(
            f"{what} conflicted with another writer ({type(exc).__name__}: "
            f"{scrub(str(exc).strip(), dsn)}); reload and retry"
        ) from exc
    except pg.DataCorrupted as exc:  # pragma: no cover - needs a damaged disk
        raise StoreCorrupt(
            f"PostgreSQL reports damaged data while {what}: {scrub(str(exc), dsn)}",
            path=mask_dsn(dsn),
            position=what,
        ) from exc
    except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
        raise StoreUnavailable(
            f"PostgreSQL at {mask_dsn(dsn)!r} is unavailable while {what}: "
            f"{scrub(str(exc).strip(), dsn)}; nothing more was written"
        ) from exc
    except psycopg.Error as exc:
        raise StoreUnavailable(
            f"PostgreSQL at {mask_dsn(dsn)!r} refused {what}: {scrub(str(exc).strip(), dsn)}"
        ) from exc


def schema_version(connection: Connection[tuple[Any, ...]], schema: str) -> int:
    """The highest migration applied to ``schema`` (0 when it has none)."""
    from psycopg import errors as pg

    try:
        row = connection.execute(f'SELECT max(version) FROM "{schema}".schema_version').fetchone()
    except (pg.UndefinedTable, pg.InvalidSchemaName):
        return 0
    return int(row[0]) if row and row[0] is not None else 0


def ensure_schema(connection: Connection[tuple[Any, ...]], schema: str, dsn: str = "") -> list[int]:
    """Create ``schema`` and apply the migrations it lacks; the versions applied, in order.

    Cheap when the schema is current (one query). Safe to run from many
    processes at once: the work happens under an advisory lock, and each
    migration commits together with its ``schema_version`` row.

    Raises:
        StoreUnavailable: the schema is newer than this memgraph, or the role
            may not create it.
    """
    with translate_errors(dsn, f"checking the schema {schema!r}"):
        current = schema_version(connection, schema)
        if current == LATEST_VERSION:
            return []
        applied: list[int] = []
        quoted = f'"{schema}"'
        with connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", [advisory_key(schema)])
            connection.execute(f"CREATE SCHEMA IF NOT EXISTS {quoted}")
            connection.execute(
                f"CREATE TABLE IF NOT EXISTS {quoted}.schema_version ("
                " version integer PRIMARY KEY,"
                " description text NOT NULL,"
                " applied_at timestamptz NOT NULL DEFAULT now())"
            )
            current = schema_version(connection, schema)
            if current > LATEST_VERSION:
                raise StoreUnavailable(
                    f"the PostgreSQL schema {schema!r} is at version {current}, newer than this "
                    f"memgraph understands ({LATEST_VERSION}); upgrade memgraph"
                )
            for version, description, sql in MIGRATIONS:
                if version <= current:
                    continue
                connection.execute(sql.format(s=quoted))
                connection.execute(
                    f"INSERT INTO {quoted}.schema_version (version, description) VALUES (%s, %s)",
                    [version, description],
                )
                applied.append(version)
        return applied
