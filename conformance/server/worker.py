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
import signal
import sys
import threading
import time
import traceback
from collections import deque
from multiprocessing import shared_memory
from typing import Any

import numpy as np
import zmq

from conformance.server import transports
from conformance.server.api import Inputs
from conformance.server.engines import (
    ENGINE_FAULTS,
    ENGINES,
    Engine,
    EngineOutput,
    load_engine,
)
from conformance.server.faults import FAULTS, LEAKS_SHARED_MEMORY, FaultName, hook_of, parse_fault
from conformance.server.faults.worker import (
    DIMENSIONS_READINGS,
    MERGED,
    PROMPT_TOKENS,
    ROW_FAULTS,
    TEXT_EMBEDDERS,
    TEXT_READERS,
    TOGETHER_FAULTS,
    planted_engines,
)
from conformance.server.model_names import ModelNotServable
from conformance.server.parent_watch import ParentWatch
from conformance.server.restarts import START_FAILED
from conformance.server.rows import request_texts, truncated
from conformance.server.runtime import freeze_long_lived_objects

REAP_INTERVAL = 5.0
# Requests that queued up are computed together up to this many inputs; past ~64 inputs of 80
# tokens a pass costs in proportion to its inputs here, and merging would only delay the first.
MERGE_LIMIT = 64
HEARTBEAT_INTERVAL = 1.0  # the frontend gives a remote worker up after 5 s of silence


def _embed_texts(engine: Engine, texts: list[str]) -> EngineOutput:
    return engine.embed_texts(texts)


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
        apply = hook_of(DIMENSIONS_READINGS, fault) or truncated
        matrix = apply(matrix, dimensions, normalized)
    row_fault = hook_of(ROW_FAULTS, fault)
    if row_fault is not None:
        matrix = row_fault(matrix, inputs)
    return EngineOutput(np.ascontiguousarray(matrix, dtype=np.float32), output.rows, output.tokens)


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
        texts = (hook_of(TEXT_READERS, fault) or request_texts)(header)
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
