"""Reading memory: recall, search, entities, history, episodes."""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import date
from typing import Any, NamedTuple

from memgraph.answer_kinds import answer_cues, asks_name
from memgraph.dates import names_a_bare_day
from memgraph.engine.core import MemoryCore
from memgraph.errors import NotFound
from memgraph.faces.namespaces import read_namespace
from memgraph.graph.graph import Doc, Graph
from memgraph.models import (
    Entity,
    EntityHistory,
    Episode,
    Hit,
    Observation,
    Relation,
)
from memgraph.retrieval import ranking as tiers
from memgraph.retrieval.ages import (
    age_asked_of,
    relative_age_asked,
    says_an_age,
    states_their_age,
)
from memgraph.retrieval.amounts import sums_of_it, topic_of_amount
from memgraph.retrieval.bridge import asks_about_someone_described, bridged
from memgraph.retrieval.colours import (
    asks_colour,
    colours_of_it,
    names_a_colour,
    topic_of_colour,
)
from memgraph.retrieval.days_said import days_said_before
from memgraph.retrieval.episode_index import EpisodeIndex
from memgraph.retrieval.kinds_said import kind_asked
from memgraph.retrieval.names import id_number
from memgraph.retrieval.never_named import (
    Voice,
    body_asked,
    brand_asked,
    first_name_said,
    last_name_said,
    relative_named,
    speaks_of,
)
from memgraph.retrieval.periods import someone_else_s_then
from memgraph.retrieval.recall_text import (
    format_recall,
    names_or_numbers,
    nothing_said_about,
    one_line,
    reply_context,
    said_on,
)
from memgraph.retrieval.said_of import (
    COLOUR,
    SUM,
    Turn,
    asked_of,
    kin_asked,
    said_of,
    said_of_owner,
)
from memgraph.retrieval.support import (
    LOOKED_AT,
    Support,
    Talk,
    never_said_theirs,
    support,
)
from memgraph.speakers import spoken_words
from memgraph.sums import asks_for_a_sum, payment_asked, states_amount, states_the_sum_asked
from memgraph.text import STOP_WORDS, index_terms, name_key, words

__all__ = ["ReadMixin"]

log = logging.getLogger("memgraph")

FACT_MARGIN = 0.15
"""A fact stands in for the text it came from when it scores at most this much lower."""
CONTEXT_CANDIDATES = 20
"""Of the best texts, how many recall reads the turns around (a reply's question, a
question's answer): at most 10 are shown."""
MESSAGE_CANDIDATES = 60
"""Candidates whose episodes recall reads to show messages (the best ones)."""
NAMED_AFTER = 4
"""How many turns after a text speaking of a relative or someone by their role may
name them as "him" or "her" ("I finally saw a physio" ... "his name is Marco")."""
BRIEF_QUESTION_WORDS = 8
"""A reply whose last sentence asks something this short ("where??", "Oh no. What new
dates are you looking at?") asks for what the news left out."""


class _Ranked(NamedTuple):
    """What tiers 1 and 2 found, what is kept of it, and the query's analysis
    (``None`` when nothing was searched)."""

    found: list[tiers.Candidate]
    kept: list[tiers.Candidate]
    query: tiers.Query | None


class ReadMixin(MemoryCore):
    """Reading memory: recall, search, entities, history, episodes."""

    def _ranked(
        self,
        query: str,
        *,
        rerank: bool,
        lens: tiers.Lens = tiers.CURRENT,
        floor: float | None = None,
    ) -> list[tiers.Candidate]:
        return self._ranked_both(query, rerank=rerank, lens=lens, floor=floor).kept

    def _ranked_both(
        self,
        query: str,
        *,
        rerank: bool,
        lens: tiers.Lens = tiers.CURRENT,
        floor: float | None = None,
    ) -> _Ranked:
        """What tiers 1 and 2 found, what is kept of it (tier 3's choice when
        ``rerank``), and the query's analysis they used."""
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        with self._lock:
            graph = self._sync()
            if not query.strip() or not (graph.entities or len(self._episodes_indexed())):
                return _Ranked([], [], None)
            query = self._names_written_out(graph, query)
            asked = self._analyze(graph, query)
            ranked = self._candidates(graph, query, lens=lens, floor=floor, analyzed=asked)
            ranked = bridged(
                query,
                ranked,
                texts=lambda found: self._candidate_texts(graph, found),
                person=lambda word: _person_named(graph, word),
                asked={graph.entity_name(e) or "" for e in asked.named},
                search=lambda again: self._candidates(graph, again, lens=lens, floor=floor),
            )
            if not rerank:
                return _Ranked(ranked, ranked, asked)
            small = len(graph.entities) <= 50
            pool = ranked or (tiers.every_entity(graph, lens) if small else [])
            self._label_episodes(graph, pool[: tiers.RERANK_LIMIT], query)
        if not pool:
            return _Ranked(ranked, [], asked)
        kept = tiers.rerank(self.provider.chat, query, pool)
        if kept is None:
            return _Ranked(ranked, ranked, asked)
        picked = {c.id for c in kept}
        if not tiers.answers_something(kept, asked) and tiers.answers_something(ranked, asked):
            # the model kept nothing that answers what tiers 1 and 2 found an answer to
            # (a small model keeping one wrong line): its picks first, then the rest
            kept = kept + [c for c in ranked if c.id not in picked]
        else:  # its picks first, and the best of tiers 1 and 2 are never all dropped
            kept = kept + [c for c in ranked[: tiers.FUSED_KEPT] if c.id not in picked]
            if picked and ranked and ranked[0].id not in picked:
                # the best of tiers 1 and 2 right after the model's first pick: a small
                # model may drop the one line that answers ("40 years in April. The 19th")
                rest = [c for c in kept[1:] if c.id != ranked[0].id]
                kept = [kept[0], ranked[0], *rest]
        return _Ranked(ranked, kept, asked)

    def _candidate_texts(self, graph: Graph, found: Sequence[tiers.Candidate]) -> list[str]:
        """What candidates say: a text's words, a fact with its entity's name."""
        docs = self._episode_docs(graph, [c.episode for c in found if c.episode is not None])
        said: list[str] = []
        for item in found:
            if item.episode is not None and item.episode in docs:
                said.append(str(docs[item.episode].get("text") or ""))
            elif item.obs is not None and item.entity is not None:
                said.append(f"{item.entity['name']} {item.obs.get('content') or ''}")
        return said

    def _label_episodes(self, graph: Graph, candidates: list[tiers.Candidate], query: str) -> None:
        """Give episode candidates the text a re-ranker reads: the message, and the
        turn it answers when the message alone does not say what it is about."""
        wanted = [c.episode for c in candidates if c.episode is not None and c.label is None]
        if not wanted:
            return
        docs = self._episode_docs(graph, wanted)
        contexts = self._reply_contexts(
            graph, docs, index_terms(query), every_reply=asks_name(query)
        )
        for item in candidates:
            doc = docs.get(item.episode or "")
            if doc is not None:
                speaker = doc.get("speaker") or "Someone"
                text = one_line(doc)[:400]
                label = f"{speaker} ({said_on(doc.get('at'))}): {text}"
                chain = contexts.get(str(item.episode))
                if chain:
                    # as said, like the message itself
                    context = reply_context(chain, [], speaker=doc.get("speaker"), resolve=False)
                    label += f" ({context})"
                item.label = label

    def _answers(
        self, graph: Graph, docs: Mapping[str, Doc], episode_ids: Sequence[str]
    ) -> dict[str, list[Doc]]:
        """The turns that answer these episodes, to quote with them.

        A question ("which one?") gets the turn another speaker said right after
        it. News that the other speaker answers with a short question ("we signed
        a lease!!", "where??") gets that question and the reply to it ("Logan
        Square, two bedroom").
        """
        index = self._episodes_indexed()
        speaker = index.speaker_of

        def asks(episode_id: str) -> bool:
            return "?" in spoken_words(docs[episode_id])

        def reply(episode_id: str) -> str | None:
            """The turn another speaker said right after it (the index knows whose)."""
            after, own = index.reply_to(episode_id), speaker(episode_id)
            if after is None or own is None or speaker(after) in (None, own):
                return None
            return after

        replies = {e: r for e in episode_ids if e in docs and (r := reply(e))}
        found = self._episode_docs(graph, sorted(set(replies.values())))
        gone = self._retired_episodes(graph, found)
        answers = {
            e: [found[r]]
            for e, r in replies.items()
            if r in found and (asks(e) or _asks_briefly(found[r])) and r not in gone
        }
        # news asked about: the reply to the question, by whoever gave the news
        follow = {e: reply(str(chain[0]["id"])) for e, chain in answers.items() if not asks(e)}
        more = self._episode_docs(graph, sorted({f for f in follow.values() if f}))
        gone = self._retired_episodes(graph, more)
        for e, f in follow.items():
            if f in more and speaker(f) == speaker(e) and f not in gone:
                answers[e].append(more[f])
            else:
                del answers[e]  # a question nobody answered says nothing of the news
        return answers

    def _reply_contexts(
        self,
        graph: Graph,
        docs: Mapping[str, Doc],
        terms: Sequence[str],
        *,
        every_reply: bool = False,
    ) -> dict[str, list[Doc]]:
        """The turns said just before some of these episodes, to quote with them.

        An episode whose own words hold none of ``terms`` (an answer such as "Stripe.
        He got an offer", or "2:06:41!!" right after "I'M A HALF MARATHONER") gets
        the turn said just before it in its conversation and, when that one holds
        none of them either ("which one?"), the turn before that. A reply that
        only affirms or denies ("yep, same days") gets the question it answers,
        and with ``every_reply`` (a question asking a name) every reply gets the
        turn it answers.
        """
        index = self._episodes_indexed()
        wanted = set(terms)

        def silent(doc: Doc) -> bool:  # its words, not its speaker's name
            return not wanted & set(index_terms(spoken_words(doc)))

        quiet = {e for e, doc in docs.items() if silent(doc)}
        step = {
            e: index.context_of(e)
            for e, doc in docs.items()
            if e in quiet or every_reply or _affirms(doc) or _cheers(doc)
        }
        found = self._episode_docs(graph, sorted({p for p in step.values() if p is not None}))
        gone = self._retired_episodes(graph, found)
        chains: dict[str, list[Doc]] = {}
        for episode_id, previous in step.items():
            before = found.get(previous or "")
            if before is None or previous in gone:
                continue  # a text whose facts were since superseded or forgotten is not quoted
            doc = docs[episode_id]
            if episode_id in quiet:
                # a reply, or its speaker going on with something worth reading
                # ("2:06:41!!" after "I'M A HALF MARATHONER", not "lol stop")
                quoted = _other_speaker(doc, before) or (
                    _in_dialogue(doc, before) and names_or_numbers(graph, doc)
                )
            else:  # a yes or no: the other speaker's question it answers; a cheer: their news
                quoted = _other_speaker(doc, before) and (
                    every_reply or "?" in spoken_words(before) or _cheers(doc)
                )
            if quoted:
                chains[episode_id] = [before]
        further = {
            e: index.context_of(str(chain[0]["id"]))
            for e, chain in chains.items()
            if e in quiet and silent(chain[0])
        }
        earlier = self._episode_docs(graph, sorted({p for p in further.values() if p}))
        gone = self._retired_episodes(graph, earlier)
        for episode_id, previous in further.items():
            if previous in earlier and previous not in gone:
                chains[episode_id].append(earlier[previous])
        return chains

    def recall(self, query: str, *, rerank: bool = True, from_: str | None = None) -> str:
        """The facts relevant to ``query``, grouped by entity, as text ("" when none).

        Uses all three tiers; ``rerank=False`` skips the LLM (the variant that
        context injection uses). Each fact line starts with the date it was
        said; remembered messages that no shown fact covers follow under
        ``Related messages:``. When the query names someone and nothing found
        says what it asks about them (only someone else's texts do, or none
        holds enough of it), the text opens with ``(Nothing remembered says
        this about Dana; the nearest matches follow.)``. The text is capped by
        ``recall.tokenBudget``.

        Args:
            query: what to recall.
            rerank: run tier 3 (the LLM keeps the relevant candidates).
            from_: read one source namespace (``"*"`` for all); inside
                ``with agent(...)`` the default is the agent's own entries.
        """
        return self._recall_text(
            query, rerank=rerank, lens=tiers.Lens(source=read_namespace(from_))
        )

    def _recall_text(self, query: str, *, rerank: bool, lens: tiers.Lens) -> str:
        found, ranked, analyzed = self._ranked_both(query, rerank=rerank, lens=lens)
        if not ranked or analyzed is None:
            return ""
        with self._lock:
            graph = self._sync()
            indexed = self._episodes_indexed()
            # asked in words nothing remembered holds: what is shown is only the nearest
            # someone who never speaks is told of as "Mom" or "she", but a name is
            # said as itself: a question asking one still needs a text naming them
            quiet = (
                bool(indexed.voices)
                and not asks_name(query)
                and not any(indexed.heard(graph.entity_name(e)) for e in analyzed.named)
            )
            unanswered = never_said_theirs(analyzed) or not tiers.answers_something(
                ranked, analyzed, quiet=quiet
            )
            wanted = [c.episode for c in ranked[:MESSAGE_CANDIDATES] if c.episode is not None]
            # whose the topic is: judged on all that tiers 1 and 2 found, not only on
            # what the re-ranker kept (it may keep Dana's lines and drop Marcus's dog)
            judged = [] if unanswered else [c.episode for c in found[:LOOKED_AT] if c.episode]
            docs = self._episode_docs(graph, list(dict.fromkeys(wanted + judged)))
            best = {e: docs[e] for e in wanted[:CONTEXT_CANDIDATES] if e in docs}
            if not unanswered:
                talk = self._talk(graph)

                def judge(candidates: Sequence[tiers.Candidate]) -> Support | None:
                    return support(
                        graph,
                        candidates,
                        analyzed,
                        episode_docs=docs,
                        frequency=indexed.weight,
                        talk=talk,
                        cues=answer_cues(query, judging=True),
                        # someone a conversation speaks of who never speaks in it
                        # (Kristen's mother Carol); nobody, when no remembered text has
                        # a speaker
                        silent=lambda entity: (
                            bool(indexed.voices) and not indexed.heard(graph.entity_name(entity))
                        ),
                    )

                held = judge(found)
                # "the person Tendai played it for": the question is about someone
                # it describes, not about whom it names
                described = asks_about_someone_described(query)
                unanswered = held is not None and held.about_someone_else and not described
                unanswered = unanswered or self._answer_unsaid(
                    graph, query, analyzed, docs, held=held, talk=talk, indexed=indexed
                )
                unanswered = unanswered or (
                    held is not None
                    and not described
                    and someone_else_s_then(query, found, docs, judge)
                )
            note = None
            if unanswered:
                names = sorted(graph.entity_name(e) or e for e in analyzed.named)
                note = nothing_said_about(names)
            return format_recall(
                graph,
                ranked,
                query=analyzed,
                episode_docs=docs,
                reply_contexts=self._reply_contexts(
                    graph, best, analyzed.terms, every_reply=asks_name(query)
                ),
                answers=self._answers(graph, best, list(best)),
                count_tokens=self._count_tokens,
                budget=self.config.recall.token_budget,
                max_entities=self.config.recall.max_entities,
                lens=lens,
                note=note,
                answers_past=indexed.after_past_question,
                days_said=self._days_said(graph, docs),
            )

    def _answer_unsaid(
        self,
        graph: Graph,
        query: str,
        analyzed: tiers.Query,
        docs: Mapping[str, Doc],
        *,
        held: Support | None,
        talk: Talk,
        indexed: EpisodeIndex,
    ) -> bool:
        """Whether the kind of answer ``query`` asks for is said in none of ``docs``
        (the texts recall found): a name ("What is the name of Tasha's sister?" when
        a sister is spoken of, never named; a brand, said like a thing's name), a
        sum, a colour of the thing asked, a word of a kind with words of its own (a
        breed, a job, an airline), or an age; a job, an instrument, a car, an
        airline, a finishing time, a colour or a sum said of whom it asks about, a
        sum or a colour in the same text that says it of the thing."""
        asking_name = (
            asks_name(query) or brand_asked(query) is not None or body_asked(query) is not None
        )
        asking_colour = asks_colour(query)
        kind = kind_asked(query)
        said = (
            {e: spoken_words(doc) for e, doc in docs.items()}
            if asking_name or analyzed.asks_amount or asking_colour or kind is not None
            else {}
        )
        if asking_name:
            # "What is Keisha's last name?": only her first name said
            others = held.others if held is not None else frozenset()
            theirs = [e for e in said if e not in others]

            def replies() -> list[str]:  # read only when a thing's name is asked
                answered_by = [indexed.reply_to(e) for e in theirs]
                found = self._episode_docs(graph, [r for r in answered_by if r is not None])
                return [spoken_words(found[r]) if r in found else "" for r in answered_by]

            def told_after() -> list[str]:
                """The few turns after each text that the person asked about said
                ("WAIT. whose dog is that" "MINE. ... her name is Chai" is not Dana's)."""
                # the people it names, or a speaker it names memory holds no entity for
                asked = {name_key(graph.entity_name(e) or "") for e in analyzed.named}
                asked = (asked | (set(words(query)) & indexed.voices)) - {""}
                after = [
                    [
                        turn
                        for turn in indexed.turns_after(episode, NAMED_AFTER)
                        if name_key(indexed.speaker_of(turn) or "") in asked
                    ]
                    for episode in theirs
                ]
                found = self._episode_docs(graph, [e for turns in after for e in turns])
                return [
                    "\n".join(spoken_words(found[e]) for e in turns if e in found)
                    for turns in after
                ]

            their_names = [graph.entity_name(e) or "" for e in analyzed.named]
            named = relative_named(
                analyzed,
                [said[e] for e in theirs],
                known=indexed.names_a_speaker,  # "Rhi" of Rhiannon too
                is_name=lambda word: graph.entity_by_name(word) is not None,
                voices=[Voice(docs[e].get("speaker"), indexed.addressee(e)) for e in theirs],
                replies=replies,
                told_after=told_after,
                asked_before=lambda: [
                    next((text for _, text in talk.before(e)), "") for e in theirs
                ],
            )
            if (
                named is False
                or last_name_said(analyzed, their_names, said.values()) is False
                or first_name_said(analyzed, said.values()) is False
            ):
                return True
        if analyzed.asks_amount:
            said = self._with_answers(graph, said, indexed)
            paid = payment_asked(query)
            said = sums_of_it(
                said, topic_of_amount(analyzed.content_terms), talk.before, of_kind=paid
            )
            # "How much rent does Tunde pay?": not "It's 2% max"; "How much was the band
            # paid?": not "100%."
            said = {e: words for e, words in said.items() if states_the_sum_asked(words, query)}
            if not said:
                return True
            payer = asked_of(SUM, query)
            if payer is not None and not self._a_person(
                graph, indexed, payer if (kin := kin_asked(payer)) is None else kin[0]
            ):
                payer = None  # "How much does Solecito charge?": a shop's, said by its owner
            if not self._said_of_them(states_amount, payer, said, docs, graph, talk, indexed):
                return True  # "How much did Gus pay for his car?": only Farida's sum is said
        if asking_colour:
            coloured = colours_of_it(said, topic_of_colour(analyzed.content_terms), talk.before)
            if not coloured:
                return True  # "What colour is Chloe's Yaris?": a colour said of the Yaris
            if not self._said_of_them(
                names_a_colour, asked_of(COLOUR, query), coloured, docs, graph, talk, indexed
            ):
                return True  # "What colour was Julien's cast?": only Bridget's boy's is said
        if kind is not None and not kind.said_in(said.values()):
            return True  # "What breed is Isla's dog?": no text names a breed
        if kind is not None and not self._said_of_them(
            lambda sentence: kind.answers(sentence, query),
            asked_of(kind.name, query),
            said,
            docs,
            graph,
            talk,
            indexed,
            owner=kind.of_a_thing,
        ):
            return True  # "What does Farida's husband Tom do?": only her job is said
        asked_age = age_asked_of(query)
        relative = relative_age_asked(query) if asked_age is None else None
        if relative is not None and kin_asked(relative) is not None:
            # "How old is Dana's mother?": an age said of her mother ("my mom turns 70"
            # in her own turn), not of Marcus's ("she's 74" after "how's your mom?")
            return not self._said_of_them(
                says_an_age,
                relative,
                {e: spoken_words(doc) for e, doc in docs.items()},
                docs,
                graph,
                talk,
                indexed,
                of_a_speaker=True,
            )
        # "How old is Walt?": an age said of him, not of Gus or the furnace
        return asked_age is not None and not states_their_age(
            asked_age,
            ((e, doc.get("speaker"), spoken_words(doc)) for e, doc in docs.items()),
            addressee=indexed.addressee,
            before=talk.before,
        )

    def _with_answers(
        self, graph: Graph, said: Mapping[str, str], indexed: EpisodeIndex
    ) -> dict[str, str]:
        """``said`` with, after each text that the other asked about ("a new one would
        cost almost as much" "How much is new?"), the answer ("The one I like is
        8,500 euros"): a sum asked for is often said in the turn answering a question."""
        asked = {e: indexed.reply_to(e) for e in said}
        answers = {q: indexed.reply_to(q) for q in asked.values() if q is not None}
        found = self._episode_docs(
            graph, [i for i in (*asked.values(), *answers.values()) if i is not None]
        )
        joined = dict(said)
        for e, question in asked.items():
            answer = answers.get(question) if question is not None else None
            if question in found and answer in found:
                asks = spoken_words(found[question])
                if asks_for_a_sum(asks):
                    joined[e] = "\n".join((said[e], asks, spoken_words(found[answer])))
        return joined

    def _said_of_them(
        self,
        says: Callable[[str], bool],
        person: str | None,
        said: Mapping[str, str],
        docs: Mapping[str, Doc],
        graph: Graph,
        talk: Talk,
        indexed: EpisodeIndex,
        *,
        owner: bool = False,
        of_a_speaker: bool = False,
    ) -> bool:
        """Whether one of the texts ``said`` (episode id -> words; ``docs``, the
        episodes) says an answer (``says``) of ``person``, whom the question asks
        it of (see :func:`memgraph.retrieval.said_of.said_of`); true when no one
        is named, or only by a short name for a speaker ("Tobi" of Tobenna)
        memory cannot tell, or when the question asks of a speaker's relative.
        ``owner``: the answer is said of a thing of theirs (their dog's breed): for
        someone who speaks, by them, to them or naming them
        (:func:`~memgraph.retrieval.said_of.said_of_owner`); for anyone else, not judged.
        ``of_a_speaker``: a speaker's relative is judged as anyone's, by the
        sentences that say the answer (an age is said in words of its own, "Mum
        turns 70", not in the "she" and "my wife" of many turns)."""
        if person is None:
            return True
        if owner:  # a pet is "he", "she" and its own name: only its owner's own words tell
            return not indexed.heard(person) or said_of_owner(
                says,
                person,
                (
                    Turn(docs[e].get("speaker"), indexed.addressee(e), w, tuple)
                    for e, w in said.items()
                ),
            )
        kin = kin_asked(person)
        whose = name_key(person) if kin is None else kin[0]
        if indexed.first_names().begun_like(whose):
            return True
        if kin is not None and indexed.heard(whose) and not of_a_speaker:
            # a speaker's own relatives are "she" and "my wife" over many turns, and
            # what answers is as often a fact drawn from them as a sentence; but a
            # relative no text found speaks of ("What does Bea's brother do?") is none
            return any(speaks_of(kin[1], w) for w in said.values())
        return said_of(
            says,
            person,
            (
                Turn(
                    docs[e].get("speaker"),
                    indexed.addressee(e),
                    words,
                    functools.partial(_texts_before, talk, e),
                )
                for e, words in said.items()
            ),
            is_person=lambda word: self._a_person(graph, indexed, word),
        )

    @staticmethod
    def _a_person(graph: Graph, indexed: EpisodeIndex, name: str) -> bool:
        """Whether ``name`` is someone's: a speaker's, or a person's memory holds."""
        return indexed.heard(name) or (graph.entity_by_name(name) or {}).get("type") == "person"

    def _days_said(
        self, graph: Graph, docs: Mapping[str, Doc]
    ) -> Callable[[str], Mapping[int, date]]:
        """The days the conversation of each of these turns named before it ("28
        November"), read when a turn shown speaks of a bare day ("the 28th")."""
        found: dict[str, dict[int, date]] = {}

        def days(episode_id: str) -> Mapping[int, date]:
            doc = docs.get(episode_id)
            if doc is None or not names_a_bare_day(str(doc.get("text") or "")):
                return {}
            if episode_id not in found:
                earlier = self._turns_before(graph, episode_id)
                found[episode_id] = days_said_before(doc, earlier)
            return found[episode_id]

        return days

    def search(
        self,
        query: str,
        *,
        k: int = 10,
        rerank: bool = False,
        episodes: bool = False,
        from_: str | None = None,
    ) -> list[Hit]:
        """Ranked hits for ``query``, best first: facts and remembered texts.

        A fact hit has its ``observation`` (and, with ``episodes=True``, the
        episode it came from); an episode hit has ``observation=None`` and its
        ``episode`` (the remembered text no fact covered as well), with the
        speaker's entity as ``entity`` when there is one.

        Args:
            query: what to look for.
            k: how many hits at most.
            rerank: also run tier 3 (the LLM re-ranker).
            episodes: attach the episode each fact came from to its hit; a text
                is then listed once, with the best fact drawn from it.
            from_: read one source namespace (see :meth:`recall`).

        Raises:
            ValueError: ``k`` is not a positive integer.
        """
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive integer (how many hits at most), got {k!r}")
        lens = tiers.Lens(source=read_namespace(from_))
        floor = min(self.config.recall.floor, tiers.SEARCH_FLOOR)
        ranked = self._ranked(query, rerank=rerank, lens=lens, floor=floor)
        return self._hits(self._top_hits(ranked, k, texts=episodes), episodes, lens)

    @staticmethod
    def _top_hits(
        ranked: list[tiers.Candidate], k: int, *, texts: bool = False
    ) -> list[tiers.Candidate]:
        """The first ``k`` candidates, one per remembered text: an episode gives way to
        a fact drawn from it that matched nearly as well (the fact carries the text as
        its provenance), and a fact's text is not listed again after it. With
        ``texts`` (the hits carry their texts), neither is another fact drawn from
        the same text that matched the query's words: its text is already in hand
        (a query for who someone is, "Alice", still lists each of her facts)."""
        best_fact: dict[str, tiers.Candidate] = {}
        for item in ranked:
            source = item.obs.get("episode") if item.obs is not None else None
            if source and str(source) not in best_fact:
                best_fact[str(source)] = item
        covered: set[str] = set()
        chosen: list[tiers.Candidate] = []
        taken: set[str] = set()
        for item in ranked:
            if len(chosen) >= k:
                break
            if item.episode is not None:
                if item.episode in covered:
                    continue
                fact = best_fact.get(item.episode)
                if fact is not None and fact.score >= item.score - FACT_MARGIN:
                    item = fact
                covered.add(item.episode or str((item.obs or {}).get("episode")))
            elif item.obs is not None and item.obs.get("episode"):
                source = str(item.obs["episode"])
                if texts and source in covered and "content" in item.signals:
                    continue  # another fact of the same text matched already
                covered.add(source)
            if item.id in taken:
                continue
            taken.add(item.id)
            chosen.append(item)
        return chosen

    def _hits(self, ranked: list[tiers.Candidate], episodes: bool, lens: tiers.Lens) -> list[Hit]:
        with self._lock:
            graph = self._sync()
            wanted = [c.episode for c in ranked if c.episode is not None]
            if episodes:
                wanted += [
                    str(c.obs["episode"])
                    for c in ranked
                    if c.obs is not None and c.obs.get("episode")
                ]
            docs = self._episode_docs(graph, list(dict.fromkeys(wanted))) if wanted else {}
            hits = []
            for item in ranked:
                entity: Entity | None = None
                rels: tuple[Relation, ...] = ()
                if item.entity is not None:
                    model = self._entity_model(graph, item.entity)
                    entity = model.entity
                    if lens == tiers.CURRENT:
                        rels = model.current_relations
                    else:
                        rels = tuple(rel for doc, rel in model.relations if lens.visible(doc))
                obs = None
                episode = None
                if item.obs is not None:
                    assert entity is not None
                    obs = Observation.from_doc(item.obs, entity.id)
                    if episodes and obs.episode_id and obs.episode_id in docs:
                        episode = Episode.from_doc(docs[obs.episode_id])
                elif item.episode is not None:
                    doc = docs.get(item.episode)
                    if doc is None:
                        continue
                    episode = Episode.from_doc(doc)
                hits.append(
                    Hit(entity, obs, rels, round(item.score, 6), frozenset(item.signals), episode)
                )
            return hits

    def episode(self, episode_id: str) -> Episode | None:
        """The episode with this id, or ``None``."""
        with self._lock:
            graph = self._sync()
            doc = self._episode_docs(graph, [episode_id]).get(episode_id)
            return Episode.from_doc(doc) if doc is not None else None

    def supporting_episodes(self, hits: Sequence[Hit]) -> list[Episode]:
        """The distinct episodes behind ``hits``, in rank order."""
        seen: dict[str, Episode] = {}
        for hit in hits:
            episode_id = hit.observation.episode_id if hit.observation else None
            if episode_id and episode_id not in seen:
                found = hit.episode or self.episode(episode_id)
                if found is not None:
                    seen[episode_id] = found
        return list(seen.values())

    def entities(self) -> list[Entity]:
        """Every entity with all its observations (current and expired)."""
        with self._lock:
            return [Entity.from_doc(e) for e in self._sync().entities.values()]

    def entity(self, name: str) -> Entity:
        """The entity called ``name`` (normalized match).

        Raises:
            NotFound: no entity has that name.
        """
        with self._lock:
            doc = self._sync().entity_by_name(name)
            if doc is None:
                raise NotFound(f"no entity named {name!r} in scope {self.scope!r}")
            return Entity.from_doc(doc)

    def names_in(self, text: str) -> list[str]:
        """The names of the entities ``text`` names, as recall reads a query
        (``"Does Alice prefer tea?"`` → ``["Alice Chen"]``), sorted."""
        with self._lock:
            graph = self._sync()
            return sorted(graph.entity_name(e) or e for e in tiers.name_matches(graph, text))

    def history(self, entity_name: str) -> EntityHistory:
        """Every observation and relation version of an entity, expired ones included.

        Raises:
            NotFound: no entity has that name.
        """
        with self._lock:
            graph = self._sync()
            doc = graph.entity_by_name(entity_name)
            if doc is None:
                raise NotFound(f"no entity named {entity_name!r} in scope {self.scope!r}")
            entity = Entity.from_doc(doc)
            observations = sorted(entity.observations, key=lambda o: (o.valid_from, o.id))
            relations = sorted(
                (self._relation(r) for r in graph.relations_of(doc["id"])),
                key=lambda r: (r.valid_from, r.id),
            )
            return EntityHistory(entity, tuple(observations), tuple(relations))

    def summary(self) -> dict[str, Any] | None:
        """The stored conversation summary (``summary.json``), if any."""
        with self._lock:
            return self.store.read_summary()

    def save_summary(self, summary: Mapping[str, Any]) -> None:
        """Persist the conversation summary atomically (``summary``,
        ``lastCompactedAt``, ``messagesSummarized`` and any extra fields).

        Takes the scope's lock like every write, so a purge redacting the summary
        in another process cannot overwrite it with an older one.
        """
        with self._lock, self._writer():
            self.store.write_summary(dict(summary))

    def update_summary(
        self, change: Callable[[dict[str, Any] | None], Mapping[str, Any] | None]
    ) -> None:
        """Read the conversation summary, change it and write it back under the
        scope's write lock, so concurrent writers of the document lose nothing.

        ``change`` gets the stored document (``None`` when there is none) and
        returns the new one, or ``None`` to leave it as it is.

        Raises:
            StoreConflict: the scope's lock was not free within ``lockTimeout``.
        """
        with self._lock, self._writer():
            updated = change(self.store.read_summary())
            if updated is not None:
                self.store.write_summary(dict(updated))

    def stats(self) -> dict[str, int]:
        """Counts of entities, observations (all / current), relations, episodes
        (remembered texts) and vectors (of observations and episodes)."""
        with self._lock:
            graph = self._sync()
            current = len(graph.current_observation_ids())
            return {
                "entities": len(graph.entities),
                "observations": graph.observation_count,
                "current_observations": current,
                "relations": len(graph.relations),
                "episodes": len(self._episodes_indexed()),
                "vectors": len(self._vectors or ()),
            }

    def iter_episodes(self) -> Iterator[Episode]:
        """Every stored episode, oldest first."""
        with self._lock:
            graph = self._sync()
            docs = {e["id"]: e for e in self.store.episodes()}
            docs.update(graph.episodes)
        done = graph.extracted_later()
        # ids count up in the order written: "episode-10" after "episode-9" of one batch
        order = sorted(docs.values(), key=lambda d: (d.get("recordedAt") or "", id_number(d["id"])))
        for doc in order:
            if doc.get("unextracted") and doc["id"] in done:
                doc = {k: v for k, v in doc.items() if k != "unextracted"}
            yield Episode.from_doc(doc)


_AFFIRMATIONS = frozenset(
    [
        "yes",
        "yeah",
        "yep",
        "yup",
        "yea",
        "no",
        "nope",
        "nah",
        "right",
        "exactly",
        "correct",
        "definitely",
        "sure",
        "absolutely",
    ]
)


def _affirms(doc: Doc) -> bool:
    """Whether a message starts by saying yes or no (to the question before it)."""
    first = words(spoken_words(doc)[:40])[:1]
    return bool(first) and first[0] in _AFFIRMATIONS


_CHEER_TEXT = (
    "yay yes woo woohoo wohoo hooray hurray omg wow whoa woah congrats congratulations "
    "amazing brilliant finally legend yas"
)
_CHEERS = frozenset(_CHEER_TEXT.split())
"""A cheer's first word, as written or with its last letter said once ("Yesss" is
"yes", "yass" "yas"; "woohoo" stays)."""
_DRAWN_OUT = re.compile(r"(\w)\1+$")
_CHEER_WORDS = 8
"""How many words a cheer has at most ("Yesss! First win!")."""


def _cheers(doc: Doc) -> bool:
    """Whether a message is a short cheer ("Yesss! First win!", "omg congrats!!",
    "JESSE!!! Amazing!"): the news it cheers is the turn before it."""
    said = words(spoken_words(doc)[:80])
    if not said or len(said) > _CHEER_WORDS:
        return False
    # its first word, or the one after a name it calls out ("JESSE!!! Amazing!")
    return any(w in _CHEERS or _DRAWN_OUT.sub(r"\1", w) in _CHEERS for w in said[:2])


_LAST_SENTENCE = re.compile(r"[^.!?]*[.!?]*$")


def _asks_briefly(doc: Doc) -> bool:
    """Whether a turn ends with a short question ("where??", "which one?", "That's
    a shame. What new dates are you looking at?")."""
    text = spoken_words(doc).strip()
    if not text.endswith("?"):
        return False
    last = _LAST_SENTENCE.search(text)  # matches at the end of any text
    return last is not None and len(last.group().split()) <= BRIEF_QUESTION_WORDS


def _in_dialogue(doc: Doc, before: Doc) -> bool:
    """Whether two turns are a conversation's, each with its speaker (the same one
    going on, or another replying), not two anonymous notes."""
    return bool(doc.get("speaker") and before.get("speaker"))


def _other_speaker(doc: Doc, before: Doc) -> bool:
    speaker, previous = doc.get("speaker"), before.get("speaker")
    return bool(speaker and previous and speaker != previous)


_NOT_PEOPLE = frozenset({"place", "location", "city", "country", "organization", "event", "date"})


def _person_named(graph: Graph, word: str) -> str | None:
    """The name of whoever a word names ("Noah", "terrys"), if memory holds an entity
    by it that is no place, organization or event (an extraction may type a person
    "thing"); a common word ("will", "grace") names no one."""
    if len(word) < 3 or word.lower() in STOP_WORDS:
        return None
    entity = graph.entity_by_name(word)
    if entity is None and word.endswith("s"):  # "terrys helping": Terry's
        entity = graph.entity_by_name(word[:-1])
    if entity is None or str(entity.get("type") or "").lower() in _NOT_PEOPLE:
        return None
    return str(entity["name"])


def _texts_before(talk: Talk, episode_id: str) -> list[str]:
    """The texts of the turns ``episode_id`` goes on from, nearest first."""
    return [text for _, text in talk.before(episode_id)]
