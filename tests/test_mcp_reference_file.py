"""The reference memory server's memory.jsonl: import, export, and the commands for both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memgraph import Memory
from memgraph.cli import cli
from memgraph.mcp.compat import ReferenceGraph
from memgraph.mcp.reference_file import IMPORT_SOURCE, export_reference, import_reference

RECORDS = [
    {
        "type": "entity",
        "name": "Alice",
        "entityType": "person",
        "observations": ["likes tea", 'says "hi" — and ☕', "works remotely"],
    },
    {"type": "entity", "name": "Acme", "entityType": "organization", "observations": []},
    {"type": "entity", "name": "Bob", "entityType": "person", "observations": ["plays chess"]},
    {"type": "relation", "from": "Alice", "to": "Acme", "relationType": "works_at"},
    {"type": "relation", "from": "Bob", "to": "Alice", "relationType": "mentors"},
]


def _write_reference_file(path: Path) -> str:
    """The file as the reference server writes it: JSON.stringify per line, '\\n'-joined."""
    content = "\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in RECORDS)
    path.write_text(content, encoding="utf-8")
    return content


def _memory(tmp_path: Path) -> Memory:
    return Memory(tmp_path / "mem", "test", provider="mock")


def test_a_reference_file_round_trips_through_import_and_export_byte_for_byte(
    tmp_path: Path,
) -> None:
    original = _write_reference_file(tmp_path / "memory.jsonl")
    with _memory(tmp_path) as memory:
        report = import_reference(memory, tmp_path / "memory.jsonl")
        assert (report.entities_read, report.relations_read) == (3, 2)
        assert (report.entities_added, report.observations_added, report.relations_added) == (
            3,
            4,
            2,
        )
        exported = export_reference(memory)
        assert exported == original and not exported.endswith("\n")
        assert memory.entity("Alice").observations[0].source == IMPORT_SOURCE


def test_importing_the_same_file_twice_adds_nothing_the_second_time(tmp_path: Path) -> None:
    _write_reference_file(tmp_path / "memory.jsonl")
    with _memory(tmp_path) as memory:
        import_reference(memory, tmp_path / "memory.jsonl")
        counts = memory.stats()
        again = import_reference(memory, tmp_path / "memory.jsonl")
        assert (again.entities_added, again.observations_added, again.relations_added) == (0, 0, 0)
        assert memory.stats() == counts


def test_export_leaves_out_what_was_deleted(tmp_path: Path) -> None:
    _write_reference_file(tmp_path / "memory.jsonl")
    with _memory(tmp_path) as memory:
        import_reference(memory, tmp_path / "memory.jsonl")
        ReferenceGraph(memory).delete_entities(["Bob"])
        lines = [json.loads(line) for line in export_reference(memory).split("\n")]
        assert lines == [RECORDS[0], RECORDS[1], RECORDS[3]]


def test_an_empty_memory_exports_an_empty_file(tmp_path: Path) -> None:
    with _memory(tmp_path) as memory:
        assert export_reference(memory) == ""


def test_relations_to_entities_missing_from_the_file_create_them(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    lines = [
        '{"type":"relation","from":"Alice","to":"Carol","relationType":"knows"}',
        "",
        '{"type":"other","name":"ignored like the reference ignores it"}',
    ]
    path.write_text("\n".join(lines))
    with _memory(tmp_path) as memory:
        report = import_reference(memory, path)
        assert (report.entities_added, report.relations_added) == (2, 1)
        assert memory.entity("Carol").type == "thing"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"type":"entity","name":"A","entityType":"x","observations":[]}\nnot json', "line 2"),
        ('{"type":"entity","name":"A","entityType":"x","observations":"tea"}', "list of strings"),
        ('{"type":"relation","from":"A","to":"B"}', "'relationType' must be a string"),
        ("[1, 2]", "not a JSON object"),
    ],
)
def test_a_malformed_file_is_refused_naming_the_line_and_nothing_is_stored(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_text(content)
    with _memory(tmp_path) as memory:
        with pytest.raises(ValueError, match=message):
            import_reference(memory, path)
        assert memory.stats()["entities"] == 0


def test_the_commands_import_a_reference_file_and_export_it_again(tmp_path: Path) -> None:
    original = _write_reference_file(tmp_path / "memory.jsonl")
    runner = CliRunner()
    command = ["--dir", "mem", "--scope", "test", "import", "--format", "mcp-jsonl"]
    imported = runner.invoke(cli, [*command, "memory.jsonl"])
    assert imported.exit_code == 0, imported.output
    with Memory(tmp_path / "mem", "test", provider="mock") as memory:
        counts = memory.stats()
    assert (counts["entities"], counts["observations"], counts["relations"]) == (3, 4, 2)
    again = runner.invoke(cli, [*command, "memory.jsonl"])
    assert again.exit_code == 0, again.output
    with Memory(tmp_path / "mem", "test", provider="mock") as memory:
        assert memory.stats() == counts  # a second import adds nothing
    shown = runner.invoke(
        cli, ["--dir", "mem", "--scope", "test", "export", "--format", "mcp-jsonl"]
    )
    assert shown.exit_code == 0 and shown.stdout == original
    written = runner.invoke(
        cli,
        ["--dir", "mem", "--scope", "test", "export", "--format", "mcp-jsonl", "-o", "out.jsonl"],
    )
    assert written.exit_code == 0 and (tmp_path / "out.jsonl").read_text() == original


def test_importing_a_malformed_file_from_the_command_line_exits_2(tmp_path: Path) -> None:
    (tmp_path / "memory.jsonl").write_text("{oops")
    result = CliRunner().invoke(
        cli, ["--dir", "mem", "import", "--format", "mcp-jsonl", "memory.jsonl"]
    )
    assert result.exit_code == 2 and "line 1 is not JSON" in result.stderr
