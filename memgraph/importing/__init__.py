"""``memgraph import``: conversations and documents into a memory, resumably.

:func:`import_file` reads a file (:mod:`memgraph.importing.formats`), turns
its records into items of the bulk path (:mod:`memgraph.engine.bulk`) with their own
time and speaker, skips the records an earlier run of the same file already
stored (:mod:`memgraph.importing.runner`), and reports progress
(:mod:`memgraph.importing.display`). The command itself is in
:mod:`memgraph.cli.importing`.
"""

from __future__ import annotations

from memgraph.importing.formats import Record, detect_format
from memgraph.importing.runner import (
    FORMATS,
    ImportOptions,
    ImportReport,
    external,
    import_file,
    register_format,
)

__all__ = [
    "FORMATS",
    "ImportOptions",
    "ImportReport",
    "Record",
    "detect_format",
    "external",
    "import_file",
    "register_format",
]
