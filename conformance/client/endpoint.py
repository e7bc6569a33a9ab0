"""Where an endpoint's routes live, derived from the URL the user typed."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit


@dataclass(frozen=True)
class Endpoint:
    """Where the embeddings and models routes live, derived from what the user typed."""

    embeddings_url: str
    models_url: str

    @property
    def api_base(self) -> str | None:
        """Base URL for OpenAI-style clients (they append '/embeddings' and take no query
        string), or None when this endpoint cannot be written that way."""
        parts = urlsplit(self.embeddings_url)
        head, _, tail = parts.path.rpartition("/")
        if tail != "embeddings" or parts.query:
            return None
        return urlunsplit((parts.scheme, parts.netloc, head, "", ""))

    @property
    def tokenize_url(self) -> str | None:
        """Where a vLLM-style server offers POST /tokenize (beside /v1), if it can be named."""
        base = self.api_base
        if base is None:
            return None
        return base.removesuffix("/v1") + "/tokenize"


def parse_endpoint(text: str) -> Endpoint:
    """Accept ``http://h:p``, ``http://h:p/v1`` or ``http://h:p/any/path/embeddings``."""
    parts = urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{text!r} is not an http(s) URL (example: http://localhost:8000)")
    path = parts.path.rstrip("/")
    if path.endswith("/embeddings"):
        embeddings_path = path
    elif path.endswith("/v1"):
        embeddings_path = path + "/embeddings"
    else:
        embeddings_path = path + "/v1/embeddings"
    models_path = embeddings_path.rpartition("/")[0] + "/models"

    def url(route: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, route, parts.query, ""))

    return Endpoint(embeddings_url=url(embeddings_path), models_url=url(models_path))
