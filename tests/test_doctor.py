"""Damaged files: loading names the file and the position and overwrites nothing;
``memgraph doctor`` reports the damage; ``memgraph doctor --repair`` backs the scope up,
rebuilds what can be rebuilt and says what was lost."""

from __future__ import annotations

import shlex
import stat
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner, Result

from memgraph import Memory, NotFound, StoreCorrupt
from memgraph.admin.doctor import check_scope, repair_scope
from memgraph.cli import cli
from memgraph.graph.records import seal_record

SCOPE = "alice"
FILES = ("graph.json", "journal.jsonl", "episodes.jsonl", "vectors.npy", "vectors.json")
Damage = Callable[[bytes], bytes]


def populate(root: Path) -> None:
    """A scope with every file: a checkpoint, three journal commits, a summary."""
    with Memory(root, SCOPE, provider="mock") as memory:
        for i in range(6):
            memory.remember(f"Person{i} works at Company{i}.")
        memory.checkpoint()
        memory.remember("Alice likes tea.")
        memory.kv.remember("colour", "blue")
        memory.remember("Bob likes jazz.")
        memory.save_summary({"summary": "Alice and Bob talked.", "messagesSummarized": 4})


def garble(data: bytes) -> bytes:
    """Junk over twelve bytes in the middle of the file."""
    middle = len(data) // 2
    return data[:middle] + b"\x00\xff{]garbage!" + data[middle + 12 :]


def garble_header(data: bytes) -> bytes:
    return data[:20] + b"\x00\xffgarbage!" + data[30:]


def truncate(data: bytes) -> bytes:
    return data[: len(data) // 2]


def garble_line(number: int) -> Damage:
    def damage(data: bytes) -> bytes:
        lines = data.split(b"\n")
        lines[number - 1] = lines[number - 1][:25] + b"\x00#oops"
        return b"\n".join(lines)

    return damage


def replace_line(data: bytes, number: int, line: bytes) -> bytes:
    lines = data.split(b"\n")
    lines[number - 1] = line
    return b"\n".join(lines)


NOT_A_GRAPH = b'{"entities": [{"a": 1}], "checkpointSeq": 6}'  # JSON, but no entity ids
# A well-formed commit 8 whose observation belongs to an entity that does not exist.
STRAY_COMMIT = seal_record(
    orjson.dumps(
        {
            "seq": 8,
            "at": "2026-01-01T00:00:00.000Z",
            "nextId": 99,
            "ops": [
                {
                    "op": "obs",
                    "entity": "entity-999",
                    "obs": {"id": "obs-98", "content": "x", "validFrom": "t", "validTo": None},
                }
            ],
        }
    )
)


def snapshot(scope_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(scope_dir.iterdir()) if p.name != ".lock"}


def touch_everything(root: Path) -> None:
    """What loading a scope and using it reads: graph, journal, vectors, episodes, summary."""
    with Memory(root, SCOPE, provider="mock") as memory:
        memory.stats()
        memory.search("alice tea")
        list(memory.iter_episodes())
        memory.summary()


def doctor(root: Path, *args: str) -> Result:
    command = ["doctor", "--dir", str(root), "--scope", SCOPE, "--provider", "mock", *args]
    return CliRunner().invoke(cli, command, catch_exceptions=False)


# Damage that must stop a load: (file, damage, the position the error names).
DAMAGE = {
    "graph.json garbled": ("graph.json", garble, "line"),
    "graph.json truncated": ("graph.json", truncate, "line"),
    "graph.json emptied": ("graph.json", lambda data: b"", "line 1, column 1"),
    "graph.json not a graph": ("graph.json", lambda data: NOT_A_GRAPH, "structure"),
    "journal line 2 not a commit": (
        "journal.jsonl",
        lambda data: replace_line(data, 2, b"[1]"),
        "line 2",
    ),
    "journal line 2 a commit that does not apply": (
        "journal.jsonl",
        lambda data: replace_line(data, 2, STRAY_COMMIT),
        "commit 8",
    ),
    "journal line 2 garbled": ("journal.jsonl", garble_line(2), "line 2"),
    "episodes line 3 garbled": ("episodes.jsonl", garble_line(3), "line 3"),
    "episodes line 3 not an episode": (
        "episodes.jsonl",
        lambda data: replace_line(data, 3, b'{"text": "no id"}'),
        "line 3",
    ),
    "vectors.npy header garbled": ("vectors.npy", garble_header, "header"),
    "vectors.npy truncated": ("vectors.npy", truncate, "byte"),
    "vectors.json garbled": ("vectors.json", garble, "byte"),
    "vectors.json truncated": ("vectors.json", truncate, "line 1, column"),
    "vectors.json not an object": ("vectors.json", lambda data: b"[1, 2]", "top level"),
    "summary.json garbled": ("summary.json", garble, "byte"),
    "summary.json truncated": ("summary.json", truncate, "line"),
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    populate(root)
    return root


def damage(root: Path, name: str, how: Damage) -> dict[str, bytes]:
    path = root / SCOPE / name
    path.write_bytes(how(path.read_bytes()))
    return snapshot(root / SCOPE)


# --------------------------------------------------------------------------- loading
@pytest.mark.parametrize(("name", "how", "position"), DAMAGE.values(), ids=DAMAGE.keys())
def test_a_damaged_file_fails_the_load_naming_file_and_position_and_stays_byte_identical(
    root: Path, name: str, how: Damage, position: str
) -> None:
    before = damage(root, name, how)
    with pytest.raises(StoreCorrupt) as caught:
        touch_everything(root)
    error = caught.value
    assert error.path == str(root / SCOPE / name)
    assert position in error.position, error.position
    assert str(root / SCOPE / name) in str(error) and error.position in str(error)
    assert "memgraph doctor" in str(error)
    assert snapshot(root / SCOPE) == before, "nothing was overwritten"


@pytest.mark.parametrize("name", ["journal.jsonl", "episodes.jsonl"])
def test_a_truncated_journal_or_episodes_file_is_a_torn_tail_that_loads_and_doctor_notes(
    root: Path, name: str
) -> None:
    path = root / SCOPE / name
    data = path.read_bytes()
    if name == "journal.jsonl":
        cut = data.rindex(b"\n", 0, len(data) - 1) + 10  # ten bytes into the last line
        path.write_bytes(data[:cut])
    else:  # a checkpoint that died appending episodes, before graph.json counted them
        path.write_bytes(data + data.split(b"\n")[0][:30])
    touch_everything(root)
    report = check_scope(root, SCOPE)
    assert report.ok, report.render()
    assert any(f"{name} ends in a torn line" in note for note in report.notes)
    result = doctor(root)
    assert result.exit_code == 0 and "torn line" in result.output


def test_episodes_cut_after_a_finished_checkpoint_are_reported_lost_by_load_and_doctor(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = root / SCOPE / "episodes.jsonl"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # not a torn append: the checkpoint counted them
    with caplog.at_level("WARNING", logger="memgraph"):
        touch_everything(root)
    assert any("remembered texts were lost" in r.getMessage() for r in caplog.records)
    report = check_scope(root, SCOPE)
    assert not report.ok
    assert report.file("episodes.jsonl").position.endswith("(end of file)")
    assert doctor(root).exit_code == 1
    result = doctor(root, "--repair")
    assert result.exit_code == 0, result.output
    assert "lost: episodes.jsonl was cut short" in result.output
    assert check_scope(root, SCOPE).ok, "the rewritten checkpoint counts what is left"


# --------------------------------------------------------------------------- doctor
@pytest.mark.parametrize(("name", "how", "position"), DAMAGE.values(), ids=DAMAGE.keys())
def test_doctor_reports_the_damaged_file_and_position_and_exits_1(
    root: Path, name: str, how: Damage, position: str
) -> None:
    before = damage(root, name, how)
    report = check_scope(root, SCOPE)
    assert not report.ok
    assert report.file(name).state == "damaged"
    assert position in report.file(name).position, report.file(name)
    result = doctor(root)
    assert result.exit_code == 1
    assert f"{name:<15} DAMAGED at {report.file(name).position}" in result.output
    assert "run `memgraph doctor --repair`" in result.output
    assert snapshot(root / SCOPE) == before, "doctor without --repair changes nothing"


def test_doctor_finds_a_healthy_scope_healthy_and_repair_leaves_it_alone(root: Path) -> None:
    before = snapshot(root / SCOPE)
    result = doctor(root)
    assert result.exit_code == 0, result.output
    assert result.output.rstrip().endswith("healthy")
    assert "counts: 14 entities, 8 observations" in result.output
    assert "8 episodes, 3 journal commits, 16 vectors, 1 keys" in result.output
    assert doctor(root, "--repair").exit_code == 0
    assert snapshot(root / SCOPE) == before
    assert sorted(p.name for p in root.iterdir()) == [SCOPE], "no backup of a healthy scope"


def test_doctor_of_a_scope_without_files_is_healthy(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["doctor", "--dir", str(tmp_path), "--scope", "nobody"])
    assert result.exit_code == 0 and "no files" in result.output
    assert not (tmp_path / "nobody").exists()


def test_doctor_json_output_lists_every_file(root: Path) -> None:
    damage(root, "summary.json", garble)
    result = doctor(root, "--json")
    assert result.exit_code == 1
    report = orjson.loads(result.output)
    assert report["ok"] is False
    assert [f["name"] for f in report["files"]] == [*FILES, "summary.json"]
    assert report["files"][-1]["state"] == "damaged"


# --------------------------------------------------------------------------- repair
def repaired(root: Path, before: dict[str, bytes]) -> tuple[Result, Path]:
    """Run ``doctor --repair``; check the backup holds the damaged files, owner-only."""
    result = doctor(root, "--repair")
    [backup] = (root / "@backups" / SCOPE).iterdir()  # '@' is in no scope id
    assert len(backup.name) == len("YYYYmmddTHHMMSSZ")
    assert snapshot(backup) == before, "the backup is a byte-identical copy"
    assert stat.S_IMODE(backup.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in backup.iterdir())
    assert f"backup: {backup}" in result.output
    return result, backup


def facts(root: Path) -> dict[str, list[str]]:
    with Memory(root, SCOPE, provider="mock") as memory:
        return {e.name: [o.content for o in e.current_observations] for e in memory.entities()}


def test_repair_drops_the_journal_from_a_damaged_line_and_names_what_was_lost(
    root: Path,
) -> None:
    before = damage(root, "journal.jsonl", garble_line(2))
    result, _ = repaired(root, before)
    assert result.exit_code == 0, result.output
    assert "cut journal.jsonl before line 2" in result.output
    lost = result.output.split("lost: ", 1)[1]
    assert "1 readable commit(s) dropped" in lost and "'Bob likes jazz.'" in lost
    assert "1 unreadable line(s)" in lost
    touch_everything(root)
    known = facts(root)
    assert known["Alice"] == ["likes tea"], "the commit before the damage is kept"
    assert "Bob" not in known
    assert all(f"Person{i}" in known for i in range(6))
    with Memory(root, SCOPE, provider="mock") as memory:
        assert memory.kv.recall("colour") is None
        memory.remember("Carol likes chess.")  # the scope takes new writes
    assert check_scope(root, SCOPE).ok


def test_repair_rewrites_episodes_without_an_unreadable_line(root: Path) -> None:
    before = damage(root, "episodes.jsonl", garble_line(3))
    result, _ = repaired(root, before)
    assert result.exit_code == 0, result.output
    assert "the text of 1 episode(s) on line(s) 3" in result.output
    touch_everything(root)
    with Memory(root, SCOPE, provider="mock") as memory:
        texts = [e.text for e in memory.iter_episodes()]
    assert len(texts) == 7 and "Person2 works at Company2." not in texts
    assert "works at Company2" in facts(root)["Person2"], "facts keep their provenance ids"
    assert check_scope(root, SCOPE).ok


@pytest.mark.parametrize(
    ("name", "how"),
    [
        ("vectors.npy", garble_header),
        ("vectors.npy", truncate),
        ("vectors.json", garble),
        ("vectors.json", truncate),
    ],
)
def test_repair_re_embeds_damaged_vectors_from_the_observations(
    root: Path, name: str, how: Damage
) -> None:
    before = damage(root, name, how)
    result, _ = repaired(root, before)
    assert result.exit_code == 0, result.output
    assert "re-embedded 8 observation(s) and 8 episode(s) with 'mock-hash-384'" in result.output
    assert "lost: nothing" in result.output
    touch_everything(root)
    with Memory(root, SCOPE, provider="mock") as memory:
        assert memory.stats()["vectors"] == 16  # 8 observations, 8 remembered texts
        assert memory.search("Company3")[0].entity.name == "Person3"
    assert check_scope(root, SCOPE).ok


def test_repair_moves_a_damaged_summary_aside_and_reports_it_lost(root: Path) -> None:
    before = damage(root, "summary.json", truncate)
    result, backup = repaired(root, before)
    assert result.exit_code == 0, result.output
    assert "lost: the conversation summary" in result.output
    assert not (root / SCOPE / "summary.json").exists()
    assert (backup / "summary.json").read_bytes() == before["summary.json"]
    touch_everything(root)


def test_a_damaged_graph_keeps_every_intact_record_and_names_the_lost_one(root: Path) -> None:
    with Memory(root, SCOPE, provider="mock") as memory:
        memory.checkpoint()  # graph.json holds everything; the journal is empty
    path = root / SCOPE / "graph.json"
    lines = path.read_bytes().split(b"\n")
    number = next(i for i, line in enumerate(lines) if b'"name":"Person3"' in line)
    lines[number] = lines[number].replace(b"Company3", b"Company9")  # checksum now wrong
    before = damage(root, "graph.json", lambda data: b"\n".join(lines))
    report = check_scope(root, SCOPE)
    assert report.file("graph.json").position == f"line {number + 1}"
    result, _ = repaired(root, before)
    assert result.exit_code == 0, result.output
    lost = [line for line in result.output.splitlines() if "lost:" in line]
    assert len(lost) == 1 and f"graph.json line {number + 1}" in lost[0], lost
    known = facts(root)
    assert "Person3" not in known
    assert known["Person2"] == ["works at Company2"] and known["Alice"] == ["likes tea"]
    with Memory(root, SCOPE, provider="mock") as memory:
        assert memory.kv.recall("colour") == "blue"


def test_a_damaged_graph_with_no_readable_record_is_reported_and_left_untouched(
    root: Path,
) -> None:
    before = damage(root, "graph.json", lambda data: data[:20])
    result, _ = repaired(root, before)
    assert result.exit_code == 1
    assert "graph.json cannot be rebuilt" in result.output
    assert "the journal starts at commit 7, not 1" in result.output
    assert (root / SCOPE / "graph.json").read_bytes() == before["graph.json"]
    assert "1 problem(s) remain" in result.output
    assert "lost: nothing" not in result.output


def test_a_damaged_graph_is_rebuilt_from_a_journal_that_starts_at_commit_1(
    tmp_path: Path,
) -> None:
    root = tmp_path / "memory"
    with Memory(root, SCOPE, provider="mock") as memory:
        memory.remember("Alice works at Acme.")
        memory.kv.remember("colour", "blue")
        journal = (root / SCOPE / "journal.jsonl").read_bytes()
        memory.checkpoint()
    # A crash between the new graph.json and the new journal leaves the old journal.
    (root / SCOPE / "journal.jsonl").write_bytes(journal)
    before = damage(root, "graph.json", truncate)
    result, _ = repaired(root, before)
    assert result.exit_code == 0, result.output
    assert "rebuilt from the journal alone" in result.output
    assert facts(root)["Alice"] == ["works at Acme"]
    with Memory(root, SCOPE, provider="mock") as memory:
        assert memory.kv.recall("colour") == "blue"


def test_a_damaged_graph_is_restored_from_an_earlier_backup_the_journal_extends(
    root: Path,
) -> None:
    damage(root, "summary.json", garble)
    assert doctor(root, "--repair").exit_code == 0  # leaves a backup with a good graph.json
    with Memory(root, SCOPE, provider="mock") as memory:
        memory.remember("Carol likes chess.")
    before = damage(root, "graph.json", garble)
    result = doctor(root, "--repair")
    assert result.exit_code == 0, result.output
    assert "restored graph.json from" in result.output
    assert "lost: nothing" in result.output
    known = facts(root)
    assert known["Carol"] == ["likes chess"] and known["Alice"] == ["likes tea"]
    backups = sorted((root / "@backups" / SCOPE).iterdir())
    assert len(backups) == 2 and snapshot(backups[-1]) == before


def test_the_advice_in_a_load_error_is_a_doctor_command_that_works(root: Path) -> None:
    damage(root, "vectors.npy", truncate)
    with pytest.raises(StoreCorrupt) as caught:
        touch_everything(root)
    command = str(caught.value).split("`")[1]
    assert command.startswith("memgraph doctor ") and command.endswith(" --repair")
    result = CliRunner().invoke(cli, shlex.split(command)[1:], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    touch_everything(root)


def test_repair_from_python_returns_the_report(root: Path) -> None:
    damage(root, "journal.jsonl", garble_line(1))
    report = repair_scope(root, SCOPE, "mock")
    assert report.ok and report.backup is not None
    [lost] = report.lost
    assert lost.startswith("journal.jsonl: 2 readable commit(s) dropped (commits 8-9)")
    assert "1 key/value writes" in lost and "'Bob likes jazz.'" in lost
    assert lost.endswith("plus 1 unreadable line(s) whose content is unknown")
    with Memory(root, SCOPE, provider="mock") as memory, pytest.raises(NotFound):
        memory.entity("Alice")


def test_a_gap_in_the_journal_is_reported_and_cut_at_the_gap(root: Path) -> None:
    path = root / SCOPE / "journal.jsonl"
    lines = path.read_bytes().split(b"\n")
    del lines[1]  # commit 8 (the key/value write) goes missing
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(StoreCorrupt, match="commit 9 follows 7"):
        touch_everything(root)
    report = check_scope(root, SCOPE)
    assert report.file("journal.jsonl").position == "line 2 (commit 9)"
    result = doctor(root, "--repair")
    assert result.exit_code == 0, result.output
    assert "'Bob likes jazz.'" in result.output.split("lost: ", 1)[1]
    known = facts(root)
    assert known["Alice"] == ["likes tea"] and "Bob" not in known


def test_a_lost_graph_json_behind_a_later_journal_is_reported_and_nothing_is_touched(
    root: Path,
) -> None:
    (root / SCOPE / "graph.json").unlink()
    with pytest.raises(StoreCorrupt, match="commit 7 follows 0"):
        touch_everything(root)
    report = check_scope(root, SCOPE)
    graph = report.file("graph.json")
    assert graph.state == "damaged" and "journal.jsonl starts at commit 7" in graph.detail
    before = snapshot(root / SCOPE)
    result = doctor(root, "--repair")
    assert result.exit_code == 1
    assert "graph.json cannot be rebuilt" in result.output
    assert snapshot(root / SCOPE) == before


def test_vectors_whose_width_disagrees_with_their_header_fail_the_load(root: Path) -> None:
    header_path = root / SCOPE / "vectors.json"
    header = orjson.loads(header_path.read_bytes())
    header_path.write_bytes(orjson.dumps({**header, "dim": 64}))
    with pytest.raises(StoreCorrupt) as caught:
        touch_everything(root)
    assert caught.value.path == str(root / SCOPE / "vectors.npy")
    assert "384 floats" in str(caught.value) and "says 64" in str(caught.value)
    assert check_scope(root, SCOPE).file("vectors.npy").state == "damaged"
    result = doctor(root, "--repair")
    assert result.exit_code == 0 and "re-embedded 8 observation(s)" in result.output
    touch_everything(root)


def test_a_healthy_journal_first_scope_is_described_as_such_not_as_missing_files(
    tmp_path: Path,
) -> None:
    with Memory(tmp_path, SCOPE, provider="mock") as memory:
        memory.remember("Alice works at Acme.")  # no checkpoint yet: only the journal
    assert sorted(p.name for p in (tmp_path / SCOPE).iterdir()) == [".lock", "journal.jsonl"]
    result = doctor(tmp_path)
    assert result.exit_code == 0, result.output
    assert "missing" not in result.output
    assert "graph.json      not written yet: the journal holds every write" in result.output
    assert "journal-first until its first checkpoint" in result.output
    assert result.output.rstrip().endswith("healthy")
