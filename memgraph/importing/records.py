"""What a reader of an imported file turns it into: numbered records."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Record"]


@dataclass(frozen=True)
class Record:
    """One message or paragraph of a file.

    Attributes:
        index: its position among the file's records (0-based): the resume key.
        where: where it is, for messages (``"line 12"``, ``"message 3"``).
        text: the text.
        role: the chat role (``user``, ``assistant``, ``system``, ...), if any.
        speaker: an explicit speaker name, if any.
        at: when it was said (normalized ISO-8601), if given.
    """

    index: int
    where: str
    text: str
    role: str | None = None
    speaker: str | None = None
    at: str | None = None
