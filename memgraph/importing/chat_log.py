"""Chat logs: a conversation written one message per line, with who said it.

Three shapes are read, and may mix in one file:

* a transcript: ``Dana: how was the race?`` (no time: each message is stored
  as said when imported);
* a WhatsApp export: ``12/31/23, 9:15 PM - Dana: happy new year!`` (Android)
  or ``[31.12.23, 21:15:02] Dana: happy new year!`` (iOS);
* a timestamped log: ``[2023-12-31 21:15] Dana: happy new year!`` (the
  brackets, a ``T`` and seconds optional).

A line that starts no message goes on with the message before it (a message
of several lines). A stamped line with no speaker (WhatsApp's "Messages and
calls are end-to-end encrypted") and an attachment left out of the export
(``<Media omitted>``) are not messages. Slashed dates are read month first
unless a day above 12 comes first somewhere in the file (``31/12/23``); dotted
dates are always day first. Times without a zone are UTC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone

from memgraph.clock import iso
from memgraph.errors import InvalidInput
from memgraph.importing.records import Record
from memgraph.speakers import speaker_name, split_speaker

__all__ = ["looks_like_chat", "read_chat"]

_DATE = r"(?P<a>\d{1,2})(?P<sep>[/.])(?P<b>\d{1,2})(?P=sep)(?P<year>\d{2}|\d{4})"
_CLOCK = r"(?P<hour>\d{1,2})[:.](?P<minute>\d{2})(?:[:.](?P<second>\d{2}))?(?:\s?(?P<half>[AaPp])\.?\s?[Mm]\.?)?"
_STAMPED = re.compile(rf"^\s*\[?{_DATE},?\s+{_CLOCK}\]?\s*[-–]?\s*(?P<rest>.*)$")
"""A WhatsApp line: its date, time, and what follows."""
_ISO_STAMPED = re.compile(
    r"^\s*\[?(?P<day>\d{4}-\d{2}-\d{2})[ T](?P<clock>\d{2}:\d{2}(?::\d{2})?)\]?\s*[-–]?\s*"
    r"(?P<rest>.*)$"
)
"""A log line stamped ``2023-12-31 21:15``."""
_STAMPED_SPEAKER = re.compile(r"^(?P<name>[^:\n\"“”]{1,60}?):\s+(?P<text>\S.*)$", re.S)
"""After a stamp, anything short up to the first colon names the speaker (not a
notice quoting a colon: 'Dana changed the subject to "Trip: Lisbon"')."""
_LEFT_OUT = re.compile(r"^\s*<[^<>]*omitted>\s*$|^\s*this message was deleted\s*$", re.I)
MIN_MESSAGES = 2
"""Lines that must start messages for a file to read as a chat log."""


@dataclass
class _Message:
    line: int
    speaker: str | None  # None: a notice of the app, whose lines are left out
    lines: list[str]
    at: str | None


def looks_like_chat(text: str) -> bool:
    """Whether ``text`` reads as a chat log: its first line starts a message, and
    at least :data:`MIN_MESSAGES` lines do."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or not _starts(lines[0]):
        return False
    starts = 1
    for line in lines[1:]:
        starts += _starts(line)
        if starts >= MIN_MESSAGES:
            return True
    return False


def _starts(line: str) -> bool:
    """Whether ``line`` starts a message (a bad stamp still does: reading says so)."""
    try:
        return _start(line, day_first=False) is not None
    except ValueError:
        return True


def read_chat(text: str, path: str) -> list[Record]:
    """One record per message of a chat log, with its speaker and, when stamped,
    its time.

    Raises:
        InvalidInput: the first line starts no message (it is not a chat log),
            or a stamp is not a real date or time.
    """
    day_first = _day_first(text)
    messages: list[_Message] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            start = _start(line, day_first=day_first)
        except ValueError as exc:
            raise InvalidInput(
                f"{path}: line {number}: the time stamp is not a date and time ({exc})",
                path=path,
                position=f"line {number}",
            ) from exc
        if start is None:
            if not messages:
                raise InvalidInput(
                    f"{path}: line {number} starts no message ('Name: text', optionally "
                    "after a time stamp); pass --format text to import it as plain text",
                    path=path,
                    position=f"line {number}",
                )
            messages[-1].lines.append(line.strip())
            continue
        speaker, words, at = start
        messages.append(_Message(number, speaker, [words], at))
    records: list[Record] = []
    for message in messages:
        words = "\n".join(message.lines).strip()
        if not message.speaker or not words or _LEFT_OUT.match(words):
            continue
        where = f"line {message.line}"
        records.append(Record(len(records), where, words, None, message.speaker, message.at))
    return records


def _start(line: str, *, day_first: bool) -> tuple[str | None, str, str | None] | None:
    """``(speaker, words, at)`` when ``line`` starts a message (speaker ``None``: a
    stamped line that names nobody); ``None`` when it goes on with the one before.

    Raises:
        ValueError: the stamp is not a real date or time.
    """
    stamped = _STAMPED.match(line)
    if stamped is not None:
        at = _whatsapp_time(stamped, day_first=day_first)
        return (*_stamped_speaker(stamped["rest"]), at)
    logged = _ISO_STAMPED.match(line)
    if logged is not None:
        clock = logged["clock"] if logged["clock"].count(":") == 2 else f"{logged['clock']}:00"
        moment = datetime.fromisoformat(f"{logged['day']}T{clock}").replace(tzinfo=timezone.utc)
        return (*_stamped_speaker(logged["rest"]), iso(moment))
    speaker, words = split_speaker(line)
    if speaker is None:
        return None
    return speaker, words, None


def _stamped_speaker(rest: str) -> tuple[str | None, str]:
    found = _STAMPED_SPEAKER.match(rest.strip())
    if found is None:
        return None, rest.strip()
    name = speaker_name(found["name"].strip().lstrip("~\u202f\u00a0 "))
    return name or None, found["text"].strip()


def _whatsapp_time(match: re.Match[str], *, day_first: bool) -> str:
    first, second = int(match["a"]), int(match["b"])
    day, month = (first, second) if day_first or match["sep"] == "." else (second, first)
    year = int(match["year"])
    year += 2000 if year < 100 else 0
    hour, minute = int(match["hour"]), int(match["minute"])
    if match["half"]:
        if not 1 <= hour <= 12:
            raise ValueError(f"hour {hour} with AM/PM")
        hour = hour % 12 + (12 if match["half"].lower() == "p" else 0)
    second_ = int(match["second"] or 0)
    return iso(datetime(year, month, day, hour, minute, second_, tzinfo=timezone.utc))


def _day_first(text: str) -> bool:
    """Whether the file's slashed dates put the day first: a first number above 12
    somewhere, and no second one above 12 before it."""
    for line in text.splitlines():
        match = _STAMPED.match(line)
        if match is None or match["sep"] == ".":
            continue
        if int(match["a"]) > 12:
            return True
        if int(match["b"]) > 12:
            return False
    return False
