"""Whose news a remembered text tells: its speaker's, or someone else's.

"Where does Ada work now?" looks for Ada's texts in the words job news comes in.
"chidi got a part time job btw, at a bike shop" is said by Ada but is her
brother's news; "start date is 10 nov, royal north shore ICU!!!!" is hers.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memgraph.text import words

__all__ = ["tells_another_s_news"]

_OWN = frozenset(
    {"i", "me", "my", "mine", "myself", "im", "ive", "id", "ill", "we", "us", "our", "ours"}
    | {"were", "weve"}  # "were in!!!" typed without its apostrophe
)
_THIRD = frozenset(
    {"he", "hes", "she", "shes", "they", "theyre", "theyve", "his", "her", "their", "him", "them"}
)
_OPENERS = frozenset(
    {"so", "and", "but", "oh", "omg", "ok", "okay", "also", "btw", "well", "anyway"}
    | {"other", "news", "guess", "what", "update", "actually", "lol", "haha", "yeah"}
    | {"yep", "wow"}
)
"""Words a message opens with before its subject ("omg chidi got in!!")."""
_CAPITALISED = re.compile(r"\b[A-Z][a-z]")
_CLAUSES = re.compile(r"[^.!?;,\n]+")


def tells_another_s_news(text: str, someone_else: Callable[[str], bool]) -> bool:
    """Whether ``text`` tells of someone other than its speaker: it says nothing in
    the first person, and its first clause's subject is "he", "she", "they" or a
    name ``someone_else`` says is another person's (written with a capital, unless
    the text writes no word with one). A name alone before a comma calls the
    listener ("Malik, that's huge!"): the clause after it is the first."""
    if _OWN & set(words(text)):
        return False
    clauses = [c for c in _CLAUSES.findall(text) if words(c)]
    if len(clauses) > 1 and len(words(clauses[0])) == 1:
        clauses = clauses[1:]
    if not clauses:
        return False
    cased = _CAPITALISED.search(text) is not None  # "AND" or "ICU" alone is no capital
    for token in clauses[0].split():
        word = words(token)
        if not word or word[0] in _OPENERS:
            continue
        if word[0] in _THIRD:
            return True
        written = token.lstrip("\"'([“‘")
        return (not cased or written[:1].isupper()) and someone_else(word[0])
    return False
