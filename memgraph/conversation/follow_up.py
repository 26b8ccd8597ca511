"""What to recall for a message that goes on from the one before it.

"And where does she work?" after "Does Alice prefer tea or coffee?" names no one:
recalled as it is, it finds whoever works somewhere. A message that speaks of
someone by a pronoun only, and names no one memory knows, is recalled with the
names memory knows in the user's message before it ("Alice Chen: And where does
she work?").
"""

from __future__ import annotations

from collections.abc import Callable

from memgraph.text import words

__all__ = ["follow_up_query"]

_PRONOUNS = frozenset({"she", "he", "her", "him", "his", "hers", "they", "them", "their"})


def follow_up_query(prompt: str, previous: str, names_in: Callable[[str], list[str]]) -> str:
    """``prompt`` with the names ``names_in`` finds in ``previous`` (the user's
    message before it) put first when it speaks of someone by a pronoun and names
    no one itself; else ``prompt`` as it is."""
    if not previous or not _PRONOUNS & set(words(prompt)) or names_in(prompt):
        return prompt
    names = names_in(previous)
    return f"{', '.join(names)}: {prompt}" if names else prompt
