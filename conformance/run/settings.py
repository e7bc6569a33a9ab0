"""The resolved configuration of one conformance run, from the options' values.

Apart from :mod:`conformance.options` (the flags, ini keys and environment variables, which
pytest registers in every run, parsed there) because resolving needs the client's endpoint
parser and reads the files the options name (known failures, capabilities): it is only imported
once a run has an endpoint to test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import pytest

from conformance.client import Endpoint, parse_endpoint
from conformance.options import parse_options
from conformance.tolerances import Tolerances, tier_of, tolerances_for
from conformance.verdicts.capabilities import load_capabilities
from conformance.verdicts.known_failures import load_known_failures, to_json

OVERRIDABLE_LIMITS = tuple(f.name for f in fields(Tolerances))  # --vector-atol and the like


@dataclass(frozen=True)
class Settings:
    """The resolved configuration of one conformance run."""

    endpoint: Endpoint
    model: str | None  # None until the preflight names the first model the endpoint lists
    api_key: str | None
    request_timeout: float
    profile: str
    requirements: tuple[str, ...] | None  # --requirements: ids or prefixes ending in '.'
    precision: str
    expect_dim: int | None
    expect_normalized: bool
    tolerances: Tolerances
    limit_overrides: dict[str, float]  # the limits given explicitly (--cosine-atol and the like)
    tier_model: str | None  # the model whose own measured limits the tier took, if any
    max_response_bytes: int
    fuzz_examples: int
    shape_examples: int
    shape_seed: int
    results_json: str | None
    report_dir: str | None
    certify: bool
    sign_key: str | None
    known_failures: dict[str, Any] | None  # {path, entries}
    capabilities: dict[str, Any] | None  # {path, declared}
    reference: str | None
    baseline: str | None
    normalization_given: bool  # --expect-normalized set by the user (else the reference decides)

    def for_model(self, model: str | None) -> Settings:
        """These settings with the tier's limits of ``model`` (the reference's) where the
        project measured that model at this tier; explicit limits still win."""
        own = tier_of(self.precision, model) is not tier_of(self.precision)
        return replace(
            self,
            tolerances=tolerances_for(self.precision, model, **self.limit_overrides),
            tier_model=model if own else None,
        )

    def to_json(self) -> dict[str, Any]:
        """Plain data, for xdist workers (they receive the controller's settings once)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Settings:
        return cls(
            **{
                **data,
                "endpoint": Endpoint(**data["endpoint"]),
                "tolerances": Tolerances(**data["tolerances"]),
                "requirements": tuple(data["requirements"]) if data["requirements"] else None,
            }
        )


def resolve_settings(given: dict[str, str | None], endpoint_url: str) -> Settings:
    """Parse every given option; ``endpoint_url`` is the URL to test (the built-in server's
    real one for 'builtin'). Raises pytest.UsageError naming the bad flag."""
    values = parse_options(given)
    values.update(
        known_failures=_loaded("--known-failures", values["known_failures"], _known_failures),
        capabilities=_loaded("--capabilities", values["capabilities"], _capabilities),
    )
    # a declared 'normalized' sets the expectation, unless --expect-normalized says otherwise
    declared = (values["capabilities"] or {}).get("declared", {})
    normalized = declared.get("normalized") if given["expect_normalized"] is None else None
    try:
        endpoint = parse_endpoint(endpoint_url)
    except ValueError as exc:
        raise pytest.UsageError(f"--endpoint: {exc}") from None
    overrides = {
        name: value for name in OVERRIDABLE_LIMITS if (value := values.pop(name)) is not None
    }
    # the remaining values are the settings of the same name, but for these, resolved here:
    values.update(
        endpoint=endpoint,
        expect_normalized=values["expect_normalized"] if normalized is None else normalized,
        tolerances=tolerances_for(values["precision"], **overrides),
        limit_overrides=overrides,
        tier_model=None,
        max_response_bytes=int(values.pop("max_response_mb") * (1 << 20)),
        normalization_given=given["expect_normalized"] is not None or normalized is not None,
    )
    return Settings(**values)


def _loaded(
    flag: str, path: str | None, load: Callable[[str], dict[str, Any]]
) -> dict[str, Any] | None:
    """A file an option names, read and checked; pytest.UsageError naming the flag."""
    if path is None:
        return None
    try:
        return load(path)
    except ValueError as exc:
        raise pytest.UsageError(f"{flag}: {exc}") from None


def _known_failures(path: str) -> dict[str, Any]:
    return {"path": path, "entries": to_json(load_known_failures(path))}


def _capabilities(path: str) -> dict[str, Any]:
    return {"path": path, "declared": load_capabilities(path)}
