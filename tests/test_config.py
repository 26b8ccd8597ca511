from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from memgraph import ConfigError, MemoryConfig, load_config


def test_full_example_config_loads() -> None:
    example = Path(__file__).resolve().parent.parent / "agency.json.example"
    config = load_config(example)
    assert config is not None
    assert config.auto_extract.interval == 5
    assert config.compaction.trigger in ("messages", "token")
    assert config.dir is not None and config.dir.is_absolute()


def test_relative_dir_resolves_against_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    path = tmp_path / "proj" / "agency.json"
    path.write_bytes(orjson.dumps({"memory": {"dir": ".agency-memory"}}))
    config = load_config(path)
    assert config is not None
    assert config.dir == tmp_path / "proj" / ".agency-memory"


def test_missing_memory_block_means_no_config(tmp_path: Path) -> None:
    path = tmp_path / "agency.json"
    path.write_bytes(orjson.dumps({"model": "gpt-4o"}))
    assert load_config(path) is None


def test_memory_settings_outside_the_memory_block_are_an_error(tmp_path: Path) -> None:
    path = tmp_path / "real.json"
    path.write_bytes(orjson.dumps({"provider": {"name": "openai"}, "embeddings": {}}))
    with pytest.raises(ConfigError, match=r'embeddings, provider at its top level.*"memory"'):
        load_config(path)


def test_top_level_model_is_the_default_memory_model(tmp_path: Path) -> None:
    path = tmp_path / "agency.json"
    path.write_bytes(orjson.dumps({"model": "gpt-4o", "memory": {"dir": "m"}}))
    config = load_config(path)
    assert config is not None and config.model == "gpt-4o"


def test_agency_json_in_the_working_directory_is_found(tmp_path: Path) -> None:
    (tmp_path / "agency.json").write_bytes(orjson.dumps({"memory": {"dir": "mem"}}))
    config = load_config()
    assert config is not None and config.dir == tmp_path / "mem"


@pytest.mark.parametrize(
    ("block", "named"),
    [
        ({"dri": "x"}, "memory.dri"),
        ({"compaction": {"trigerr": "token"}}, "memory.compaction.trigerr"),
        ({"autoExtract": {"interval": "5"}}, "memory.autoExtract.interval"),
        ({"compaction": {"trigger": "words"}}, "memory.compaction.trigger"),
        ({"provider": {"timeout": "fast"}}, "memory.provider.timeout"),
        ({"lockTimeout": True}, "memory.lockTimeout"),
        ({"recall": {"tokenBudget": -1}}, "memory.recall.tokenBudget"),
        ({"embeddings": []}, "memory.embeddings"),
    ],
)
def test_unknown_keys_and_wrong_types_name_the_key(block: dict[str, object], named: str) -> None:
    with pytest.raises(ConfigError, match=named.replace(".", r"\.")):
        MemoryConfig.from_dict(block)


def test_config_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        MemoryConfig.from_dict({"nope": 1})


def test_invalid_json_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "agency.json"
    path.write_text("{ not json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_config(path)


def test_merged_overrides_only_given_fields() -> None:
    base = MemoryConfig.from_dict({"dir": "/tmp/a", "compaction": {"threshold": 10}})
    merged = base.merged({"compaction": {"trigger": "token"}})
    assert merged.compaction.trigger == "token"
    assert merged.compaction.threshold == 10
    assert merged.dir == Path("/tmp/a")
