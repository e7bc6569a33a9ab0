"""A worker process: holds the model, answers the frontend over ZeroMQ (local IPC or TCP).

Protocol (multipart messages on a DEALER socket; the frontend's ROUTER adds our identity):
  worker -> frontend  [header]                      op 'ready' with the model's facts
  frontend -> worker  [header]                      op 'config': shm prefix and a probe segment
  worker -> frontend  [header]                      op 'configured': can we see that segment?
  frontend -> worker  [header]                      op 'embed' or 'tokenize', with a request id
  worker -> frontend  [header, item, item, ...]     base64 transport: one item per input
  worker -> frontend  [header]                      shm transport: the handle is in the header
  worker -> frontend  [header]                      op 'alive' every second, from a second socket
  frontend -> worker  [header]                      op 'hello': I lost track of you, say 'ready'
  worker -> frontend  [header]                      op 'failed': the model did not load (why)
Headers are JSON objects. Embed requests that queued up while the worker computed are computed
in one forward pass and answered one by one, as vLLM batches concurrent requests. The heartbeat
comes from its own thread and socket, so it goes on while a long request computes; a remote
worker that falls silent is given up (its requests answered 503), and one the frontend gave up
on, or a restarted frontend, is asked to join again. A worker that cannot load its model says
why in one line and exits (START_FAILED): the frontend fails its start, or gives the worker up
after a bounded number of restarts, instead of starting it again forever. A local worker
(``--parent``, as the frontend starts it) outlives its frontend by a second at most, however
the frontend ended.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from functools import partial
from multiprocessing import shared_memory
from typing import Any

import numpy as np
import zmq

from conformance.runtime_dir import ipc_path
from conformance.server import transports
from conformance.server.api import Inputs
from conformance.server.engines import (
    ENGINE_FAULTS,
    ENGINES,
    Engine,
    EngineOutput,
    load_engine,
)
from conformance.server.faults import (
    FAULTS,
    LEAKS_SHARED_MEMORY,
    SORTED_PAST,
    STEP_TOKENS,
    FaultName,
    hook_of,
    parse_fault,
)
from conformance.server.model_names import ModelNotServable
from conformance.server.restarts import START_FAILED
from conformance.server.runtime import freeze_long_lived_objects

REAP_INTERVAL = 5.0
# Requests that queued up are computed together up to this many inputs; past ~64 inputs of 80
# tokens a pass costs in proportion to its inputs here, and merging would only delay the first.
MERGE_LIMIT = 64
HEARTBEAT_INTERVAL = 1.0  # the frontend gives a remote worker up after 5 s of silence
PARENT_CHECK_INTERVAL = 0.5  # a local worker outlives its frontend by about this much


def _texts(header: dict[str, Any]) -> list[str]:
    """The request's texts (none for token ids)."""
    texts: list[str] = header.get("texts", [])
    return texts


def _ids_as_text(header: dict[str, Any]) -> list[str]:
    """Token-id input turned into the text '101 7592 102'."""
    if "ids" not in header:
        return _texts(header)
    return [" ".join(map(str, ids)) for ids in header["ids"]]


def _each_text_read(read: Callable[[str], str], header: dict[str, Any]) -> list[str]:
    return [read(text) for text in _texts(header)]


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
    matrix[1:] = _unit_rows(matrix[1:] + matrix[0])
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


def _embed_texts(engine: Engine, texts: list[str]) -> EngineOutput:
    return engine.embed_texts(texts)


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


def _truncated(
    matrix: transports.Float32Matrix, dimensions: int, normalized: bool
) -> transports.Float32Matrix:
    """'dimensions': the first values, renormalized when the model's vectors are unit length."""
    return _unit_rows(matrix[:, :dimensions]) if normalized else matrix[:, :dimensions]


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
    return _unit_rows(matrix + NOISE.normal(0.0, 1e-3, matrix.shape).astype(np.float32))


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


def shape_output(
    output: EngineOutput,
    dimensions: int | None,
    fault: FaultName | None,
    inputs: Inputs,
    *,
    normalized: bool = True,
) -> EngineOutput:
    """Apply 'dimensions' (truncate, then renormalize when the model's vectors are unit
    length) and the worker-level faults of a request's rows."""
    matrix = output.matrix
    pooled = all(count == 1 for count in output.rows)
    if dimensions is not None and pooled:
        apply = hook_of(DIMENSIONS_READINGS, fault) or _truncated
        matrix = apply(matrix, dimensions, normalized)
    row_fault = hook_of(ROW_FAULTS, fault)
    if row_fault is not None:
        matrix = row_fault(matrix, inputs)
    return EngineOutput(np.ascontiguousarray(matrix, dtype=np.float32), output.rows, output.tokens)


def _one_vector(dim: int) -> transports.Float32Matrix:
    """A fixed unit vector (the same in every worker and request)."""
    vector = np.random.default_rng(0).standard_normal(dim)
    return (vector / np.linalg.norm(vector)).astype(np.float32)


def _unit_rows(matrix: transports.Float32Matrix) -> transports.Float32Matrix:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def probe_segment(name: str, nonce: str) -> bool:
    """True when this process sees the frontend's probe segment: /dev/shm is shared."""
    try:
        segment = shared_memory.SharedMemory(name=name)
    except (FileNotFoundError, OSError, ValueError):
        return False
    try:
        return bytes(segment.buf[: len(nonce)]) == nonce.encode()  # type: ignore[index]
    finally:
        segment.close()
        # Opening registered it with our resource tracker; the frontend owns it.
        transports.resource_tracker.unregister(segment._name, "shared_memory")  # type: ignore[attr-defined]


class Worker:
    def __init__(self, engine: Engine, fault: FaultName | None) -> None:
        self.engine = engine
        self.fault = fault
        self.planted = planted_engines(engine) if fault is None else {}
        self.prefix: str | None = None
        self.probe: str | None = None  # the frontend's probe segment, once configured
        self.ttl = 0.0
        self.use_shm = False

    def ready(self) -> dict[str, Any]:
        e = self.engine
        return {
            "op": "ready",
            "pid": os.getpid(),
            "model": e.model_name,
            "dimension": e.dimension,
            "vocab_size": e.vocab_size,
            "max_tokens": e.max_tokens,
            "faults": self.routable_faults(),
        }

    def routable_faults(self) -> dict[FaultName, dict[str, int]]:
        """The faults a correct worker can plant in one request (the frontend's /faults
        routes), with the model facts each changes: a worker started with a fault has none."""
        if self.fault is not None:
            return {}
        shared = [f.name for f in FAULTS.values() if f.layer != "engine" and not f.own_process]
        served = {name: self.engine for name in shared} | self.planted
        return {
            name: {"dimension": engine.dimension, "max_tokens": engine.max_tokens}
            for name, engine in served.items()
        }

    def fault_of(self, header: dict[str, Any]) -> FaultName | None:
        """The fault a request is served with: the worker's own, else the one it names (the
        frontend names only faults of the worker's routable_faults)."""
        named: FaultName | None = header.get("fault")
        return self.fault or named

    def engine_for(self, fault: FaultName | None) -> Engine:
        if fault is None or self.fault is not None or FAULTS[fault].layer != "engine":
            return self.engine
        if fault not in self.planted:
            raise ValueError(f"fault {fault!r} cannot be planted in this engine and model")
        return self.planted[fault]

    def configure(self, header: dict[str, Any]) -> dict[str, Any]:
        """(Re)configure: a frontend that restarted sends a new prefix."""
        first = self.prefix is None
        self.prefix, self.ttl = header["prefix"], float(header["ttl"])
        probe = header.get("probe")
        self.use_shm = probe is not None and probe_segment(probe["name"], probe["nonce"])
        self.probe = probe["name"] if probe is not None else None
        if first and self.fault not in LEAKS_SHARED_MEMORY:
            threading.Thread(target=self._reap_forever, daemon=True).start()
        return {"op": "configured", "shm": self.use_shm}

    def _reap_forever(self) -> None:
        while True:
            threading.Event().wait(REAP_INTERVAL)
            if self.prefix:
                transports.reap(self.prefix, self.ttl)

    def handle(self, header: dict[str, Any]) -> list[bytes]:
        """The reply frames for one request; errors become an error header."""
        reply = _reply_to(header)
        try:
            if header["op"] == "tokenize":
                tokens = self.engine.tokenize(header["text"], header.get("special", True))
                return [_dump({**reply, "tokens": tokens})]
            return self._embed(header, reply)
        except Exception as exc:  # report, don't die: the frontend answers 500
            return [_failed(reply, exc)]

    def joins(self, group: list[dict[str, Any]], header: dict[str, Any]) -> bool:
        """Can ``header`` be computed in one forward pass with the requests of ``group``?
        Text embeddings of a correct server (or all of the shared-inflight-cache fault, whose
        bug is in computing together), up to MERGE_LIMIT inputs in all: any other planted fault
        answers each request alone, so that it shows exactly the bug it plants."""
        faults = {self.fault_of(h) for h in (*group, header)}
        return (
            len(faults) == 1
            and faults <= MERGED
            and all(h["op"] == "embed" and "texts" in h for h in (*group, header))
            and sum(len(h["texts"]) for h in (*group, header)) <= MERGE_LIMIT
        )

    def handle_together(self, group: list[dict[str, Any]]) -> list[list[bytes]]:
        """The replies to requests that queued up while the worker was busy (``joins``), their
        inputs computed in one forward pass, as vLLM batches concurrent requests."""
        if len(group) == 1:
            return [self.handle(group[0])]
        replies = [_reply_to(header) for header in group]
        try:
            output = self.engine.embed_texts([text for h in group for text in h["texts"]])
        except Exception as exc:
            return [[_failed(reply, exc)] for reply in replies]
        read_together = hook_of(TOGETHER_FAULTS, self.fault_of(group[0]))
        if read_together is not None:
            output = read_together(output, [h["texts"] for h in group])
        answers, start = [], 0
        for header, reply in zip(group, replies, strict=True):
            end = start + len(header["texts"])
            mine = EngineOutput(
                output.matrix[start:end], output.rows[start:end], output.tokens[start:end]
            )
            try:
                answers.append(self._answer(header, reply, mine, header["texts"]))
            except Exception as exc:
                answers.append([_failed(reply, exc)])
            start = end
        return answers

    def _embed(self, header: dict[str, Any], reply: dict[str, Any]) -> list[bytes]:
        fault = self.fault_of(header)
        engine = self.engine_for(fault)
        texts = (hook_of(TEXT_READERS, fault) or _texts)(header)
        if texts:
            embed = hook_of(TEXT_EMBEDDERS, fault) or _embed_texts
            output = embed(engine, texts)
        else:
            output = engine.embed_tokens(header["ids"])
        return self._answer(header, reply, output, texts)

    def _answer(
        self, header: dict[str, Any], reply: dict[str, Any], output: EngineOutput, texts: list[str]
    ) -> list[bytes]:
        """The reply frames for one request's engine output: 'dimensions', the worker-level
        faults, then the matrix on the request's transport."""
        fault = self.fault_of(header)
        inputs: Inputs = texts or header["ids"]
        dimensions = header.get("dimensions")
        normalized = self.engine.normalized
        output = shape_output(output, dimensions, fault, inputs, normalized=normalized)
        count = hook_of(PROMPT_TOKENS, fault)
        prompt_tokens = count(output, texts) if count is not None else output.prompt_tokens
        reply.update(rows=output.rows, dim=int(output.matrix.shape[1]), prompt_tokens=prompt_tokens)
        if header.get("transport") == "shm" and self.use_shm and self.prefix:
            handle = transports.write_segment(output.matrix, self.prefix)
            return [_dump({**reply, "transport": "shm", "shm": handle.as_dict()})]
        items = transports.encode_items(output.matrix, output.rows)
        return [_dump({**reply, "transport": "base64"}), *items]


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


def _reply_to(header: dict[str, Any]) -> dict[str, Any]:
    return {"op": header["op"], "id": header["id"], "ok": True}


def _failed(reply: dict[str, Any], exc: Exception) -> bytes:
    return _dump({**reply, "ok": False, "message": f"{type(exc).__name__}: {exc}"})


def _dump(header: dict[str, Any]) -> bytes:
    return json.dumps(header).encode()


def beat_forever(context: zmq.Context[zmq.Socket[bytes]], address: str, identity: str) -> None:
    """Tell the frontend we live, every second, whatever the main thread is busy with."""
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(address)
    message = _dump({"op": "alive", "worker": identity})
    while True:
        with contextlib.suppress(zmq.Again):  # no frontend right now: nothing to tell
            socket.send(message, zmq.NOBLOCK)
        time.sleep(HEARTBEAT_INTERVAL)


class ParentWatch:
    """A local worker's watch over the frontend that started it (``--parent``). Once that
    process is gone, however it went (a SIGKILL included), we clean up after it -- its ipc
    socket file, its shared-memory segments -- and exit with our process group (vLLM's engine
    processes), within PARENT_CHECK_INTERVAL. Remote workers, started by hand, have no watch."""

    def __init__(self, parent: int, address: str, scratch: str | None = None) -> None:
        self.parent = parent
        self.scratch = scratch  # the temp folder the frontend made for its workers
        self.worker: Worker | None = None  # once the model is loaded: the prefix to sweep
        self.socket_path = ipc_path(address)
        # The frontend bound it before starting us: a file put there later is not its own.
        self.socket_file = _file_identity(self.socket_path)

    def start(self) -> None:
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        while os.getppid() == self.parent:  # reparented (to init or a subreaper): it is gone
            time.sleep(PARENT_CHECK_INTERVAL)
        with contextlib.suppress(OSError):  # a closed stderr must not keep us alive
            print(f"worker: frontend {self.parent} is gone; exiting", file=sys.stderr, flush=True)
        self.clean_up()
        _exit_with_group()

    def clean_up(self) -> None:
        path = self.socket_path
        if self.socket_file is not None and _file_identity(path) == self.socket_file:
            assert path is not None
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        worker = self.worker
        if worker is not None and worker.prefix:
            transports.sweep(worker.prefix)
        if worker is not None and worker.probe:
            transports.discard_segment(worker.probe)
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)


def _file_identity(path: str | None) -> tuple[int, int] | None:
    if path is None:
        return None
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _exit_with_group() -> None:
    if os.getpgrp() == os.getpid():  # our own group (as pool.py starts us): take it along
        os.killpg(os.getpid(), signal.SIGKILL)
    os._exit(0)


def serve(
    address: str,
    identity: str,
    engine_name: str,
    model: str | None,
    fault_named: str | None,
    watch: ParentWatch | None = None,
) -> None:
    fault = parse_fault(fault_named)
    try:
        engine = load_engine(engine_name, model, fault if fault in ENGINE_FAULTS else None)
    except Exception as exc:  # any reason at all: the frontend must hear it, once
        report_start_failure(address, identity, exc, local=watch is not None)
        raise SystemExit(START_FAILED) from None
    freeze_long_lived_objects()
    worker = Worker(engine, fault)
    if watch is not None:
        watch.worker = worker
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
    socket: zmq.Socket[bytes] = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.IDENTITY, identity.encode())
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(address)
    socket.send_multipart([_dump(worker.ready())])
    beating = False
    queued: deque[dict[str, Any]] = deque()
    while True:
        if not queued:
            queued.append(json.loads(socket.recv_multipart()[0]))
        while socket.poll(0):  # what arrived while we computed: answered together if it can
            queued.append(json.loads(socket.recv_multipart()[0]))
        header = queued.popleft()
        if header["op"] == "stop":
            return
        if header["op"] == "hello":
            socket.send_multipart([_dump(worker.ready())])
        elif header["op"] == "config":
            socket.send_multipart([_dump(worker.configure(header))])
            if not beating:  # beats begin once the frontend knows us
                args = (context, address, identity)
                threading.Thread(target=beat_forever, args=args, daemon=True).start()
                beating = True
        else:
            group = [header]
            while queued and worker.joins(group, queued[0]):
                group.append(queued.popleft())
            for frames in worker.handle_together(group):
                socket.send_multipart(frames)


def report_start_failure(address: str, identity: str, exc: Exception, local: bool) -> None:
    """Tell the frontend in one line why the model did not load. A model name nobody can serve
    says all in its message; anything else also leaves its traceback here, once."""
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if not isinstance(exc, ModelNotServable):
        reason = f"{type(exc).__name__}: {reason}"
        traceback.print_exc()
    if not local:  # started by hand: its user reads our stderr (a frontend prints it for us)
        print(f"worker: the model did not load: {reason}", file=sys.stderr, flush=True)
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.IDENTITY, identity.encode())
    socket.setsockopt(zmq.LINGER, 2000)  # close() waits this long for the message to leave
    socket.connect(address)
    socket.send_multipart([_dump({"op": "failed", "reason": reason})])
    socket.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="embedding-conformance worker", description="A model worker for the reference server."
    )
    parser.add_argument(
        "--connect", required=True, help="the frontend's worker address, e.g. tcp://host:5555"
    )
    parser.add_argument(
        "--identity",
        default=f"remote-{os.getpid()}",
        help="a name unique among the frontend's workers",
    )
    parser.add_argument(
        "--engine",
        default="sentence-transformers",
        choices=ENGINES,
        help="model runtime",
    )
    parser.add_argument("--model", default=None, help="model name or local folder")
    parser.add_argument("--fault", default=None, help="plant a bug (see 'serve --help')")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="CPU threads for the model (default: the runtime's own choice)",
    )
    parser.add_argument(
        "--parent",
        type=int,
        default=None,
        metavar="PID",
        help="(set by the frontend for its local workers) once process PID is no longer our "
        "parent, remove its ipc socket file and shared-memory segments and exit",
    )
    parser.add_argument(
        "--scratch",
        default=None,
        metavar="DIR",
        help="(set by the frontend with --parent) its workers' temp folder, removed with the "
        "rest once the frontend is gone",
    )
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    watch = (
        ParentWatch(args.parent, args.connect, args.scratch) if args.parent is not None else None
    )
    if watch is not None:
        watch.start()  # before the model loads: a frontend may die while we load
    if args.threads:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)  # before torch is imported
        import torch

        torch.set_num_threads(args.threads)
    serve(args.connect, args.identity, args.engine, args.model, args.fault, watch)


if __name__ == "__main__":
    main()
