"""A question that calls a speaker by the short form of their name.

"What is the name of Pri's rescue cat?" asks about the speaker Priyanka: her
friend calls her Pri in the chat, and so may whoever asks. A word of the
question that names no entity is read as a speaker's first name when it may be
that name's short form (:func:`memgraph.speakers.short_for`: at least three
letters that start it) and starts exactly one speaker's first name ("Mel" for
Melanie; "Sam" when Samuel and Samantha both speak names neither). The
question is then asked with the name written out, so every tier reads it as a
question about her.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Collection

from memgraph.dates import CALENDAR_WORDS
from memgraph.speakers import short_for
from memgraph.text import STOP_WORDS, words

__all__ = ["FirstNames", "with_names_written_out"]

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


class FirstNames:
    """The first names of a conversation's speakers, sorted for prefix lookups.

    Built from the speakers' name keys (lower case, as the episode index keeps
    them); costs a sort once, then a binary search per word looked up.
    """

    def __init__(self, voices: Collection[str]) -> None:
        firsts = {first for voice in voices for first in words(voice)[:1]}
        self.firsts = sorted(firsts)
        self.size = len(voices)

    def started_by(self, word: str) -> list[str]:
        """The first names that ``word`` starts and is shorter than (two at most:
        two are as many as any number, the word names none of them); none when
        ``word`` is itself a speaker's first name ("Sam" beside "Samuel")."""
        at = bisect.bisect_left(self.firsts, word)
        if at < len(self.firsts) and self.firsts[at] == word:
            return []
        return [name for name in self.firsts[at : at + 2] if short_for(word, name)]


def with_names_written_out(
    question: str, speakers: FirstNames, *, is_name: Callable[[str], bool]
) -> str:
    """``question`` with each word that is the short form of one speaker's first
    name written as that name ("Pri's" → "Priyanka's").

    ``is_name(word)``: whether some entity's name holds ``word`` (lower case); such
    a word already names someone and is kept. In a question written with capitals,
    only a word written with one is read as a name.
    """
    if not speakers.firsts:
        return question
    capitals = any(c.isupper() for c in question)

    def written_out(match: re.Match[str]) -> str:
        word = match.group(0)
        lower = word.casefold()
        if lower in STOP_WORDS or lower in CALENDAR_WORDS:
            return word
        if capitals and not word[:1].isupper():
            return word
        found = speakers.started_by(lower)
        if len(found) != 1 or is_name(lower):
            return word
        name = found[0]
        return name[:1].upper() + name[1:] if capitals else name

    return _WORD.sub(written_out, question)
