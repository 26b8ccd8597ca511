"""A question that calls a speaker by the short form of their name, or by the
name the others call them in the chat.

"What is the name of Pri's rescue cat?" asks about the speaker Priyanka: her
friend calls her Pri in the chat, and so may whoever asks. A word of the
question that names no entity is read as a speaker's first name when it may be
that name's short form (:func:`memgraph.speakers.short_for`: at least three
letters that start it) and starts exactly one speaker's first name ("Mel" for
Melanie; "Sam" when Samuel and Samantha both speak names neither). A name the
others call a speaker by, whatever its letters ("Shiv." or "hey shiv!", each
answered by Siobhán: :func:`called_names`, counted by the episode index), is
read as hers too. The question is then asked with the name written out, so
every tier reads it as a question about her.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Collection

from memgraph.dates import CALENDAR_WORDS
from memgraph.speakers import SHORTEST_NAME, short_for
from memgraph.text import STOP_WORDS, words

__all__ = ["FirstNames", "called_names", "with_names_written_out"]

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_NAME = r"([^\W\d_][^\W\d_'’-]*)"
_CALLED_FIRST = re.compile(r"\W*" + _NAME + r"\s*(?:[,!?.…]+|$)")
"""A turn opening with a word alone: "Shiv. The slides", "SHIV!! so", "Thandi,"."""
_CALLED_AFTER = re.compile(
    r"\b(?:hey|hi|hiya|heya|hello|yo|thanks|thank you|thx|ty|bye|night|morning|"
    r"congrats|congratulations|love you|miss you|ok|okay|sorry|welcome|dear)"
    r"\s*,?\s+" + _NAME + r"(?=\s*(?:[,!?.…]|$)|\s+[^\w\s])",
    re.IGNORECASE,
)
"""A word after a greeting, alone before a stop or an emoji: "hey thandi!",
"bye Thandi!", "thank you Thandi ❤️"; not a cheer ("Go Jesse!" cheers her son on)."""
_NOT_CALLED = STOP_WORDS | CALENDAR_WORDS


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

    def begun_like(self, word: str) -> bool:
        """Whether ``word`` is no speaker's first name but its first letters start
        one ("tobi" of "tobenna"): a short form :meth:`started_by` cannot read,
        which may still be theirs."""
        at = bisect.bisect_left(self.firsts, word)
        if at < len(self.firsts) and self.firsts[at] == word:
            return False
        return bool(self.started_by(word[:SHORTEST_NAME]))


def called_names(text: str) -> list[str]:
    """The words ``text`` calls someone by, in lower case: a word that opens it
    alone ("Shiv.", "SHIV!! so the stall is happening??") or follows a greeting
    ("hey thandi!", "thank you Thandi ❤️"). Many are no names ("Wow!", "thanks
    guys!"): only a word the reply comes from one speaker to, again and again,
    is read as their name (:meth:`EpisodeIndex.called`)."""
    found = []
    first = _CALLED_FIRST.match(text)
    if first is not None:
        found.append(first.group(1).casefold())
    found += [match.group(1).casefold() for match in _CALLED_AFTER.finditer(text)]
    return [word for word in dict.fromkeys(found) if word not in _NOT_CALLED and len(word) > 1]


def with_names_written_out(
    question: str,
    speakers: FirstNames,
    *,
    is_name: Callable[[str], bool],
    called: Callable[[str], str | None] = lambda _word: None,
) -> str:
    """``question`` with each word that is the short form of one speaker's first
    name written as that name ("Pri's" → "Priyanka's").

    ``is_name(word)``: whether some entity's name holds ``word`` (lower case); such
    a word already names someone and is kept. ``called(word)``: the first name of
    the speaker the others call by ``word`` in the chat ("shiv" → "siobhán"), if
    any; such a word is written out as that name when an entity's name holds it
    (the one the texts calling her made).
    In a question written with capitals, only a word written with one is read as
    a name.
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
        name = called(lower)
        if name is None or not is_name(lower):  # "Wow!" is answered too, and names no one
            found = speakers.started_by(lower)
            if len(found) != 1 or is_name(lower):
                return word
            name = found[0]
        return name[:1].upper() + name[1:] if capitals else name.casefold()

    return _WORD.sub(written_out, question)
