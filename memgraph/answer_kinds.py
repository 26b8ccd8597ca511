"""The words an answer of a known kind is usually said in.

"What does Naomi do for work?" is answered by "she's a pediatric dentist", which
holds neither "do" nor "work"; "What injury did Dana get?" by "shin splints,
apparently". A question of one of these kinds also looks, among the texts by or
about the person it names, for the everyday words of its answers: occupations,
pets and breeds, instruments, injuries and illnesses, relationships, vehicles,
schools, pastimes, exercise, races, ages ("turned 9"), weights ("65 pounds"), diets,
technologies (databases, languages, clouds), drinks and food, school subjects
("chem exams"), medication ("5 mg"), colours,
jewellery, whom one lives with ("my new housemate"), where one lives ("we got the
Crows Nest flat"), and the places one travels to
("took a short trip to Rome" for "Which cities has Jon visited?"). The lists are
general English, not any one conversation's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memgraph.text import index_terms

__all__ = ["KINDS", "AnswerKind", "answer_cues", "asks_name"]


@dataclass(frozen=True)
class AnswerKind:
    """A kind of question and the words its answers come in.

    Attributes:
        name: what the kind is called.
        asks: a pattern over the lowercased question that asks for this kind.
        cues: the words (index terms) answers of this kind are said in.
        ranks: whether search also looks for those words; when not, they only
            say whether a text of the person holds an answer ("we got the Crows
            Nest flat" for "Which suburb does Ada live in now?"), as a flat or a
            move is spoken of far more often than it answers.
        judges: whether they say whether a text holds an answer; when not, only
            search looks for them ("the dog", "a westie" find the texts about
            someone's dog, but "the dog" tells no breed).
    """

    name: str
    asks: re.Pattern[str]
    cues: frozenset[str]
    ranks: bool = True
    judges: bool = True


def _kind(
    name: str, asks: str, cues: str, *, ranks: bool = True, judges: bool = True
) -> AnswerKind:
    return AnswerKind(name, re.compile(asks), frozenset(index_terms(cues)), ranks, judges)


_PET_WORDS = (
    "dog dogs puppy cat cats kitten fish bird parrot hamster rabbit bunny guinea "
    "turtle tortoise lizard snake horse pony rescue adopted shelter"
)
BREED_NAMES = (
    "mutt retriever labrador poodle terrier husky beagle bulldog corgi "
    "dachshund greyhound collie kelpie shiba spaniel pug chihuahua rottweiler doodle "
    "maltese shih tzu pomeranian bernese newfoundland akita samoyed malamute "
    "pitbull heeler weimaraner vizsla whippet schnauzer lurcher cockapoo "
    "cavapoo cavoodle labradoodle groodle dalmatian mastiff sheepdog "
    "bichon papillon ridgeback tabby siamese persian ragdoll bengal sphynx shorthair "
    "tortoiseshell tortie"
)
"""Breeds' names, none of which stems into a common word (not "a lab", "maine
coon", "frenchie", "westie", "yorkie", "staffie": "main", "french", "west", ...)."""
COLOUR_NAMES = (
    "red orange yellow green blue purple violet pink brown black white grey gray silver "
    "gold navy teal turquoise maroon beige cream lilac lavender mint"
)
"""The everyday colours' names, that a colour question's answer is said in."""

OCCUPATION_WORDS = (
    "teaches teacher teaching nurse doctor dentist surgeon pharmacist "
    "engineer developer programmer designer architect lawyer accountant manager "
    "lead director chef cook baker barista waiter waitress server cashier "
    "electrician plumber carpenter roofer mechanic driver pilot firefighter "
    "officer police paramedic therapist counselor social worker scientist "
    "researcher professor lecturer tutor librarian writer journalist editor "
    "artist musician photographer consultant analyst recruiter realtor "
    "vet veterinarian student intern retired freelance freelancer owner tester qa "
    "ranger farmer midwife physio physiotherapist hygienist receptionist secretary clerk "
    "banker cleaner builder bricklayer welder technician biologist chemist physicist "
    "economist actor actress dancer singer comedian coach trainer instructor soldier "
    "bartender butcher florist gardener landscaper hairdresser barber stylist tailor "
    "translator interpreter pastor priest vicar rabbi imam politician councillor judge "
    "solicitor barrister paralegal nanny childminder postman courier lifeguard optometrist "
    "optician radiographer sonographer psychiatrist psychologist pediatrician paediatrician "
    "gp surveyor pharmacy tech principal headteacher headmaster headmistress"
)
"""Occupations' everyday names, that a job question's answer is said in."""

KINDS: tuple[AnswerKind, ...] = (
    _kind(
        "occupation",
        r"\b(?:do(?:es)? for (?:a )?(?:living|work|job)|(?:his|her|their|your|my|\w+'s) "
        r"(?:(?:current|new|old|first|last|previous|day) )?job(?! (?:applications?|interviews?|"
        r"hunt|hunting|search|offers?|fair|listings?|ads?|adverts?|postings?|boards?|market))|"
        r"occupation|profession|career|what does \w+ do(?: now)?(?=\s*\?|\s*$)|work as|"
        # a role at work, not one in a wedding or a play
        r"role(?![\w' ]{0,40}\b(?:wedding|play|film|movie|show|musical|production|ceremony|"
        r"concert|party)\b)|"
        r"job title|(?:his|her|their|your|my|\w+'s) (?:(?:current|new|old|first|last|previous) )?"
        r"position(?! (?:in|on|of|at the (?:race|table)))(?![\w' ]{0,30}\bplay)|"
        r"(?:his|her|their|your|my|\w+'s|what|which) trade(?! fairs?| shows?)|"
        r"(?:line|kind|type|field) of work|what (?:kind of |sort of )?job|"
        r"where (?:does|do|did) [\w ]{1,40}? work|who (?:does|do|did) [\w ]{1,40}? work for|"
        r"what (?:company|firm|employer|organi[sz]ation|business) (?:does|do|did) [\w ]{1,40}? "
        r"work (?:for|at))\b",
        OCCUPATION_WORDS,
    ),
    _kind(
        "pet or breed",
        r"\b(?:pets?|animals?|breed|puppy|kitten|(?:kind|type|sort) of "
        r"(?:dog|cat|bird|fish|horse|snake|lizard|rabbit)s?)\b",
        # search also looks for the breeds said in everyday words ("a lab", "a westie")
        f"{_PET_WORDS} breed {BREED_NAMES} mix lab shepherd boxer golden cocker yorkie dane "
        "pit bull staffie staffy frenchie springer westie setter pointer calico maine coon "
        "tuxedo",
        judges=False,
    ),
    _kind("pet", r"\b(?:pets?|animals?|puppy|kitten)\b", _PET_WORDS, ranks=False),
    _kind(
        "breed",
        # a dog's or a cat's: a bird's type is no Chihuahua
        r"\b(?:breeds?|(?:kind|type|sort) of (?:dog|cat|pupp(?:y|ie)|kitten)s?)\b",
        f"breed {BREED_NAMES}",
        ranks=False,
    ),
    _kind(
        "subject",
        r"\b(?:subjects?|what (?:does|do|did) [\w' ]{1,40}? teach|teach(?:es|ing)? what)\b",
        "math maths mathematics chemistry chem physics biology bio science history geography "
        "english french spanish german latin art music drama pe computing economics econ "
        "psychology psych literature grade year exams class classes",
    ),
    _kind(
        "medication",
        r"\b(?:medicines?|medications?|meds|pills|prescri\w+|drugs?)\b",
        "mg pills meds medication prescribed prescription dose dosage antibiotics inhaler "
        "statins insulin ibuprofen paracetamol",
    ),
    _kind(
        "jewellery",
        r"\b(?:jewell?ery|jewelry)\b",
        "earrings necklace ring bracelet pendant brooch locket chain pearls amber silver gold",
    ),
    _kind(
        "household",
        # someone's flatmates asked about, not flatmates who do something ("When
        # did the flatmates hold the casting?")
        r"\b(?:lives? with|living with|(?:'s|s'|his|her|their|new|former|old) "
        r"(?:house|flat|room)mates?)\b",
        "housemate roommate flatmate moved move moving lease room",
    ),
    _kind(
        "home",
        r"\bwhere (?:does|do|did|will) [\w' ]{1,40}? (?:live|stay)\b|"
        r"\b(?:which|what) (?:\w+ )?(?:cit(?:y|ies)|towns?|suburbs?|neighbou?rhoods?|areas?|"
        r"parts? of [\w ]{1,20}|streets?|countr(?:y|ies)) (?:does|do|did|will) [\w' ]{1,40}? "
        r"(?:live|stay)\b",
        "flat apartment house moved move moving lease rent renting landlord neighbourhood "
        "neighborhood suburb street room housemate flatmate roommate",
        ranks=False,
    ),
    _kind(
        "place",
        r"\b(?:(?:which|what) (?:\w+ )?(?:cit(?:y|ies)|countr(?:y|ies)|states?|places?|areas?)"
        r"(?: of [\w. ]{1,20})? (?:has|have|had|did|does|do|is|was) [\w' ]{1,40}? (?:been|visit\w*|"
        r"travel\w*|vacation\w*|holiday\w*|explor\w*|tour\w*)|where (?:did|has|have|had|will) "
        r"[\w' ]{1,40}? (?:travel\w*|visit\w*|been(?! \w+ing)|vacation\w*|holiday\w*|"
        r"go on (?:a |the |their |his |her )?(?:trip|vacation|holiday|honeymoon)|"
        r"(?:went|go) (?:on )?(?:a |the |their |his |her )?(?:trip|vacation|holiday|honeymoon)))\b",
        # travel words, then countries, US states and the world's most visited cities
        # (names that are also common words or given names are left out)
        "trip travel travelled traveled visited visiting vacation holiday abroad flew "
        "flight honeymoon roadtrip "
        "usa america canada mexico brazil argentina chile peru colombia cuba jamaica "
        "england scotland wales ireland britain uk france spain portugal italy germany "
        "austria switzerland netherlands holland belgium denmark sweden norway finland "
        "iceland poland czech hungary greece croatia romania bulgaria serbia ukraine "
        "russia turkey egypt morocco kenya tanzania nigeria ghana ethiopia africa "
        "israel dubai emirates india pakistan nepal china japan korea vietnam thailand "
        "cambodia indonesia bali malaysia singapore philippines taiwan australia "
        "zealand europe asia caribbean scandinavia "
        "alabama alaska arizona arkansas california colorado connecticut delaware "
        "florida hawaii idaho illinois indiana iowa kansas kentucky louisiana maine "
        "maryland massachusetts michigan minnesota mississippi missouri montana "
        "nebraska nevada hampshire jersey mexico carolina dakota ohio oklahoma oregon "
        "pennsylvania tennessee texas utah vermont virginia washington wisconsin wyoming "
        "paris rome london berlin madrid barcelona lisbon amsterdam prague vienna "
        "budapest venice milan florence naples athens istanbul dublin edinburgh "
        "copenhagen stockholm oslo helsinki reykjavik moscow cairo marrakech tokyo "
        "kyoto osaka seoul beijing shanghai bangkok hanoi delhi mumbai sydney "
        "melbourne toronto vancouver montreal chicago boston seattle miami orlando "
        "vegas angeles francisco york brooklyn manhattan nashville denver portland "
        "atlanta philadelphia houston tahoe yosemite",
    ),
    _kind(
        "instrument",
        r"\b(?:instruments?|play(?:s|ed|ing)? (?:music|in a band))\b",
        "guitar piano keyboard violin viola cello bass drums drum ukulele flute "
        "clarinet saxophone sax trumpet trombone harp banjo mandolin harmonica "
        "accordion band orchestra choir lessons",
    ),
    _kind(
        "injury",
        r"\b(?:injur(?:e|y|ies|ed)|hurt|health (?:problem|issue)|ill(?:ness)?|"
        r"diagnos\w*|sick|(?:heart|health|medical|skin|underlying|chronic|lung|eye|kidney|"
        r"liver|genetic|mental[- ]health) condition|condition (?:was|were|is|are|does|did|has|"
        r"had) [\w' ]{1,20}? (?:diagnosed|have|has|had|suffer\w*))\b",
        "hurt injured injury sprained sprain broke broken fracture fractured torn "
        "tore pulled strain splints concussion tendonitis dislocated knee ankle "
        "wrist shoulder back surgery physio physical therapy cast stitches "
        "diagnosed cancer flu covid pneumonia diabetes asthma migraine infection",
    ),
    _kind(
        "relationship",
        r"\b(?:relationship|dating|married|partner|boyfriend|girlfriend|"
        r"fianc[eé]e?|spouse|engaged)\b",
        "dating boyfriend girlfriend partner engaged engagement proposed fiance "
        "fiancee married marry wedding wife husband divorced separated broke up",
    ),
    _kind(
        "vehicle",
        r"\b(?:car|vehicle|drive|drives|truck|bike)\b",
        "car minivan van suv sedan truck pickup hatchback wagon convertible "
        "motorcycle scooter honda toyota subaru ford tesla "
        "volkswagen vw mazda hyundai kia nissan chevy jeep bmw audi volvo prius "
        "skoda vauxhall peugeot renault citroen fiat opel dacia lexus acura "
        "mitsubishi suzuki jaguar porsche mercedes rivian polestar",
    ),
    _kind(
        "school",
        r"\b(?:college|university|school|studying|study|studies|major|degree|"
        r"graduat\w*)\b",
        "college university uni school academy institute polytechnic kindergarten preschool "
        "grad degree major majored studying studied "
        "graduated graduate masters phd bachelor mba program programme semester class classes "
        "campus enrolled admitted accepted",
    ),
    _kind(
        "pastime",
        r"\b(?:hobby|hobbies|activities|activity|for fun|free time|sports?|"
        r"spare time|weekends?)\b",
        "hiking camping running climbing swimming cycling biking yoga painting "
        "pottery drawing knitting sewing gardening cooking baking reading "
        "photography fishing surfing skiing dancing singing soccer basketball "
        "tennis golf volleyball hockey baseball football chess games gym",
    ),
    _kind(
        "exercise",
        r"\b(?:exercis\w*|workouts?|work(?:s|ed|ing)? out|fitness|martial arts?|"
        r"stay(?:s|ed|ing)? (?:fit|active|in shape))\b",
        "yoga pilates kickboxing boxing weights lifting training circuit crossfit "
        "running jogging swimming cycling spin hiit gym cardio treadmill hiking "
        "walking stretching karate taekwondo judo martial arts zumba rowing climbing "
        "aerobics aqua barre spinning bootcamp parkrun",
    ),
    _kind(
        "race",
        r"\b(?:race|races|marathon|run(?:ning)? event)\b",
        "5k 10k 15k half marathon triathlon duathlon ultra relay miles km",
    ),
    _kind(
        "age",
        r"\b(?:how old|(?:his|her|their|your|my|\w+'s) age|what age)\b",
        "turned turns turning years old birthday yo",
    ),
    _kind(
        "weight",
        r"\b(?:weigh(?:s|ed|t)?|how heavy)\b",
        "pounds lbs lb kilos kg kilograms grams ounces oz stone",
    ),
    _kind(
        "drink",
        r"\b(?:drinks?|drinking|beverages?)\b",
        "tea coffee espresso latte cappuccino matcha water juice soda lemonade milk "
        "smoothie beer wine whiskey cocktail kombucha cider",
    ),
    _kind(
        "diet",
        r"\b(?:diet|dietary|restrictions?|allerg\w*|intoleran\w*|(?:can(?:no|')?t|"
        r"(?:do|does|did)(?: not|n't)) eat)\b",
        "vegan vegetarian pescatarian keto paleo gluten celiac coeliac dairy lactose "
        "kosher halal allergic allergy nuts peanuts shellfish intolerant sugar carbs",
    ),
    _kind(
        "technology",
        r"\b(?:databases?|db|programming languages?|frameworks?|cloud|stack|queues?|"
        r"message brokers?|(?:which|what) language)\b",
        "postgres postgresql mysql sqlite mongodb mongo redis dynamodb cassandra oracle "
        "snowflake bigquery elasticsearch kafka rabbitmq sqs python java javascript "
        "typescript rust golang kotlin swift ruby scala react django rails spring "
        "aws azure gcp kubernetes",
    ),
    _kind(
        "colour",
        r"\b(?:what|which)(?: \w+)? colou?rs?\b|\bcolou?rs? (?:is|are|was|were|did|does|do)\b",
        COLOUR_NAMES,
    ),
    _kind(
        "food",
        # not a place or a trade of food: "a food pantry", "the food truck"
        r"\b(?:eats?|eating|foods?(?! (?:pantry|pantries|bank|banks|truck|trucks|court|"
        r"drive|stall|stalls|delivery|poisoning|processor|hall|market))|snacks?|desserts?|"
        r"allergic)\b",
        "pizza pasta sushi ramen tacos curry burgers salad soup steak chicken fish "
        "vegan vegetarian gluten dairy nuts peanuts shellfish chocolate cake cookies "
        "bread cheese rice noodles dumplings",
    ),
)
"""The kinds of question whose answers have everyday words of their own."""


def kind_named(name: str) -> AnswerKind:
    """The kind of :data:`KINDS` called ``name`` ("colour", "occupation")."""
    return next(kind for kind in KINDS if kind.name == name)


def answer_cues(question: str, *, judging: bool = False) -> list[str]:
    """The index terms the answers to ``question`` are usually said in, for each
    kind it asks for ("" kinds: none); ``judging``: those that judge whether a
    text answers (:attr:`AnswerKind.judges`) instead of those search looks for
    (:attr:`AnswerKind.ranks`)."""
    lowered = question.lower().replace("’", "'")
    cues: set[str] = set()
    for kind in KINDS:
        if (kind.judges if judging else kind.ranks) and kind.asks.search(lowered):
            cues |= kind.cues
    return sorted(cues)


_ASKS_NAME = re.compile(
    r"\b(?:name of|nick\s?name\w*|(?:first|last|full|sur)\s?name|(?:his|her|their|its)\s+name|"
    r"(?:'s|s') name|what (?:is|was|are|were) [\w' ]{1,40}? called|"
    r"what (?:did|do|does) \w+ (?:name|call))\b",
    re.IGNORECASE,
)


def asks_name(question: str) -> bool:
    """Whether ``question`` asks what someone or something is called ("What is the
    name of Ifeoma's cat?"): a name is often said in the turn before the one
    that says what it names ("Pepper knocked a glass off" / "that cat has a
    vendetta against you")."""
    return _ASKS_NAME.search(question.replace("’", "'")) is not None
