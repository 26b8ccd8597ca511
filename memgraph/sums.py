"""Questions that ask for a sum of money, and texts that state one.

"How much did the oven repair cost?" asks a sum; "£1,800 to fix", "72k", "six
grand", "rent is 1450", "$34 an hour" state one. Plain text rules, used by
recall (:mod:`memgraph.retrieval.amounts`) and by the offline re-ranker.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memgraph.text import index_terms

__all__ = [
    "AMOUNT_WORDS",
    "asks_amount",
    "asks_for_a_sum",
    "paid_as",
    "payment_asked",
    "states_amount",
]

_MONEY_WORDS = (
    "cost costs costed pay pays paid paying spend spends spent spending charge charges "
    "charged earn earns earned earning salary salaries rent rents price priced prices fee "
    "fees wage wages rate rates budget worth owe owes owed borrow borrowed loan deposit "
    "fare fares tuition bill bills offer offered sell sold sale donate donated severance "
    "bonus refund tickets ticket money"
)
AMOUNT_WORDS = frozenset(
    index_terms(
        "cost costs pay pays paid paying spend spends spent charge charges charged earn "
        "earns earned owe owed worth money much roughly approximately around"
    )
)
"""The words that ask for an amount, not what it was for ("rent", "ring"): a text
need not hold them to speak of the same thing."""

_MONEY_TERMS = frozenset(index_terms(_MONEY_WORDS))
_HOW_MUCH = re.compile(
    r"^\s*(?:(?:roughly|about|approximately|around|so) )?how much\b(?! (?:time|longer|weight))",
    re.IGNORECASE,
)
_WHAT_SUM = re.compile(
    r"^\s*(?:what|which)(?:\s+(?:was|is|were|are))?(?:\s+the)?(?:\s+[\w'’]+){0,3}?\s+"
    r"(?:salary|rent|price|fee|wage|rate|budget|deposit|fare|tuition|severance|bonus|cost)\b"
    r"|^\s*what (?:did|does|do|will|would)\b[^?]*(?:(?<!the )(?<!a )\b(?:cost|costing|set \w+ back)\b"
    # "What did the meal come to?", not "the children who come to the food bank"
    r"|\bcome to(?:\s+in total|\s+altogether)?\s*\??\s*$)",
    re.IGNORECASE,
)
_NOT_MONEY = re.compile(r"\b(?:weigh\w*|heavy|tall|far|long|time)\b", re.IGNORECASE)

_QUESTION = re.compile(r"[^.!?\n]*\?")
_PAID_ASKED = re.compile(r"\b(?:cost|costs|price|pay|paid|spend|spent|charge|charged)\b", re.I)


def asks_for_a_sum(turn: str) -> bool:
    """Whether a turn of a chat asks the other for a sum: one of its questions asks
    "how much" (not of time or weight) or what something cost, was paid or charged
    ("How much is new?", "what did it cost?", "did they charge you?"). Unlike
    :func:`asks_amount`, a bare "how much" asks for money here: the turn before
    said what was paid for ("a new one would cost almost as much")."""
    return any(
        (_HOW_MUCH.search(asked) and not _NOT_MONEY.search(asked))
        or _WHAT_SUM.search(asked)
        or _PAID_ASKED.search(asked)
        for asked in _QUESTION.findall(turn)
    )


_NUMBER_WORD = (
    r"(?:a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|"
    r"twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|a few|few|couple)"
)
_COUNTED = (
    "steps|words|followers|views|subscribers|likes|streams|downloads|plays|listeners|readers|"
    "people|runners|miles|km|kms"
)
"""What a number may count that is no money ("28k steps", "190,000 miles")."""
_PERCENT_SAID = r"\b\d+(?:\.\d+)?\s?(?:%|percent|per ?cent)"
_AMOUNT = re.compile(
    r"[$£€¥₹₩₦₱฿₺₽₴₪₫]\s?\d"  # $1,450  £72  ₹38,000  ₩620,000
    r"|(?<![\w$])(?:r\s?\d[\d,.]*\d|(?:rs\.?|kr|zł|chf|[a-z]{1,2}\$)\s?\d)"  # R1,450 NZ$90
    # 72k  1.2 million; not a distance run ("ran 18k") or a count ("28k steps")
    # ("Did 28k on Sunday along the lake", "5k very slow, no pain at all")
    r"|(?<!\bran )(?<!\brun )(?<!walked )(?<!cycled )(?<!\bswam )(?<!\brode )"
    r"(?<!\bdid )(?<!\bdone )(?<!\bdoing )(?<!\bdo )(?<!\ban )(?<!\ba )(?<!\beasy )"
    r"\b\d[\d,.]*\s?(?:k|K|grand|mil|m|bn|million|billion|thousand)\b"
    r"(?!\s?(?:" + _COUNTED + r"|run|race|swim|ride|"
    r"(?:very |so |really )?(?:slow|easy|fast|pace|loop|route|pb|time))\b)"
    r"|\b\d[\d,.]*\s?(?:dollars?|bucks|pounds?|quid|euros?|rand|rupees?|lakhs?|crores?|"
    r"yen|usd|aud|cad|gbp|eur|nzd|sgd|inr|zar|chf|"
    r"z[łl]oty|z[łl]otys|zł|pln|kronor|kroner|krona|krone|kr|sek|nok|dkk|baht|pesos?|"
    r"francs?|dirhams?|naira|shillings?|ringgit|lira|reais|forint|huf|dinars?|riyals?|"
    r"r[ou]?ubles?|yuan|rmb|cny|jpy|mxn|brl|czk|kč)(?!\w)"
    r"|\b(?:usd|aud|cad|gbp|eur|nzd|sgd|inr|zar|chf|rs\.?)\s?\d"
    r"|\b" + _NUMBER_WORD + r"(?:[ -]\w+)? (?:grand|hundred|thousand|million|bucks|quid|k)\b"
    # 6,500 (a year is never written with a comma); not "190,000 miles"
    r"|\b\d{1,3}(?:,\d{3})+\b(?!\s?(?:"
    + _COUNTED
    + r"|kilomet(?:re|er)s)\b)"
    + r"|"
    + _PERCENT_SAID
    + r"|\b\d[\d,.]*\s?(?:an|a|per|/)\s?(?:hour|hr|month|mo|week|wk|year|yr|night)\b"
    r"|\b(?:rent|rents|cost|costs|paid|pay|pays|price|salary|spent|fee|charges?|deposit|"
    r"budget|offer(?:ed)?|sold|sell|worth)\b[^.!?\d]{0,30}\b(?!(?:19|20)\d\d\b)\d{2,}\b(?!\s?(?:am|pm|years?|"
    r"yrs?|days?|weeks?|months?|hours?|minutes?|mins?|miles?|km|kg|lbs?|pounds? of)\b)"
    r"|\b\w+ (?:weeks?|months?|years?)['’]? (?:pay|salary|wages|rent|severance)\b"
    r"|\b(?:for free|was free|were free|free of charge|cost nothing|paid nothing)\b",
    re.IGNORECASE,
)


def asks_amount(question: str) -> bool:
    """Whether ``question`` asks for a sum of money ("How much did Arjun pay for
    the ring?", "What salary came with the offer?"), not a weight or a time."""
    if _WHAT_SUM.search(question):
        return True
    if not _HOW_MUCH.search(question) or _NOT_MONEY.search(question):
        return False
    return bool(_MONEY_TERMS.intersection(index_terms(question)))


_PER = r"(?:\s?(?:a|an|per|/|each)\s?)"
_PAID_SO = {
    term: re.compile(pattern, re.IGNORECASE)
    for words, pattern in (
        ("rent", r"\d[\d,.]*k?" + _PER + r"(?:month|mo|week|wk|fortnight)\b|\d\s?(?:pcm|pw)\b"),
        (
            "salary",
            r"\d[\d,.]*\s?k\b|\d[\d,.]*" + _PER + r"(?:year|yr|annum)\b"
            r"|\d[\d,.]*" + _PER + r"(?:month|mo)\s+(?:gross|net|before tax|after tax)\b",
        ),
        ("wage rate", r"\d[\d,.]*" + _PER + r"(?:hour|hr|h)\b"),
    )
    for term in index_terms(words)
}
"""How a sum of the kind a word names is said: rent by the month or week, a salary
by the year or in thousands, a wage by the hour."""


_PAYMENTS = frozenset(
    index_terms("rent salary wage wages fee fees fare fares tuition deposit bonus severance")
)
_SUMS_OF_SEVERAL = re.compile(
    r"\b(?:altogether|in total|total|including|combined|together|more|less|difference|"
    r"between|than)\b",
    re.IGNORECASE,
)


_SAID_WITH = {
    index_terms(kind)[0]: frozenset(index_terms(said))
    for kind, said in {
        "salary": "pay paid earn earns earning wage",
        "wage": "pay paid earn earns earning hour",
        "fare": "ticket tickets",
    }.items()
}
"""The other words a payment of a kind is said with ("the pay is so much better,
around €38,000 to start" for a salary)."""


def payment_asked(question: str) -> frozenset[str]:
    """The kind of payment a question asking one sum names ("rent", "salary", "fee"
    of "How much is the HOA fee?") and the other words it is said with ("pay" for a
    salary): a sum that answers it is said with one of them, or the way such a sum
    is paid. None for a sum of several ("altogether, including the fee to change
    it")."""
    if _SUMS_OF_SEVERAL.search(question):
        return frozenset()
    asked = frozenset(index_terms(question)) & _PAYMENTS
    return asked.union(*(_SAID_WITH.get(term, ()) for term in asked))


def paid_as(topic: Iterable[str], text: str) -> bool:
    """Whether ``text`` states a sum the way one of ``topic``'s payments is paid
    ("950 a month" for rent, "72k" for a salary, "$34 an hour" for a wage)."""
    return any(term in _PAID_SO and _PAID_SO[term].search(text) for term in topic)


_PERCENT = re.compile(_PERCENT_SAID, re.IGNORECASE)
_A_CHANGE_ASKED = re.compile(
    r"\b(?:up|down|increase|increased|rise|rose|raise|raised|cut|cuts|discount|interest|"
    r"percent|percentage|per ?cent|%|share|tip|commission|rate)\b",
    re.IGNORECASE,
)


def states_the_sum_asked(text: str, question: str) -> bool:
    """Whether ``text`` states a sum that may be the one ``question`` asks ("How much
    rent does Tunde pay?", "How much was the band paid?"): not only a share ("It's 2%
    max", "100%."), unless the question asks a change or a rate ("How much did the
    rent go up?")."""
    if _A_CHANGE_ASKED.search(question):
        return states_amount(text)
    return states_amount(_PERCENT.sub(" ", text))


def states_amount(text: str) -> bool:
    """Whether ``text`` states a sum of money or a rate ("$1,450", "R1,450", "NZ$90",
    "72k", "six grand", "38,000 rupees", "4.5%", "£30 an hour", "it was free")."""
    return bool(_AMOUNT.search(text))
