"""The seed faces over the same graph and journal: key/values, notes, progress, rules, time travel.

``kv`` (versioned key/value memory), ``notes`` (categories and tags),
``progress`` (boards and steps), ``rules`` and ``conditions`` (owner rules and
their condition grammar), ``timetravel`` (``MemoryView``, a read-only view as of
a past moment) and ``namespaces`` (``agent()``: the source namespace of writes
and reads).

The engine hands these out (``memory.kv``, ``memory.as_of(...)``); they reach
back only through the small Protocols in ``host``, which ``Memory`` satisfies.

May import: the foundation, ``memgraph.graph`` and ``memgraph.retrieval``. Never
the model calls, the store, the engine or anything above.
"""
