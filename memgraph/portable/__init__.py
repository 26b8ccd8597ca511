"""Portable dumps: a whole scope as one versioned JSON Lines stream, and back.

``memgraph dump`` writes a scope (:mod:`memgraph.portable.dump`, which also
documents the format); ``memgraph load`` verifies a dump and writes it into
an empty scope of any store (:mod:`memgraph.portable.load`). Both reuse
:mod:`memgraph.admin.migrate`'s reading under the lock, single ``rewrite`` and
canonical checksum.
"""

from __future__ import annotations

from memgraph.portable.dump import FORMAT, VERSION, DumpReport, dump, dump_scope
from memgraph.portable.load import Dump, LoadReport, load, load_dump, read_dump

__all__ = [
    "FORMAT",
    "VERSION",
    "Dump",
    "DumpReport",
    "LoadReport",
    "dump",
    "dump_scope",
    "load",
    "load_dump",
    "read_dump",
]
