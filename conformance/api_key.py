"""Where the endpoint's API key is found when no flag gives it: the suite's own environment
variable, then the one the openai client reads."""

from __future__ import annotations

import os

API_KEY_ENV = ("EMBEDDINGS_API_KEY", "OPENAI_API_KEY")


def api_key_from_environment() -> str | None:
    """The first of API_KEY_ENV that is set and not empty."""
    return next((os.environ[name] for name in API_KEY_ENV if os.environ.get(name)), None)
