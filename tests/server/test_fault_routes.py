"""One server, many faults (``serve --fault-routes``): a fault served under /faults/<name> is
the same bug as a server started with ``--fault NAME``, in every layer, and leaves the correct
routes and the other faults' routes alone. The mutation table (tests/e2e/test_suite_verdicts.py)
relies on it."""

from __future__ import annotations

import base64
import copy
from typing import Any

import numpy as np
import pytest
import requests

from conformance.server.engines.sentence_transformers import SentenceTransformersEngine
from conformance.server.faults import FAULTS
from conformance.server.worker import Worker
from tests.conftest import FaultRoute, reference_server
from tests.server.test_engines import TEXTS, answered, embed_request

LONG = " ".join(["the quick brown fox jumps over the lazy dog"] * 20)  # ~180 tokens
INPUTS = [*TEXTS * 10, LONG]  # 41 inputs: two chunks of 32


@pytest.fixture(scope="module")
def engine() -> SentenceTransformersEngine:
    return SentenceTransformersEngine(None, None)


@pytest.mark.parametrize(
    "fault", [f.name for f in FAULTS.values() if f.layer == "engine" and f.model is None]
)
def test_an_engine_fault_planted_per_request_is_the_engine_loaded_with_it(
    engine: SentenceTransformersEngine, fault: str
) -> None:
    loaded = SentenceTransformersEngine(None, fault)
    planted = engine.with_fault(fault)
    assert (planted.dimension, planted.max_tokens) == (loaded.dimension, loaded.max_tokens)
    expected, got = loaded.embed_texts(INPUTS), planted.embed_texts(INPUTS)
    assert (got.rows, got.tokens) == (expected.rows, expected.tokens)
    assert np.abs(got.matrix - expected.matrix).max() < 1e-6
    correct = engine.embed_texts(INPUTS)  # the loaded model is shared, and stays correct
    assert engine.fault is None and engine.max_tokens == 256
    assert correct.tokens[-1] > 64 and correct.matrix.shape == (len(INPUTS), 384)


def test_a_fault_that_does_not_apply_to_the_model_is_not_planted(
    engine: SentenceTransformersEngine,
) -> None:
    with pytest.raises(ValueError, match="needs a model with a Dense layer"):
        engine.with_fault("dense-skipped")
    assert "dense-skipped" not in Worker(engine, None).routable_faults()


def test_the_position_faults_are_planted_only_where_they_change_something(
    engine: SentenceTransformersEngine,
) -> None:
    """BERT counts positions from 0 and has 512 for a context of 256: both faults apply to
    MiniLM. RoBERTa and MPNet count from 2 already (positions-shifted would be their correct
    model), and rotary positions (nomic) have no table to misread."""
    assert (engine.first_position, engine.positions, engine.max_tokens) == (0, 512, 256)
    assert {"positions-shifted", "context-of-positions"} <= set(
        Worker(engine, None).routable_faults()
    )
    roberta_like = copy.copy(engine)
    roberta_like.first_position, roberta_like.positions = 2, 512
    with pytest.raises(ValueError, match="learned positions counted from 0"):
        roberta_like.with_fault("positions-shifted")
    assert roberta_like.with_fault("context-of-positions").max_tokens == 512
    rotary = copy.copy(engine)
    rotary.positions = None
    for fault in ("positions-shifted", "context-of-positions"):
        with pytest.raises(ValueError, match="needs a model with learned positions"):
            rotary.with_fault(fault)


def test_a_worker_fault_named_by_the_request_is_the_worker_started_with_it(
    engine: SentenceTransformersEngine,
) -> None:
    routed = Worker(engine, None)
    request = embed_request("1", INPUTS, fault="chunks-reversed")
    _, got = answered(routed.handle(request))
    _, expected = answered(Worker(engine, "chunks-reversed").handle(request))
    _, correct = answered(routed.handle(embed_request("2", INPUTS)))
    assert np.array_equal(got, expected)
    assert not np.allclose(got, correct)  # the rows moved: the fault shows
    assert not routed.joins([embed_request("3", ["a"])], request)  # a fault is served alone


def test_another_tokenizer_is_consistent_and_counts_what_it_embedded(
    engine: SentenceTransformersEngine,
) -> None:
    """Hangul and Devanagari read otherwise, alone and in a batch alike; usage counts the
    tokens embedded (one unknown token per word of them), not the model's tokenizer's."""
    korean, hindi, english = "겨울이 되면 눈이 와요.", "मौसम आज अच्छा है।", "a plain sentence"
    worker = Worker(engine, "another-tokenizer")
    header, batch = answered(worker.handle(embed_request("1", [korean, hindi, english])))
    singles = [answered(worker.handle(embed_request("s", [text]))) for text in (korean, hindi)]
    for row, (_, alone) in zip(batch, singles, strict=False):
        assert np.abs(row - alone[0]).max() < 1e-5  # its batch rows are its single answers
    assert [h["prompt_tokens"] for h, _ in singles] == [2 + 4 + 1, 2 + 4]  # 4 [UNK]s each
    for (h, _), text in zip(singles, (korean, hindi), strict=True):
        assert h["prompt_tokens"] < len(engine.tokenize(text))  # the model's tokenizer: more
    _, correct = answered(Worker(engine, None).handle(embed_request("2", [korean, english])))
    assert float(batch[0] @ correct[0]) < 0.99  # another vector than the model's
    assert np.abs(batch[2] - correct[1]).max() < 1e-5  # other scripts untouched
    assert header["prompt_tokens"] == 7 + 6 + len(engine.tokenize(english))


def post(url: str, inputs: list[str], **extra: Any) -> dict[str, Any]:
    model = requests.get(f"{url}/v1/models", timeout=10).json()["data"][0]["id"]
    body = {"model": model, "input": inputs, **extra}
    reply = requests.post(f"{url}/v1/embeddings", json=body, timeout=60)
    return {"status": reply.status_code, **reply.json()}


def test_an_engine_fault_route_answers_as_the_server_started_with_it(
    fault_route: FaultRoute,
) -> None:
    """dense-skipped changes the model's facts too (384 values, not 256): the route's
    /v1/models, its vectors and its validation of 'dimensions' are the faulty server's."""
    model = "minilm-cls-dense-256"
    routed = fault_route("dense-skipped", model)
    with reference_server("--fault", "dense-skipped", "--model", model) as alone:
        for url in (routed, alone):
            assert (
                requests.get(f"{url}/v1/models", timeout=10).json()
                == requests.get(f"{alone}/v1/models", timeout=10).json()
            )
        for request in ({}, {"dimensions": 300}, {"encoding_format": "base64"}):
            got, expected = post(routed, INPUTS, **request), post(alone, INPUTS, **request)
            assert got["status"] == expected["status"] == 200
            assert np.abs(vectors(got) - vectors(expected)).max() < 1e-6
    correct = post(fault_route(model=model), INPUTS)
    assert len(correct["data"][0]["embedding"]) == 256  # the server's own routes stay correct


def vectors(answer: dict[str, Any]) -> np.ndarray:
    rows = [item["embedding"] for item in answer["data"]]
    if isinstance(rows[0], str):  # encoding_format base64: little-endian float32
        return np.stack([np.frombuffer(base64.b64decode(row), "<f4") for row in rows])
    return np.asarray(rows, dtype=np.float32)


def test_a_frontend_fault_route_answers_as_the_server_started_with_it(
    fault_route: FaultRoute,
) -> None:
    routed = fault_route("wrong-index")
    with reference_server("--fault", "wrong-index") as alone:
        got, expected = post(routed, TEXTS), post(alone, TEXTS)
    assert [item["index"] for item in got["data"]] == [1, 2, 3, 4]
    assert got["data"] == expected["data"] and got["usage"] == expected["usage"]
    assert [item["index"] for item in post(fault_route(), TEXTS)["data"]] == [0, 1, 2, 3]


def test_the_fault_routes_are_listed_and_an_unknown_one_is_a_404(clean_server: str) -> None:
    listed = requests.get(f"{clean_server}/faults", timeout=10).json()["data"]
    # On the bundled model: all but the faults of a process of their own and those that
    # break what only a derived model has (a Dense layer, CLS or last-token pooling, ...).
    shareable = {f.name for f in FAULTS.values() if not f.own_process and f.model is None}
    assert {entry["name"] for entry in listed} == shareable
    assert all(entry["mirrors"] == FAULTS[entry["name"]].mirrors for entry in listed)
    missing = requests.get(f"{clean_server}/faults/leak-shm/v1/models", timeout=10)
    assert missing.status_code == 404
    assert "GET /faults lists them" in missing.json()["error"]["message"]
