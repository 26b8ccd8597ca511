"""The knowledge graph as data: the in-memory ``Graph``, its saved form, change planning.

``graph`` (the in-memory ``Graph``: entities, facts, relations, indexes, ops),
``lazy`` (lazily decoded records and posting lists), ``saved`` (a checkpoint's
bytes and index arrays), ``snapshot`` (writing and reading ``graph.json`` and
``graph.idx``), ``attributes``, ``changes`` (an extraction → the ops that apply
it) and ``export``. Pure computation: nothing here touches disk or sequences calls.

May import: the foundation and ``memgraph.llm_calls`` (``changes`` plans from an
``Extraction``). Never retrieval, the store, the faces, the engine or anything above.
"""
