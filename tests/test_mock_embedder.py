"""HashEmbedder: deterministic offline embeddings with lexical similarity."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import numpy as np
import pytest
from memgraph.providers.mock.embedder import HashEmbedder, stem, stems

from memgraph.llm_calls.provider import Embedder


def cosine(embedder: HashEmbedder, a: str, b: str) -> float:
    vectors = embedder.embed([a, b])
    return float(vectors[0] @ vectors[1])


def test_embeddings_are_normalised_float32_rows_of_the_configured_dimension() -> None:
    vectors = HashEmbedder(dimension=64).embed(["Alice works at Acme", "tea"])
    assert vectors.shape == (2, 64)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_the_model_name_carries_the_dimension() -> None:
    assert HashEmbedder().model == "mock-hash-384"
    assert HashEmbedder(dimension=128).model == "mock-hash-128"


def test_the_embedder_satisfies_the_embedder_protocol() -> None:
    assert isinstance(HashEmbedder(), Embedder)


def test_texts_sharing_words_are_similar_and_unrelated_texts_are_not() -> None:
    embedder = HashEmbedder()
    assert cosine(embedder, "Alice works at Acme", "Acme employs Alice") > 0.3
    assert abs(cosine(embedder, "Alice works at Acme", "the weather in Paris")) < 0.2


def test_inflected_forms_of_a_word_match() -> None:
    embedder = HashEmbedder()
    related = cosine(embedder, "Where does the user live?", "User lives in Paris")
    unrelated = cosine(embedder, "Where does the user live?", "Bob prefers green tea")
    assert related > 0.3 > unrelated


def test_the_same_text_always_gets_the_same_vector() -> None:
    first = HashEmbedder().embed(["Alice prefers TypeScript"])
    second = HashEmbedder().embed(["Alice prefers TypeScript", "other"])[:1]
    assert np.array_equal(first, second)


def test_vectors_are_identical_in_another_process() -> None:
    code = (
        "import json; from memgraph.providers.mock.embedder import HashEmbedder; "
        "print(json.dumps(HashEmbedder(dimension=32).embed(['Alice works at Acme'])[0].tolist()))"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    theirs = np.asarray(json.loads(output), dtype=np.float32)
    ours = HashEmbedder(dimension=32).embed(["Alice works at Acme"])[0]
    assert np.array_equal(theirs, ours)


def test_an_empty_text_is_a_zero_row_and_no_texts_is_an_empty_matrix() -> None:
    vectors = HashEmbedder(dimension=16).embed(["", "!!!"])
    assert not vectors.any()
    assert HashEmbedder(dimension=16).embed([]).shape == (0, 16)


def test_a_single_string_is_rejected() -> None:
    with pytest.raises(TypeError):
        HashEmbedder().embed("Alice")


@pytest.mark.parametrize("dimension", [0, 4, True, 3.5])
def test_a_bad_dimension_is_rejected(dimension: object) -> None:
    with pytest.raises(ValueError):
        HashEmbedder(dimension=dimension)  # type: ignore[arg-type]


def test_a_thousand_short_texts_embed_quickly() -> None:
    texts = [f"note {i}: Alice met Bob in Paris on day {i % 31}" for i in range(1000)]
    embedder = HashEmbedder()
    embedder.embed(texts[:10])
    started = time.perf_counter()
    vectors = embedder.embed(texts)
    assert vectors.shape == (1000, 384)
    assert time.perf_counter() - started < 1.0


def test_stemming_folds_plurals_gerunds_and_past_tenses() -> None:
    assert {stem(w) for w in ["lives", "living", "lived", "live"]} == {"liv"}
    assert {stem(w) for w in ["works", "working", "worked"]} == {"work"}
    assert stem("running") == stem("runs") == "run"
    assert stem("studies") == stem("study")
    assert stems("The user's favourite colours") == ["user", "favourit", "colour"]
