"""Crash-resumable progress boards."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memgraph import Memory, NotFound


def open_memory(tmp_path: Path) -> Memory:
    return Memory(tmp_path / "mem", scope="jobs", provider="mock")


def test_resume_point_is_the_first_step_not_completed(tmp_path: Path) -> None:
    with open_memory(tmp_path) as memory:
        memory.create_progress("import", ["ingest", "validate", "load"])
        assert memory.resume_point("import") == "ingest"
        memory.start_step("import", "ingest")
        memory.complete_step("import", "ingest", "100 rows")
        assert memory.resume_point("import") == "validate"
        memory.start_step("import", "validate")
        memory.fail_step("import", "validate", "bad row 7")
        assert memory.resume_point("import") == "validate"
        board = memory.progress("import")
        assert [s.status for s in board.steps] == ["done", "failed", "pending"]
        assert board.steps[0].result == "100 rows" and board.steps[1].error == "bad row 7"
        memory.complete_step("import", "validate", {"rows": 99})
        memory.complete_step("import", "load")
        assert memory.resume_point("import") is None and memory.progress("import").done


def test_declaring_the_same_board_again_resumes_it(tmp_path: Path) -> None:
    with open_memory(tmp_path) as memory:
        memory.create_progress("import", ["ingest", "load"])
        memory.complete_step("import", "ingest")
    with open_memory(tmp_path) as memory:
        board = memory.create_progress("import", ["ingest", "load"])
        assert board.resume_point == "load"
        with pytest.raises(ValueError, match="already exists"):
            memory.create_progress("import", ["other"])


def test_bad_progress_calls_are_clear_errors(tmp_path: Path) -> None:
    with open_memory(tmp_path) as memory:
        with pytest.raises(NotFound, match="create_progress"):
            memory.resume_point("missing")
        with pytest.raises(ValueError, match="at least one step"):
            memory.create_progress("empty", [])
        with pytest.raises(ValueError, match="unique"):
            memory.create_progress("dupes", ["a", "a"])
        memory.create_progress("job", ["a"])
        with pytest.raises(ValueError, match="its steps are: a"):
            memory.complete_step("job", "b")
        with pytest.raises(TypeError, match="JSON"):
            memory.complete_step("job", "a", object())
        assert memory.resume_point("job") == "a"


WORKER = """
import sys
from memgraph import Memory
with Memory(sys.argv[1], scope="jobs", provider="mock") as m:
    m.create_progress("pipeline", [f"step{i}" for i in range(50)])
    step = m.resume_point("pipeline")
    while step is not None:
        m.start_step("pipeline", step)
        m.complete_step("pipeline", step, {"step": step})
        print(step, flush=True)
        step = m.resume_point("pipeline")
"""


def test_a_process_killed_right_after_complete_step_resumes_at_the_next_step(
    tmp_path: Path,
) -> None:
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    done: list[str] = []
    for _ in range(3):
        process = subprocess.Popen(
            [sys.executable, str(script), str(tmp_path / "mem")],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert process.stdout is not None
        for _ in range(5):
            line = process.stdout.readline().strip()
            if line:
                done.append(line)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        process.stdout.close()
        with open_memory(tmp_path) as memory:
            board = memory.progress("pipeline")
            completed = [s.name for s in board.steps if s.status == "done"]
            assert set(done) <= set(completed)  # every acknowledged step survived
            assert memory.resume_point("pipeline") == f"step{len(completed)}"
