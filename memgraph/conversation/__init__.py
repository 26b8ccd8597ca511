"""The conversation layer: ``llm()``, threads, compaction, automatic extraction, context.

``turn`` (``llm`` / ``allm``: pick the model, inject recall, call, append,
upkeep), ``thread`` (``Thread``: messages with stable sequence numbers, pure
data), ``compaction``, ``autoextract`` (thread messages → ``Memory.remember``),
``context`` (the config stack and the active memory), ``api`` (``remember`` /
``recall`` / ``forget`` on the active memory), ``approval``, ``concurrency``
(threads that inherit the context) and ``cache`` (open memories and chat
providers, process-wide).

May import: the engine and everything below it. Never the admin tools, the CLI
or the other faces at the top.
"""
