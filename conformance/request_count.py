"""How many requests a run sent to the endpoint, and the tokens its answers said they cost: what
a user of a paid or rate-limited endpoint needs to size a run.

Each client keeps a ``RequestCounter``; the suite takes what its client sent per test (``take``)
and ships it on the test's report, so xdist's workers' requests reach the controller, which adds
what its own client sent (the preflight, the state canary). Plain data on that wire, like the
tally's other keys; no import of the client, so the verdicts can read it. The one request the
official openai client sends itself (base64.openai-client) is added by its test.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class RequestCount:
    """Requests sent, and what their answers said they cost."""

    sent: int = 0  # every request, retries and probes included
    retries: int = 0  # of which: sent again after a 429 or 503
    tokens: int = 0  # usage.prompt_tokens of the embeddings answers (HTTP 200) that state it
    untold: int = 0  # embeddings answers (HTTP 200) that state no integer usage.prompt_tokens

    def __add__(self, other: RequestCount) -> RequestCount:
        return RequestCount(
            self.sent + other.sent,
            self.retries + other.retries,
            self.tokens + other.tokens,
            self.untold + other.untold,
        )

    def __sub__(self, other: RequestCount) -> RequestCount:
        return RequestCount(
            self.sent - other.sent,
            self.retries - other.retries,
            self.tokens - other.tokens,
            self.untold - other.untold,
        )

    def to_json(self) -> dict[str, int]:
        return {field.name: getattr(self, field.name) for field in fields(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RequestCount:
        return cls(**{field.name: int(data.get(field.name, 0)) for field in fields(cls)})


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
