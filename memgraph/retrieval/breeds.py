"""Whether a breed a question asks for was ever said.

"What breed is Isla's dog?" is answered only by a text that names a breed ("a
kelpie", "Collie cross", "a retired racing greyhound"). When none of what recall
found does, what it found is only the nearest (the dog's walks, its vet bills),
and recall says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memgraph.text import index_terms

__all__ = ["BREEDS", "asks_breed", "names_a_breed"]

_ASKS_BREED = re.compile(r"\bbreeds?\b", re.IGNORECASE)
_BREED_WORDS = (
    # dogs
    "labrador retriever labradoodle goldendoodle cockapoo cavapoo cavachon poodle spaniel "
    "cocker cavalier terrier pitbull bulldog beagle basset greyhound whippet lurcher "
    "saluki collie sheepdog shepherd alsatian husky malamute samoyed akita shiba corgi "
    "dachshund chihuahua pug pomeranian maltese bichon schnauzer dalmatian rottweiler "
    "doberman mastiff newfoundland bernese setter vizsla weimaraner kelpie heeler "
    "ridgeback pinscher papillon havanese bloodhound foxhound deerhound wolfhound mutt "
    "mongrel crossbreed boxer "
    # cats
    "tabby siamese ragdoll sphynx shorthair longhair moggy moggie tortie tortoiseshell "
    "calico burmese abyssinian birman"
)
BREEDS = frozenset(t for word in _BREED_WORDS.split() for t in index_terms(word))
"""The index terms of breeds' names ("kelpie", "greyhound", "tabby")."""
_BREED_LIKE = re.compile(
    r"\b(?:\w+(?:hond|hondje|hound|doodle|poo)s?|\w+ (?:mix|cross)|staff(?:ie|y|ies)|"
    r"westies?|yorkies?|frenchies?|labs?|aussies?|jack russells?|golden retrievers?|"
    r"pit bulls?|maine coons?|great danes?|shih tzus?|springers?)\b",
    re.IGNORECASE,
)
"""A breed not listed by name: "a Kooikerhondje mix", "a sproodle"."""


def asks_breed(question: str) -> bool:
    """Whether ``question`` asks what breed a pet is ("What breed is Isla's dog?")."""
    return _ASKS_BREED.search(question) is not None


def names_a_breed(texts: Iterable[str]) -> bool:
    """Whether any of ``texts`` names a breed: one of :data:`BREEDS`, or a word
    shaped like one ("Kooikerhondje mix")."""
    return any(BREEDS & set(index_terms(text)) or _BREED_LIKE.search(text) for text in texts)
