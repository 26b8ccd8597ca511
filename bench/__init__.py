"""memgraph's engine benchmark suite (GitHub issue 5). Run it with ``python -m bench``.

See ``bench/README.md`` for what each number means and ``bench/RESULTS.md``
for recorded results.
"""
