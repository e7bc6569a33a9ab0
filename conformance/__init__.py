"""Conformance and correctness test suite for OpenAI-compatible ``/v1/embeddings`` endpoints."""

__version__ = "0.1.0"
