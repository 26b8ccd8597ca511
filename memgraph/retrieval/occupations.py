"""Whether a job a question asks for was ever said.

"What does Riaan do for a living?" is answered only by a text that names a job
("he's a fisherman out of Oban", "she teaches geography", "a jeweller from
Kottayam town"). When none of what recall found does, what it found is only the
nearest (his name, his weekend), and recall says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memgraph.answer_kinds import KINDS
from memgraph.text import index_terms

__all__ = ["JOBS", "asks_job", "names_a_job"]

_ASKS_JOB = re.compile(
    r"\b(?:do(?:es)? for (?:a )?(?:living|work|job)|occupation|profession|"
    r"what (?:kind of |sort of )?job|what does [\w ]{1,40}? do(?: now)?(?=\s*\?|\s*$)|"
    r"\w+['’]s (?:(?:current|new) )?job\b)",
    re.IGNORECASE,
)
_MORE_JOBS = (
    "fisherman jeweller jeweler miner sailor carer caregiver porter guard security "
    "shopkeeper storekeeper manager supervisor foreman labourer laborer joiner plasterer "
    "painter decorator tiler glazier upholsterer restorer potter weaver seamstress "
    "dressmaker cobbler locksmith blacksmith goldsmith auctioneer estate agent broker "
    "trader investor entrepreneur founder ceo cto cfo executive administrator assistant "
    "coordinator organiser organizer planner caterer sommelier brewer distiller vintner "
    "rancher shepherd beekeeper forester arborist groundskeeper janitor caretaker "
    "concierge housekeeper dispatcher operator conductor steward stewardess attendant "
    "crew paramedic dentist hygienist nurse doctor surgeon professor teacher "
    "programmer coder engineer developer designer illustrator animator producer "
    "director presenter host dj broadcaster reporter columnist blogger influencer "
    "streamer youtuber model athlete footballer cricketer golfer jockey referee umpire "
    "coach scientist researcher academic lecturer postdoc phd student apprentice "
    "trainee intern volunteer retired unemployed homemaker housewife househusband"
)
JOBS = next(kind.cues for kind in KINDS if kind.name == "occupation") | frozenset(
    t for word in _MORE_JOBS.split() for t in index_terms(word)
)
"""The index terms of jobs' names ("fisherman", "nurse", "teaches")."""
_JOB_LIKE = re.compile(r"\b\w{4,}(?:ist|ician|ologist)s?\b|\b\w{3,}(?:man|woman|smith)\b", re.I)
"""A job not listed by name, shaped like one ("a florist", "a linesman")."""


def asks_job(question: str) -> bool:
    """Whether ``question`` asks what someone does for a living ("What does
    Riaan do for work?", "What is Ana's job?")."""
    return _ASKS_JOB.search(question) is not None


def names_a_job(texts: Iterable[str]) -> bool:
    """Whether any of ``texts`` names a job: one of :data:`JOBS`, or a word shaped
    like one ("florist", "linesman")."""
    return any(JOBS & set(index_terms(text)) or _JOB_LIKE.search(text) for text in texts)
