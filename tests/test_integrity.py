"""Checksums and derived files: damage is found where it is, derived files never decide.

Every record (a line of graph.json, the journal or episodes.jsonl) carries a
CRC-32; vectors.npy has one per block of rows; graph.idx one over the file. A
flipped byte inside a JSON string or a vector row no longer loads silently. A
derived file (graph.idx, vectors.ivf.npz) that fails its check, or disagrees with
the primary files, is ignored and rebuilt.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import numpy as np
import orjson
import pytest
from click.testing import CliRunner

import memgraph.engine.core
from memgraph import Memory, StoreCorrupt
from memgraph.admin.doctor import check_scope, repair_scope
from memgraph.cli import cli
from memgraph.graph.records import HEAD, read_checkpoint, seal_record
from memgraph.graph.snapshot import INDEX_MAGIC
from memgraph.store.directory import DirectoryStore
from memgraph.store.files import seal, unseal

SCOPE = "s"


def build(root: Path, people: int = 12, *, journal: bool = True) -> None:
    with Memory(root, SCOPE, provider="mock") as memory:
        for i in range(people):
            memory.remember(f"Person{i} works at Company{i}.")
        memory.kv.remember("colour", "blue")
        memory.checkpoint()
        if journal:
            memory.remember("Late works at Lateco.")


def names(root: Path) -> set[str]:
    with Memory(root, SCOPE, provider="mock") as memory:
        return {entity.name for entity in memory.entities()}


def flip_inside(path: Path, needle: bytes) -> None:
    """Change one letter inside the first occurrence of ``needle`` (a JSON string)."""
    data = bytearray(path.read_bytes())
    at = data.index(needle)
    data[at] = data[at] ^ 0x20  # 'P' -> 'p': still valid JSON, still valid UTF-8
    path.write_bytes(bytes(data))


def doctor(root: Path, *args: str) -> tuple[int, str]:
    command = ["doctor", "--dir", str(root), "--scope", SCOPE, "--provider", "mock", *args]
    result = CliRunner().invoke(cli, command, catch_exceptions=False)
    return result.exit_code, result.output


# ------------------------------------------------------------------ graph.json layout
def test_graph_json_is_one_record_per_line_and_stays_a_json_document(tmp_path: Path) -> None:
    build(tmp_path)
    raw = (tmp_path / SCOPE / "graph.json").read_bytes()
    lines = raw.split(b"\n")
    assert raw.startswith(HEAD) and raw.endswith(b"}\n")
    document = json.loads(raw)  # what Agency and json.load read
    records = len(document["entities"]) + len(document["relations"])
    assert len(lines) == records + 4  # head, records, the line between, tail, final newline
    assert all(b'"crc":"' in line for line in lines[1:-1] if line != b'],"relations":[')
    assert document["checkpointSeq"] == 13 and document["checksums"] == "crc32"
    assert document["counts"] == {"entities": 24, "relations": 12}
    assert document["memgraph"]["kv"]["colour"][0]["value"] == "blue"


def test_changing_one_fact_changes_one_line_of_graph_json(tmp_path: Path) -> None:
    build(tmp_path, journal=False)
    before = (tmp_path / SCOPE / "graph.json").read_bytes().split(b"\n")
    with Memory(tmp_path, SCOPE, provider="mock") as memory:
        memory.remember("Person5 lives in Oslo.")
        memory.checkpoint()
    after = (tmp_path / SCOPE / "graph.json").read_bytes().split(b"\n")
    changed = [a for a, b in zip(after, before, strict=False) if a != b]
    assert len(after) == len(before) + 2  # the new entity Oslo and the relation to it
    assert any(b"Person5" in line for line in changed)
    assert sum(1 for line in changed if b'"name":"Person' in line) == 1


def test_an_agency_graph_json_without_checksums_still_loads(tmp_path: Path) -> None:
    scope = tmp_path / SCOPE
    scope.mkdir()
    agency = {
        "entities": [{"id": "entity-1", "name": "Alice", "type": "person", "observations": []}],
        "relations": [],
    }
    (scope / "graph.json").write_bytes(orjson.dumps(agency))
    assert names(tmp_path) == {"Alice"}
    assert check_scope(tmp_path, SCOPE).ok


# ------------------------------------------------------------------ record checksums
def test_a_flipped_letter_in_a_checkpoint_record_is_found_by_load_and_doctor(
    tmp_path: Path,
) -> None:
    build(tmp_path)
    path = tmp_path / SCOPE / "graph.json"
    flip_inside(path, b"Company7")
    before = path.read_bytes()
    with pytest.raises(StoreCorrupt) as caught, Memory(tmp_path, SCOPE, provider="mock") as m:
        m.entities()  # a lazy open parses the record when it is read
    assert caught.value.path == str(path)
    assert "checksum does not match" in str(caught.value)
    assert path.read_bytes() == before
    report = check_scope(tmp_path, SCOPE)
    line = next(i for i, raw in enumerate(before.split(b"\n"), 1) if b"company7" in raw)
    assert report.file("graph.json").position == f"line {line}"


@pytest.mark.parametrize("where", ["middle", "last"])
def test_a_flipped_letter_in_a_journal_line_is_damage_not_a_torn_write(
    tmp_path: Path, where: str
) -> None:
    root = tmp_path
    with Memory(root, SCOPE, provider="mock") as memory:
        memory.remember("Alice works at Acme.")
        memory.remember("Bob works at Globex.")
    path = root / SCOPE / "journal.jsonl"
    flip_inside(path, b"Acme" if where == "middle" else b"Globex")
    with pytest.raises(StoreCorrupt, match="checksum does not match") as caught:
        names(root)
    assert caught.value.position == ("line 1" if where == "middle" else "line 2")
    assert not check_scope(root, SCOPE).ok


def test_a_flipped_letter_in_an_episode_line_is_found(tmp_path: Path) -> None:
    build(tmp_path)
    flip_inside(tmp_path / SCOPE / "episodes.jsonl", b"Person3")
    with (
        Memory(tmp_path, SCOPE, provider="mock") as memory,
        pytest.raises(StoreCorrupt, match="line 4"),
    ):
        list(memory.iter_episodes())
    assert check_scope(tmp_path, SCOPE).file("episodes.jsonl").position == "line 4"


def test_a_record_is_verified_on_its_own() -> None:
    line = seal_record(orjson.dumps({"id": "entity-1", "name": "Alice"}))
    document = HEAD + line + b'\n],"relations":[\n' + seal_record(b'{"nextId":2}')[:-1]
    with pytest.raises(ValueError, match="line 4: it has no checksum"):
        read_checkpoint(document)  # a closing line starts with "],"
    salvaged = read_checkpoint(HEAD + line.replace(b"Alice", b"Alicf") + b"\n", salvage=True)
    assert salvaged.damaged == [(2, "its checksum does not match its content", "entity-1")]
    assert salvaged.truncated


# ------------------------------------------------------------------ vectors.npy
def test_a_flipped_byte_in_a_vector_row_is_reported_by_open_and_doctor_and_repaired(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    build(tmp_path)
    path = tmp_path / SCOPE / "vectors.npy"
    data = bytearray(path.read_bytes())
    data[128 + 5 * 384 * 4 + 17] ^= 0x01  # one bit of row 5
    path.write_bytes(bytes(data))
    store = DirectoryStore(tmp_path, SCOPE)
    with caplog.at_level(logging.WARNING, logger="memgraph"):
        store.load()
        # 24 rows: the 12 facts and the 12 texts they came from
        assert store.wait_for_vector_check() == [(0, 24)]
    store.close()
    assert any("fail their checksum" in r.getMessage() for r in caplog.records)
    report = check_scope(tmp_path, SCOPE)
    assert report.file("vectors.npy").position == "rows 0-23"
    after = repair_scope(tmp_path, SCOPE, provider="mock")
    assert after.ok, after.render()
    assert any("re-embedded" in line for line in after.repaired)


def test_vectors_appended_by_checkpoints_get_one_checksum_per_block(tmp_path: Path) -> None:
    build(tmp_path, journal=False)
    with Memory(tmp_path, SCOPE, provider="mock") as memory:
        memory.remember("Anna works at Annco.")
        memory.checkpoint()
    header = orjson.loads((tmp_path / SCOPE / "vectors.json").read_bytes())
    # a fact and its text per remember: 12 facts and 12 texts, then one more of each
    assert [end for end, _crc in header["blocks"]] == [24, 26]
    assert check_scope(tmp_path, SCOPE).file("vectors.npy").detail.endswith("checksum verified")


# ------------------------------------------------------------------ graph.idx
def test_a_flipped_byte_in_graph_idx_is_ignored_reported_and_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    build(tmp_path)
    index = tmp_path / SCOPE / "graph.idx"
    data = bytearray(index.read_bytes())
    data[-50] ^= 0xFF
    index.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="memgraph"):
        assert {f"Person{i}" for i in range(12)} <= names(tmp_path)
    assert any("graph.idx, which is derived data" in r.getMessage() for r in caplog.records)
    code, output = doctor(tmp_path)
    assert code == 1 and "graph.idx is damaged (its checksum does not match" in output
    code, output = doctor(tmp_path, "--repair")
    assert code == 0, output
    assert not (tmp_path / "@backups").exists(), "rebuilding derived data needs no backup"
    assert unseal(INDEX_MAGIC, index.read_bytes())  # a new index that verifies
    assert DirectoryStore(tmp_path, SCOPE).load().saved is not None


@pytest.mark.parametrize("field", ["nextId", "seq"])
def test_an_index_whose_values_disagree_with_graph_json_is_never_trusted(
    tmp_path: Path, field: str
) -> None:
    build(tmp_path)
    index = tmp_path / SCOPE / "graph.idx"
    body = bytes(unseal(INDEX_MAGIC, index.read_bytes()))
    length = int.from_bytes(body[:8], "little")
    header = orjson.loads(body[8 : 8 + length])
    header[field] -= 5  # a checksum made for the wrong values: only the cross-check sees it
    changed = orjson.dumps(header)
    index.write_bytes(
        seal(INDEX_MAGIC, len(changed).to_bytes(8, "little") + changed + body[8 + length :])
    )
    assert DirectoryStore(tmp_path, SCOPE).load().saved is None  # graph.json parsed in full
    with Memory(tmp_path, SCOPE, provider="mock") as memory:
        memory.remember("Zed works at Zedco.")
        memory.checkpoint()
        document = orjson.loads(memory.export("json"))
    ids = [e["id"] for e in document["entities"]] + [r["id"] for r in document["relations"]]
    ids += [o["id"] for e in document["entities"] for o in e["observations"]]
    assert len(ids) == len(set(ids)), "no id was given twice"
    report = check_scope(tmp_path, SCOPE)
    assert report.ok and report.counts["journal commits"] == 0, report.render()


# ------------------------------------------------------------------ vectors.ivf.npz
@pytest.mark.parametrize("how", ["truncated", "emptied", "flipped"])
def test_a_damaged_approximate_index_is_ignored_and_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    monkeypatch.setattr(memgraph.engine.core, "IVF_MIN_ROWS", 50)
    with Memory(tmp_path, SCOPE, provider="mock") as memory:
        memory.remember_many([f"Person{i} works at Company{i % 7}." for i in range(120)])
        memory.stats()
        assert memory.wait_for_index(30)
        memory.checkpoint()
    path = tmp_path / SCOPE / "vectors.ivf.npz"
    data = path.read_bytes()
    damaged = {
        "truncated": data[: len(data) // 2],
        "emptied": b"",
        "flipped": data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:],
    }[how]
    path.write_bytes(damaged)
    with Memory(tmp_path, SCOPE, provider="mock") as memory:
        assert memory.search("Person5 works", k=3)
    code, output = doctor(tmp_path)
    assert code == 1 and "vectors.ivf.npz is unreadable" in output
    code, output = doctor(tmp_path, "--repair")
    assert code == 0 and "Traceback" not in output, output
    assert not path.exists() or path.read_bytes() != damaged


def test_a_derived_file_sealed_for_another_kind_is_refused() -> None:
    body = b"payload"
    assert bytes(unseal(b"KIND0001", seal(b"KIND0001", body))) == body
    with pytest.raises(ValueError, match="kind or version"):
        unseal(b"KIND0002", seal(b"KIND0001", body))
    with pytest.raises(ValueError, match="checksum"):
        unseal(b"KIND0001", seal(b"KIND0001", body)[:-1] + b"X")


def test_a_scope_copied_without_its_times_opens_and_is_healthy(tmp_path: Path) -> None:
    build(tmp_path / "a")
    shutil.copytree(tmp_path / "a" / SCOPE, tmp_path / "b" / SCOPE, copy_function=shutil.copy)
    assert {f"Person{i}" for i in range(12)} <= names(tmp_path / "b")
    report = check_scope(tmp_path / "b", SCOPE)
    assert report.ok, report.render()


def test_numpy_reads_the_rows_memgraph_checksums(tmp_path: Path) -> None:
    build(tmp_path)
    rows = np.load(tmp_path / SCOPE / "vectors.npy")
    assert rows.shape == (24, 384) and rows.dtype == np.float32  # 12 facts, 12 texts
