"""The worker's faults: what each does at the worker's hook points (the texts a request is read
as, how its texts are computed, how requests computed together are read, 'dimensions', its rows,
its token count). The worker looks a request's fault up in these tables; a fault not in a table
leaves that step as a correct server does it."""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from conformance.server import transports
from conformance.server.api import Inputs
from conformance.server.engines import Engine, EngineOutput
from conformance.server.faults import FAULTS, SORTED_PAST, STEP_TOKENS, FaultName
from conformance.server.rows import request_texts, unit_rows


def _ids_as_text(header: dict[str, Any]) -> list[str]:
    """Token-id input turned into the text '101 7592 102'."""
    if "ids" not in header:
        return request_texts(header)
    return [" ".join(map(str, ids)) for ids in header["ids"]]


def _each_text_read(read: Callable[[str], str], header: dict[str, Any]) -> list[str]:
    return [read(text) for text in request_texts(header)]


def _cut_at_nul(text: str) -> str:
    """What a C string holds of the text: everything before its first U+0000."""
    return text.split("\0", 1)[0]


# The another-tokenizer fault's scripts: Devanagari, Hangul jamo, compatibility jamo, syllables
OTHERWISE_READ = re.compile("[\u0900-\u097f\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]+")
UNKNOWN_WORD = "\N{SNOWMAN}"  # a symbol the model's vocabulary lacks: one [UNK] token


def _read_otherwise(text: str) -> str:
    """The text as a tokenizer without Hangul and Devanagari reads it: each run of them one
    unknown token (the engine's tokenizer then counts and embeds exactly those tokens)."""
    return OTHERWISE_READ.sub(UNKNOWN_WORD, text)


ADDED_PREFIX = "search_query: "  # nomic-embed-text's query prefix: the prefix-added fault's


def _prefixed(text: str) -> str:
    return ADDED_PREFIX + text


# The texts a fault reads a request as (else its own texts)
TEXT_READERS: dict[FaultName, Callable[[dict[str, Any]], list[str]]] = {
    "token-ids-as-text": _ids_as_text,
    "cut-at-nul": partial(_each_text_read, _cut_at_nul),
    "another-tokenizer": partial(_each_text_read, _read_otherwise),
    "prefix-added": partial(_each_text_read, _prefixed),
}

WEDGE_RUN = 200  # the wedged-worker fault hangs on a run of this many of one character


def _wedges(text: str) -> bool:
    """Inputs the wedged-worker fault never returns from: the suite's 300-character
    'long-single-token' case, sent alone after the first tests (fuzzed texts stay under 80)."""
    return any(char * WEDGE_RUN in text for char in set(text))


def _embed_unless_wedged(engine: Engine, texts: list[str]) -> EngineOutput:
    if any(_wedges(text) for text in texts):
        threading.Event().wait()  # forever; the heartbeat thread goes on beating
    return engine.embed_texts(texts)


def _embed_deduplicated_wrongly(engine: Engine, texts: list[str]) -> EngineOutput:
    """A batch holding duplicates: each distinct text embedded once (sorted), mapped back by
    first-occurrence position instead of by its place in the sorted list: every row that moved
    gets another text's vector."""
    if len(set(texts)) == len(texts):
        return engine.embed_texts(texts)
    distinct = sorted(set(texts))
    first_seen = list(dict.fromkeys(texts))
    output = engine.embed_texts(distinct)
    moved = [first_seen.index(text) for text in texts]
    matrix = output.matrix[moved]
    return EngineOutput(
        np.ascontiguousarray(matrix), [1] * len(texts), [output.tokens[i] for i in moved]
    )


def _unmasked_if_equal_lengths(engine: Engine, texts: list[str]) -> EngineOutput:
    """Texts of one token count need no padding: the shortcut for such a batch (2 or more)
    takes a broken mask that lets row 0 into every other row."""
    output = engine.embed_texts(texts)
    if len(texts) < 2 or len({len(engine.tokenize(text)) for text in texts}) > 1:
        return output
    matrix = output.matrix.copy()
    matrix[1:] = unit_rows(matrix[1:] + matrix[0])
    return EngineOutput(matrix, output.rows, output.tokens)


def _overflow_rows_kept(engine: Engine, texts: list[str]) -> EngineOutput:
    """Each text past the context (in a batch of 2 or more) becomes two rows, its truncated
    head and its overflow, and the first n rows are answered: the rows after it shift by one."""
    output = engine.embed_texts(texts)
    if len(texts) < 2:
        return output
    rows: list[transports.Float32Matrix] = []
    for vector, text in zip(output.matrix, texts, strict=True):
        rows.append(vector)
        ids = engine.tokenize(text)
        if len(ids) > engine.max_tokens:
            rows.append(engine.embed_tokens([ids[engine.max_tokens :]]).matrix[0])
    matrix = np.stack(rows[: len(texts)])
    return EngineOutput(matrix, output.rows, output.tokens)


def _straddlers_pooled_over_their_tails(engine: Engine, texts: list[str]) -> EngineOutput:
    """The request computed in steps of STEP_TOKENS tokens, counted over its inputs in order:
    an input that straddles a step boundary is pooled over its tokens past the boundary."""
    output = engine.embed_texts(texts)
    matrix, start = output.matrix.copy(), 0
    for i, count in enumerate(output.tokens):
        end = start + count
        boundary = (end - 1) // STEP_TOKENS * STEP_TOKENS  # the last one before its last token
        if start < boundary:  # tokens on both sides of it
            ids = engine.tokenize(texts[i])[:count]  # as many of its tokens as were read
            matrix[i] = engine.embed_tokens([ids[boundary - start :]]).matrix[0]
        start = end
    return EngineOutput(matrix, output.rows, output.tokens)


# How a fault computes a request of texts (else _embed_texts); the last three
# show only in some shapes of a request (issue 35)
TEXT_EMBEDDERS: dict[FaultName, Callable[[Engine, list[str]], EngineOutput]] = {
    "wedged-worker": _embed_unless_wedged,
    "duplicates-misaligned": _embed_deduplicated_wrongly,
    "equal-lengths-unmasked": _unmasked_if_equal_lengths,
    "overlong-shifts-rows": _overflow_rows_kept,
    "step-boundary-tail": _straddlers_pooled_over_their_tails,
}


def _read_through_inflight_cache(output: EngineOutput, requests: list[list[str]]) -> EngineOutput:
    """Requests computed together (their inputs one after the other in ``output``) read their
    rows through a cache keyed by text, which holds the position a text had in the first
    request that carried it; a later request reads that position from its own start (and past
    the end, from the start of the batch again)."""
    first_position: dict[str, int] = {}
    picked, start = [], 0
    for texts in requests:
        for position, text in enumerate(texts):
            cached = first_position.setdefault(text, position)
            picked.append((start + cached) % len(output.tokens))
        start += len(texts)
    tokens = [output.tokens[i] for i in picked]
    return EngineOutput(output.matrix[picked], [output.rows[i] for i in picked], tokens)


# The faults whose bug lives in computing requests together: what each makes of the output of
# the texts of the requests computed together (those of any other fault are computed alone)
TOGETHER_FAULTS: dict[FaultName, Callable[[EngineOutput, list[list[str]]], EngineOutput]] = {
    "shared-inflight-cache": _read_through_inflight_cache,
}
MERGED: frozenset[FaultName | None] = frozenset({None, *TOGETHER_FAULTS})  # computed together


def _dimensions_ignored(
    matrix: transports.Float32Matrix, dimensions: int, normalized: bool
) -> transports.Float32Matrix:
    return matrix


def _truncated_only(
    matrix: transports.Float32Matrix, dimensions: int, normalized: bool
) -> transports.Float32Matrix:
    return matrix[:, :dimensions]


# How a fault applies 'dimensions' (else _truncated), given the model's normalization
DIMENSIONS_READINGS: dict[
    FaultName, Callable[[transports.Float32Matrix, int, bool], transports.Float32Matrix]
] = {
    "dimensions-ignored": _dimensions_ignored,
    "dimensions-not-renormalized": _truncated_only,
}


NOISE = np.random.default_rng()  # the noise fault's source


def _noisy(matrix: transports.Float32Matrix, inputs: Inputs) -> transports.Float32Matrix:
    """Nondeterministic kernels: a little noise on every answer, still unit length."""
    return unit_rows(matrix + NOISE.normal(0.0, 1e-3, matrix.shape).astype(np.float32))


def _through_float16(matrix: transports.Float32Matrix, inputs: Inputs) -> transports.Float32Matrix:
    return matrix.astype(np.float16).astype(np.float32)


def _one_vector_for_all(
    matrix: transports.Float32Matrix, inputs: Inputs
) -> transports.Float32Matrix:
    return np.broadcast_to(_one_vector(matrix.shape[1]), matrix.shape)


THAI = range(0x0E00, 0x0E80)


def _blank(text: str) -> bool:
    return not text.strip()


def _in_thai(text: str) -> bool:
    return any(ord(char) in THAI for char in text)


def _null_where(
    broken: Callable[[str], bool], matrix: transports.Float32Matrix, inputs: Inputs
) -> transports.Float32Matrix:
    """NaN (serialized as null) for each text ``broken`` holds (token ids: none)."""
    rows = matrix.copy()
    rows[[isinstance(item, str) and broken(item) for item in inputs]] = np.nan
    return rows


CHUNK = 32  # the chunks-reversed fault's batch chunk


def _chunks_reversed(matrix: transports.Float32Matrix, inputs: Inputs) -> transports.Float32Matrix:
    """The rows of a batch computed in chunks of CHUNK, the chunks put back last first."""
    chunks = [matrix[start : start + CHUNK] for start in range(0, len(matrix), CHUNK)]
    return np.concatenate(chunks[::-1])


def _longest_first(items: Inputs) -> list[int]:
    """The order a server sorts a batch into to pad it little: the longest input first."""
    return sorted(range(len(items)), key=lambda i: -len(items[i]))


def _large_batch_sorted(
    matrix: transports.Float32Matrix, inputs: Inputs
) -> transports.Float32Matrix:
    """More than SORTED_PAST inputs answered in the order sorted into, never restored."""
    return matrix[_longest_first(inputs)] if len(inputs) > SORTED_PAST else matrix


# What a fault does to a request's rows once 'dimensions' is applied, given its inputs
ROW_FAULTS: dict[
    FaultName, Callable[[transports.Float32Matrix, Inputs], transports.Float32Matrix]
] = {
    "noise": _noisy,
    "fp16-vectors": _through_float16,
    "one-vector": _one_vector_for_all,
    "nan-whitespace": partial(_null_where, _blank),
    "null-thai": partial(_null_where, _in_thai),
    "chunks-reversed": _chunks_reversed,
    "large-batch-sorted": _large_batch_sorted,
}


def _characters(output: EngineOutput, texts: list[str]) -> int:
    """usage.prompt_tokens counted in characters (token ids: in tokens)."""
    return sum(len(text) for text in texts) if texts else output.prompt_tokens


# How a fault counts usage.prompt_tokens (else the tokens embedded)
PROMPT_TOKENS: dict[FaultName, Callable[[EngineOutput, list[str]], int]] = {
    "usage-characters": _characters,
}


def _one_vector(dim: int) -> transports.Float32Matrix:
    """A fixed unit vector (the same in every worker and request)."""
    vector = np.random.default_rng(0).standard_normal(dim)
    return (vector / np.linalg.norm(vector)).astype(np.float32)


def planted_engines(engine: Engine) -> dict[FaultName, Engine]:
    """Per engine fault, the engine with it planted, where the engine can plant it per request
    (sentence-transformers, for the faults that apply to its model; vLLM plants them at load)."""
    plant = getattr(engine, "with_fault", None)
    planted: dict[FaultName, Engine] = {}
    for fault in FAULTS.values():
        if plant is None or fault.layer != "engine" or fault.own_process:
            continue
        with contextlib.suppress(ValueError):  # the model lacks what the fault breaks
            planted[fault.name] = plant(fault.name)
    return planted
