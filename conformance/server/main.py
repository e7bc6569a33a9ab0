"""``embedding-conformance serve``: the frontend plus N local workers, until SIGTERM or SIGINT.

A server that cannot start says why in one line on stderr and exits 1: a model name it cannot
serve (before any worker starts), a worker whose model did not load, a worker that died while
starting. A signal stops it in every state, start-up included; a server whose every local
worker was given up after repeated crashes stops by itself, naming the last reason, and exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import sys
from typing import TYPE_CHECKING, Any

from conformance.runtime_dir import IPC, PrivateDirError, private_dir
from conformance.server.engines import ENGINES
from conformance.server.faults import FAULTS, parse_fault
from conformance.server.model_names import ModelNotServable, resolve_model
from conformance.server.restarts import FIRST_PAUSE, MAX_RESTARTS, RESTART_WINDOW

if TYPE_CHECKING:
    import uvicorn

    from conformance.server.pool import WorkerPool

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)

TRANSPORTS = ("base64", "shm", "auto")


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    faults = "; ".join(f"{f.name}: {f.mirrors}" for f in FAULTS.values())
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    parser.add_argument("--port", type=int, default=8000, help="HTTP port (0: pick a free one)")
    parser.add_argument(
        "--model",
        default=None,
        help="a name 'embedding-conformance models list' shows (the bundled all-MiniLM-L6-v2, "
        "the default; a variant, built on first use; a real model once 'models fetch' has "
        "fetched it) or a local sentence-transformers folder",
    )
    parser.add_argument(
        "--served-model-name",
        default=None,
        metavar="NAME",
        help="the model name the API answers to and lists (default: the model's own name), "
        "as vLLM's flag of that name: serving a model under an alias",
    )
    parser.add_argument(
        "--engine",
        default="sentence-transformers",
        choices=ENGINES,
        help="model runtime",
    )
    parser.add_argument(
        "--transport",
        default="auto",
        choices=TRANSPORTS,
        help="how workers hand the matrix over: base64 over the wire, POSIX "
        "shared memory, or auto (shm when a start-up probe proves both "
        "processes share /dev/shm)",
    )
    parser.add_argument("--workers", type=int, default=1, help="local worker processes")
    parser.add_argument(
        "--max-restarts",
        type=int,
        default=MAX_RESTARTS,
        metavar="N",
        help=f"restarts of a local worker that keeps dying, within {RESTART_WINDOW:.0f} s and "
        f"after pauses that double from {FIRST_PAUSE:g} s, before it is given up; once every "
        f"local worker is, the server stops and exits 1 (default {MAX_RESTARTS})",
    )
    parser.add_argument(
        "--worker-address",
        default=None,
        help="ZeroMQ address the frontend binds for workers (default: a local "
        "IPC socket; tcp://0.0.0.0:5555 lets remote workers join with "
        "'embedding-conformance worker --connect tcp://HOST:5555')",
    )
    parser.add_argument(
        "--api-key",
        default=os.environ.get("EMBEDDINGS_SERVER_API_KEY"),
        help="require 'Authorization: Bearer KEY' (env EMBEDDINGS_SERVER_API_KEY)",
    )
    parser.add_argument(
        "--shm-ttl",
        type=float,
        default=60.0,
        help="seconds after which workers reap unread shared-memory segments (default 60)",
    )
    parser.add_argument(
        "--fault",
        default=None,
        choices=sorted(FAULTS),
        metavar="NAME",
        help=f"plant a real-world bug: {faults}",
    )
    parser.add_argument(
        "--fault-routes",
        action="store_true",
        help="also serve, beside the correct /v1 routes, every fault that needs no process of "
        "its own under /faults/NAME/v1/... (GET /faults lists them): mutation testing with one "
        "server start",
    )
    parser.add_argument(
        "--max-model-len",
        type=int,
        default=None,
        metavar="N",
        help="a context of N tokens enforced the vLLM way: a longer input gets a 400 and "
        "/v1/models lists max_model_len N (default: the model's own context, with truncation)",
    )
    parser.add_argument(
        "--max-batch",
        type=int,
        default=None,
        metavar="N",
        help="at most N inputs in one request: more are refused with a 413, as "
        "text-embeddings-inference refuses more than 32 by default (default: no limit)",
    )
    parser.add_argument(
        "--lenient",
        action="store_true",
        help="validate like a lax (pydantic-style) single-model server, still answering right: "
        "JSON sent as text/plain is read, any model (a name, none, or not a string) is served, "
        "'32' or true for 'dimensions' and numeric strings among token ids are read as "
        "integers, 'dimensions' 0 and an unknown encoding_format as none (floats), and an "
        'input {"text": ...} as its text',
    )


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from conformance.server.frontend import FrontendConfig, build_app
    from conformance.server.pool import WorkerPool

    fault = parse_fault(args.fault)
    if fault and args.fault_routes:
        raise SystemExit(
            "serve: --fault-routes serves a correct server beside its faults; "
            "it cannot be combined with --fault"
        )
    if args.workers:  # remote workers name their model themselves
        try:
            resolve_model(args.model)
        except ModelNotServable as exc:
            return cannot_start(str(exc))
    listener = socket.create_server((args.host, args.port))
    # asyncio only sets TCP_NODELAY on sockets made with proto=IPPROTO_TCP, which
    # create_server does not pass; accepted sockets inherit it from the listener on Linux.
    # Without it, small responses wait ~40 ms for delayed ACKs.
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    host, port = listener.getsockname()[:2]
    address = args.worker_address or default_worker_address()
    pool = WorkerPool(
        address=address,
        workers=args.workers,
        engine=args.engine,
        model=args.model,
        fault=fault,
        transport=args.transport,
        shm_ttl=args.shm_ttl,
        max_restarts=args.max_restarts,
        on_broken=lambda reason: setattr(server, "should_exit", True),
    )
    config = FrontendConfig(
        args.api_key,
        fault,
        announce=f"LISTENING http://{host}:{port}",
        served_model_name=args.served_model_name,
        lenient=args.lenient,
        max_model_len=args.max_model_len,
        max_batch=args.max_batch,
        fault_routes=args.fault_routes,
    )
    app = build_app(pool, config)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=5))
    try:
        outcome = asyncio.run(run_server(pool, server, listener))
    finally:  # a stop that did not reach the pool's own clean-up
        pool.remove_files()
    if isinstance(outcome, signal.Signals):  # stopped while starting: end as signalled
        signal.signal(outcome, signal.SIG_DFL)
        signal.raise_signal(outcome)
        return 128 + outcome
    if pool.broken:
        return cannot_start(f"stopped: {pool.broken}")
    return 0 if outcome is None else cannot_start(outcome)


async def run_server(
    pool: WorkerPool, server: uvicorn.Server, listener: socket.socket
) -> str | signal.Signals | None:
    """Start the workers, then serve until stopped. A start that fails (its reason returned)
    or that a signal interrupts (the signal returned) leaves nothing running. Once serving,
    uvicorn handles the signals, and the app's shutdown stops the pool."""
    from conformance.server.pool import StartFailed
    from conformance.server.runtime import freeze_long_lived_objects

    loop = asyncio.get_running_loop()
    signalled: asyncio.Future[signal.Signals] = loop.create_future()
    for stop_signal in STOP_SIGNALS:
        loop.add_signal_handler(stop_signal, _settle, signalled, stop_signal)
    starting = asyncio.ensure_future(pool.start())
    either: list[asyncio.Future[Any]] = [starting, signalled]
    try:
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for stop_signal in STOP_SIGNALS:
            loop.remove_signal_handler(stop_signal)
    if starting.done() and starting.exception() is None and not signalled.done():
        freeze_long_lived_objects()
        await server.serve(sockets=[listener])
        return None
    starting.cancel()
    await asyncio.wait({starting})
    await pool.stop()
    if signalled.done():
        return signalled.result()
    failure = starting.exception()
    if isinstance(failure, (StartFailed, OSError)):  # a worker's reason; an address in use
        return str(failure)
    assert failure is not None
    raise failure  # a bug of ours: its traceback


def _settle(future: asyncio.Future[signal.Signals], stop_signal: signal.Signals) -> None:
    if not future.done():
        future.set_result(stop_signal)


def cannot_start(reason: str) -> int:
    """The reason in one line on stderr (ServerProcess reports the line that starts 'error:')."""
    print(f"error: {reason}", file=sys.stderr, flush=True)
    return 1


# sockaddr_un's sun_path holds 108 bytes, the terminating NUL included.
MAX_IPC_PATH = 107


def default_worker_address() -> str:
    """An IPC socket in the per-user private folder (see conformance.runtime_dir)."""
    try:
        path = private_dir() / f"ecf-{os.getpid()}.sock"
    except PrivateDirError as error:
        raise SystemExit(f"embedding-conformance serve: {error}") from error
    if len(os.fsencode(path)) > MAX_IPC_PATH:
        raise SystemExit(
            f"embedding-conformance serve: the worker socket path {path} is longer than "
            f"{MAX_IPC_PATH} bytes; set XDG_RUNTIME_DIR (or TMPDIR) to a shorter folder, or "
            "give --worker-address"
        )
    return f"{IPC}{path}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="embedding-conformance serve", description="The bundled reference embeddings server."
    )
    add_serve_arguments(parser)
    return serve(parser.parse_args(argv))
