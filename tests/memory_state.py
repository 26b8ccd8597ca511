"""A fixture giving each conversation-layer test fresh context state and no open memories.

Import it into a test module (``from tests.memory_state import fresh_memory_state``)
and it applies to every test there.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memgraph import close_all
from memgraph.conversation.context import reset_state


@pytest.fixture(autouse=True)
def fresh_memory_state() -> Iterator[None]:
    """Default scope, only the agency.json plate, no approval handlers; close memories after."""
    reset_state()
    yield
    reset_state()
    close_all()
