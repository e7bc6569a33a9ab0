"""A client's running count of the requests it sent and the tokens its answers said they cost.

The suite takes what its client sent per test (``take``) and ships it on the test's report, so
xdist's workers' requests reach the controller, which adds what its own client sent (the
preflight, the state canary). The one request the official openai client sends itself
(base64.openai-client) is added by its test.
"""

from __future__ import annotations

import threading

from conformance.wire import RequestCount


class RequestCounter:
    """A client's running count; safe to share between threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._total = RequestCount()
        self._taken = RequestCount()  # the total when ``take`` was last called

    @property
    def total(self) -> RequestCount:
        """Everything counted over the counter's life."""
        return self._total

    def sent(self, *, again: bool = False) -> None:
        """One request sent; ``again``: after a 429 or 503."""
        self._add(RequestCount(sent=1, retries=int(again)))

    def embedded(self, status: int, prompt_tokens: object) -> None:
        """An answer of the embeddings route: what a 200 said it cost (any other status costs
        nothing). An answer whose body was not read counts as one that did not say."""
        if status != 200:
            return
        if type(prompt_tokens) is int and prompt_tokens >= 0:  # not a bool, a float, a string
            self._add(RequestCount(tokens=prompt_tokens))
        else:
            self._add(RequestCount(untold=1))

    def take(self) -> RequestCount:
        """What was counted since the last ``take``: each request is taken once, whoever takes
        it (a test, or the controller at the end of the run)."""
        with self._lock:
            taken, self._taken = self._total - self._taken, self._total
            return taken

    def _add(self, count: RequestCount) -> None:
        with self._lock:
            self._total += count
