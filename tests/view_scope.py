"""The scope the graph view tests look at, built through ``Memory.remember`` on the mock provider.

Alice works at Acme from February 2024 and at Globex from June 2024 (a
superseded fact and relation); Bob's facts come from the ``slack`` source;
an entity and a text carry markup that must stay text on the page.
"""

from __future__ import annotations

from pathlib import Path

from memgraph import Memory

SCOPE = "story"
BEFORE_GLOBEX = "2024-02-01T00:00:00.000Z"  # Alice works at Acme then, not yet at Globex
HOSTILE_NAME = "</script><script>window.__pwned = 1</script><!--"
HOSTILE_FACT = '<img src=x onerror="window.__pwned = 2">'
HOSTILE_TEXT = "Mallory works at Initech. </script><script>window.__pwned = 3</script>"


def open_story(root: Path) -> Memory:
    """A memory on ``root`` holding the story (built on first use), mock provider."""
    memory = Memory(root, scope=SCOPE, provider="mock", config={})
    if not memory.entities():
        remember_story(memory)
    return memory


def remember_story(memory: Memory) -> None:
    memory.remember(
        "Alice is a senior engineer. She prefers TypeScript and mentors Bob.",
        at="2024-01-01T00:00:00Z",
    )
    memory.remember("Alice works at Acme.", at=BEFORE_GLOBEX)
    memory.remember(
        "Bob lives in Paris. Bob works at Initech.", at="2024-03-01T00:00:00Z", source="slack"
    )
    memory.remember("Alice works at Globex now.", at="2024-06-01T00:00:00Z")
    memory.remember(HOSTILE_TEXT, at="2024-07-01T00:00:00Z")
    memory.note(HOSTILE_FACT, category="context", about=HOSTILE_NAME)
