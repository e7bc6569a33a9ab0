"""The requirement catalogue: what a conforming embeddings endpoint must (or should) do.

Ids are stable and human-readable; a test of the packaged suite names the one id it covers
with ``@pytest.mark.requirement(...)``, and ``check`` names the one function that judges it.
Add, never rename: users pin ids in CI gates and baselines.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from conformance.tolerances import LARGE_BATCH, PARAPHRASE_RATE, PREFIX_COSINE, SAME_VECTOR

Level = Literal["MUST", "SHOULD"]
Profile = Literal["core", "full"]
# The optional features a vendor may declare (--capabilities), each measured by the requirements
# that name it; max_tokens is recorded with the run and measured by none.
Capability = Literal["token_ids", "dimensions", "base64", "normalized", "max_batch", "max_tokens"]


@dataclass(frozen=True)
class Requirement:
    id: str
    level: Level
    profile: Profile  # 'core' runs in every profile; 'full' only in the full one
    why: str  # one line: what a client loses when this is broken
    guards: str  # the real-world bug this catches
    # The dotted name of the one function that judges it, in conformance.checks.<family>; a
    # string, so that reading the catalogue (at option registration) imports no check.
    check: str
    capability: Capability | None = None  # the declared feature that makes it a promise


CATALOGUE: tuple[Requirement, ...] = (
    Requirement(
        "envelope.object-list",
        "MUST",
        "core",
        "Clients dispatch on the top-level object type.",
        "responses shaped by another API (a bare list, or {'embeddings': ...}).",
        check="conformance.checks.envelope.object_list",
    ),
    Requirement(
        "envelope.one-item-per-input",
        "MUST",
        "core",
        "A client zips inputs with data items; a missing or extra item misaligns every vector.",
        "dropped inputs in a batch, or one item per token.",
        check="conformance.checks.envelope.one_item_per_input",
    ),
    Requirement(
        "envelope.item-shape",
        "MUST",
        "core",
        "Each data item must be {object: 'embedding', index: int, embedding: ...}.",
        "items missing 'object' or 'index', or carrying them under other names.",
        check="conformance.checks.envelope.item_shape",
    ),
    Requirement(
        "envelope.index-order",
        "MUST",
        "core",
        "Item i must carry index i, in input order, or clients attach vectors to the wrong text.",
        "indices starting at 1, repeated, or items sorted by completion time.",
        check="conformance.checks.envelope.index_order",
    ),
    Requirement(
        "envelope.model-string",
        "MUST",
        "core",
        "The response names the model that produced it.",
        "model missing or null in the response.",
        check="conformance.checks.envelope.model_string",
    ),
    Requirement(
        "envelope.embedding-number-array",
        "MUST",
        "core",
        "With encoding_format float, an embedding is one flat JSON array of numbers.",
        "numbers sent as strings, or a nested per-token matrix instead of one vector.",
        check="conformance.checks.envelope.embedding_number_array",
    ),
    Requirement(
        "envelope.usage",
        "MUST",
        "core",
        "usage.prompt_tokens and total_tokens are integers >= 1 with total >= prompt; "
        "billing and rate limiting read them.",
        "usage missing, null, zero, or floats.",
        check="conformance.checks.envelope.usage",
    ),
    Requirement(
        "input.string",
        "MUST",
        "core",
        "A single string input returns exactly one vector.",
        "servers that only accept arrays (the most common client call fails).",
        check="conformance.checks.input.string",
    ),
    Requirement(
        "input.string-array",
        "MUST",
        "core",
        "An array of strings returns one vector per string.",
        "servers that embed only the first element, or join the array into one text.",
        check="conformance.checks.input.string_array",
    ),
    Requirement(
        "input.string-same-as-array",
        "MUST",
        "core",
        "A text sent as a string and as a one-element array gives the same vector.",
        "two request paths that prepare the text differently (a prefix, a strip, a cast).",
        check="conformance.checks.input.string_same_as_array",
    ),
    Requirement(
        "input.token-ids",
        "MUST",
        "full",
        "Optional: an array of token ids, if accepted, embeds like the text it encodes "
        "(UNSUPPORTED when cleanly rejected).",
        "token ids embedded as if they were text ('101 7592 102').",
        check="conformance.checks.input.token_ids",
        capability="token_ids",
    ),
    Requirement(
        "input.token-id-arrays",
        "MUST",
        "full",
        "Optional: an array of token-id arrays, if accepted, gives one vector per array, each "
        "like its text.",
        "the outer array taken as one sequence; rows mixed up.",
        check="conformance.checks.input.token_id_arrays",
        capability="token_ids",
    ),
    Requirement(
        "input.empty-rejected",
        "SHOULD",
        "full",
        "'', [''] and [] get a 4xx: the API says input cannot be empty. Hygiene: an answer to "
        "[] with no vectors is consistent, a vector for '' stands for nothing.",
        "empty text embedded as the tokenizer's special tokens alone, or pooled over nothing "
        "(NaN, zeros), and returned as a vector.",
        check="conformance.checks.input.empty_rejected",
    ),
    Requirement(
        "input.over-context",
        "MUST",
        "full",
        "Input longer than the model's context is truncated (valid vector) or rejected with a "
        "4xx; never a 5xx or a hang.",
        "position-embedding overflow crashing the engine on long input.",
        check="conformance.checks.input.over_context",
    ),
    # --- issue 28: optional fields sent as null ---
    Requirement(
        "input.null-optional-fields",
        "SHOULD",
        "full",
        "Optional fields sent as null (encoding_format, dimensions, user) are answered as if "
        "absent, or cleanly refused: LiteLLM sends its unset optional fields as null "
        "('encoding_format': null), so a 5xx or wrong vectors break every LiteLLM user.",
        "a handler that calls None.lower() on a null encoding_format (HTTP 500); a null "
        "encoding_format read as base64; a null dimensions read as 0.",
        check="conformance.checks.input.null_optional_fields",
    ),
    # --- issue 35: edges of valid parameters ---
    Requirement(
        "input.user-field",
        "MUST",
        "core",
        "OpenAI's documented optional 'user' field (a string naming the end user) is accepted "
        "and changes nothing: a client that sets it, as OpenAI asks for abuse monitoring, gets "
        "the vectors of the request without it.",
        "a strict schema that forbids fields it does not use: HTTP 400 'extra inputs are not "
        "permitted' for 'user'.",
        check="conformance.checks.input.user_field",
    ),
    Requirement(
        "dimension.consistent",
        "MUST",
        "core",
        "Every vector an endpoint returns for a model has the same length D.",
        "a dropped projection layer on some code paths; per-token output.",
        check="conformance.checks.dimension.consistent",
    ),
    Requirement(
        "dimension.fixed-across-lengths",
        "MUST",
        "core",
        "D for a 1-token input equals D for a ~200-token input.",
        "per-token output (pooling unset after an engine upgrade): size grows with the input.",
        check="conformance.checks.dimension.fixed_across_lengths",
    ),
    Requirement(
        "dimension.expected",
        "MUST",
        "core",
        "D equals the dimension the user requires (--expect-dim).",
        "a Dense projection module ignored by the engine, giving the backbone's hidden size.",
        check="conformance.checks.dimension.expected",
    ),
    Requirement(
        "finite.values",
        "MUST",
        "core",
        "No NaN, Inf or null element, also for whitespace-only and unusual unicode input.",
        "division by a zero token count; fp16 overflow; NaN serialized into JSON.",
        check="conformance.checks.finite.values",
    ),
    Requirement(
        "finite.nonzero",
        "MUST",
        "core",
        "No all-zero vector: it has no direction, so every similarity with it is meaningless.",
        "empty token sequences pooled to zeros; error paths returning zero placeholders.",
        check="conformance.checks.finite.nonzero",
    ),
    Requirement(
        "normalization.unit-norm",
        "MUST",
        "core",
        "Normalized models must return vectors with L2 norm 1 (within the tier's limit); "
        "clients compute cosine similarity as a dot product.",
        "the Normalize module skipped by the engine.",
        check="conformance.checks.normalization.unit_norm",
        capability="normalized",
    ),
    Requirement(
        "base64.honoured",
        "MUST",
        "core",
        "encoding_format 'base64' must return a base64 string per item, not a float list.",
        "the parameter silently ignored; the official openai client then gets no savings.",
        check="conformance.checks.base64.honoured",
        capability="base64",
    ),
    Requirement(
        "base64.decodes",
        "MUST",
        "core",
        "Each base64 string decodes to exactly 4*D bytes (little-endian float32).",
        "float64 or float16 payloads; base64 of the JSON text; padding stripped.",
        check="conformance.checks.base64.decodes",
        capability="base64",
    ),
    Requirement(
        "base64.float-parity",
        "MUST",
        "core",
        "Decoded base64 equals the float output, within the limit two answers that must be the "
        "same vector have (they come from two requests).",
        "big-endian byte order; a different code path (or precision) for base64.",
        check="conformance.checks.base64.float_parity",
        capability="base64",
    ),
    Requirement(
        "base64.openai-client",
        "MUST",
        "full",
        "The official openai client's default request (it asks for base64 and decodes it) "
        "yields the same vectors as a plain float request.",
        "servers that reject or mangle the client's default encoding_format.",
        check="conformance.checks.base64.openai_client",
        capability="base64",
    ),
    Requirement(
        "dimensions.honoured",
        "MUST",
        "full",
        "Optional: with 'dimensions': d, every vector has exactly d entries (UNSUPPORTED when "
        "cleanly rejected; a full-length answer means the parameter was silently ignored).",
        "'dimensions' silently ignored: clients store vectors of the wrong size.",
        check="conformance.checks.dimensions.honoured",
        capability="dimensions",
    ),
    Requirement(
        "dimensions.renormalized",
        "MUST",
        "full",
        "Optional: the d-vector equals the full vector truncated to d and renormalized to norm 1.",
        "truncation without renormalization; keeping the wrong end of the vector.",
        check="conformance.checks.dimensions.renormalized",
        capability="dimensions",
    ),
    Requirement(
        "dimensions.invalid-rejected",
        "MUST",
        "full",
        "Invalid 'dimensions' (-1, a fraction, larger than native) get a 4xx ('dimensions' 0, "
        "which lax servers read as absent, is errors.unknown-value-rejected's).",
        "the parameter ignored, taken modulo the size, or crashing the server.",
        check="conformance.checks.dimensions.invalid_rejected",
    ),
    Requirement(
        "dimensions.native",
        "MUST",
        "full",
        "Optional: a server that honours smaller 'dimensions' honours the model's own dimension "
        "too, with the full vectors: a client configured with the dimension it stores asks for "
        "it on every request.",
        "a bound checked as 'dimensions < native' instead of '<=': HTTP 400 for the model's own "
        "dimension.",
        check="conformance.checks.dimensions.native",
    ),
    Requirement(
        "errors.rejected",
        "MUST",
        "full",
        "A request the API cannot read gets a 4xx: never a 2xx with garbage, never a 5xx.",
        "unvalidated input reaching the engine: 500s, or 200 with empty or wrong data.",
        check="conformance.checks.errors.rejected",
    ),
    Requirement(
        "errors.no-5xx",
        "MUST",
        "full",
        "Odd but arguable requests (empty strings, unknown fields, a missing model, '32' for "
        "32, an unknown encoding_format) never get a 5xx.",
        "edge cases nobody validated crashing a handler.",
        check="conformance.checks.errors.no_5xx",
    ),
    Requirement(
        "errors.lenient-but-right",
        "MUST",
        "full",
        "A request a lenient server accepts is answered exactly like the valid request it "
        "stands for ('32' like 32, text/plain like JSON, a missing model like the served one, "
        "an unknown encoding_format like none: float vectors).",
        "a value coerced and then ignored: dimensions '32' accepted, full-length vectors returned.",
        check="conformance.checks.errors.lenient_but_right",
    ),
    Requirement(
        "errors.envelope",
        "SHOULD",
        "full",
        "Errors carry {'error': {'message', 'type', 'param', 'code'}}, as OpenAI clients parse.",
        "flat {'detail': ...} or plain-text error bodies that clients cannot surface.",
        check="conformance.checks.errors.envelope",
    ),
    Requirement(
        "errors.unknown-model",
        "SHOULD",
        "full",
        "An unknown model gets 404 with code 'model_not_found': a client that names the wrong "
        "model learns it, instead of getting another model's vectors.",
        "unknown models silently served by a default model (single-model servers such as "
        "text-embeddings-inference and llama.cpp), or a generic 400/500.",
        check="conformance.checks.errors.unknown_model",
    ),
    Requirement(
        "errors.content-type",
        "SHOULD",
        "full",
        "A JSON body sent as text/plain gets a 4xx: browsers send text/plain cross-site without "
        "a CORS preflight, so an unauthenticated local server that accepts it can be driven by "
        "any web page.",
        "handlers that parse every body as JSON whatever its Content-Type.",
        check="conformance.checks.errors.content_type",
    ),
    # --- issue 34 (item 3): an unknown value of a known optional field is hygiene ---
    Requirement(
        "errors.unknown-value-rejected",
        "SHOULD",
        "full",
        "A value no client sends of a field the API defines (encoding_format 'unknown', '' or "
        "123; 'model' not a string; 'dimensions' 0; an object as 'input') gets a 4xx, so a "
        "client with a typo learns of it. Hygiene: an answer as if the field were absent "
        "(floats, the one model, the full vectors) or to the text the object holds is right "
        "(errors.lenient-but-right); a wrong one, or a 5xx, fails a MUST.",
        "handlers that never validate the field ('base64' if it says so, floats for anything "
        "else): encoding_format 'base-64' served as floats without a word.",
        check="conformance.checks.errors.unknown_value_rejected",
    ),
    Requirement(
        "errors.recovers",
        "MUST",
        "full",
        "After any bad request, the next valid request still succeeds.",
        "a poisoned worker or a wedged batch queue after one bad input.",
        check="conformance.checks.errors.recovers",
    ),
    Requirement(
        "errors.batch-limit",
        "SHOULD",
        "full",
        "More than 2048 inputs (OpenAI's limit) get a 4xx rather than an unbounded batch.",
        "no batch limit: one request can exhaust the server's memory.",
        check="conformance.checks.errors.batch_limit",
    ),
    Requirement(
        "fuzz.robust",
        "MUST",
        "full",
        "Generated request bodies: valid ones get valid embeddings; invalid ones (a kind the "
        "error cases demand a 4xx for, at MUST) a 4xx; arguable and hygiene (SHOULD) ones a 4xx "
        "or a valid answer; none a 5xx or a hang.",
        "validation gaps that hand-written cases miss.",
        check="conformance.checks.fuzz.robust",
    ),
    Requirement(
        "batch.single-vs-batch",
        "MUST",
        "full",
        "A text embedded alone and inside a batch of mixed-length texts gives the same vector.",
        "padding positions not masked in pooling; batch-size-dependent kernels.",
        check="conformance.checks.batch.single_vs_batch",
    ),
    Requirement(
        "batch.permutation",
        "MUST",
        "full",
        "Permuting a batch permutes its rows and nothing else.",
        "rows returned in completion or length-sorted order.",
        check="conformance.checks.batch.permutation",
    ),
    Requirement(
        "batch.large",
        "MUST",
        "full",
        f"Every row of one request of {LARGE_BATCH} inputs is the vector of its own input: the "
        "server's own answer to that input sent alone (whether that vector is right is "
        "reference.agreement's to judge, not this one's).",
        "chunks of a large batch reassembled out of order, or its tail dropped (Ollama #6262).",
        check="conformance.checks.batch.large",
        capability="max_batch",
    ),
    Requirement(
        "batch.duplicates",
        "MUST",
        "full",
        "A batch holding the same text at scattered positions gives each row its own text's "
        "vector.",
        "inputs deduplicated and the vectors mapped back to the wrong rows.",
        check="conformance.checks.batch.duplicates",
    ),
    # --- issue 35: request shapes real clients send ---
    Requirement(
        "batch.request-shapes",
        "MUST",
        "full",
        "Row i of any request is input i's vector (the server's own answer to it sent alone) "
        "with index i, whatever else the request holds: inputs of equal token length, inputs "
        "past the context at the first, a middle or the last position, duplicates, mixed "
        "lengths, tens of thousands of tokens (generated, seeded; a request holding an input "
        "the server refuses alone may be refused).",
        "a mask shortcut for batches of equal lengths (TEI #882, candle #3582); an over-long "
        "input split into two rows, shifting every later row (caikit-nlp #343); the input that "
        "straddles an engine step pooled over its tail (vLLM #41049, #48831).",
        check="conformance.checks.batch.request_shapes",
    ),
    Requirement(
        "batch.documented-limits",
        "MUST",
        "full",
        "A request at OpenAI's documented limits (2,048 inputs; 32,000 tokens and more in all), "
        "when it is answered, is answered right: no 5xx, every row its own input's vector, in "
        "order (a clean 4xx is batch.documented-limits-served's).",
        "a decode limit answering a few hundred inputs with HTTP 500 (llama-cpp-python #2058); "
        "large batches returned in another order with index renumbered (js-genai #1207).",
        check="conformance.checks.batch.documented_limits",
    ),
    Requirement(
        "batch.documented-limits-served",
        "SHOULD",
        "full",
        "A request at OpenAI's documented limits (2,048 inputs; 32,000 tokens and more in all) "
        "is served. Hygiene: a clean 4xx is a limit lower than OpenAI's, which a client can "
        "split around, but one that OpenAI's clients do not expect.",
        "a batch or token limit far below OpenAI's (a few hundred inputs), so that a client "
        "written for OpenAI's limits fails on its first large request.",
        check="conformance.checks.batch.documented_limits_served",
    ),
    Requirement(
        "determinism.repeat",
        "MUST",
        "full",
        "The same request twice gives the same vectors; caches and dedup rely on it.",
        "dropout left on at inference; nondeterministic kernels; noise.",
        check="conformance.checks.determinism.repeat",
    ),
    Requirement(
        "concurrency.isolation",
        "MUST",
        "full",
        "Concurrent requests each get their own vectors, equal to the serial answers.",
        "shared mutable buffers between requests; responses routed to the wrong caller.",
        check="conformance.checks.concurrency.isolation",
    ),
    Requirement(
        "concurrency.mixed-bursts",
        "MUST",
        "full",
        "Requests in flight at once, of different sizes and sharing some texts, each get their "
        "own rows: row i is input i's vector (sent alone) with index i (generated, seeded).",
        "an in-flight cache shared by two requests with the same text (Ollama #6262, llama.cpp "
        "#5655); index counted across the engine batch requests were merged into (Xinference "
        "#5240).",
        check="conformance.checks.concurrency.mixed_bursts",
    ),
    # state: the canary, asked at the run's start, right after its heaviest requests and at its
    # end (conformance/run/canary.py)
    Requirement(
        "state.unchanged",
        "MUST",
        "full",
        "No request changes the answers to the next ones: a few fixed sentences embedded at "
        "the run's start, right after each of its heaviest requests (2,048 inputs; 32,000 "
        "tokens and more) and at its end (after every other test) get the same vectors each "
        "time.",
        "caches, buffers or pools corrupted by one request (a very large batch, an input past "
        "the context, a rejected request, a burst), so that every later request is answered "
        "wrongly with HTTP 200: zeros after one oversized request, a prefix cache that pools "
        "only the uncached tail, buffers reused across requests (Ollama #17878: a request of "
        "many thousands of tokens).",
        check="conformance.checks.state.unchanged",
    ),
    Requirement(
        "usage.batch-additive",
        "MUST",
        "full",
        "A batch's prompt_tokens equals the sum over its inputs sent one by one.",
        "usage counting only the first input, or the padded batch size.",
        check="conformance.checks.usage.batch_additive",
    ),
    Requirement(
        "usage.counts-tokens",
        "MUST",
        "full",
        "Each input's prompt_tokens is its count by the reference tokenizer (special tokens "
        "counted, some or none): clients bill and budget context by it. A count is not judged "
        "on an input the server tokenizes otherwise, whose vector turns away from the "
        "reference's (1 - cosine past the tier's limit for one input): reference.agreement "
        "fails that, and the record names the input; when no input's vector agrees, no count "
        "can be judged: FAIL.",
        "usage counted in characters, words, padded tokens or a constant (infinity-emb "
        "0.0.78: 'hello' -> 5).",
        check="conformance.checks.usage.counts_tokens",
    ),
    Requirement(
        "usage.monotonic-length",
        "SHOULD",
        "full",
        "A longer text (a prefix extended) never reports fewer prompt tokens.",
        "usage constant, or counted in characters of a truncated text.",
        check="conformance.checks.usage.monotonic_length",
    ),
    Requirement(
        "semantics.distinct-texts",
        "MUST",
        "core",
        "Different texts get different vectors (no two of 150 distinct corpus texts at cosine "
        f">= {SAME_VECTOR}); needs no reference, so it holds for every model.",
        "one vector for every input, a cache keyed wrongly, a constant fallback vector.",
        check="conformance.checks.semantics.distinct_texts",
    ),
    Requirement(
        "semantics.not-a-prefix",
        "MUST",
        "core",
        f"A paragraph does not embed like its own first four words (cosine < {PREFIX_COSINE}).",
        "inputs cut to a few tokens: a context length misconfigured, a tokenizer that stops.",
        check="conformance.checks.semantics.not_a_prefix",
    ),
    Requirement(
        "semantics.paraphrase-closer",
        "MUST",
        "core",
        "On 42 easy triplets, the paraphrase is closer to the anchor than an unrelated text for "
        f"at least {PARAPHRASE_RATE:.0%} of them.",
        "meaningless vectors, rows handed to the wrong inputs, weights half-loaded.",
        check="conformance.checks.semantics.paraphrase_closer",
    ),
    Requirement(
        "reference.agreement",
        "MUST",
        "core",
        "Every input of the reference corpus embeds as the reference model embeds it (max |Δ| "
        "and cosine within the precision tier).",
        "vectors that are well-formed, stable and normalized but wrong: CLS instead of mean "
        "pooling, a dropped layer, silent truncation, precision lost on the way.",
        check="conformance.checks.reference.agreement",
    ),
    Requirement(
        "reference.over-context",
        "MUST",
        "full",
        "An input past the model's context is rejected with a 4xx or embedded as the reference "
        "embeds its truncated form.",
        "truncation at the wrong length, from the wrong end, or without the closing [SEP].",
        check="conformance.checks.reference.over_context",
    ),
    Requirement(
        "reference.retrieval",
        "MUST",
        "full",
        "Each retrieval query finds the same top-3 documents as with the reference model, "
        "but for documents the reference scores within the tier's retrieval tie, which may "
        "swap places.",
        "errors small per element that still reorder search results.",
        check="conformance.checks.reference.retrieval",
    ),
    Requirement(
        "reference.token-ids",
        "MUST",
        "full",
        "Token ids made with the reference tokenizer embed like their text (or are cleanly "
        "rejected with a 4xx: UNSUPPORTED).",
        "token ids re-tokenized as text, special tokens added twice, ids shifted by one.",
        check="conformance.checks.reference.token_ids",
        capability="token_ids",
    ),
    Requirement(
        "baseline.vectors",
        "MUST",
        "full",
        "With --baseline: every input embeds as it did before the change, within the tier, and "
        "the same inputs are accepted.",
        "an engine upgrade that changes pooling, precision or truncation.",
        check="conformance.checks.baseline.vectors",
    ),
    Requirement(
        "baseline.shape",
        "MUST",
        "full",
        "With --baseline: answers keep the fields and JSON types they had before the change.",
        "a field renamed, dropped or retyped by an upgrade, breaking strict clients.",
        check="conformance.checks.baseline.shape",
    ),
    Requirement(
        "baseline.errors",
        "MUST",
        "full",
        "With --baseline: each packaged bad request gets the status (and error envelope) it "
        "got before the change.",
        "an upgrade that turns 400s into 422s or 500s, or drops the error envelope.",
        check="conformance.checks.baseline.errors",
    ),
)

GATE_PREFIX = "baseline."  # requirements in play only when a baseline is given

BY_ID: dict[str, Requirement] = {requirement.id: requirement for requirement in CATALOGUE}
BY_CHECK: dict[str, Requirement] = {requirement.check: requirement for requirement in CATALOGUE}


def judged_by(check: Callable[..., object]) -> str:
    """The id of the requirement ``check`` judges (KeyError for a function bound to none)."""
    return BY_CHECK[f"{check.__module__}.{check.__qualname__}"].id


def in_profile(requirement: Requirement, profile: str) -> bool:
    """'full' includes everything; 'core' only the core requirements."""
    return profile == "full" or requirement.profile == "core"
