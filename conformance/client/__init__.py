"""HTTP access to the endpoint under test; everything past this package sees decoded numpy data
(:mod:`conformance.wire`)."""

from conformance.client.endpoint import Endpoint, parse_endpoint
from conformance.client.http import (
    EmbeddingsClient,
    EndpointError,
    Exchange,
    HttpClient,
    NoAnswer,
)

__all__ = [
    "EmbeddingsClient",
    "Endpoint",
    "EndpointError",
    "Exchange",
    "HttpClient",
    "NoAnswer",
    "parse_endpoint",
]
