"""Finding what is relevant: ranking, vectors and the approximate index, bounded context.

``ranking`` (the recall tiers, fusion, the ``Lens``, formatting), ``vectors``
(the float32 embedding matrix, cosine search, masks), ``ivf`` (the inverted-file
approximate index) and ``known`` (the bounded context of existing entities an
extraction prompt sees).

May import: the foundation, ``memgraph.llm_calls`` and ``memgraph.graph``. Never
the store, the faces, the engine or anything above.

Named ``retrieval`` rather than ``recall`` because ``memgraph.recall`` is the
public ``recall()`` function.
"""
