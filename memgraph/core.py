"""Moved to :mod:`memgraph.engine.core` when the modules were grouped into layer folders.

Kept so that code importing the old name keeps working; it warns, and the
module it hands out is ``memgraph.engine.core`` itself (setting an attribute here sets it
there). Import ``memgraph.engine.core`` instead.
"""

from __future__ import annotations

import importlib
import sys
import warnings

warnings.warn(
    "memgraph.core moved to memgraph.engine.core; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = importlib.import_module("memgraph.engine.core")
