"""``Memory``: one scope of long-term memory, the object the rest of memgraph stands on.

The engine orchestrates; the pieces compute. ``remember`` runs
extract → plan → embed → lock → catch up → re-plan → commit → apply;
``recall`` runs the tiers of :mod:`memgraph.retrieval.ranking` over the in-memory graph.
The class is assembled from small mixins, one job each: :mod:`memgraph.engine.core`
(state, sync, locking, commits), :mod:`memgraph.engine.writing`,
:mod:`memgraph.engine.reading` and :mod:`memgraph.engine.forgetting`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memgraph.engine.core import MAX_TEXT_CHARS, default_dir
from memgraph.engine.features import FeaturesMixin
from memgraph.engine.forgetting import ForgetMixin
from memgraph.engine.reading import ReadMixin
from memgraph.engine.writing import RememberMixin
from memgraph.faces.namespaces import state_dir, validate_name

__all__ = ["MAX_TEXT_CHARS", "Memory", "default_dir"]


class Memory(RememberMixin, FeaturesMixin, ReadMixin, ForgetMixin):
    """Long-term memory for one scope, stored under ``dir/scope``.

    Args:
        dir: the memory directory (one sub-directory per scope). Defaults to
            the config's ``dir``, then ``MEMGRAPH_DIR``, then ``./.memgraph``.
        scope: the scope id (a user, a channel, a workspace).
        provider: a :class:`~memgraph.llm_calls.provider.Provider` or a spec such as
            ``"mock"`` or ``"openai:gpt-4o-mini"``.
        config: a :class:`~memgraph.config.MemoryConfig`, a ``memory`` block
            dict, or a path to an ``agency.json``. Defaults to ``agency.json``
            in the working directory, if any.
        store: a :class:`~memgraph.store.base.Store`, or a ``memory.store``
            setting (``"files"``, ``"memory"`` for a session-only in-process
            store, ...). Defaults to ``MEMGRAPH_STORE``, then the config.

    Raises:
        InvalidScope: ``scope`` breaks the naming rule.
        ConfigError: the configuration is invalid.

    Use it as a context manager so files are closed::

        with Memory("./mem", scope="alice") as memory:
            memory.remember("Alice prefers concise answers.")
            print(memory.recall("how does alice like answers?"))
    """

    @classmethod
    def named(
        cls,
        name: str,
        *,
        provider: Any = None,
        config: Any = None,
        dir: str | Path | None = None,
    ) -> Memory:
        """Open the memory called ``name``: the name is its identity.

        Two programs that open the same name share one memory, whatever their
        file names. The memory lives in ``MEMGRAPH_STATE_DIR`` if set, else in
        ``.memgraph`` next to the running program's main file (the working
        directory in a REPL), or in ``dir`` when given. Nothing is created on
        disk until the first write.

        Raises:
            InvalidScope: (a ``ValueError``) the name is empty or does not
                match ``[A-Za-z0-9_-]+``.
        """
        validate_name(name)
        return cls(dir if dir is not None else state_dir(), name, provider=provider, config=config)
