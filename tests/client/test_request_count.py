"""The run's count of requests and tokens: taken once each, whoever takes it, and plain data on
the wire from xdist's workers."""

from __future__ import annotations

import json
import threading

from conformance.client.request_count import RequestCounter
from conformance.wire import RequestCount


def test_take_hands_each_request_over_once() -> None:
    counter = RequestCounter()
    counter.sent()
    counter.embedded(200, 7)
    assert counter.take() == RequestCount(sent=1, tokens=7)
    assert counter.take() == RequestCount()  # taken: a second taker gets none of it
    counter.sent(again=True)
    assert counter.take() == RequestCount(sent=1, retries=1)
    assert counter.total == RequestCount(sent=2, retries=1, tokens=7)


def test_only_an_integer_prompt_tokens_of_a_200_counts_as_tokens() -> None:
    counter = RequestCounter()
    counter.embedded(200, 12)
    for unstated in (None, True, 2.0, "3", -1):  # absent, or not a count
        counter.embedded(200, unstated)
    counter.embedded(503, 40)  # not an answer that embedded anything
    counter.embedded(400, None)
    assert counter.total == RequestCount(tokens=12, untold=5)


def test_a_count_travels_as_plain_json() -> None:
    count = RequestCount(sent=5, retries=1, tokens=40, untold=2)
    assert RequestCount.from_json(json.loads(json.dumps(count.to_json()))) == count
    assert count + count - count == count


def test_threads_lose_no_request() -> None:
    counter = RequestCounter()
    taken: list[RequestCount] = []

    def send() -> None:
        for _ in range(500):
            counter.sent()
            counter.embedded(200, 2)
        taken.append(counter.take())

    threads = [threading.Thread(target=send) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    taken.append(counter.take())
    assert counter.total == RequestCount(sent=4000, tokens=8000)
    assert sum(taken, RequestCount()) == counter.total
