from __future__ import annotations

import inspect

import pytest

import memgraph
from memgraph import errors


def test_all_is_complete_and_importable() -> None:
    for name in memgraph.__all__:
        assert hasattr(memgraph, name), name
    public = {
        name
        for name, value in vars(memgraph).items()
        if not name.startswith("_") and (inspect.isclass(value) or inspect.isfunction(value))
    }
    assert public <= set(memgraph.__all__)


def test_every_exported_exception_subclasses_memgraph_error() -> None:
    for name in memgraph.__all__:
        value = getattr(memgraph, name)
        if inspect.isclass(value) and issubclass(value, BaseException):
            assert issubclass(value, memgraph.MemgraphError), name


def test_every_exception_in_the_errors_module_is_exported() -> None:
    for name in errors.__all__:
        assert name in memgraph.__all__


def test_value_and_lookup_errors_keep_their_builtin_families() -> None:
    assert issubclass(memgraph.ConfigError, ValueError)
    assert issubclass(memgraph.InvalidScope, ValueError)
    assert issubclass(memgraph.NotFound, LookupError)


def test_engine_never_imports_a_vendor_sdk() -> None:
    import pathlib

    root = pathlib.Path(memgraph.__file__).parent
    for path in root.rglob("*.py"):
        text = path.read_text()
        assert "import openai" not in text and "from openai" not in text, path


def test_providers_install_under_the_memgraph_namespace() -> None:
    import importlib.util

    assert importlib.util.find_spec("memgraph.providers.mock") is not None
    assert importlib.util.find_spec("memgraph.providers.openai_compat") is not None


@pytest.mark.parametrize(
    ("old", "new"), [("core", "engine.core"), ("parsing", "llm_calls.parsing")]
)
def test_a_module_imported_by_its_old_name_is_the_moved_module_with_a_warning(
    old: str, new: str
) -> None:
    import importlib
    import sys

    sys.modules.pop(f"memgraph.{old}", None)
    with pytest.warns(DeprecationWarning, match=f"memgraph.{old} moved to memgraph.{new}"):
        module = importlib.import_module(f"memgraph.{old}")
    assert module is importlib.import_module(f"memgraph.{new}")
