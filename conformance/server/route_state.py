"""The frontend's hook for faults that remember: what a route keeps between its embeddings
requests. A correct route keeps nothing (STATELESS); each stateful fault
(conformance.server.faults.frontend) overrides the hooks it needs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.responses import Response

from conformance.server import transports

# What a route's state does to an answer's rows (zeros-after-long-request and the like)
Rewrite = Callable[[transports.Float32Matrix], transports.Float32Matrix]


class RouteState:
    """What a route remembers between its embeddings requests, as hooks into serving them. This
    one remembers nothing (every route but a stateful fault's); each stateful fault overrides
    the hooks it needs."""

    async def serve(self, embed: Callable[[], Awaitable[Response]]) -> Response:
        """The answer to the request that ``embed`` answers."""
        return await embed()

    def sent(self, inputs: int) -> int:
        """A request of ``inputs`` inputs goes to a worker: the index of its first row."""
        return 0

    def returned(self, inputs: int) -> None:
        """That request's worker answered (or was lost)."""

    def rows(self, prompt_tokens: int) -> Rewrite | None:
        """What the state does to the rows of an answer of ``prompt_tokens`` (None: nothing)."""
        return None

    async def answered(self, body: bytes, prompt_tokens: int) -> bytes:
        """The body sent for an answer rendered as ``body``."""
        return body


STATELESS = RouteState()
