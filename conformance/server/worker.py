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
Headers are JSON objects. Embed requests that queued up while the worker computed are computed
in one forward pass and answered one by one, as vLLM batches concurrent requests. The heartbeat
comes from its own thread and socket, so it goes on while a long request computes; a remote
worker that falls silent is given up (its requests answered 503), and one the frontend gave up
on, or a restarted frontend, is asked to join again. A local worker (``--parent``, as the
frontend starts it) outlives its frontend by a second at most, however the frontend ended.
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
from collections import deque
from multiprocessing import shared_memory
from typing import Any

import numpy as np
import zmq

from conformance.runtime_dir import ipc_path
from conformance.server import transports
from conformance.server.engines import (
    ENGINE_FAULTS,
    ENGINES,
    Engine,
    EngineOutput,
    load_engine,
)
from conformance.server.faults import FAULTS, SORTED_PAST, STEP_TOKENS, check_fault
from conformance.server.runtime import freeze_long_lived_objects

REAP_INTERVAL = 5.0
# Requests that queued up are computed together up to this many inputs; past ~64 inputs of 80
# tokens a pass costs in proportion to its inputs here, and merging would only delay the first.
MERGE_LIMIT = 64
HEARTBEAT_INTERVAL = 1.0  # the frontend gives a remote worker up after 5 s of silence
PARENT_CHECK_INTERVAL = 0.5  # a local worker outlives its frontend by about this much
SHARED_CACHE = "shared-inflight-cache"  # a fault whose bug lives in computing requests together
MERGED: frozenset[str | None] = frozenset({None, SHARED_CACHE})  # who is computed together


def shape_output(
    output: EngineOutput,
    dimensions: int | None,
    fault: str | None,
    rng: np.random.Generator,
    *,
    normalized: bool = True,
) -> EngineOutput:
    """Apply 'dimensions' (truncate, then renormalize when the model's vectors are unit
    length) and the worker-level faults."""
    matrix = output.matrix
    pooled = all(count == 1 for count in output.rows)
    if dimensions is not None and pooled and fault != "dimensions-ignored":
        matrix = matrix[:, :dimensions]
        if normalized and fault != "dimensions-not-renormalized":
            matrix = _unit_rows(matrix)
    if fault == "noise":
        matrix = _unit_rows(matrix + rng.normal(0.0, 1e-3, matrix.shape).astype(np.float32))
    if fault == "fp16-vectors":
        matrix = matrix.astype(np.float16).astype(np.float32)
    if fault == "one-vector":
        matrix = np.broadcast_to(_one_vector(matrix.shape[1]), matrix.shape)
    return EngineOutput(np.ascontiguousarray(matrix, dtype=np.float32), output.rows, output.tokens)


THAI = range(0x0E00, 0x0E80)
CHUNK = 32  # the chunks-reversed fault's batch chunk


def _broken_text(text: str, fault: str) -> bool:
    """Inputs the nan-whitespace / null-thai faults answer with NaN (serialized as null)."""
    if fault == "nan-whitespace":
        return not text.strip()
    return any(ord(char) in THAI for char in text)


WEDGE_RUN = 200  # the wedged-worker fault hangs on a run of this many of one character


# The another-tokenizer fault's scripts: Devanagari, Hangul jamo, compatibility jamo, syllables
OTHERWISE_READ = re.compile("[\u0900-\u097f\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]+")
UNKNOWN_WORD = "\N{SNOWMAN}"  # a symbol the model's vocabulary lacks: one [UNK] token


def _read_otherwise(text: str) -> str:
    """The text as a tokenizer without Hangul and Devanagari reads it: each run of them one
    unknown token (the engine's tokenizer then counts and embeds exactly those tokens)."""
    return OTHERWISE_READ.sub(UNKNOWN_WORD, text)


def _cut_at_nul(text: str) -> str:
    """What a C string holds of the text: everything before its first U+0000."""
    return text.split("\0", 1)[0]


def _wedges(text: str) -> bool:
    """Inputs the wedged-worker fault never returns from: the suite's 300-character
    'long-single-token' case, sent alone after the first tests (fuzzed texts stay under 80)."""
    return any(char * WEDGE_RUN in text for char in set(text))


def _chunks_reversed(matrix: transports.Float32Matrix) -> transports.Float32Matrix:
    """The rows of a batch computed in chunks of CHUNK, the chunks put back last first."""
    chunks = [matrix[start : start + CHUNK] for start in range(0, len(matrix), CHUNK)]
    return np.concatenate(chunks[::-1])


def _embed_deduplicated_wrongly(engine: Engine, texts: list[str]) -> EngineOutput:
    """Each distinct text embedded once (sorted), mapped back by first-occurrence position
    instead of by its place in the sorted list: every row that moved gets another text's
    vector."""
    distinct = sorted(set(texts))
    first_seen = list(dict.fromkeys(texts))
    output = engine.embed_texts(distinct)
    moved = [first_seen.index(text) for text in texts]
    matrix = output.matrix[moved]
    return EngineOutput(
        np.ascontiguousarray(matrix), [1] * len(texts), [output.tokens[i] for i in moved]
    )


def _shape_fault(
    fault: str | None, engine: Engine, texts: list[str], output: EngineOutput
) -> EngineOutput:
    """The worker faults that show only in some shapes of a request of texts (issue 35)."""
    if fault == "equal-lengths-unmasked":
        return _unmasked_if_equal_lengths(engine, texts, output)
    if fault == "overlong-shifts-rows":
        return _overflow_rows_kept(engine, texts, output)
    if fault == "step-boundary-tail":
        return _straddlers_pooled_over_their_tails(engine, texts, output)
    return output


def _unmasked_if_equal_lengths(
    engine: Engine, texts: list[str], output: EngineOutput
) -> EngineOutput:
    """Texts of one token count need no padding: the shortcut for such a batch (2 or more)
    takes a broken mask that lets row 0 into every other row."""
    if len(texts) < 2 or len({len(engine.tokenize(text)) for text in texts}) > 1:
        return output
    matrix = output.matrix.copy()
    matrix[1:] = _unit_rows(matrix[1:] + matrix[0])
    return EngineOutput(matrix, output.rows, output.tokens)


def _overflow_rows_kept(engine: Engine, texts: list[str], output: EngineOutput) -> EngineOutput:
    """Each text past the context (in a batch of 2 or more) becomes two rows, its truncated
    head and its overflow, and the first n rows are answered: the rows after it shift by one."""
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


def _straddlers_pooled_over_their_tails(
    engine: Engine, texts: list[str], output: EngineOutput
) -> EngineOutput:
    """The request computed in steps of STEP_TOKENS tokens, counted over its inputs in order:
    an input that straddles a step boundary is pooled over its tokens past the boundary."""
    matrix, start = output.matrix.copy(), 0
    for i, count in enumerate(output.tokens):
        end = start + count
        boundary = (end - 1) // STEP_TOKENS * STEP_TOKENS  # the last one before its last token
        if start < boundary:  # tokens on both sides of it
            ids = engine.tokenize(texts[i])[:count]  # as many of its tokens as were read
            matrix[i] = engine.embed_tokens([ids[boundary - start :]]).matrix[0]
        start = end
    return EngineOutput(matrix, output.rows, output.tokens)


def _longest_first(items: list[str] | list[list[int]]) -> list[int]:
    """The order a server sorts a batch into to pad it little: the longest input first."""
    return sorted(range(len(items)), key=lambda i: -len(items[i]))


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
    def __init__(self, engine: Engine, fault: str | None) -> None:
        self.engine = engine
        self.fault = fault
        self.planted = planted_engines(engine) if fault is None else {}
        self.prefix: str | None = None
        self.probe: str | None = None  # the frontend's probe segment, once configured
        self.ttl = 0.0
        self.use_shm = False
        self.rng = np.random.default_rng()

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

    def routable_faults(self) -> dict[str, dict[str, int]]:
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

    def fault_of(self, header: dict[str, Any]) -> str | None:
        """The fault a request is served with: the worker's own, else the one it names."""
        return self.fault or header.get("fault")

    def engine_for(self, fault: str | None) -> Engine:
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
        if first and self.fault != "leak-shm":
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
        if self.fault_of(group[0]) == SHARED_CACHE:
            output = _read_through_inflight_cache(output, [h["texts"] for h in group])
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
        texts: list[str] = header.get("texts", [])
        if "ids" in header and fault == "token-ids-as-text":
            texts = [" ".join(map(str, ids)) for ids in header["ids"]]
        if fault == "cut-at-nul":
            texts = [_cut_at_nul(text) for text in texts]
        if fault == "another-tokenizer":
            texts = [_read_otherwise(text) for text in texts]
        if fault == "wedged-worker" and any(_wedges(text) for text in texts):
            threading.Event().wait()  # forever; the heartbeat thread goes on beating
        if texts and fault == "duplicates-misaligned" and len(set(texts)) < len(texts):
            output = _embed_deduplicated_wrongly(engine, texts)
        elif texts:
            output = engine.embed_texts(texts)
        else:
            output = engine.embed_tokens(header["ids"])
        if texts:
            output = _shape_fault(fault, engine, texts, output)
        return self._answer(header, reply, output, texts)

    def _answer(
        self, header: dict[str, Any], reply: dict[str, Any], output: EngineOutput, texts: list[str]
    ) -> list[bytes]:
        """The reply frames for one request's engine output: 'dimensions', the worker-level
        faults, then the matrix on the request's transport."""
        fault = self.fault_of(header)
        output = shape_output(
            output,
            header.get("dimensions"),
            fault,
            self.rng,
            normalized=self.engine.normalized,
        )
        if fault in ("nan-whitespace", "null-thai"):
            broken = [_broken_text(text, fault) for text in texts]
            output.matrix[broken] = np.nan
        if fault == "chunks-reversed":
            output.matrix[:] = _chunks_reversed(output.matrix)
        if fault == "large-batch-sorted" and len(output.rows) > SORTED_PAST:
            output.matrix[:] = output.matrix[_longest_first(texts or header["ids"])]
        prompt_tokens = output.prompt_tokens
        if fault == "usage-characters" and texts:
            prompt_tokens = sum(len(text) for text in texts)
        reply.update(rows=output.rows, dim=int(output.matrix.shape[1]), prompt_tokens=prompt_tokens)
        if header.get("transport") == "shm" and self.use_shm and self.prefix:
            handle = transports.write_segment(output.matrix, self.prefix)
            return [_dump({**reply, "transport": "shm", "shm": handle.as_dict()})]
        items = transports.encode_items(output.matrix, output.rows)
        return [_dump({**reply, "transport": "base64"}), *items]


def planted_engines(engine: Engine) -> dict[str, Engine]:
    """Per engine fault, the engine with it planted, where the engine can plant it per request
    (sentence-transformers, for the faults that apply to its model; vLLM plants them at load)."""
    plant = getattr(engine, "with_fault", None)
    planted: dict[str, Engine] = {}
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
    fault: str | None,
    watch: ParentWatch | None = None,
) -> None:
    check_fault(fault)
    engine = load_engine(engine_name, model, fault if fault in ENGINE_FAULTS else None)
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
