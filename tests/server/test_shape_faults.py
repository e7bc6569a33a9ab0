"""The faults that show only in some request shapes (issue 35), each served under its
/faults/<name> route of one server: the triggering shape is answered wrong, and the shapes
around it exactly as the server's correct /v1 route answers them.

The server is this module's own: stale-after-huge-request poisons its route for good, and the
mutation table (tests/e2e/test_suite_verdicts.py) must find the session server's route unpoisoned.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest
import requests

from conformance.server.faults import DECODE_SLOTS, HUGE_TOKENS, SORTED_PAST, STEP_TOKENS
from tests.conftest import reference_server
from tests.server.test_engines import TEXTS

MODEL = "all-MiniLM-L6-v2"
CONTEXT = 256  # the bundled model's, in tokens
ATOL = 1e-5
OVER = " ".join(["the quick brown fox jumps over the lazy dog"] * 40)  # 362 tokens: truncated
SHORT = "hello world"  # 4 tokens with [CLS] and [SEP]
EQUAL = ["river stone cloud garden", "garden cloud stone river", "stone river garden cloud"]
WORDS = ["ox", "cat", "horse", "giraffe", "crocodile", "hippopotamus", "a grey cat", "yak"]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """A correct server with its fault routes (see the module's docstring)."""
    with reference_server("--fault-routes") as url:
        yield url


def route(server: str, fault: str) -> str:
    return f"{server}/faults/{fault}"


def post(url: str, inputs: Sequence[Any], **extra: Any) -> requests.Response:
    body = {"model": MODEL, "input": list(inputs), **extra}
    return requests.post(f"{url}/v1/embeddings", json=body, timeout=120)


def rows(reply: requests.Response) -> np.ndarray:
    assert reply.status_code == 200, reply.text
    data = reply.json()["data"]
    assert [item["index"] for item in data] == list(range(len(data)))
    return np.asarray([item["embedding"] for item in data], dtype=np.float32)


def correct(server: str, texts: Sequence[str], **extra: Any) -> np.ndarray:
    """The server's correct /v1 route's vector of each text (each distinct one computed once)."""
    distinct = list(dict.fromkeys(texts))
    vectors = dict(zip(distinct, rows(post(server, distinct, **extra)), strict=True))
    return np.stack([vectors[text] for text in texts])


def wrong_rows(got: np.ndarray, expected: np.ndarray) -> list[int]:
    return [i for i, (a, b) in enumerate(zip(got, expected, strict=True)) if not close(a, b)]


def close(got: np.ndarray, expected: np.ndarray) -> bool:
    return got.shape == expected.shape and float(np.abs(got - expected).max()) < ATOL


def right(url: str, server: str, texts: Sequence[str], **extra: Any) -> bool:
    """Does ``url`` answer ``texts`` as the server's correct route does?"""
    return close(rows(post(url, texts, **extra)), correct(server, texts, **extra))


def token_count(url: str, text: str) -> int:
    reply = requests.post(f"{url}/tokenize", json={"model": MODEL, "prompt": text}, timeout=10)
    return int(reply.json()["count"])


def test_texts_of_equal_token_counts_get_row_0_mixed_into_the_others(server: str) -> None:
    url = route(server, "equal-lengths-unmasked")
    assert len({token_count(server, text) for text in EQUAL}) == 1
    got, expected = rows(post(url, EQUAL)), correct(server, EQUAL)
    assert wrong_rows(got, expected) == [1, 2]
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)  # well-formed, still
    assert right(url, server, EQUAL[:1])  # alone
    assert right(url, server, [*EQUAL, SHORT])  # lengths mixed
    assert right(url, server, TEXTS)
    ids = [[101, 7592, 102], [101, 2088, 102]]  # token ids of one length: left alone
    assert close(rows(post(url, ids)), rows(post(server, ids)))


def test_an_input_past_the_context_shifts_the_rows_after_it(server: str) -> None:
    url = route(server, "overlong-shifts-rows")
    first, after, last = TEXTS[:3]
    got = rows(post(url, [first, OVER, after, last]))
    expected = correct(server, [first, OVER, after, last])
    assert wrong_rows(got, expected) == [2, 3]
    assert close(got[3], expected[2])  # the row after the overflow's: the input before it
    assert right(url, server, [OVER])  # alone: truncated, one row
    assert right(url, server, TEXTS)


def test_the_input_across_a_step_boundary_is_pooled_over_its_tail(server: str) -> None:
    url = route(server, "step-boundary-tail")
    batch = [SHORT] + [OVER] * (STEP_TOKENS // CONTEXT)  # the last one straddles the step
    reply = post(url, batch)
    assert reply.json()["usage"]["prompt_tokens"] == 4 + STEP_TOKENS
    got = rows(reply)
    assert wrong_rows(got, correct(server, batch)) == [len(batch) - 1]
    assert abs(float(np.linalg.norm(got[-1])) - 1.0) < 1e-5
    assert right(url, server, [SHORT, OVER, *TEXTS])


def test_more_than_256_inputs_fail_the_decode(server: str) -> None:
    url = route(server, "500-past-256-inputs")
    inputs = WORDS * (DECODE_SLOTS // len(WORDS))
    failed = post(url, [*inputs, SHORT])
    assert failed.status_code == 500
    assert failed.json()["error"]["message"] == "llama_decode returned -1"
    assert right(url, server, inputs)  # 256 inputs


def test_more_than_1024_inputs_come_back_longest_first(server: str) -> None:
    url = route(server, "large-batch-sorted")
    larger = [*WORDS * (SORTED_PAST // len(WORDS)), SHORT]
    by_length = sorted(larger, key=len, reverse=True)  # a stable sort, as the server's
    got = rows(post(url, larger))  # index 0..n-1, as if in order
    assert close(got, correct(server, by_length))
    assert not close(got, correct(server, larger))
    assert right(url, server, WORDS)  # fewer inputs (1,024 would take as long as the above)


def sent_together(
    send: Callable[[list[str]], requests.Response], batches: list[list[str]]
) -> list[requests.Response]:
    """Every request sent at once (threads released by a barrier), as the suite's bursts."""
    start = threading.Barrier(len(batches))

    def one(texts: list[str]) -> requests.Response:
        start.wait()
        return send(texts)

    with ThreadPoolExecutor(len(batches)) as pool:
        return list(pool.map(one, batches))


def distinct_texts(count: int, tag: str) -> list[str]:
    return [f"{tag} sentence number {i}, about the colour of item {i * 7}" for i in range(count)]


def test_a_text_in_flight_twice_reads_its_row_from_the_other_request(server: str) -> None:
    """8 requests at once, request r holding r texts of its own and then the one they share:
    those that queued up while the worker computed are computed together, and all but the
    first of them with the shared text read a wrong row for it (merging needs no help here:
    every burst of 8 showed it); alone, or with no text in common, each request is right."""
    url = route(server, "shared-inflight-cache")
    shared, own = "the text every request carries", distinct_texts(28, "own")
    batches = [[*own[r * (r - 1) // 2 : r * (r + 1) // 2], shared] for r in range(8)]
    expected = [correct(server, texts) for texts in batches]
    answers = sent_together(lambda texts: post(url, texts), batches)
    wrong = [wrong_rows(rows(a), e) for a, e in zip(answers, expected, strict=True)]
    assert any(wrong), "no request was computed together with another"
    assert all(w in ([], [len(batch) - 1]) for w, batch in zip(wrong, batches, strict=True))
    assert right(url, server, batches[3])  # alone
    others = [distinct_texts(4, f"burst {r}") for r in range(8)]
    answers = sent_together(lambda texts: post(url, texts), others)
    assert all(close(rows(a), correct(server, t)) for a, t in zip(answers, others, strict=True))


def first_index(reply: requests.Response) -> int:
    assert reply.status_code == 200, reply.text
    return int(reply.json()["data"][0]["index"])


def test_indices_count_the_inputs_in_flight_before(server: str) -> None:
    url = route(server, "merged-batch-index")
    batches = [distinct_texts(4, f"request {r}") for r in range(8)]
    answers = sent_together(lambda texts: post(url, texts), batches)
    starts = [first_index(reply) for reply in answers]
    assert any(starts) and all(start % 4 == 0 and start <= 28 for start in starts), starts
    for reply, texts, start in zip(answers, batches, starts, strict=True):
        data = reply.json()["data"]
        assert [item["index"] for item in data] == list(range(start, start + 4))
        got = np.asarray([item["embedding"] for item in data], dtype=np.float32)
        assert close(got, correct(server, texts))  # the rows themselves are right
    assert right(url, server, TEXTS)  # alone: 0..n-1


def test_a_huge_request_leaves_its_rows_to_every_later_answer(server: str) -> None:
    url = route(server, "stale-after-huge-request")
    huge = [SHORT] + [OVER] * (HUGE_TOKENS // CONTEXT)
    assert right(url, server, TEXTS)  # before: right
    reply = post(url, huge)
    assert reply.json()["usage"]["prompt_tokens"] == 4 + HUGE_TOKENS
    answered = rows(reply)
    assert close(answered, correct(server, huge))  # the huge request itself: right
    later = rows(post(url, TEXTS))
    assert close(later, answered[: len(TEXTS)])
    assert not close(later, correct(server, TEXTS))
    narrower = rows(post(url, TEXTS[:2], dimensions=32))
    assert close(narrower, answered[:2, :32])  # the buffer's first values, as wide as asked
    assert right(server, server, TEXTS)  # the server's other routes: untouched


def test_the_model_s_own_dimension_is_refused(server: str) -> None:
    url = route(server, "native-dimensions-refused")
    refused = post(url, TEXTS, dimensions=384)
    assert refused.status_code == 400
    assert refused.json()["error"]["param"] == "dimensions"
    assert "smaller than 384" in refused.json()["error"]["message"]
    assert rows(post(server, TEXTS, dimensions=384)).shape == (4, 384)  # the correct route
    assert right(url, server, TEXTS, dimensions=32)
    assert right(url, server, TEXTS)


def test_the_user_field_is_refused(server: str) -> None:
    url = route(server, "user-refused")
    refused = post(url, TEXTS, user="user-1234")
    assert refused.status_code == 400
    assert refused.json()["error"]["param"] == "user"
    assert close(rows(post(server, TEXTS, user="user-1234")), rows(post(server, TEXTS)))
    assert right(url, server, TEXTS)
