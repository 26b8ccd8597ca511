"""The ``Memory`` engine: the one place that sequences calls, locks and commits.

``core`` (``MemoryCore``: opening a scope, syncing with the store, committing
ops), ``writing`` (``remember``), ``reading`` (``recall`` / ``search``),
``forgetting``, ``features`` (notes, boards, rules, key/values, time travel and
the summary, on top of the faces) and ``memory`` (``Memory``, which combines them).

May import: the foundation, ``memgraph.llm_calls``, ``graph``, ``retrieval``,
``store`` and ``faces``. Never the conversation layer, the admin tools, the CLI
or the other faces at the top.
"""
