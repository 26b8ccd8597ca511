"""Whether an answer of the kind a question asks for was ever said.

Some questions are answered by a word of a kind: "What breed is Isla's dog?" by
a breed ("a kelpie"), "What does Riaan do for a living?" by a job ("a
fisherman"), "Which airline did Priya fly?" by an airline ("Qantas"), "What
instrument does Leah play?" by an instrument, "What car does Evelyn drive?" by
a car's make or model, "What was Dana's finishing time?" by a time ("1:58:40",
"just under four hours"), "What did Meera study?" by a field ("civil
engineering"). When none of what recall found says a word of that kind, what it
found is only the nearest (the dog's walks, the flight's date), and recall says
so instead of handing it over as the answer.

Each kind is its words (:attr:`KindOfAnswer.words`) and the shapes words of it
often have (:attr:`KindOfAnswer.shapes`: "a Kooikerhondje mix", "a florist"),
since no list of them is complete; a word a kind shares with everyday ones
("staff", "lab", "Jack") is left to its shape, or out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from memgraph.answer_kinds import BREED_NAMES, OCCUPATION_WORDS
from memgraph.dates import MONTHS, WEEKDAYS
from memgraph.text import STOP_WORDS, words

__all__ = [
    "BIRTHDAY",
    "FINISH_TIME",
    "GRADE",
    "KINDS_SAID",
    "OUTCOME",
    "STREET",
    "STUDY",
    "KindOfAnswer",
    "kind_asked",
]


_WORD = re.compile(r"[a-z0-9]+")


def _words(words: str) -> frozenset[str]:
    return frozenset(words.lower().split())


def _said(text: str) -> set[str]:
    """The words of ``text``, lowercased, each also without a plural ending
    ("kelpies", "nurses"): whole words, as a stem would join "pottery" to
    "potter" and "office" to "officer"."""
    found: set[str] = set()
    for word in _WORD.findall(text.lower().replace("’", "'")):
        found.add(word)
        if word.endswith("s") and len(word) > 3:
            found.add(word[:-1])
            if word.endswith("es"):
                found.add(word[:-2])
    return found


@dataclass(frozen=True)
class KindOfAnswer:
    """A kind of answer a question can ask for, and how a text says one."""

    name: str
    asks: re.Pattern[str]
    """A pattern over the question that asks for this kind."""
    words: frozenset[str]
    """Words of this kind, lowercased ("kelpie", "nurse")."""
    shapes: re.Pattern[str] | None = None
    """A pattern over a text for words of this kind not listed by name."""
    not_of_it: re.Pattern[str] | None = None
    """Where a word of this kind says none ("can't cook", "like a little soldier")."""
    of_another: Callable[[str, str], bool] | None = None
    """Whether a text says one for something other than the question asks (a time
    for another race's distance)."""
    of_a_thing: bool = False
    """Whether it is said of a thing of theirs ("What breed is Tomasz's dog Moss?"),
    so whose it is goes by who says it, not by whom the sentence speaks of (a pet is
    "he", "she" and its own name)."""
    spotted: Callable[[str], bool] | None = None
    """A test over a text for answers of this kind no pattern says simply (a mark:
    a bare number that is no date, age or count)."""

    def asked(self, question: str) -> bool:
        """Whether ``question`` asks for an answer of this kind."""
        return self.asks.search(question) is not None

    def said_in(self, texts: Iterable[str]) -> bool:
        """Whether any of ``texts`` says a word of this kind."""
        return any(self._says(text) for text in texts)

    def answers(self, text: str, question: str) -> bool:
        """Whether ``text`` says a word of this kind for what ``question`` asks:
        "I did the 10k in 52:40" says a finishing time, but not the half
        marathon's."""
        return self._says(text) and not (
            self.of_another is not None and self.of_another(text, question)
        )

    def _says(self, text: str) -> bool:
        if self.not_of_it is not None:
            text = self.not_of_it.sub(" ", text)
        return (
            bool(self.words & _said(text))
            or (self.shapes is not None and self.shapes.search(text) is not None)
            or (self.spotted is not None and self.spotted(text))
        )


_CAT_BREEDS = _words(
    "tabby siamese persian ragdoll bengal sphynx shorthair longhair tortoiseshell tortie "
    "moggy moggie calico burmese abyssinian birman"
)
"""Breeds (and coats) of cats only: none of them answers what breed a dog is."""
_BREED_WORDS = _CAT_BREEDS | _words(
    BREED_NAMES + " goldendoodle cavachon cocker cavalier basset saluki shepherd "
    "alsatian setter doberman pinscher havanese bloodhound foxhound deerhound wolfhound "
    "mongrel crossbreed boxer"
)
_PEOPLES = "persian|siamese|burmese|bengal|abyssinian"
"""Cat breeds that are also a people's or a language's name."""
_NOT_A_PET = re.compile(
    # a people or a language: "in Persian", "English and Persian", "Persian tradition"
    rf"(?<=\bin )(?:{_PEOPLES})\b|(?<=\band )(?:{_PEOPLES})\b|"
    rf"\b(?:{_PEOPLES})(?= (?!cats?\b|kittens?\b|mix\b|cross\b)[a-z])|"
    # a likeness: "the most beagle thing I've ever heard", "peak greyhound energy"
    r"\b(?:most|so|very|such an?|peak|total|full) [a-z]+ (?:thing|energy|behaviou?r|vibes?|move)s?\b",
    re.IGNORECASE,
)


_MAINE_COON = re.compile(r"\bmaine coons?\b", re.IGNORECASE)
_ASKS_DOG = re.compile(r"\b(?:dogs?|pupp(?:y|ies)|pups?)\b", re.IGNORECASE)
_ASKS_CAT = re.compile(r"\b(?:cats?|kittens?|kitty)\b", re.IGNORECASE)


def _another_animal(sentence: str, question: str) -> bool:
    """Whether ``sentence`` names only breeds of another animal than the one
    ``question`` asks of: "a ginger tabby cat" gives no breed of a dog."""
    asks_dog = _ASKS_DOG.search(question) is not None
    if asks_dog == (_ASKS_CAT.search(question) is not None):
        return False
    said = _said(sentence)
    cats = bool(_CAT_BREEDS & said) or _MAINE_COON.search(sentence) is not None
    rest = _MAINE_COON.sub(" ", sentence)  # every other shape ("a collie mix") is a dog's
    dogs = bool((_BREED_WORDS - _CAT_BREEDS) & said) or (
        BREED.shapes is not None and BREED.shapes.search(rest) is not None
    )
    return cats and not dogs if asks_dog else dogs and not cats


BREED = KindOfAnswer(
    "breed",
    re.compile(r"\bbreeds?\b", re.IGNORECASE),
    _BREED_WORDS,
    re.compile(
        # "a collie mix", not "a mix of days and nights"; "a black lab", "lab cross", not
        # "lab coats" nor "our skills lab"
        r"\b(?:\w+(?:hond|hondje|hound|doodle|poo)s?|"
        r"(?!(?:a|an|the|of|in|good|nice|big|great|bit|whole|weird|total|perfect|real)\b)"
        r"\w+ (?:mix|cross)|staff(?:ie|y|ies)|westies?|yorkies?|frenchies?|"
        r"(?:black|yellow|chocolate|golden|fox red) labs?|labs? (?:mix|cross|x|pup|puppy)|"
        r"aussies?|jack russells?|golden retrievers?|"
        r"pit bulls?|maine coons?|great danes?|shih tzus?|springers?)\b",
        re.IGNORECASE,
    ),
    not_of_it=_NOT_A_PET,
    of_another=_another_animal,
    of_a_thing=True,
)
"""A pet's breed ("What breed is Isla's dog?")."""

JOB = KindOfAnswer(
    "job",
    re.compile(
        r"\b(?:do(?:es)? for (?:a )?(?:living|work|job)|occupation|profession|"
        r"what (?:kind of |sort of )?job|what does [\w ]{1,40}? do(?: now)?(?=\s*\?|\s*$)|"
        r"\w+['’]s (?:(?:current|new) )?job\b)",
        re.IGNORECASE,
    ),
    _words(
        OCCUPATION_WORDS
        + " "
        + "fisherman jeweller jeweler miner sailor carer caregiver porter guard security "
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
    ),
    re.compile(r"\b\w{4,}(?:ist|ician|ologist)s?\b|\b\w{3,}(?:man|woman|smith)\b", re.IGNORECASE),
    # a verb ("we still can't cook", "I'll host"), a likeness ("like a little soldier"),
    # someone else at work ("the doctor moved her due date", "Midwife reckons it could
    # be early")
    re.compile(
        r"\b(?:can|can['’]?t|cannot|could|couldn['’]?t|will|won['’]?t|would|wouldn['’]?t|to|"
        r"don['’]?t|didn['’]?t|doesn['’]?t|never|should|must|gonna|wanna|i['’]ll|we['’]ll)\s+(?!\w+ing\b)\w+|"
        r"\blike\s+(?:an?\s+)?(?:little\s+|old\s+|real\s+|proper\s+)?\w+|"
        r"(?:\bthe\s+|^\W*|(?<=[.!?])\s+)\w+\s+(?:said|says|told|tells|came|comes|moved|thinks|"
        r"thought|wants|wanted|"
        r"called|calls|asked|asks|gave|gives|reckons|reckoned|rang)\b|"
        # someone's someone at work: "Priya's doctor doesn't want her flying", "my midwife"
        # ("he's retired", "Tom's a nurse" say theirs)
        r"\b(?:my|your|ur|his|her|their|our|"
        r"(?!(?:he|she|it|that|what|who|there|here|where|let|how)['’]s)[\w-]+['’]s)\s+"
        r"(?:new\s+|old\s+|own\s+)?['\"‘“]?(?!(?:a|an|the|now|still|retired|unemployed)\b)\w+",
        re.IGNORECASE,
    ),
)
"""What someone does for a living ("What does Riaan do for work?")."""

AIRLINE = KindOfAnswer(
    "airline",
    re.compile(r"\bairlines?\b|\bwhat carrier\b", re.IGNORECASE),
    _words(
        "ryanair easyjet klm lufthansa qantas jetstar emirates etihad qatar delta united "
        "southwest jetblue westjet iberia vueling finnair swiss austrian aeromexico latam "
        "avianca copa indigo vistara loganair flybe eurowings transavia norwegian wizz "
        "frontier spirit allegiant icelandair aerlingus lingus cathay ana jal virgin tap "
        "sas alitalia ita aegean pegasus turkish ethiopian kenya saudia airasia scoot "
        "cebu garuda flydubai airbaltic condor volotea jet2 porter flair aircanada"
    ),
    re.compile(
        r"\b[A-Z][\w-]+ (?:Air(?:ways|lines?)?)\b|\bAir [A-Z][\w-]+|\bBA\b|\bBritish Airways\b",
    ),
    # a people, a country or an everyday word ("a great Turkish bakery", "Ana says")
    # is an airline only after a word of flying ("flew Turkish", "booked on Swiss")
    re.compile(
        r"(?<!\bflew )(?<!\bfly )(?<!\bflying )(?<!\bwith )(?<!\bon )(?<!\bbooked )"
        r"\b(?:turkish|swiss|austrian|ethiopian|norwegian|kenya|united|virgin|delta|spirit|"
        r"frontier|porter|copa|condor|ana|indigo|pegasus|tap|flair|scoot|sas|ita|aegean|"
        r"saudia|cebu|garuda)\b(?! air(?:ways|lines?)?\b)",
        re.IGNORECASE,
    ),
)
"""Which airline someone flew ("Which airline did Priya fly to Mexico City?")."""

INSTRUMENT = KindOfAnswer(
    "instrument",
    re.compile(r"\binstruments?\b", re.IGNORECASE),
    _words(
        "guitar guitars bass drums drum drummer piano pianist keyboard keyboards violin "
        "violinist viola cello cellist fiddle ukulele uke banjo mandolin harp harpist flute "
        "clarinet saxophone sax trumpet trombone tuba horn oboe bassoon accordion harmonica "
        "bagpipes organ synth sitar setar tabla djembe bodhran bouzouki oud "
        "erhu guzheng koto shamisen marimba xylophone vibraphone percussion timpani cajon "
        "vocals vocalist singer"
    ),
)
"""A musical instrument ("What instrument does Leah play in her band?")."""

CAR = KindOfAnswer(
    "car",
    re.compile(
        r"\b(?:what|which) (?:(?:make|model|brand|kind|type) (?:of )?)?"
        r"(?:car|truck|van|suv|pickup|motorbike|motorcycle)s?\b|\bmake of (?:car|truck|van)\b",
        re.IGNORECASE,
    ),
    _words(
        "toyota honda ford volkswagen vw vauxhall opel skoda audi bmw mercedes merc benz "
        "volvo saab nissan mazda subaru mitsubishi hyundai kia tesla fiat renault peugeot "
        "citroen citroën dacia jeep dodge chevy chevrolet gmc chrysler buick cadillac "
        "lincoln lexus acura infiniti porsche ferrari lamborghini jaguar suzuki cupra "
        "polestar rivian corolla yaris camry prius rav4 sienna highlander tacoma tundra "
        "hilux landcruiser civic accord crv odyssey jazz f150 focus fiesta mustang transit "
        "ranger golf polo passat tiguan astra corsa fabia octavia superb leaf qashqai micra "
        "juke outback forester impreza crosstrek wrangler corvette silverado vivaro sprinter "
        "hatchback estate minivan campervan motorhome ute"
    ),
    # "a 2019 Yaris", "Land Rover": a year before a capitalised word, not "2019 and"
    re.compile(r"\b(?:19|20)\d\d [A-Z][a-z]+|\b(?i:land rover|range rover|model [3sxy])\b"),
)
"""The make or model of someone's car ("What car does Evelyn drive?")."""

_DISTANCE = re.compile(
    r"\b(?P<half>half[\s-]?marathon|half\b)|\b(?P<full>marathon)\b|\b(?P<km>\d+)\s?(?:k|km)\b",
    re.IGNORECASE,
)


def _distances(text: str) -> set[str]:
    """The race distances ``text`` names, as kilometres ("half marathon": "21",
    "a 10k": "10", "marathon": "42")."""
    found = set()
    for said in _DISTANCE.finditer(text):
        found.add("21" if said["half"] else "42" if said["full"] else said["km"])
    return found


def _another_race(sentence: str, question: str) -> bool:
    """Whether ``sentence`` gives a time for a race of another distance than the
    one ``question`` asks of ("I did the 10k in 52:40" for "the half marathon")."""
    asked = _distances(question)
    said = _distances(sentence)
    return bool(asked and said and not asked & said)


_HOPED = re.compile(
    r"\b(?:if|aim|aiming|goal|target|hoping|hope|want|wanna|plan|planning|predicted"
    r"|would|could|should|might|maybe|reckon)\b[^.!?\n]*",
    re.IGNORECASE,
)
"""Where a time is hoped for or supposed, not run ("if i hold that i'm under 4 hours",
"aiming for 1:45"): to the end of its sentence."""


def _another_race_or_hoped(sentence: str, question: str) -> bool:
    """A time for another race (:func:`_another_race`), or one only hoped for when the
    question asks the time run ("What was Sam's time?", not "What time was Wanjiru
    aiming for?")."""
    if _another_race(sentence, question):
        return True
    if _HOPED.search(question):
        return False
    return _RACE_TIME.search(_HOPED.sub(" ", sentence)) is None


_RACE_TIME = re.compile(
    # not a pace ("5:38/km") nor how long something went on ("for an hour")
    r"\b\d{1,2}:\d{2}(?::\d{2})?\b(?!\s*(?:/|per\s)\s*(?:km|k|mi|mile)\b)|"
    r"\b\d{1,2}h\s?\d{1,2}\b|"
    r"(?<!\bfor )\b\d+(?:\.\d+)?\s?(?:h|hrs?|hours?|mins?|minutes)\b|"
    # not how long a chore took ("fixed the gate in half an hour")
    r"(?<!\bfor )(?<!\bhalf )\b(?:an?|one|two|three|four|five|six|seven|eight|nine|ten)"
    r"(?: and a half)?\s+(?:hrs?|hours?|mins?|minutes)\b",
    re.IGNORECASE,
)
"""How a race's time is said ("1:58:40", "just under four hours")."""


FINISH_TIME = KindOfAnswer(
    "finishing time",
    re.compile(
        r"\bfinish(?:ing)? time\b|\bwhat time did [\w ]{1,40}? (?:run|finish|do|get)\b|"
        r"\bhow (?:long|fast) did [\w ]{1,40}? take to (?:run|finish|complete)\b|"
        # "What was Sam's time in the Manchester half marathon?", "Kenji's swim time"
        r"\bwhat (?:was|is) [\w ]{1,40}?['’]s (?:(?:half )?marathon |race |run |swim |bike |"
        r"\d+k )?time (?:in|at|for)\b[^?]*\b(?:marathon|race|run|\d+k|triathlon|parkrun|ultra|"
        r"relay|sprint|duathlon|heat)s?\b|"
        r"\bwhat (?:was|is) [\w ]{1,40}?['’]s (?:(?:half )?marathon|race|run|swim|bike|\d+k) time\b",
        re.IGNORECASE,
    ),
    frozenset(),
    _RACE_TIME,
    of_another=_another_race_or_hoped,
)
"""The time someone finished a race in ("What was Dana's finishing time in the
half marathon?": "1:58:40", "just under four hours")."""

STUDY = KindOfAnswer(
    "field of study",
    re.compile(
        r"^\s*what\s+(?:did|does|do|is|was|will)\s+[\w'’ -]{1,40}?\s+(?:stud(?:y|ying)|major(?:ing)?"
        r"(?:\s+in)?)(?:\s+(?:at|in|for)\s+(?![^?]*\b(?:phd|doctorate|thesis|dissertation|"
        r"research)\b)[^?]{1,50})?\s*\??\s*$",
        re.IGNORECASE,
    ),
    _words(
        "architecture engineering engineer medicine medical law nursing pharmacy psychology "
        "physio physiotherapy music geography history biology chemistry physics maths math "
        "mathematics economics econ accounting accountancy finance business marketing management "
        "computing cs software philosophy politics sociology anthropology english literature "
        "languages linguistics art arts design fashion film media journalism education teaching "
        "med veterinary vet dentistry neuroscience science sciences environmental agriculture "
        "forestry marine geology astronomy statistics stats data nutrition dietetics sport sports "
        "kinesiology theatre drama dance photography culinary hospitality tourism midwifery "
        "criminology classics theology archaeology ecology zoology botany genetics biochemistry "
        "biomedical mechanical civil electrical chemical aerospace robotics surveying "
        "animation illustration interior textiles healthcare optometry radiography "
        "paramedic paramedicine chem bio psych french spanish german italian japanese mandarin "
        "chinese korean arabic russian portuguese dutch"
    ),
    # "urban planning", not "not planning a future"
    re.compile(
        r"\b\w{3,}(?:ology|onomy|ography|istry)\b|\b(?:urban|town|city|regional|spatial) planning\b",
        re.IGNORECASE,
    ),
)
"""What someone studies ("What did Meera study at university?")."""

_DAY_WORDS = "|".join(
    [*(m.lower() for m in MONTHS), *(m[:3].lower() for m in MONTHS), "sept"]
    + [d.lower() for d in WEEKDAYS]
)
"""The months, whole and cut short, and the days of the week, as a pattern."""
BIRTHDAY = KindOfAnswer(
    "birthday",
    re.compile(
        r"^\s*when\s+(?:is|was)\s+[^?]{1,40}?['’]s?\s+(?:birthday|bday)\s*\??\s*$", re.IGNORECASE
    ),
    frozenset(),
    re.compile(
        # a birthday said with its day: "her bday's June 12", "my birthday is the 3rd",
        # "it's my birthday tomorrow", "born on the 14th", "turns 23 on monday"
        r"^(?=.*\b(?:birthday|bday|b-day|born|turn(?:s|ed|ing)?\s+\d{1,3})\b)"
        r"(?=.*(?:\b(?:" + _DAY_WORDS + r"|today|tomorrow|yesterday)\b|"
        r"\b\d{1,2}(?:st|nd|rd|th)\b|\b\d{1,2}[/.]\d{1,2}\b|\bnext\s+(?:week|month)\b))",
        re.IGNORECASE | re.DOTALL,
    ),
)
"""The day of someone's birthday ("When is Hazel's birthday?"): a text saying a
birthday with a day ("her bday's June 12")."""

OUTCOME = KindOfAnswer(
    "outcome",
    re.compile(
        r"^\s*(?:did\s+[^?]{1,60}?\b(?:win|pass)\b|who\s+won\b|"
        r"(?:which|what)\s+(?:[\w'’-]+\s+){1,2}won\b|"
        r"how\s+did\s+[^?]{1,40}?\s+do\s+(?:in|at|on)\b|"
        r"what\s+(?:place|position)\s+did\s+[^?]{1,40}?\s+(?:finish|come|place)\b|"
        r"where\s+did\s+[^?]{1,60}?\s+(?<!taking\s)(?:place|finish|come)\b(?!\s+from)|"
        r"what\s+was\s+the\s+(?:final\s+)?(?:score|result|outcome)\s+(?:of|in|at|for)\b|"
        r"what\s+prizes?\s+did\b)",
        re.IGNORECASE,
    ),
    _words(
        "won lost beat placed prize medal rosette trophy podium ribbon champion qualified "
        "disqualified pb winner runner passed failed scored drew draw tied normal negative "
        "positive guilty acquitted convicted"
    ),
    re.compile(
        r"\bcame\s+\w+|\b(?:first|second|third|fourth|fifth|sixth|last|\d+(?:st|nd|rd|th))\s+"
        r"(?:in|place|out\s+of|overall|prize)\b|\bknocked\s+out\b|\bthrough\s+to\b|"
        r"\bpersonal\s+best\b|\b\d+\s*(?:out\s+of|/)\s*\d+|"
        # a score ("3-2", "won 4–1"), not a span of days or hours ("2-3 weeks")
        r"\b\d{1,2}\s?[-–]\s?\d{1,2}\b(?!\s?(?:am|pm|weeks?|days?|months?|years?|hours?|hrs?|"
        r"mins?|minutes?|times?|people|kids)\b)",
        re.IGNORECASE,
    ),
    # "I won't decide", "she beats me every time": no outcome of anything
    not_of_it=re.compile(r"\bwon['’]t\b|\b(?:beats|wins|loses)\b", re.IGNORECASE),
)
"""How someone did in a contest or a test ("Did Theo win his heat?", "How did
Maisie do in the bouldering competition?", "Who won the onion class?"): one only
ever planned ("the heat is on 8 November, wish me luck") has none said."""

_MARK = re.compile(
    # "87%", "47 out of 50", "5.5/9"; "B+", "A- in genetics", "got a B"; "2:1"
    r"\b\d{1,3}(?:\.\d+)?\s*(?:%|percent\b|out\s+of\s+\d|/\s*\d{1,3}\b)|"
    r"(?<![\w'’])[A-F][+*-](?=[\s!.,;)]|$)|"
    r"\b(?i:got|get|getting|an?)\s+[A-F](?=\s+in\b|\s*[!.,;)]|$)|"
    r"\b2:[12]\b|\b(?i:first[\s-]class)\b"
)
_BARE_NUMBER = re.compile(
    r"(?P<before>[\w'’]+\s+)?(?<![\d.,:/£$€#-])\b\d{1,3}(?:\.\d)?(?![\d:/]|[.,–-]\d)"
    r"(?P<after>\s*[a-z]+)?",
    re.IGNORECASE,
)
_NOT_A_MARK_BEFORE = _words(
    "paper round level year stage part unit module chapter page room week day number no "
    "bus route platform gate step season episode class grade aged turned turns is was "
    "minus plus he's she's i'm it's he’s she’s i’m it’s"
)
"""Words before a number that say it is no mark ("paper 1", "she's 9")."""
_MARK_AFTER = _words("in for on and which overall so but at")
"""Words a mark said as a bare number may have after it ("7.5 in Port Economics",
"68 for studio"); any other says it counts something ("2 bedroom", "12 hours")."""
_MARK_CUE = re.compile(
    r"\b(?:got|get|pass(?:ed)?|results?|marks?|grades?|scored?|exams?|tests?|essay|paper|"
    r"mocks?|maths?|english|art|chem|chemistry|bio|biology|physics|history|geography|"
    r"french|spanish|german|science)\b",
    re.IGNORECASE,
)
"""A word that says a bare number in the same text may be a mark."""


def _says_a_mark(text: str) -> bool:
    """Whether ``text`` gives a mark: one said as such ("87%", "B+", "5.5 out of
    9") or, in a text speaking of marks or exams, a bare number that is no time,
    date, sum, age or count ("got 84!!!", "passed fluid mech!! 8.2", "7.5 in Port
    Economics", "art 9"; not "paper 1", "she's 9", "12 hours")."""
    if _MARK.search(text):
        return True
    cued = _MARK_CUE.search(text) is not None
    for found in _BARE_NUMBER.finditer(text):
        before = (found["before"] or "").strip().lower()
        after = (found["after"] or "").strip().lower()
        if before in _NOT_A_MARK_BEFORE or (after and after not in _MARK_AFTER):
            continue
        # with no word of marks beside it, only one with a decimal or a cheer is
        # ("7.5 in Port Economics!!", "84!!!")
        if cued or "." in found.group() or text[found.end() :].lstrip().startswith("!"):
            return True
    return False


_MARK_IN = re.compile(
    r"(?:\d|[A-F][+*-]?)\s*(?:%|percent)?\s+in\s+(?:(?:the|my|her|his)\s+)?"
    r"((?:[A-Z][\w-]*\s+)*[A-Z][\w-]*|[\w-]+(?:\s+[\w-]+){0,2})"
)
"""A mark said with what it is in ("7.5 in Port Economics", "C+ in writing", "78
percent in the mock biology exam")."""


def _another_subject(sentence: str, question: str) -> bool:
    """Whether ``sentence`` gives the mark for something the question does not ask
    about: a name the question does not say ("7.5 in Port Economics" for "What grade
    did David get in Transport Economics?"), or words none of which it says."""
    asked = set(words(question))
    for found in _MARK_IN.finditer(sentence):
        subject = found[1]
        if subject[0].isupper():
            if not re.search(rf"\b{re.escape(subject)}\b", question, re.IGNORECASE):
                return True
        elif not set(words(subject)) & asked:
            return True
    return False


GRADE = KindOfAnswer(
    "grade",
    re.compile(
        r"^\s*what\s+(?:grades?|scores?|marks?|results?)\s+(?:did|does|do|has|had|will)\s+"
        r"[^?]{1,60}?\b(?:get|got|score|receive|achieve|earn)\b|"
        r"^\s*what\s+did\s+[^?]{1,40}?\s+(?:score|get)\s+(?:in|on|for)\s+(?:(?:his|her|their|"
        r"the|a|an)\s+)?[^?]*\b(?:exams?|tests?|papers?|boards?|science|maths?|english|"
        r"chemistry|biology|physics|history|essay|module|assessment|finals?|mocks?)\b",
        re.IGNORECASE,
    ),
    _words("merit distinction"),
    of_another=_another_subject,
    spotted=_says_a_mark,
)
"""A mark in an exam or a test ("What grade did Dev get in his small business
course?" "got a B+"; "What score did Tessa get?" "87%"): "she got the grades!"
gives none."""

_PLAIN_STREET_WORDS = "street|st|road|rd|avenue|ave|lane|crescent|terrace"
"""A street's words that say a street after any word ("albert st")."""
_STREET_WORDS = (
    _PLAIN_STREET_WORDS + "|close|drive|boulevard|blvd|row|square|grove|parade|mews|gardens|"
    "hill|way|place"
)
"""A street's words, some of them everyday ones after a name only ("Mill Way")."""
_NAMED_STREET = re.compile(
    # "on Gloucester Road", "off Leland", "Albert St", "on Rue Rachel", "Oranienstraße"
    r"\b(?:on|off|along|onto)\s+(?:the\s+)?(?P<on>[A-ZÀ-Þ][\w'’-]+)"
    r"|\b(?P<name>[A-ZÀ-Þ][\w'’-]*)\s+(?i:" + _STREET_WORDS + r")\b"
    r"|\b(?i:rue|rua|calle|via|avenida|ulica)\s+[\w'’-]+"
    r"|\w(?i:straat|stra(?:ss|ß)e|weg|gasse|laan|gade|vej|gatan|katu)\b"
)
_STREET_IN_LOWER_CASE = re.compile(
    r"\b(?P<name>[a-z][\w'’-]+)\s+(?:" + _PLAIN_STREET_WORDS + r")\b"
)
"""A street in a chat written in lower case ("we're on albert st")."""
_NOT_ON_A_STREET = frozenset(
    (
        _DAY_WORDS.replace("|", " ") + " instagram facebook netflix tiktok youtube whatsapp "
        "spotify zoom teams facetime google amazon ebay i the my your our their his her"
    ).split()
)
"""Words after "on" or before a street's word that name no street ("on Saturday",
"on Instagram", "The way")."""


_CAPITAL = re.compile(r"[A-Z]")


def _says_a_street(text: str) -> bool:
    """Whether ``text`` names a street: by a street's word or shape after a name, or
    after "on" ("on Pearl", not "on Saturday"); in a text without capitals, a
    street's word after any word that is no stop word."""
    for found in _NAMED_STREET.finditer(text):
        name = found["on"] or found["name"]
        if name is None or name.lower() not in _NOT_ON_A_STREET | STOP_WORDS:
            return True
    return not _CAPITAL.search(text) and any(
        found["name"] not in STOP_WORDS for found in _STREET_IN_LOWER_CASE.finditer(text)
    )


STREET = KindOfAnswer(
    "street",
    re.compile(r"^\s*(?:(?:on|in|at)\s+)?(?:what|which)\s+(?:street|road|avenue)\b", re.IGNORECASE),
    frozenset(),
    spotted=_says_a_street,
)
"""A street ("What street is Józef's new flat on?"): a text saying one, by its word
("Albert St", "Oranienstraße") or after "on" ("that little shop on Pearl")."""

KINDS_SAID = (
    BREED,
    JOB,
    AIRLINE,
    INSTRUMENT,
    CAR,
    FINISH_TIME,
    STUDY,
    BIRTHDAY,
    OUTCOME,
    GRADE,
    STREET,
)
"""The kinds of answer a text must say one of to answer."""


def kind_asked(question: str) -> KindOfAnswer | None:
    """The kind of answer ``question`` asks for, of :data:`KINDS_SAID`; ``None``
    when it asks for none of them."""
    return next((kind for kind in KINDS_SAID if kind.asked(question)), None)
