"""Crash-resumable progress boards: named lists of steps, durable on every call.

A board lives in the scope's journal like every other write, so a process
killed right after ``complete_step`` returns resumes at the next step.
Boards are not namespaced by agent: one plan board per memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memgraph.errors import NotFound
from memgraph.graph.graph import EXTRA_OPS, Doc, Graph

__all__ = ["Board", "Step", "board_of", "progress_op"]

PENDING, RUNNING, DONE, FAILED = "pending", "running", "done", "failed"


@dataclass(frozen=True)
class Step:
    """One step of a board and what happened to it."""

    name: str
    status: str
    result: Any = None
    error: str | None = None
    started_at: str | None = None
    finished_at: str | None = None


@dataclass(frozen=True)
class Board:
    """A progress board: its steps in order, and where to resume."""

    name: str
    steps: tuple[Step, ...]
    created_at: str

    @property
    def resume_point(self) -> str | None:
        """The first step not completed, or ``None`` when every step is done."""
        return next((s.name for s in self.steps if s.status != DONE), None)

    @property
    def done(self) -> bool:
        return self.resume_point is None


def _boards(graph: Graph) -> dict[str, Doc]:
    boards: dict[str, Doc] = graph.extra.setdefault("progress", {})
    return boards


def board_of(graph: Graph, name: str) -> Board:
    """The board called ``name``.

    Raises:
        NotFound: no board has that name.
    """
    doc = _boards(graph).get(name)
    if doc is None:
        raise NotFound(f"no progress board named {name!r}; create it with create_progress")
    return Board(
        name=name,
        steps=tuple(
            Step(
                s["name"],
                s["status"],
                s.get("result"),
                s.get("error"),
                s.get("startedAt"),
                s.get("finishedAt"),
            )
            for s in doc["steps"]
        ),
        created_at=doc.get("createdAt") or "",
    )


def progress_op(
    graph: Graph,
    board: str,
    action: str,
    *,
    at: str,
    steps: Sequence[str] = (),
    step: str = "",
    result: Any = None,
    error: str | None = None,
) -> Doc | None:
    """The op recording ``action`` on ``board``, or ``None`` when it changes nothing.

    Raises:
        NotFound: the board does not exist (for step actions).
        ValueError: the step is not on the board, or ``create`` names other steps.
    """
    boards = _boards(graph)
    if action == "create":
        names = [str(s) for s in steps]
        if not names or len(set(names)) != len(names) or not all(n.strip() for n in names):
            raise ValueError("a progress board needs at least one step, and unique step names")
        existing = boards.get(board)
        if existing is not None:
            if [s["name"] for s in existing["steps"]] == names:
                return None  # re-declaring the same board after a restart resumes it
            raise ValueError(
                f"progress board {board!r} already exists with steps "
                f"{[s['name'] for s in existing['steps']]}; pick another name"
            )
        return {"op": "progress", "board": board, "action": "create", "steps": names, "at": at}
    current = board_of(graph, board)
    if step not in {s.name for s in current.steps}:
        known = ", ".join(s.name for s in current.steps)
        raise ValueError(f"board {board!r} has no step {step!r}; its steps are: {known}")
    op: Doc = {"op": "progress", "board": board, "action": action, "step": step, "at": at}
    if action == "complete":
        op["result"] = result
    elif action == "fail":
        op["error"] = error
    return op


def _apply(graph: Graph, op: Doc) -> None:
    boards = _boards(graph)
    if op["action"] == "create":
        boards[op["board"]] = {
            "createdAt": op["at"],
            "steps": [{"name": name, "status": PENDING} for name in op["steps"]],
        }
        return
    step = next(s for s in boards[op["board"]]["steps"] if s["name"] == op["step"])
    if op["action"] == "start":
        step.update(status=RUNNING, startedAt=op["at"], error=None)
    elif op["action"] == "complete":
        step.update(status=DONE, finishedAt=op["at"], result=op.get("result"))
    elif op["action"] == "fail":
        step.update(status=FAILED, finishedAt=op["at"], error=op.get("error"))


EXTRA_OPS["progress"] = _apply
