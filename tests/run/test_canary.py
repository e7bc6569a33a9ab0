"""The state canary's plumbing: its first answer as xdist ships it, and how the end names what
came before it (the suite's runs in tests/e2e/test_suite_verdicts.py show the rest)."""

from __future__ import annotations

import json

import numpy as np

from conformance.corpus import case
from conformance.run.canary import CANARY_CASES, FirstAnswer, after_the_last_test, canary_texts


def test_the_canary_is_a_few_short_corpus_sentences() -> None:
    texts = canary_texts()
    assert len(texts) == len(CANARY_CASES) >= 3
    assert all(len(text.split()) <= 12 for text in texts)  # far below the fault's 128 tokens
    assert texts == [case(case_id).text for case_id in CANARY_CASES]


def test_the_first_answer_crosses_to_the_workers_as_plain_data_unchanged() -> None:
    vectors = np.random.default_rng(1).standard_normal((4, 384))
    shipped = json.loads(json.dumps(FirstAnswer(vectors).to_json()))
    received = FirstAnswer.from_json(shipped)
    assert received is not None and received.vectors is not None
    assert np.array_equal(received.vectors, vectors)  # bit for bit: no tolerance is spent
    failed = FirstAnswer.from_json(FirstAnswer(None, "HTTP 500").to_json())
    assert failed == FirstAnswer(None, "HTTP 500")
    assert FirstAnswer.from_json(None) is None  # a controller that asked no canary


def test_the_end_names_the_last_test_and_its_last_request() -> None:
    latency = [
        {"test": "test_a.py::test_x", "seconds": 0.1, "status": 200, "inputs": 32},
        {"test": "test_b.py::test_y", "seconds": 0.1, "status": 400, "inputs": 1},
    ]
    assert after_the_last_test("test_b.py::test_y", latency) == (
        "at the run's end, after its last test test_b.py::test_y "
        "(its last request: 1 input(s), HTTP 400)"
    )
    assert after_the_last_test("test_c.py::test_z", latency) == (
        "at the run's end, after its last test test_c.py::test_z"  # it sent no timed request
    )
    assert after_the_last_test("", []) == "at the run's end, after no test"
