"""Driving memgraph: feeding a conversation turn by turn, and mapping search hits to turns.

The engine is changing under this benchmark (speakers, an episode tier), so what it
accepts is detected from signatures, never assumed, and the report says what was used.
"""

from __future__ import annotations

import inspect
import time
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.quality.dataset import Conversation, Turn
from memgraph import Memory

__all__ = ["Capabilities", "Fed", "detect", "feed", "hit_turns"]


@dataclass(frozen=True)
class Capabilities:
    """What this engine's write API accepts."""

    speaker: bool  # Memory.remember(..., speaker=...)
    bulk: str | None  # how remember_many takes per-item speakers: "speakers", "items" or None

    def describe(self) -> dict[str, str]:
        return {
            "speaker": "remember(speaker=...)"
            if self.speaker
            else 'no speaker= on remember: each turn is fed as "Speaker: text"',
            "bulk": {
                "speakers": "remember_many(texts, speakers=[...])",
                "items": "remember_many([{text, speaker, at, metadata}, ...])",
                None: "remember_many takes no per-item speakers",
            }[self.bulk],
        }


def _parameters(function: Callable[..., Any]) -> dict[str, inspect.Parameter]:
    try:
        return dict(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return {}


def detect() -> Capabilities:
    """Inspect ``Memory.remember`` and ``Memory.remember_many``."""
    speaker = "speaker" in _parameters(Memory.remember)
    many = _parameters(Memory.remember_many)
    bulk: str | None = None
    if "speakers" in many:
        bulk = "speakers"
    else:
        first = next((p for name, p in many.items() if name != "self"), None)
        annotation = str(first.annotation) if first is not None else ""
        if any(word in annotation for word in ("Mapping", "dict", "Item", "Turn", "Message")):
            bulk = "items"
    return Capabilities(speaker=speaker, bulk=bulk)


@dataclass
class Fed:
    """The outcome of feeding one conversation."""

    episode_turn: dict[str, str]  # episode id -> turn id
    remember_ms: list[float]  # per turn (a bulk call's time is shared out over its turns)
    bulk_used: bool
    notes: list[str] = field(default_factory=list)
    turns: bool = True  # whether search hits map to turns (not with a session per episode)


def feed(
    memory: Memory, conv: Conversation, caps: Capabilities, *, bulk: bool, sessions: bool = False
) -> Fed:
    """Remember every turn of ``conv`` in order; map the stored episodes back to turns.

    With ``sessions``, each session is one ``Speaker: text`` transcript remembered
    at its first turn's time; an engine that keeps it as one episode has no
    hits to map to turns (``Fed.turns`` is false).
    """
    times: list[float] = []
    notes: list[str] = []
    if sessions:
        for sid, turns in _sessions(conv):
            start = time.perf_counter()
            transcript = "\n".join(turn.line for turn in turns)
            memory.remember(transcript, at=turns[0].at, metadata={"session": sid})
            elapsed = (time.perf_counter() - start) * 1000.0
            times.extend([elapsed / len(turns)] * len(turns))
        mapping = _episode_turns(memory, conv, caps)
        apart = len(mapping) * 2 >= len(conv.turns)  # else an episode is a session
        notes = ["each session fed as one transcript text"]
        return Fed(mapping if apart else {}, times, False, notes, turns=apart)
    bulk_used = bool(bulk and caps.bulk)
    if bulk and not bulk_used:
        notes.append("--bulk skipped: remember_many has no per-item speakers; fed turn by turn")
    if bulk_used:
        for _sid, turns in _sessions(conv):
            start = time.perf_counter()
            _remember_session(memory, turns, caps)
            elapsed = (time.perf_counter() - start) * 1000.0
            times.extend([elapsed / len(turns)] * len(turns))
    else:
        for turn in conv.turns:
            start = time.perf_counter()
            if caps.speaker:
                remember: Any = memory.remember  # speaker= is detected, not yet in every engine
                remember(turn.text, at=turn.at, speaker=turn.speaker, metadata={"turn": turn.id})
            else:
                memory.remember(turn.line, at=turn.at, metadata={"turn": turn.id})
            times.append((time.perf_counter() - start) * 1000.0)
    return Fed(_episode_turns(memory, conv, caps), times, bulk_used, notes)


def _sessions(conv: Conversation) -> list[tuple[str, list[Turn]]]:
    """The conversation's sessions in order, each with its turns."""
    by_session: dict[str, list[Turn]] = defaultdict(list)
    for turn in conv.turns:
        by_session[turn.session].append(turn)
    return [(sid, by_session[sid]) for sid, _at in conv.sessions if by_session[sid]]


def _remember_session(memory: Memory, turns: Sequence[Turn], caps: Capabilities) -> None:
    many: Any = memory.remember_many
    if caps.bulk == "speakers":
        texts = [t.text for t in turns]
        kwargs: dict[str, Any] = {"at": turns[0].at, "speakers": [t.speaker for t in turns]}
        params = _parameters(Memory.remember_many)
        if "metadatas" in params:
            kwargs["metadatas"] = [{"turn": t.id} for t in turns]
        many(texts, **kwargs)
    else:
        many(
            [
                {"text": t.text, "speaker": t.speaker, "at": t.at, "metadata": {"turn": t.id}}
                for t in turns
            ]
        )


def _episode_turns(memory: Memory, conv: Conversation, caps: Capabilities) -> dict[str, str]:
    """Episode id -> turn id: from the episode's metadata, else by its text, in order."""
    pending: dict[str, deque[str]] = defaultdict(deque)
    for turn in conv.turns:
        pending[turn.text].append(turn.id)
        pending[turn.line].append(turn.id)
    mapping: dict[str, str] = {}
    taken: set[str] = set()
    for episode in memory.iter_episodes():
        turn_id = episode.metadata.get("turn") if episode.metadata else None
        if not isinstance(turn_id, str):
            queue = pending.get(episode.text)
            while queue and queue[0] in taken:
                queue.popleft()
            turn_id = queue.popleft() if queue else None
        if turn_id is not None:
            mapping[episode.id] = turn_id
            taken.add(turn_id)
    return mapping


def hit_turns(
    memory: Memory, hits: Sequence[Any], episode_turn: dict[str, str]
) -> list[str | None]:
    """The turn behind each hit, in rank order (``None`` for a hit with no episode)."""
    turns: list[str | None] = []
    for hit in hits:
        turn: str | None = None
        episode = getattr(hit, "episode", None)
        observation = getattr(hit, "observation", None)
        if episode is not None:
            meta = episode.metadata.get("turn") if episode.metadata else None
            turn = meta if isinstance(meta, str) else episode_turn.get(episode.id)
        elif observation is not None and getattr(observation, "episode_id", None):
            turn = episode_turn.get(observation.episode_id)
            if turn is None:
                found = memory.episode(observation.episode_id)
                meta = found.metadata.get("turn") if found is not None else None
                turn = meta if isinstance(meta, str) else None
        turns.append(turn)
    return turns
