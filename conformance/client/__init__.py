"""HTTP access to the endpoint under test; everything past this package sees decoded numpy data."""

from conformance.client.batch import EmbeddingBatch, Item, Usage
from conformance.client.http import EmbeddingsClient, EndpointError, Exchange

__all__ = ["EmbeddingBatch", "EmbeddingsClient", "EndpointError", "Exchange", "Item", "Usage"]
