"""encoding_format=base64: honoured, well-formed, and equal to the float output."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.checks import base64, status
from conformance.client import EmbeddingsClient, EndpointError, Exchange
from conformance.requirements import judged_by
from conformance.run.expect import Expect
from conformance.run.settings import Settings


@pytest.mark.requirement("base64.honoured")
def test_base64_is_honoured(expect: Expect, batch_base64: Exchange, batch_ids: list[str]) -> None:
    batch = expect.ok(batch_base64, batch_ids)
    expect(base64.honoured(batch), exchange=batch_base64, cases=batch_ids)


@pytest.mark.requirement("base64.decodes")
def test_base64_decodes_to_float32(
    expect: Expect, batch_base64: Exchange, batch_float: Exchange, batch_ids: list[str]
) -> None:
    dim = expect.matrix(batch_float, batch_ids).shape[1]
    batch = expect.ok(batch_base64, batch_ids)
    if not any(item.wire_type == "string" for item in batch.items):
        what = "no base64 strings in the answer"
        expect.unmeasurable(what, batch_base64, because=(judged_by(base64.honoured),))
    expect(base64.decodes(batch, dim), exchange=batch_base64, cases=batch_ids)


@pytest.mark.requirement("base64.float-parity")
def test_base64_equals_float(
    expect: Expect,
    settings: Settings,
    batch_base64: Exchange,
    batch_float: Exchange,
    batch_ids: list[str],
) -> None:
    floats = expect.matrix(batch_float, batch_ids)
    batch = expect.ok(batch_base64, batch_ids)
    if not all(item.encoding == "base64" for item in batch.items):
        what = "the answer holds no decodable base64"
        expect.unmeasurable(
            what, batch_base64, because=(judged_by(base64.honoured), judged_by(base64.decodes))
        )
    decoded = expect.matrix(batch_base64, batch_ids)
    result = base64.float_parity(decoded, floats, settings.tolerances.base64_atol)
    expect(result, exchange=batch_base64, cases=batch_ids)


@pytest.mark.requirement("base64.openai-client")
def test_openai_client_default_request(
    expect: Expect,
    settings: Settings,
    client: EmbeddingsClient,
    batch_float: Exchange,
    batch_ids: list[str],
) -> None:
    base_url = settings.endpoint.api_base
    if base_url is None:
        pytest.skip(
            "the openai client cannot address this endpoint URL (it needs a route "
            "ending in /embeddings and no query string)"
        )
    floats = expect.matrix(batch_float, batch_ids)
    import openai  # here: its import takes 1-2 s, which a run that never gets here need not pay

    sdk = openai.OpenAI(
        base_url=base_url,
        api_key=settings.api_key or "unused",
        timeout=settings.request_timeout,
        max_retries=0,
    )
    texts = batch_float.request["input"]
    try:  # the SDK bypasses our client: a server that stopped answering costs no new timeout
        client.check_answering("POST", client.endpoint.embeddings_url)
    except EndpointError as exc:
        expect(status.no_answer("a successful call", str(exc)))
        return
    client.request_count.sent()  # the run's count of requests includes the SDK's one
    try:
        response = sdk.embeddings.create(model=client.model, input=texts)
        # an answer without usage is envelope.usage's to judge, not a crash of this test
        client.request_count.embedded(200, getattr(response.usage, "prompt_tokens", None))
        vectors = np.asarray([row.embedding for row in response.data], dtype=np.float64)
    except (openai.OpenAIError, ValueError) as exc:
        what = f"the openai client's default request failed: {exc}"
        result = status.no_answer("a successful call", what, type(exc).__name__)
    else:
        result = base64.openai_client(vectors, floats, settings.tolerances.base64_atol)
    expect(result, cases=batch_ids)
