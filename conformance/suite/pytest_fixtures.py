"""Fixtures of the packaged suite, registered by the plugin when an endpoint is configured.

Answers that several tests judge (the float batch, the single requests) are fetched once per
session and shared, so the suite stays a small load on the server.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from conformance.client import EmbeddingsClient, EndpointError, Exchange, parse_endpoint
from conformance.client.preflight import PreflightError, open_client
from conformance.corpus import BadRequest, Case, case, cases_tagged
from conformance.references import Recording, reference_cases
from conformance.references.sources import (
    RecordError,
    record_endpoint,
    record_sentence_transformers,
)
from conformance.run.expect import Expect
from conformance.run.session import ConformanceSession
from conformance.run.session_keys import session_of
from conformance.run.settings import Settings
from conformance.verdicts.tally import LATENCY_KEY, REQUESTS_KEY, RETRIES_KEY


class Answers:
    """Cached answers of the endpoint, keyed by the exact request body.

    A request that gets no HTTP answer at all (connection refused or reset, timeout) fails the
    test with one line instead of a traceback, and is remembered, so the tests that share it
    do not each wait for their own timeout."""

    def __init__(self, client: EmbeddingsClient) -> None:
        self.client = client
        self._cache: dict[str, Exchange | EndpointError] = {}
        self._lock = threading.Lock()
        self.timings: list[dict[str, Any]] = []  # one per request sent, for the report

    def _send(self, inputs: Any, params: dict[str, Any], retry: bool = True) -> Exchange:
        exchange = self.client.embed(inputs, retry=retry, **params)
        count = len(inputs) if isinstance(inputs, list) else 1
        self.timings.append(
            {"seconds": exchange.elapsed, "status": exchange.status, "inputs": count}
        )
        return exchange

    def get(self, inputs: Any, **params: Any) -> Exchange:
        answer = self.get_or_error(inputs, **params)
        if isinstance(answer, EndpointError):
            pytest.fail(f"no answer from the endpoint: {answer}", pytrace=False)
        return answer

    def get_or_error(self, inputs: Any, **params: Any) -> Exchange | EndpointError:
        """The answer, or why there is none (for a caller that judges that itself)."""
        key = json.dumps([inputs, params], sort_keys=True)
        with self._lock:
            if key not in self._cache:
                try:
                    self._cache[key] = self._send(inputs, params)
                except EndpointError as exc:
                    self._cache[key] = exc
            return self._cache[key]

    def fresh(self, inputs: Any, *, retry: bool = True, **params: Any) -> Exchange:
        """A new request, bypassing the cache (for determinism and concurrency); with
        ``retry=False`` a 429 or 503 is its answer (for the first answer after a bad request)."""
        try:
            return self._send(inputs, params, retry)
        except EndpointError as exc:
            pytest.fail(f"no answer from the endpoint: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def conformance_session(pytestconfig: pytest.Config) -> ConformanceSession:
    session = session_of(pytestconfig)
    if session is None or session.client is None:
        pytest.skip("embedding-conformance: no --endpoint given")
    return session


@pytest.fixture(scope="session")
def settings(conformance_session: ConformanceSession) -> Settings:
    return conformance_session.settings


@pytest.fixture(scope="session")
def client(conformance_session: ConformanceSession) -> EmbeddingsClient:
    assert conformance_session.client is not None
    return conformance_session.client


@pytest.fixture(scope="session")
def answers(client: EmbeddingsClient) -> Answers:
    return Answers(client)


@pytest.fixture(autouse=True)
def _request_timings(request: pytest.FixtureRequest, answers: Answers) -> Iterator[None]:
    """The time of each request a test sent, and how many requests it sent again after a 429
    or 503 (counted under its requirement), on its report (shipped back by xdist too); and
    every request this process sent since the last test's, for the run's count (the session
    fixtures' too, set up before this fixture, and the preflight's before the first test)."""
    answers.timings.clear()
    retried = answers.client.retries
    yield
    timings, answers.timings = answers.timings, []
    request.node.user_properties.append((LATENCY_KEY, timings))
    retries = answers.client.retries - retried
    if retries:
        request.node.user_properties.append((RETRIES_KEY, retries))
    sent = answers.client.request_count.take()
    if sent.sent:
        request.node.user_properties.append((REQUESTS_KEY, sent.to_json()))


@pytest.fixture
def expect(request: pytest.FixtureRequest, settings: Settings) -> Expect:
    declared = (settings.capabilities or {}).get("declared")
    return Expect(request.node, settings.tolerances.vector_atol, declared)


@pytest.fixture(scope="session")
def batch_cases() -> tuple[Case, ...]:
    """32 mixed-length texts: English, code, numbers, other scripts, 1 to ~100 tokens."""
    return cases_tagged("batch")


@pytest.fixture(scope="session")
def batch_ids(batch_cases: tuple[Case, ...]) -> list[str]:
    return [c.id for c in batch_cases]


@pytest.fixture(scope="session")
def batch_float(answers: Answers, batch_cases: tuple[Case, ...]) -> Exchange:
    return answers.get([c.text for c in batch_cases], encoding_format="float")


@pytest.fixture(scope="session")
def batch_base64(answers: Answers, batch_cases: tuple[Case, ...]) -> Exchange:
    return answers.get([c.text for c in batch_cases], encoding_format="base64")


@pytest.fixture(scope="session")
def singles(answers: Answers, batch_cases: tuple[Case, ...]) -> list[Exchange]:
    """Each batch text sent alone, as a plain string input."""
    return [answers.get(c.text, encoding_format="float") for c in batch_cases]


@pytest.fixture(scope="session")
def single(answers: Answers) -> Callable[[str], Exchange]:
    """Answer for one corpus case id, sent alone as a string input."""
    return lambda case_id: answers.get(case(case_id).text, encoding_format="float")


AnswerOf = Callable[[str], tuple[Exchange, list[str]]]


@pytest.fixture
def answer_of(
    batch_ids: list[str],
    single: Callable[[str], Exchange],
    answers: Answers,
    request: pytest.FixtureRequest,
) -> AnswerOf:
    """(answer, case ids of its inputs) by name: 'batch' (the float batch), or a core corpus
    case id sent alone as a string."""

    def answer(name: str) -> tuple[Exchange, list[str]]:
        if name == "long-200":  # cut to fit a short context
            label, text = request.getfixturevalue("long_input")
            return answers.get(text, encoding_format="float"), [label]
        if name == "batch":
            return request.getfixturevalue("batch_float"), batch_ids
        return single(name), [name]

    return answer


SAFE_CONTEXT = 256  # tokens: every packaged core input fits, for the tokenizers we know


def cut_to_fit(text: str, context: int | None) -> str:
    """The text, or for a model with a shorter context its first context/2 words (a word of
    ordinary prose is at most two tokens), so that the server owes it an answer."""
    if context is None or context >= SAFE_CONTEXT:
        return text
    return " ".join(text.split()[: context // 2])


@pytest.fixture(scope="session")
def context(client: EmbeddingsClient, reference: Recording | None) -> int | None:
    """The context (in tokens) an input must fit to be owed an answer: the shorter of the
    reference model's and the one the server lists (vLLM's max_model_len); None when neither
    is stated. Longer inputs may be refused with a clean 4xx."""
    stated = [
        length
        for length in (
            reference.max_tokens if reference is not None else None,
            client.listed_context(client.model),
        )
        if length is not None
    ]
    return min(stated) if stated else None


@pytest.fixture(scope="session")
def long_input(context: int | None) -> tuple[str, str]:
    """(label, text) of the long core input the length checks use, cut to fit the context."""
    text = case("long-200").text
    fitted = cut_to_fit(text, context)
    label = "long-200" if fitted == text else f"long-200[:{len(fitted.split())} words]"
    return label, fitted


@pytest.fixture(scope="session")
def dim(batch_float: Exchange) -> int:
    """The endpoint's native dimension D, from the float batch (skips when there is none)."""
    batch = batch_float.batch
    vector = batch.first_vector if batch is not None and batch_float.status == 200 else None
    if vector is None or not len(vector):
        pytest.fail(  # the tests that need D cannot measure anything: fail closed
            "no native dimension: the float batch has no vector (see envelope.*): "
            f"{batch_float.describe()[:200]}",
            pytrace=False,
        )
    return len(vector)


@dataclass(frozen=True)
class Tokenizer:
    """Token ids of reference-corpus cases, and where they come from (for notes)."""

    origin: str
    ids: Callable[[str], list[int] | None]  # case id -> token ids, special tokens included
    judged_server: bool  # the ids come from the server being judged, not from a reference


@pytest.fixture(scope="session")
def tokenizer(client: EmbeddingsClient, reference: Recording | None) -> Tokenizer | None:
    """The reference's token ids when it recorded them: the truth, whatever the server says.
    Else the server's own /tokenize route (only consistency with its text path can be
    checked then); None when neither exists."""
    if reference is not None and reference.tokens is not None:
        return Tokenizer(f"the reference ({reference.source})", reference.token_ids, False)
    if client.tokenize("hello") is None:
        return None
    texts = {c.id: c.text for c in reference_cases()}
    return Tokenizer(
        "the server's own /tokenize (no reference tokenizer)",
        lambda case_id: client.tokenize(texts[case_id]),
        True,
    )


BadAnswers = Callable[[BadRequest], Exchange]


@pytest.fixture(scope="session")
def bad_answers(client: EmbeddingsClient) -> BadAnswers:
    """The endpoint's answer to each bad request, sent once per session."""
    cache: dict[str, Exchange] = {}

    def answer(bad: BadRequest) -> Exchange:
        if bad.id not in cache:
            cache[bad.id] = send_bad_request(client, bad)
        return cache[bad.id]

    return answer


def send_bad_request(client: EmbeddingsClient, bad: BadRequest) -> Exchange:
    try:
        return client.send_bad(bad)
    except EndpointError as exc:
        pytest.fail(f"no answer from the endpoint to bad request {bad.id!r}: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def reference(conformance_session: ConformanceSession) -> Recording | None:
    """The reference vectors for the reference corpus (None: no reference in this run).

    A golden was read when the run started; a live source (a model run here, a reference
    endpoint) is asked once per test process."""
    spec = conformance_session.reference
    if spec is None:
        return None
    if spec.golden is not None:
        return spec.golden
    try:
        if spec.kind == "sentence-transformers":
            return record_sentence_transformers(spec.location, reference_cases(), progress=False)
        settings = conformance_session.settings
        endpoint = parse_endpoint(spec.location)
        client = open_client(endpoint, None, None, settings.request_timeout)
        return record_endpoint(client, reference_cases(), progress=False, behaviour=False)
    except (RecordError, PreflightError, EndpointError, ValueError) as exc:
        pytest.fail(f"reference {spec}: {exc}", pytrace=False)


@pytest.fixture
def needs_reference(reference: Recording | None) -> Recording:
    if reference is None:
        pytest.skip(
            "not applicable: --reference none (vectors not compared with any reference); "
            "give --reference golden:DIR, sentence-transformers:PATH or a URL"
        )
    return reference


@pytest.fixture(scope="session")
def expected_dim(settings: Settings, reference: Recording | None) -> int | None:
    """--expect-dim, else the reference's dimension."""
    if settings.expect_dim is not None:
        return settings.expect_dim
    return reference.dimension if reference is not None else None


@pytest.fixture(scope="session")
def normalized_expected(settings: Settings, reference: Recording | None) -> bool:
    """--expect-normalized when given, else what the reference's vectors are."""
    if settings.normalization_given or reference is None:
        return settings.expect_normalized
    return reference.normalized


@pytest.fixture(scope="session")
def required_dim(expected_dim: int | None) -> int:
    """The dimension every vector must have; skips when nothing names one."""
    if expected_dim is None:
        pytest.skip("no --expect-dim given and no reference to take it from")
    return expected_dim


@pytest.fixture(scope="session")
def norm_atol(settings: Settings, normalized_expected: bool) -> float:
    """The limit of | ||v|| - 1 |; skips when the model's output is not normalized."""
    if not normalized_expected:
        pytest.skip("the model's output is not normalized (--expect-normalized, or the reference)")
    return settings.tolerances.norm_atol
