"""Moved to :mod:`memgraph.llm_calls.parsing` when the modules were grouped into layer folders.

Kept so that code importing the old name keeps working; it warns, and the
module it hands out is ``memgraph.llm_calls.parsing`` itself (setting an attribute here sets it
there). Import ``memgraph.llm_calls.parsing`` instead.
"""

from __future__ import annotations

import importlib
import sys
import warnings

warnings.warn(
    "memgraph.parsing moved to memgraph.llm_calls.parsing; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = importlib.import_module("memgraph.llm_calls.parsing")
