"""The optional packages the integration tests need are there when CI runs them.

LangGraph, LangMem, the OpenAI Agents SDK and psycopg are optional extras of
memgraph, all in ``[dev]``. Their tests skip where a package is missing (saying
which), so a developer without one can still run the rest; with
``MEMGRAPH_TEST_EXTRAS=required`` (``.ci/run`` sets it) these tests fail
instead, so CI cannot pass by skipping the integrations.
"""

from __future__ import annotations

import importlib
import os
import warnings

import pytest

ENV = "MEMGRAPH_TEST_EXTRAS"
OPTIONAL = {  # the module a test skips without -> the extra that installs it
    "agents": "openai-agents",
    "langgraph": "langgraph",
    "langmem": "dev",
    "psycopg": "postgres",
}


@pytest.mark.parametrize("module", sorted(OPTIONAL))
def test_every_optional_package_is_installed_where_ci_requires_it(module: str) -> None:
    if os.environ.get(ENV) != "required":
        pytest.skip(f"{ENV} is not 'required': the tests needing {module!r} may skip")
    try:
        with warnings.catch_warnings():  # as importorskip: a package's own import warnings
            warnings.simplefilter("ignore")  # (langmem's use of deprecated LangGraph names)
            importlib.import_module(module)
    except ImportError as exc:
        pytest.fail(f"{module!r} is missing: pip install -e '.[{OPTIONAL[module]}]' ({exc})")
