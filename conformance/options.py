"""Every option of the suite in one place.

Each option is a command-line flag, an ini key (``[tool.pytest.ini_options]`` or ``pytest.ini``)
and an environment variable. One precedence rule for all of them:

    command line  >  environment variable  >  ini file  >  built-in default

Flags that other popular plugins already own (``--timeout`` of pytest-timeout, ``--profile`` of
pytest-profiling) get a distinct name here, because an entry-point plugin that collides with
another plugin's flag breaks every pytest run in that environment.

pytest registers these in every run of every project where the package is installed, so this
module imports nothing heavy; what a run makes of them (:class:`conformance.run.settings.Settings`)
is resolved apart, once a run has an endpoint to test.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from conformance.api_key import API_KEY_ENV
from conformance.tolerances import (
    FUZZ_EXAMPLES,
    MAX_RESPONSE_MB,
    PRECISIONS,
    SHAPE_EXAMPLES,
    SHAPE_SEED,
)

PROFILES = ("core", "full")


@dataclass(frozen=True)
class OptionSpec:
    """One setting: its flag, ini key, environment variables and how to parse a value."""

    dest: str
    flag: str
    env: tuple[str, ...]
    help: str
    parse: Callable[[str], Any] = str
    default: Any = None
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    switch: bool = False  # a flag without a value (ini and environment: yes or no)
    # docs/options.md's row (scripts/options_table.py): what it does in a few words, and the
    # default in words where the value alone does not say it (None: the value)
    summary: str = ""
    shown_default: str | None = None

    @property
    def ini(self) -> str:
        return f"embeddings_{self.dest}"


def _bounded(convert: Callable[[str], Any], lowest: float, words: str) -> Callable[[str], Any]:
    """A parser of numbers ``>= lowest`` (``> 0`` when lowest is 0 and words say so)."""

    def parse(text: str) -> Any:
        value = convert(text)
        if value < lowest or (value == lowest and words == "> 0"):
            raise ValueError(f"must be {words}, got {text}")
        return value

    return parse


_positive_float = _bounded(float, 0, "> 0")
_non_negative_float = _bounded(float, 0, ">= 0")
_positive_int = _bounded(int, 1, "a positive integer")
_non_negative_int = _bounded(int, 0, "an integer >= 0")


def _requirement_patterns(text: str) -> tuple[str, ...]:
    """Comma-separated requirement ids, or prefixes ending in '.'; each must name one."""
    from conformance.requirements import BY_ID  # the catalogue: only when the option is given

    patterns = tuple(p.strip() for p in text.split(",") if p.strip())
    unknown = [p for p in patterns if not any(selects(p, i) for i in BY_ID)]
    if not patterns or unknown:
        raise ValueError(f"no requirement {', '.join(unknown) or 'given'} in the catalogue")
    return patterns


def selects(pattern: str, requirement_id: str) -> bool:
    """A --requirements pattern names this id, exactly or as a prefix ending in '.'."""
    return requirement_id == pattern or (
        pattern.endswith(".") and requirement_id.startswith(pattern)
    )


def _yes_no(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("yes", "true", "1"):
        return True
    if lowered in ("no", "false", "0"):
        return False
    raise ValueError(f"expected yes or no, got {text!r}")


OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "endpoint",
        "--endpoint",
        ("EMBEDDINGS_ENDPOINT",),
        metavar="URL",
        help="Endpoint to test: a base URL with or without /v1 (http://host:8000), the full "
        "embeddings URL for servers that mount it elsewhere, or builtin[:base64|:shm] to run "
        "the bundled reference server. Giving it activates the suite.",
        summary="the endpoint; setting it activates the suite",
    ),
    OptionSpec(
        "model",
        "--model",
        ("EMBEDDINGS_MODEL",),
        metavar="NAME",
        help="Model name sent with every request (default: the first id from GET /v1/models).",
        shown_default="first of `/v1/models`",
        summary="model sent with every request",
    ),
    OptionSpec(
        "api_key",
        "--api-key",
        API_KEY_ENV,
        metavar="KEY",
        help="Sent as 'Authorization: Bearer KEY'; never printed. Prefer the environment "
        "variable EMBEDDINGS_API_KEY (then OPENAI_API_KEY) over the flag.",
        summary="Bearer token; prefer the env var",
    ),
    OptionSpec(
        "request_timeout",
        "--request-timeout",
        ("EMBEDDINGS_REQUEST_TIMEOUT",),
        parse=_positive_float,
        default=30.0,
        metavar="SECONDS",
        help="Timeout of each HTTP request in seconds (default 30).",
        summary="per-request timeout, seconds",
    ),
    OptionSpec(
        "profile",
        "--conformance-profile",
        ("EMBEDDINGS_PROFILE",),
        default="full",
        choices=PROFILES,
        help="'core': the quick essentials (envelope, dimension, finiteness, normalization, "
        "base64); 'full' (default): everything.",
        summary="`core` = envelope, input strings, dimension, values, norm, base64, meaning, "
        "reference agreement",
    ),
    OptionSpec(
        "requirements",
        "--requirements",
        ("EMBEDDINGS_REQUIREMENTS",),
        parse=_requirement_patterns,
        metavar="IDS",
        help="Run only these requirements: comma-separated ids or prefixes ending in '.' "
        "(e.g. 'reference.,usage.counts-tokens'); the others are reported as not run.",
        shown_default="all",
        summary="only these: comma-separated ids or prefixes ending in `.` "
        "(`reference.,usage.counts-tokens`); the rest NOT RUN",
    ),
    OptionSpec(
        "precision",
        "--precision",
        ("EMBEDDINGS_PRECISION",),
        default="fp32",
        choices=PRECISIONS,
        help="Numeric precision of the served model; picks the default limits (fp32), the "
        "reference model's own where they were measured. 'kernel': a quantized server judged "
        "against the golden of the weights it serves (golden record --from gguf:FILE).",
        summary="`fp32`, `fp16`, `bf16`, `q8_0`, `q4_k_m`, `kernel`: picks the default limits, "
        "the model's own where measured ([tiers](precision.md))",
    ),
    OptionSpec(
        "expect_dim",
        "--expect-dim",
        ("EMBEDDINGS_EXPECT_DIM",),
        parse=_positive_int,
        metavar="D",
        help="Required embedding dimension (default: not checked).",
        shown_default="not checked",
        summary="required dimension",
    ),
    OptionSpec(
        "expect_normalized",
        "--expect-normalized",
        ("EMBEDDINGS_EXPECT_NORMALIZED",),
        parse=_yes_no,
        default=True,
        metavar="yes|no",
        help="Whether vectors must have L2 norm 1 (default yes; 'no' for models that are not "
        "normalized).",
        summary="`no` for models without normalized output",
    ),
    OptionSpec(
        "vector_atol",
        "--vector-atol",
        ("EMBEDDINGS_VECTOR_ATOL",),
        parse=_non_negative_float,
        metavar="X",
        help="Override the tier's max |Δ| for answers that must be the same vector "
        "(batch, order, determinism, concurrency).",
        shown_default="tier",
        summary="max |Δ| for answers that must be equal",
    ),
    OptionSpec(
        "norm_atol",
        "--norm-atol",
        ("EMBEDDINGS_NORM_ATOL",),
        parse=_non_negative_float,
        metavar="X",
        help="Override the tier's max |‖v‖₂ - 1|.",
        shown_default="tier",
        summary="max |‖v‖₂ - 1|",
    ),
    OptionSpec(
        "base64_atol",
        "--base64-atol",
        ("EMBEDDINGS_BASE64_ATOL",),
        parse=_non_negative_float,
        metavar="X",
        help="Override the tier's max |Δ| between base64 and float output.",
        shown_default="tier",
        summary="max |Δ| base64 vs float",
    ),
    OptionSpec(
        "reference_atol",
        "--reference-atol",
        ("EMBEDDINGS_REFERENCE_ATOL",),
        parse=_non_negative_float,
        metavar="X",
        help="Override the tier's max |Δ| from the reference model's vector.",
        shown_default="tier",
        summary="max |Δ| from the reference vector",
    ),
    OptionSpec(
        "cosine_atol",
        "--cosine-atol",
        ("EMBEDDINGS_COSINE_ATOL",),
        parse=_non_negative_float,
        metavar="X",
        help="Override the tier's max 1 - cosine similarity to the reference model's vector.",
        shown_default="tier",
        summary="max 1 - cosine to the reference vector",
    ),
    OptionSpec(
        "cosine_median_atol",
        "--cosine-median-atol",
        ("EMBEDDINGS_COSINE_MEDIAN_ATOL",),
        parse=_non_negative_float,
        metavar="X",
        help="Override the tier's max median 1 - cosine over the reference corpus (a systematic "
        "error moves every input).",
        shown_default="tier",
        summary="max median 1 - cosine over the reference corpus",
    ),
    OptionSpec(
        "retrieval_tie",
        "--retrieval-tie",
        ("EMBEDDINGS_RETRIEVAL_TIE",),
        parse=_non_negative_float,
        metavar="X",
        help="Override the tier's score gap within which two documents may swap places in a "
        "query's top 3 (reference.retrieval).",
        shown_default="tier",
        summary="two documents the reference scores within X may swap in a query's top 3",
    ),
    OptionSpec(
        "reference",
        "--reference",
        ("EMBEDDINGS_REFERENCE",),
        metavar="SPEC",
        help="What vectors are compared with: golden:NAME (bundled), golden:DIR, "
        "sentence-transformers:PATH (run here), a URL (a live reference endpoint such as bare "
        "vLLM), or none. Default: the bundled golden of the served model, if there is one.",
        shown_default="bundled golden of the model",
        summary="what vectors are compared with ([references](references.md))",
    ),
    OptionSpec(
        "baseline",
        "--baseline",
        ("EMBEDDINGS_BASELINE",),
        metavar="PATH",
        help="Upgrade gate: a golden directory recorded from the server before the change "
        "(golden record --from-endpoint), holding results.json of its run, or that "
        "results.json alone. Vector drift, changed answers and new failures are regressions.",
        summary="upgrade gate: a golden recorded from the old server (with its `results.json`), "
        "or a `results.json`",
    ),
    OptionSpec(
        "max_response_mb",
        "--max-response-mb",
        ("EMBEDDINGS_MAX_RESPONSE_MB",),
        parse=_positive_float,
        default=float(MAX_RESPONSE_MB),
        metavar="MB",
        help=f"Stop reading an answer larger than this and fail it (default {MAX_RESPONSE_MB}).",
        summary="stop reading (and fail) larger answers",
    ),
    OptionSpec(
        "fuzz_examples",
        "--fuzz-examples",
        ("EMBEDDINGS_FUZZ_EXAMPLES",),
        parse=_positive_int,
        default=FUZZ_EXAMPLES,
        metavar="N",
        help="Request bodies the property-based fuzzer generates (default "
        f"{FUZZ_EXAMPLES}; fixed seed).",
        summary="request bodies the fuzzer generates",
    ),
    OptionSpec(
        "shape_examples",
        "--shape-examples",
        ("EMBEDDINGS_SHAPE_EXAMPLES",),
        parse=_non_negative_int,
        default=SHAPE_EXAMPLES,
        metavar="N",
        help="Request shapes (and bursts of concurrent requests) generated beyond the fixed ones, "
        f"each judged row by row against its inputs sent alone (default {SHAPE_EXAMPLES}; 0: "
        "the fixed shapes only). Size a run against a paid or rate-limited endpoint with it: "
        "the run's requests and tokens are printed at its end.",
        summary="request shapes and bursts generated beyond the fixed ones (0: the fixed ones "
        "only); the run's requests and tokens are printed at its end, to size a run against a "
        "paid or rate-limited endpoint",
    ),
    OptionSpec(
        "shape_seed",
        "--shape-seed",
        ("EMBEDDINGS_SHAPE_SEED",),
        parse=_non_negative_int,
        default=SHAPE_SEED,
        metavar="N",
        help=f"Seed of the generated request shapes (default {SHAPE_SEED}): a failing shape is "
        "reported with the seed that drew it, and the same seed draws it again.",
        summary="the seed that draws them: the same seed draws the same requests",
    ),
    OptionSpec(
        "results_json",
        "--results-json",
        ("EMBEDDINGS_RESULTS_JSON",),
        metavar="PATH",
        help="Write the results document (the results.json of --report-dir) to this file.",
        summary="write the results document (`results.json`) here",
    ),
    OptionSpec(
        "report_dir",
        "--report-dir",
        ("EMBEDDINGS_REPORT_DIR",),
        metavar="DIR",
        help="Write results.json, junit.xml, report.html, summary.md and badge.svg here.",
        summary="write results.json, junit.xml, report.html, summary.md, badge.svg",
    ),
    OptionSpec(
        "certify",
        "--certify",
        ("EMBEDDINGS_CERTIFY",),
        parse=_yes_no,
        default=False,
        switch=True,
        help="Certification run: every requirement, the full profile, a reference; refuses "
        "-k, -m, --requirements, --known-failures and --reference none. The reports say "
        "CERTIFIED or NOT CERTIFIED, and why.",
        summary="certification run (refuses narrowing; CERTIFIED or NOT CERTIFIED)",
    ),
    OptionSpec(
        "sign_key",
        "--sign-key",
        ("EMBEDDINGS_SIGN_KEY",),
        metavar="FILE",
        help="Ed25519 private key (PEM) to sign results.json with (openssl genpkey "
        "-algorithm ed25519); check with: embedding-conformance verify results.json.",
        summary="Ed25519 private key (PEM) to sign results.json",
    ),
    OptionSpec(
        "known_failures",
        "--known-failures",
        ("EMBEDDINGS_KNOWN_FAILURES",),
        metavar="FILE",
        help="TOML list of known failures ([[known-failure]] requirement, reason, link, "
        "case): reported XFAIL, not failing the run; one that now passes is STALE and fails it.",
        summary="TOML of known failures: XFAIL; a fixed one is STALE",
    ),
    OptionSpec(
        "capabilities",
        "--capabilities",
        ("EMBEDDINGS_CAPABILITIES",),
        metavar="FILE",
        help="TOML [capabilities] the server declares (token_ids, dimensions, base64, "
        "normalized, max_batch, max_tokens): a declared feature refused or wrong FAILS; an "
        "undeclared one cleanly refused is UNSUPPORTED.",
        summary="TOML of declared optional features",
    ),
)


def add_options(parser: pytest.Parser) -> None:
    """Register every option as a flag and an ini key (the flag's default is 'not given')."""
    group = parser.getgroup("embedding-conformance", "OpenAI-compatible embeddings conformance")
    for spec in OPTIONS:
        extra = f" [env {' / '.join(spec.env)}; ini {spec.ini}]"
        if spec.switch:
            kind: dict[str, Any] = {"action": "store_const", "const": "yes"}
        else:
            kind = {"choices": spec.choices, "metavar": spec.metavar}
        group.addoption(
            spec.flag, dest=f"embeddings_{spec.dest}", default=None, help=spec.help + extra, **kind
        )
        parser.addini(spec.ini, spec.help, default="")


def env_value(names: tuple[str, ...]) -> str | None:
    """The first of these environment variables that is set and not empty."""
    return next((os.environ[name] for name in names if os.environ.get(name)), None)


def _given(config: pytest.Config, spec: OptionSpec) -> str | None:
    given = config.getoption(f"embeddings_{spec.dest}")
    if given is not None:
        return str(given)
    from_env = env_value(spec.env)
    if from_env is not None:
        return from_env
    ini = config.getini(spec.ini)
    return str(ini) if ini else None


def given_options(config: pytest.Config) -> dict[str, str | None]:
    """Every option's text, by name, from the first source that sets it (None: not given).
    The one place options are read."""
    return {spec.dest: _given(config, spec) for spec in OPTIONS}


def _parse(spec: OptionSpec, text: str | None) -> Any:
    """The value of one option (its default when not given); pytest.UsageError naming the
    flag when the text is not one."""
    if text is None:
        return spec.default
    if spec.choices is not None and text not in spec.choices:
        raise pytest.UsageError(f"{spec.flag}: {text!r} is not one of {', '.join(spec.choices)}")
    try:
        return spec.parse(text)
    except ValueError as exc:
        raise pytest.UsageError(f"{spec.flag}: {exc}") from None


def parse_options(given: dict[str, str | None]) -> dict[str, Any]:
    """Every option's value, by name, from its text (``given_options``)."""
    return {spec.dest: _parse(spec, given[spec.dest]) for spec in OPTIONS}
