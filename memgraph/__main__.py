"""``python -m memgraph``: the command line, as the ``memgraph`` script runs it."""

from __future__ import annotations

from memgraph.cli import main

if __name__ == "__main__":
    main()
