"""The frontend's side of the request plane: starts workers, spreads requests, survives deaths.

One ZeroMQ ROUTER socket (IPC on one node, TCP across nodes) talks to every worker. Requests
go to the ready worker with the fewest in flight. A local worker that dies fails its in-flight
requests (the frontend answers 503) and is restarted, at once the first time and then after a
doubling pause; one that died ``max_restarts`` times within RESTART_WINDOW is given up, and once
every local worker is, the pool is broken (``on_broken``): the server stops, naming the reason.
During start-up there is no restart: a local worker that dies (one whose model did not load
says why) fails the start. A remote worker whose heartbeat stops fails its requests the same
way and is forgotten until it speaks again. Answers nobody waits for any more have their
shared-memory segment unlinked on arrival.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing import shared_memory
from typing import Any

import zmq
import zmq.asyncio

from conformance.runtime_dir import IPC, ipc_path
from conformance.server import transports
from conformance.server.api import ModelInfo
from conformance.server.faults import FaultName
from conformance.server.restarts import (
    MAX_RESTARTS,
    RESTART_WINDOW,
    START_FAILED,
    next_restart,
    within_window,
)
from conformance.server.runtime import worker_environment

START_TIMEOUT = 600.0  # a cold vLLM start compiles for minutes
SHM_TTL = 60.0
SILENCE_LIMIT = 5.0  # a remote worker beats every second; after this long silent, it is lost
STOP_GRACE = 10.0  # seconds the workers have to exit on SIGTERM before their groups are killed
FAILED_REASON_WAIT = 1.0  # a worker's last words may arrive just after we saw it exit


class WorkerGone(Exception):
    """The worker holding a request was lost before answering, or there is no worker."""


class StartFailed(Exception):
    """No worker became ready: the one-line reason (a model that did not load, a crash)."""


@dataclass
class WorkerState:
    identity: bytes
    process: subprocess.Popen[bytes] | None  # None for a remote worker
    slot: int
    ready: bool = False
    shm: bool = False
    pending: set[str] = field(default_factory=set)
    last_heard: float = field(default_factory=time.monotonic)
    failed: str | None = None  # why its model did not load, as it told us before exiting
    exited: float | None = None  # when we first saw its process gone


@dataclass(frozen=True)
class WorkerReply:
    header: dict[str, Any]
    frames: list[bytes]


class WorkerPool:
    def __init__(
        self,
        *,
        address: str,
        workers: int,
        engine: str,
        model: str | None,
        fault: FaultName | None,
        transport: str,
        shm_ttl: float = SHM_TTL,
        max_restarts: int = MAX_RESTARTS,
        on_broken: Callable[[str], None] = lambda reason: None,
    ) -> None:
        self.address, self.count = address, workers
        self.max_restarts, self.on_broken = max_restarts, on_broken
        self.engine, self.model, self.fault, self.transport = engine, model, fault, transport
        self.prefix = transports.new_prefix()
        self.shm_ttl = shm_ttl
        self.model_info: ModelInfo | None = None
        # per fault a worker plants per request (its ready message lists them), the model facts
        self.fault_facts: dict[FaultName, dict[str, int]] = {}
        self.workers: dict[bytes, WorkerState] = {}
        self._futures: dict[str, asyncio.Future[WorkerReply]] = {}
        self._ids = itertools.count()
        self._generation = itertools.count()
        self._probe: shared_memory.SharedMemory | None = None
        self._probe_lock: int | None = None  # held while we live: see transports.make_probe
        self._nonce = secrets.token_hex(transports.NONCE_BYTES // 2)  # as many hex digits
        self._socket = zmq.asyncio.Context.instance().socket(zmq.ROUTER)
        self._tasks: list[asyncio.Task[None]] = []
        self._ready = asyncio.Event()
        self.started = False  # start() returned: a local worker that dies is restarted
        self._start_failure: asyncio.Future[str] | None = None
        self.broken: str | None = None  # every local worker given up: why
        self._restarts: dict[int, list[float]] = {}  # slot -> when its recent restarts were due
        self._restart_due: dict[int, float] = {}  # slot -> when it is started again
        self._given_up: set[int] = set()
        self._bound = False  # our socket file exists (an ipc address was bound)
        # The local workers' temp folder (TMPDIR): what their libraries leave there (vLLM's IPC
        # sockets, torch's compile folders) goes when we stop, or when they see us gone.
        self.scratch: str | None = None

    async def start(self) -> None:
        """Bind, start the local workers and wait for one to be ready; StartFailed if none can
        be (the first local worker that dies fails the start) or none is within START_TIMEOUT."""
        self._socket.setsockopt(zmq.LINGER, 0)
        self._socket.setsockopt(zmq.ROUTER_HANDOVER, 1)  # a worker back under its name takes it
        if (path := ipc_path(self.address)) is not None:
            clear_stale_socket(path)
        self._socket.bind(self.address)
        self._bound = True
        if self.transport != "base64":
            for name in transports.sweep_abandoned():
                print(f"removed {name} and its segments: left by a killed server", file=sys.stderr)
            self._probe, self._probe_lock = transports.make_probe(self.prefix, self._nonce)
        self._start_failure = asyncio.get_running_loop().create_future()
        self._tasks = [asyncio.create_task(self._receive()), asyncio.create_task(self._watch())]
        if self.count:
            self.scratch = tempfile.mkdtemp(prefix="ecf-workers-")
        for slot in range(self.count):
            self._spawn(slot)
        ready = asyncio.ensure_future(self._ready.wait())
        either: list[asyncio.Future[Any]] = [ready, self._start_failure]
        try:
            await asyncio.wait(either, timeout=START_TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
        if self._start_failure.done():
            raise StartFailed(self._start_failure.result())
        if not self._ready.is_set():
            raise StartFailed(f"no worker was ready within {START_TIMEOUT:.0f} s")
        self.started = True

    def _spawn(self, slot: int) -> None:
        identity = f"w{slot}-{next(self._generation)}".encode()
        command = [
            sys.executable,
            "-m",
            "conformance.server.worker",
            "--connect",
            self.address,
            "--identity",
            identity.decode(),
            "--engine",
            self.engine,
            # Outlive us by seconds at most, however we end (SIGKILL included): see the worker.
            "--parent",
            str(os.getpid()),
            *(("--scratch", self.scratch) if self.scratch else ()),
        ]
        # Share the cores: N workers each running torch on every core thrash each other. One
        # worker keeps the runtime's own thread set-up, the same as an in-process model's.
        if self.count > 1:
            command += ["--threads", str(max(1, (os.cpu_count() or 1) // self.count))]
        command += ["--model", self.model] if self.model else []
        command += ["--fault", self.fault] if self.fault else []
        # Its own process group: vLLM's engine processes under it die with it (killpg).
        env = worker_environment()
        if self.scratch:
            env["TMPDIR"] = self.scratch
        process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, start_new_session=True, env=env
        )
        self.workers[identity] = WorkerState(identity, process, slot)

    async def request(self, header: dict[str, Any]) -> WorkerReply:
        """Send to the least busy ready worker and wait for its answer."""
        worker = await self._least_busy()
        request_id = str(next(self._ids))
        transport = "shm" if worker.shm and self.transport != "base64" else "base64"
        future: asyncio.Future[WorkerReply] = asyncio.get_running_loop().create_future()
        self._futures[request_id] = future
        worker.pending.add(request_id)
        message = {**header, "id": request_id, "transport": transport}
        await self._socket.send_multipart([worker.identity, json.dumps(message).encode()])
        try:
            return await future
        finally:
            worker.pending.discard(request_id)
            self._futures.pop(request_id, None)

    async def _least_busy(self) -> WorkerState:
        """A ready worker with the fewest requests in flight (waits while all restart)."""
        while True:
            if self.broken:
                raise WorkerGone(self.broken)
            if not self.workers and not self._restart_due:  # nobody is on the way
                raise WorkerGone("no worker is connected")
            await asyncio.wait_for(self._ready.wait(), START_TIMEOUT)
            ready = [w for w in self.workers.values() if w.ready]
            if ready:
                return min(ready, key=lambda w: len(w.pending))
            self._ready.clear()

    async def _receive(self) -> None:
        while True:
            identity, raw, *frames = await self._socket.recv_multipart()
            header = json.loads(raw)
            if header["op"] == "alive":  # from the worker's heartbeat socket: it names itself
                await self._heard(header["worker"].encode())
            elif header["op"] == "ready":
                await self._configure(identity, header)
            elif header["op"] == "configured":
                self._mark_ready(identity, header)
            elif header["op"] == "failed":
                self._heard_failure(identity, str(header.get("reason")))
            else:
                self._deliver(WorkerReply(header, frames))

    async def _heard(self, identity: bytes) -> None:
        worker = self.workers.get(identity)
        if worker is not None:
            worker.last_heard = time.monotonic()
        else:  # one we gave up on, or that served our predecessor: it must introduce itself
            await self._socket.send_multipart([identity, b'{"op": "hello"}'])

    async def _configure(self, identity: bytes, header: dict[str, Any]) -> None:
        known = self.workers.get(identity)
        if known is not None and known.process is None:  # a remote worker that started over
            self._lose(known, f"worker {identity.decode()} restarted")
        if identity not in self.workers:  # a remote worker joining over TCP
            self.workers[identity] = WorkerState(identity, None, -1)
        self.model_info = ModelInfo(
            header["model"], header["dimension"], header["vocab_size"], header["max_tokens"]
        )
        self.fault_facts = header.get("faults", {})
        probe = {"name": self._probe.name, "nonce": self._nonce} if self._probe else None
        config = {"op": "config", "prefix": self.prefix, "probe": probe, "ttl": self.shm_ttl}
        await self._socket.send_multipart([identity, json.dumps(config).encode()])

    def _mark_ready(self, identity: bytes, header: dict[str, Any]) -> None:
        worker = self.workers[identity]
        worker.ready, worker.shm = True, bool(header["shm"])
        if self.transport == "shm" and not worker.shm:
            print(
                f"worker {identity.decode()} does not share /dev/shm: using base64", file=sys.stderr
            )
        self._ready.set()

    def _heard_failure(self, identity: bytes, reason: str) -> None:
        worker = self.workers.get(identity)
        if worker is not None:  # a local one: _watch sees it exit, and acts
            worker.failed = reason
        else:
            print(f"worker {identity.decode()} did not load its model: {reason}", file=sys.stderr)

    def _deliver(self, reply: WorkerReply) -> None:
        future = self._futures.get(reply.header.get("id", ""))
        if future is None or future.done():  # nobody waits: free what the answer holds
            discard(reply, self.prefix)
            return
        future.set_result(reply)

    async def _watch(self) -> None:
        """Notice lost workers: a local one that died is replaced (or fails the start, or is
        given up), a silent remote one dropped."""
        while True:
            await asyncio.sleep(0.2)
            now = time.monotonic()
            for identity, worker in list(self.workers.items()):
                name = identity.decode()
                if worker.process is None:
                    if now - worker.last_heard > SILENCE_LIMIT:
                        self._lose(worker, f"worker {name} fell silent (no heartbeat)")
                elif (code := worker.process.poll()) is not None:
                    worker.exited = worker.exited or now
                    awaited = code == START_FAILED and not worker.failed
                    if awaited and now - worker.exited < FAILED_REASON_WAIT:
                        continue  # its reason is on the way
                    kill_group(worker.process)  # orphans (vLLM's engine) must not outlive it
                    self._lose(worker, f"worker {name} died")
                    self._died(worker.slot, f"worker {name} {how_it_ended(worker, code)}")
            for slot, due in list(self._restart_due.items()):
                if now >= due:
                    del self._restart_due[slot]
                    self._spawn(slot)

    def _died(self, slot: int, reason: str) -> None:
        """A local worker is gone: fail the start, restart it (after a pause that doubles with
        each recent restart) or give it up."""
        if not self.started:
            if self._start_failure is not None and not self._start_failure.done():
                self._start_failure.set_result(reason)
            return
        now = time.monotonic()
        recent = within_window(self._restarts.get(slot, []), now)
        pause = next_restart(recent, self.max_restarts)
        if pause is None:
            times = f"{len(recent)} restart" + ("" if len(recent) == 1 else "s")
            self._give_up(slot, f"{reason}; given up after {times} within {RESTART_WINDOW:.0f} s")
            return
        self._restarts[slot] = [*recent, now + pause]
        self._restart_due[slot] = now + pause
        print(f"{reason}; restarting it" + (f" in {pause:g} s" if pause else ""), file=sys.stderr)

    def _give_up(self, slot: int, reason: str) -> None:
        print(reason, file=sys.stderr, flush=True)
        self._given_up.add(slot)
        if len(self._given_up) == self.count:  # nothing left to serve with
            self.broken = reason
            self._ready.set()  # wake the requests waiting for a worker: they get the reason
            self.on_broken(reason)

    def _lose(self, worker: WorkerState, reason: str) -> None:
        """Forget a worker and fail the requests it held."""
        del self.workers[worker.identity]
        for request_id in worker.pending:
            future = self._futures.get(request_id)
            if future is not None and not future.done():
                future.set_exception(WorkerGone(f"{reason} while serving this request"))
        if not any(w.ready for w in self.workers.values()):
            self._ready.clear()

    async def stop(self) -> None:
        """Stop the workers (SIGTERM, then their process groups are killed after STOP_GRACE)
        and remove everything of ours: segments, the probe, the socket file, the temp folder.
        Safe in any state, a start that failed or never finished included."""
        for task in self._tasks:
            task.cancel()
        local = [w.process for w in self.workers.values() if w.process is not None]
        for process in local:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
        deadline = time.monotonic() + STOP_GRACE
        for process in local:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            kill_group(process)
        if self._probe is not None:
            self._probe.close()
            with contextlib.suppress(FileNotFoundError):
                self._probe.unlink()
            self._probe = None
        if self._probe_lock is not None:
            os.close(self._probe_lock)
            self._probe_lock = None
        transports.sweep(self.prefix)  # the frontend owns cleanup: nothing may outlive us
        self._socket.close()
        self.remove_files()

    def remove_files(self) -> None:
        """Our socket file (ZeroMQ leaves the file of a bound ipc address) and the workers'
        temp folder, once they are ours."""
        if self._bound and (path := ipc_path(self.address)) is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            self._bound = False
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None


def clear_stale_socket(path: str) -> None:
    """Make way for binding ``path``: a socket file nobody listens on (a frontend that was
    killed) is removed; a live one or another kind of file is refused, where ZeroMQ would
    silently take its place."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise OSError(f"worker address {IPC}{path}: the path exists and is not a socket")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(path)
        except (ConnectionRefusedError, FileNotFoundError):
            live = False
        else:
            live = True
    if live:
        raise OSError(f"worker address {IPC}{path}: another server is listening on it")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def how_it_ended(worker: WorkerState, code: int) -> str:
    if worker.failed:
        return f"did not load its model: {worker.failed}"
    if code < 0:
        return f"was killed by {signal.Signals(-code).name}"
    return f"exited with code {code}"


def kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)


def discard(reply: WorkerReply, prefix: str) -> None:
    handle = reply.header.get("shm")
    if isinstance(handle, dict):
        with contextlib.suppress(transports.TransportError):
            transports.discard_segment(transports.validate_handle(handle, prefix).name)
