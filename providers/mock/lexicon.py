"""Word lists and verb morphology for the rule-based extractor."""

from __future__ import annotations

import re

from memgraph.chatter import REACTION_WORDS
from memgraph.text import IRREGULAR_PAST, STOP_WORDS

__all__ = [
    "ANIMAL_HEADS",
    "ATTR",
    "AUX",
    "BE",
    "COMMON_NOUNS",
    "COMMON_STARTS",
    "CONCEPT_HEADS",
    "DETERMINERS",
    "FILLERS",
    "GREETING_WORDS",
    "HEAD",
    "HOLIDAYS",
    "IMPERATIVES",
    "IMPERSONAL",
    "KEEP_ADVERBS",
    "KIN",
    "KNOWN",
    "MODALS",
    "NAME_ATTRS",
    "NAME_CONNECTORS",
    "NEGATIONS",
    "NOT_NAMES",
    "ORG_HEADS",
    "ORG_OBJECT_ROLES",
    "ORG_RELATIONS",
    "ORG_SUBJECT_RELATIONS",
    "ORG_SUFFIXES",
    "ORG_VERBS",
    "PARTICLES",
    "PAST",
    "PERSONAL_ATTRS",
    "PERSON_RELATIONS",
    "PERSON_ROLES",
    "PERSON_SUBJECT_RELATIONS",
    "PERSON_VERBS",
    "PLACE_HEADS",
    "PLACE_RELATIONS",
    "PLURAL_VERBS",
    "PREPOSITIONS",
    "PRODUCT_HEADS",
    "PROJECT_HEADS",
    "PRONOUN",
    "RELATION",
    "SMALLTALK",
    "STUDENT_ROLES",
    "SUFFIX",
    "VERB",
    "VERBS",
    "third_person",
]


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --------------------------------------------------------------------------- lexicon

VERBS = _set(
    """accept add adopt agree aim allow answer apply arrive ask attend avoid bake be become
    begin believe belong borrow bring build buy call care carry change chat check choose
    clean climb code collect come compete complete consider contain continue contribute
    cook cost count create cycle dance date decide deliver depend design develop die
    dislike do draw dream drink drive earn eat edit email employ end enjoy expect explain
    fail fall feel fight find finish fix fly focus follow forget found get give go graduate
    grow hate have hear help hike hire hold hope host improve include intend intern invest
    invite join jog keep know launch lead learn leave lend like listen live look lose love
    maintain make manage marry mean meet mentor miss move need own paint pay perform plan
    play practice practise prefer prepare present publish read receive recommend relocate
    remain rent report represent require research reside retire return ride run save say
    see seem sell send serve share ship sing sit sleep speak spend stand start stay stop
    study supervise support swim take talk teach tell tend test think train travel try turn
    understand use visit volunteer vote wait walk want watch wear win wish work worry write
    adore acquire manufacture open offer promote promise propose sign register enroll book
    cancel reschedule postpone schedule celebrate raise rescue repair replace name injure
    hurt sprain diagnose treat prescribe decline quit pass"""
)
PAST = IRREGULAR_PAST
BE = _set("is are am was were be been being")
AUX = BE | _set("has have had does do did will would can could should may might must shall")
MODALS = _set("will would can could should may might must shall cannot")
DETERMINERS = _set(
    "a an the this that these those my your his her its our their some any every each no one"
)
NEGATIONS = _set("not never no nothing")
PREPOSITIONS = _set(
    "at in on to for from with by of about as into onto near under over after before since "
    "until during without within across through around between among via per like"
)
FILLERS = _set("also actually really just now currently still definitely totally absolutely")
FILLERS |= _set("honestly basically too")
KEEP_ADVERBS = _set("never always usually often sometimes rarely seldom generally mostly")
KEEP_ADVERBS |= _set("already recently finally soon even only mainly primarily")
COMMON_STARTS = STOP_WORDS | _set(
    """hi hello hey hiya howdy thanks thank ok okay sure yes yeah yep no nope great cool nice
    awesome good morning lol please sorry yesterday today tomorrow tonight recently lately
    sometimes maybe perhaps everyone nobody someone somebody people there also actually
    anyway well oh so and but or remember note tell show give list find search recall remind
    help explain write summarize summarise let last next every our we they i sounds looks
    seems got noted understood perfect exactly indeed wow ha hah haha hehe ooh oooh ah ahh aw
    aww ugh hmm hm yikes whoa wait oof phew welp yay yup nah lmao omg congrats congratulations
    go hug enjoy stay take have happy merry really totally definitely absolutely honestly
    seriously literally basically probably hopefully luckily sadly unfortunately fortunately
    finally currently usually normally especially certainly clearly obviously apparently
    surely truly simply mostly super pretty very glad such many most some few several
    both each any more another other those these must gonna gotta wanna never lots still
    however always even keep together like mine that one woah yea dang agreed bummer sweet
    alright bet kinda sorta though anyways everything everyone nothing something anything
    someone life love kids people friends pets animals bye goodbye byee cya ciao cheers
    merci gracias danke obrigado joyeux feliz bonne buon poor dear already almost just soon
    again anyway"""
)
COMMON_NOUNS = _set(
    """art arts music yoga dance pottery clay ceramics painting paintings drawing drawings
    photography gardening cooking baking reading writing knitting sewing gaming games
    camping fishing surfing skiing climbing cycling hiking running swimming volunteering
    sports basketball football soccer tennis golf baseball hockey volleyball chess books
    novels movies films shows series podcasts songs albums concerts concert festival
    festivals parties party weddings wedding birthdays holidays vacation vacations trip
    trips travel travels nature family families friends friendship kids children parents
    people community life love time money work job jobs career school college class classes
    exam exams homework studies research science history math physics chemistry biology
    health fitness exercise workouts diet food foods meals breakfast lunch dinner dessert
    desserts snacks coffee tea wine beer pizza pasta sushi chocolate cake cookies bread
    cheese garlic veggies vegetables fruit fruits salad soup weather rain snow beach
    mountains ocean sunsets sunrise stars dogs cats pets puppies kittens horses birds fish
    plants flowers trees gardens candles pictures photos memories stories words therapy
    meditation mindfulness patience kindness gratitude confidence courage motivation
    inspiration creativity happiness sadness anxiety stress grief loss change changes
    challenges obstacles setbacks mistakes failure failures goals dreams plans hobbies
    passion support advice guidance mentors balance consistency discipline dedication
    progress success teamwork collaboration communication honesty respect trust laughter fun
    luxury comfort peace freedom adventure adventures exploring classic regular cozy
    precious relax tons lots plenty store shop shopping red blue green yellow pink purple
    orange difference experience independence influence persistence resilience performance
    importance acceptance assistance appearance distance silence science violence perseverance
    fully determined hiccups places fantasy miss
    one two three four five six seven eight nine ten twenty hundred news update
    surgery appointment physio rehab recovery treatment interview meeting flight
    inspection shift rent wifi paper paperwork"""
)
"""Everyday nouns (and a few adjectives) that often start a sentence ("Music keeps
me going", "Progress is slow"): capitalised first, they are not names. Words that
are also common given names (Grace, Hope, Joy, Summer) are left out."""
PLURAL_VERBS = _set(
    """are were have do don't aren't weren't haven't make help keep bring give mean take can
    remind go come look seem feel get need tend always really just never often"""
)
"""What follows a plural subject ("Books are", "Kids love"): a capitalised plural
before one is a common noun."""
NOT_NAMES = _set(
    """i monday tuesday wednesday thursday friday saturday sunday january february march
    april june july august september october november december ok okay mon tue tues wed
    thu thur thurs fri sat sun feb mar apr aug sept oct nov dec"""
)
HOLIDAYS = _set("christmas easter thanksgiving halloween hanukkah passover ramadan diwali")
"""Named days: events, never a person a pronoun points at."""
IMPERATIVES = _set(
    """tell show give list find search recall remind help explain write summarize summarise
    describe check look call email send book schedule let make please can could would will
    do does did is are was were what who whom whose which why how where"""
)
GREETING_WORDS = COMMON_STARTS | _set(
    "much lot meet bye goodbye later again welcome appreciated see day cheers all fun"
)
IMPERSONAL = _set(
    "raining snowing sunny cloudy cold hot warm windy late early time true possible important"
)
SMALLTALK = _set("fine good great ok okay well alright back here sure glad tired busy ready")
SMALL_TALK_WORDS = REACTION_WORDS | _set(
    """good fun funny proud excited thrilled stoked lucky wonderful fantastic incredible
    beautiful lovely cute sweet tough hard bad sad fine alright super pretty lot lots well
    better best welcome hear heard hears hearing see sees saw seen sound sounds sounded look
    looks looked looking feel feels felt feeling loves loved like likes liked hope hopes
    hoped hoping wish wishes guess guesses think thinks thought know knows knew thankful
    grateful appreciate appreciates agree agrees mean means meant news stuff everything way
    forward try tries tried give gives gave shot take takes took care luck get gets got
    getting go goes going went come comes came make makes made do doing done keep keeps bet
    deal kidding course anytime always again one help helps helped start started starting"""
)
"""A turn's words of reaction (``memgraph.chatter``) and the everyday words of small
talk in a predicate ("feels great", "is so proud of you", "will give it a shot"): a
predicate of nothing else says nothing worth keeping."""
ORG_SUFFIXES = _set(
    """inc inc. corp corp. corporation ltd ltd. llc gmbh ag plc co co. labs lab group
    technologies systems software studios ventures capital partners university institute
    foundation bank"""
)
PARTICLES = _set("up out off down back away together")
NAME_CONNECTORS = _set("of de da van von der den la le du del &")
ORG_HEADS = _set(
    """company startup firm corporation business organization organisation nonprofit agency
    bank university college school lab laboratory studio club charity brand manufacturer
    retailer publisher institute foundation hospital ministry airline consultancy
    enterprise conglomerate employer team band shop store restaurant cafe"""
)
PLACE_HEADS = _set(
    """city town village country state region province island capital neighbourhood
    neighborhood district continent suburb county place"""
)
PRODUCT_HEADS = _set(
    """language framework library tool app application product service platform game
    device phone car laptop database editor browser"""
)
PROJECT_HEADS = _set("project initiative program programme campaign")
CONCEPT_HEADS = _set("idea concept theory method approach principle technique practice")
ANIMAL_HEADS = _set("dog cat pet horse bird rabbit hamster parrot puppy kitten")
KIN = _set(
    """sister brother mother father mom mum dad son daughter wife husband partner friend boss
    manager mentor colleague coworker cousin aunt uncle girlfriend boyfriend fiance fiancee
    neighbour neighbor grandmother grandfather grandma grandpa child parent teammate
    roommate classmate assistant report mentee"""
)
PERSON_ROLES = KIN | _set(
    """engineer developer programmer designer director teacher doctor nurse student scientist
    researcher writer author artist musician lawyer accountant analyst consultant architect
    chef cook founder cofounder co-founder ceo cto cfo coo vp president intern professor
    lecturer pilot driver farmer photographer journalist editor actor actress singer player
    athlete coach therapist dentist pharmacist surgeon physician vet lead specialist
    administrator admin officer executive entrepreneur investor owner employee freelancer
    contractor recruiter secretary technician mechanic electrician plumber carpenter baker
    barista waiter waitress cashier clerk librarian translator tutor volunteer member fan
    person man woman guy girl boy kid lady resident citizen native expert hacker gamer
    runner cyclist vegetarian vegan chairman chairwoman"""
)
ORG_OBJECT_ROLES = _set(
    "ceo cto cfo coo founder cofounder co-founder president employee member chairman owner"
)
STUDENT_ROLES = _set("student intern pupil undergraduate postgraduate researcher")
PERSON_VERBS = _set(
    """live work love like prefer enjoy hate dislike want mentor study think feel say marry
    speak eat drink teach learn report move grow adore play cook travel swim hike dance sing
    believe hope wish retire graduate date volunteer intern jog lead manage join found
    talk chat call ask tell promise agree worry decide"""
)
PERSONAL_ATTRS = _set(
    """favourite favorite name birthday age wife husband sister brother mother father manager
    boss job hobby hobbies phone email dog cat pet partner girlfriend boyfriend kids children
    son daughter hometown address team role title salary car house home"""
)
NAME_ATTRS = _set("name nickname username surname handle")
ORG_RELATIONS = _set(
    """works_at works_for worked_at worked_for joined joins studies_at studied_at employed_by
    hired_by interns_at founded co_founded cofounded left quit graduated_from attended
    attends studies_at"""
)
PLACE_RELATIONS = _set(
    """lives_in lived_in moved_to based_in located_in born_in grew_up_in is_from comes_from
    visited visits relocated_to headquartered_in lives_near travels_to traveled_to
    travelled_to moving_to living_in resides_in settled_in visit move_to travel_to"""
)
PERSON_RELATIONS = _set(
    """mentors mentored manages managed reports_to married_to friends_with knows met dates
    dating works_with lives_with hired employs teaches supervises supervised founded_by"""
)
PERSON_SUBJECT_RELATIONS = _set(
    """works_at works_for lives_in moved_to mentors reports_to married_to studies_at born_in
    grew_up_in lives_with friends_with worked_at worked_for"""
)
ORG_VERBS = _set("employ acquire manufacture")
ORG_SUBJECT_RELATIONS = _set("employs acquired headquartered_in founded_by")

# Type ranks: a stronger cue overrides a weaker one.
KNOWN, HEAD, SUFFIX, RELATION, VERB, PRONOUN, ATTR = 100, 50, 40, 30, 20, 15, 10


def third_person(verb: str) -> str:
    """The third-person singular present of a base-form verb (``live`` → ``lives``)."""
    irregular = {"be": "is", "have": "has", "do": "does", "go": "goes", "am": "is", "are": "is"}
    if verb in irregular:
        return irregular[verb]
    if verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(verb) > 1 and verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _base(word: str) -> str | None:
    """The base form of an inflected verb in the lexicon, if it is one."""
    w = word.lower()
    if w in PAST:
        return PAST[w]
    candidates = [w]
    if w.endswith("ies"):
        candidates.append(w[:-3] + "y")
    if w.endswith("ied"):
        candidates.append(w[:-3] + "y")
    for suffix in ("es", "s", "ed", "d", "ing"):
        if w.endswith(suffix) and len(w) > len(suffix) + 1:
            stem_ = w[: -len(suffix)]
            candidates += [stem_, stem_ + "e"]
            if len(stem_) > 2 and stem_[-1] == stem_[-2]:
                candidates.append(stem_[:-1])
    return next((c for c in candidates if c in VERBS), None)


def _finite(word: str, base_ok: bool) -> bool:
    """Whether ``word`` reads as a finite verb that can start a predicate."""
    w = word.lower()
    if w in AUX or w in MODALS:
        return True
    if not w.isalpha() or w.endswith("ing") or word != w:
        return False
    if w in PAST or (w.endswith("ed") and _base(w)):
        return True
    return _base(w) is not None and (w.endswith("s") or (base_ok and w in VERBS))


def _gerund_base(word: str) -> str:
    stem_ = word.lower()[:-3]
    for candidate in (stem_, stem_ + "e", stem_[:-1]):
        if candidate in VERBS:
            return candidate
    if len(stem_) > 1 and stem_[-1] == stem_[-2] and stem_[-1] not in "lsz":
        return stem_[:-1]
    silent_e = re.fullmatch(r"[^aeiou]*[aeiou][^aeiouwxy]", stem_)
    return stem_ + "e" if silent_e else stem_
