"""Model calls: the provider seam and everything that talks to a chat model or embedder.

``provider`` (the ``ChatModel`` / ``Embedder`` Protocols and the provider
registry), ``resolve`` (config → provider), ``prompts``, ``parsing`` (reading
model replies), ``ask`` (one JSON call with a repair retry), ``extract`` (text →
validated ``Extraction``) and ``tokens``.

May import: the foundation modules (``memgraph.errors``, ``models``, ``clock``,
``config``, ``scope``, ``text``). Never the graph, retrieval, the store, the faces,
the engine or anything above it. Built-in and third-party providers
(``memgraph.providers``) import only this seam and the foundation.

Named ``llm_calls`` rather than ``llm`` because ``memgraph.llm`` is the public
``llm()`` function.
"""
