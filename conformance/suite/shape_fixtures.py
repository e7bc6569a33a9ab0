"""Fixtures of the request shapes (registered by the plugin beside ``pytest_fixtures``): the
pool of inputs, and the requests at OpenAI's documented limits, each followed at once by the
state canary.

The requests at the limits are the run's heaviest; they are sent once per test process, and
the canary right after each, so that state.unchanged sees what they left behind whichever test
asked for them first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from conformance.client import EmbeddingsClient, EndpointError, Exchange, NoAnswer
from conformance.references import Recording
from conformance.run.canary import canary_params, canary_texts
from conformance.suite.pytest_fixtures import Answers
from conformance.suite.reference_corpus import large_batch_cases
from conformance.suite.shapes import MANY_TOKENS, MOST_INPUTS, Input, Pool

LIMITS_SEED = 35  # orders the inputs of the requests at the limits
RECOVERY_TIMEOUTS = 4  # how many --request-timeout a server busy with one may take to free up


@pytest.fixture(scope="session")
def pool(reference: Recording | None, context: int | None) -> Pool:
    return Pool(context, tuple(large_batch_cases(reference, context)))


@dataclass(frozen=True)
class LimitRequest:
    """One request at a documented limit, its answer (None: no answer, ``problem`` says why),
    and the state canary's answer right after it (None when the request got no answer: a
    server still busy with it is not a changed one)."""

    name: str  # what limit it is at, in words
    inputs: list[Input]
    exchange: Exchange | None
    canary: Exchange | None
    problem: str = ""


@pytest.fixture(scope="session")
def limit_requests(answers: Answers, pool: Pool) -> dict[str, LimitRequest]:
    """'2048-inputs': OpenAI's most inputs in one request, short words so that it stays
    cheap; '32000-tokens': passages near the context, at least MANY_TOKENS tokens in all (as
    the server counts them alone). Each answered one is followed by the state canary. A request
    without an answer is batch.documented-limits' failure alone, not every test's that uses
    this fixture."""
    made = {
        "2048-inputs": (f"{MOST_INPUTS} inputs in one request", most_inputs(pool)),
        "32000-tokens": (f"{MANY_TOKENS:,}+ tokens in one request", many_tokens(answers, pool)),
    }
    sent = {}
    for key, (name, inputs) in made.items():
        answer = answers.get_or_error([i.text for i in inputs], encoding_format="float")
        if isinstance(answer, EndpointError):
            problem = str(answer) + wait_for_the_server(answer, answers.client)
            sent[key] = LimitRequest(name, inputs, None, None, problem)
            continue
        canary = answers.fresh(canary_texts(), **canary_params())
        sent[key] = LimitRequest(name, inputs, answer, canary)
    return sent


def wait_for_the_server(answer: EndpointError, client: EmbeddingsClient) -> str:
    """A server that got no answer out in time may still be working on the request (a client's
    timeout cancels nothing there): wait, a few timeouts at most, until it answers again, so
    that the tests after it measure a server that is free, and this one cause fails only
    batch.documented-limits. What happened, for the record."""
    if not isinstance(answer, NoAnswer):  # not sent, or refused: nothing to wait for
        return ""
    patience = RECOVERY_TIMEOUTS * client.timeout
    waited = client.wait_until_answering(patience)
    if waited is None:
        return f"; nor did it answer anything in the {patience:g} s after"
    return f"; it answered again {waited:.0f} s later (it was still busy with this request)"


def most_inputs(pool: Pool) -> list[Input]:
    """MOST_INPUTS inputs: each pool word as often as the next, in a seeded order."""
    words = pool.words
    order = np.random.default_rng(LIMITS_SEED).permutation(MOST_INPUTS)
    return [words[i % len(words)] for i in order]


def many_tokens(answers: Answers, pool: Pool) -> list[Input]:
    """Passages near the context, in a seeded order, until their tokens (as the server counts
    each alone; its words when it does not say) reach MANY_TOKENS."""
    counts = [_tokens(answers.get(i.text, encoding_format="float"), i) for i in pool.long]
    needed = math.ceil(MANY_TOKENS / max(1, min(counts)))
    rng = np.random.default_rng(LIMITS_SEED)
    order = [int(i) for _ in range(0, needed, len(counts)) for i in rng.permutation(len(counts))]
    return [pool.long[i] for i in order[:needed]]


def _tokens(exchange: Exchange, item: Input) -> int:
    usage = exchange.batch.usage if exchange.batch is not None else None
    tokens = usage.prompt_tokens if usage is not None else None
    if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens > 0:
        return tokens
    return len(item.text.split())
