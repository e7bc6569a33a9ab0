"""The bench's requests on Locust, every answer judged: load from one machine or a fleet.

Run it with Locust's own command (``embedding-conformance bench locustfile`` prints this
file's path)::

    locust -f "$(embedding-conformance bench locustfile)" --host http://127.0.0.1:8000 \\
        --headless -u 8 -r 8 --run-time 60s --ec-batch 1,15,64 --ec-out bench-results

Each request is one of the bench's (``--ec-batch`` inputs of ``--ec-tokens`` tokens, as
``--ec-encoding``), over a pool of distinct inputs so that concurrent requests never ask the
same thing (an answer given to the wrong request is then visible). Every answer is judged by
the bench's validator (count, dimension, finite values, norm, 1 - cosine to the reference);
a wrong one is a Locust failure that says why ("INVALID: dimension 30720, ..."), a right one
a success with its latency. Judging happens after Locust has timed the request.

Distributed as Locust is: the master (or the single process) resolves the reference once,
before the load starts, and hands it to each worker that asks when its test starts (one that
joins a running test too); workers need only the package with its ``locust`` extra (numpy, no
model). When the run ends the master writes ``bench.json`` rows (one
per batch size, mode ``concurrency`` with the user count as load) and the bench's plots into
``--ec-out``, next to whatever Locust writes (``--html``, ``--csv``). The exit code is Locust's:
non-zero when any answer was invalid.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gevent.event
import numpy as np
from locust import FastHttpUser, events, task
from locust.env import Environment
from locust.exception import StopUser
from locust.runners import MasterRunner, WorkerRunner

from conformance.bench import measure
from conformance.bench.locust_options import add_options
from conformance.bench.targets import Reply, decode_reply
from conformance.bench.validate import normalizes
from conformance.client import parse_endpoint

ASK_MESSAGE = "embedding-conformance:reference?"  # a worker whose test starts asks for it
REFERENCE_MESSAGE = "embedding-conformance:reference"
DONE_MESSAGE = "embedding-conformance:done"  # a worker sent its share of --ec-requests
POOL_FACTOR = 4  # the pool holds this many times the largest batch of distinct inputs
STRIDE = 7  # consecutive requests start this many inputs apart in the pool
REFERENCE_WAIT_S = 300.0  # a worker's users wait this long for the master's reference


class Run:
    """What this process knows of the run: the inputs, their reference, the request quota."""

    def __init__(self) -> None:
        self.ready = gevent.event.Event()
        self.inputs: list[str] = []
        self.reference: np.ndarray = np.zeros((0, 0))
        self.normalized = True
        self.quota: int | None = None  # requests this process may still send (None: no cap)
        self.answered: set[str] = set()  # the master: the workers it sent the reference to
        self.asked_master = False  # a worker: it asked for this test's reference
        self.sent = 0
        self.in_flight = 0  # requests taken from the quota whose answers are not yet counted
        self.spent = False  # the quota ran out (and whoever must hear of it was told)
        self.offsets = itertools.count()
        self.lock = threading.Lock()

    def load(self, inputs: list[str], reference: np.ndarray, normalized: bool) -> None:
        self.inputs, self.reference, self.normalized = inputs, reference, normalized
        self.ready.set()

    def window(self, size: int) -> tuple[list[str], np.ndarray]:
        """The next request's inputs, and their reference rows."""
        starts = len(self.inputs) - size + 1
        start = next(self.offsets) * STRIDE % starts
        return self.inputs[start : start + size], self.reference[start : start + size]

    def restart(self) -> None:
        """A new test in this process: the quota counts again."""
        with self.lock:
            self.sent, self.spent = 0, False

    def take(self) -> bool:
        """One more request within the quota?"""
        with self.lock:
            if self.quota is not None and self.sent >= self.quota:
                return False
            self.sent += 1
            self.in_flight += 1
            return True

    def answered_one(self) -> None:
        with self.lock:
            self.in_flight -= 1

    def settled(self) -> bool:
        """The quota is spent and every request taken from it is answered and counted: only
        then may the run end (ended sooner, the master's counts miss the requests in flight)."""
        with self.lock:
            return self.quota is not None and self.sent >= self.quota and self.in_flight == 0


RUN = Run()
log = logging.getLogger("embedding-conformance")


def _options(parser: Any) -> None:
    add_options(parser, is_secret=True)  # Locust's own parser masks the key in its web UI


def batches(options: Any) -> list[int]:
    return list(options.ec_batch)  # parsed by its option's type


def _init(environment: Environment, **_: Any) -> None:
    runner = environment.runner
    if isinstance(runner, WorkerRunner):
        _listen_for_reference(runner)
        return
    options = environment.parsed_options
    if options is None:  # a library use without Locust's command line: nothing to resolve
        return
    try:
        RUN.load(*resolve_reference(options))
    except ValueError as exc:  # nothing to judge answers by: no run (Locust would go on)
        raise SystemExit(f"embedding-conformance: {exc}") from None
    if options.ec_requests:
        RUN.quota = options.ec_requests
    if isinstance(runner, MasterRunner):
        runner.register_message(ASK_MESSAGE, _send_reference)
        done: set[str] = set()

        def worker_done(environment: Environment, msg: Any, **_: Any) -> None:
            done.add(msg.node_id)
            if len(done) >= runner.worker_count:  # every worker sent its share: the run is over
                gevent.spawn(runner.quit)

        runner.register_message(DONE_MESSAGE, worker_done)


def resolve_reference(options: Any) -> tuple[list[str], np.ndarray, bool]:
    """The pool of inputs, its reference vectors and whether the model normalizes them,
    computed once, before any load, as the local bench does."""
    from argparse import Namespace

    from conformance.bench.main import reference_spec, reference_vectors, texts

    inputs = texts(POOL_FACTOR * max(batches(options)), options.ec_tokens)
    spec = reference_spec(options.ec_reference, options.ec_model)
    endpoint_args = Namespace(model=options.ec_model, api_key=options.ec_api_key)
    reference = reference_vectors(spec, endpoint_args, inputs)
    return inputs, reference, normalizes(reference)


def _send_reference(environment: Environment, msg: Any, **_: Any) -> None:
    """The master answers a worker that asks (at its test's start, however late it joined):
    the reference, and the worker's share of the request cap."""
    runner, options = environment.runner, environment.parsed_options
    assert isinstance(runner, MasterRunner) and options is not None
    RUN.answered.add(msg.node_id)
    workers = max(runner.worker_count, options.expect_workers or 1)
    quota = math.ceil(options.ec_requests / workers) if options.ec_requests else None
    data = {
        "inputs": RUN.inputs,
        "reference": RUN.reference.tolist(),
        "normalized": RUN.normalized,
        "quota": quota,
    }
    runner.send_message(REFERENCE_MESSAGE, data, client_id=msg.node_id)
    log.info("reference sent to worker %s (its request cap: %s)", msg.node_id, quota or "none")


def _test_start(environment: Environment, **_: Any) -> None:
    """Every process restarts its quota; a worker (one that joins a running test too) asks the
    master for the reference."""
    RUN.restart()
    options = environment.parsed_options
    if options is not None and options.worker:
        RUN.ready.clear()
        RUN.asked_master = False
        _ask_for_reference(environment)


def _ask_for_reference(environment: Environment) -> None:
    """Once per test. A worker's first test can start while its runner is still being made
    (environment.runner None yet): then its users ask, once it is there."""
    runner = environment.runner
    if isinstance(runner, WorkerRunner) and not RUN.asked_master:
        RUN.asked_master = True
        _listen_for_reference(runner)
        runner.send_message(ASK_MESSAGE)
        log.info("asked the master for the reference")


def _listen_for_reference(runner: WorkerRunner) -> None:
    if REFERENCE_MESSAGE not in runner.custom_messages:
        runner.register_message(REFERENCE_MESSAGE, _receive_reference)


def _receive_reference(environment: Environment, msg: Any, **_: Any) -> None:
    log.info("reference received: %d inputs", len(msg.data["inputs"]))
    RUN.quota = msg.data["quota"]
    RUN.load(msg.data["inputs"], np.asarray(msg.data["reference"]), msg.data["normalized"])


class EmbeddingsUser(FastHttpUser):
    """One closed-loop client: the next request as soon as the last answer is in and judged."""

    def on_start(self) -> None:
        options = self.environment.parsed_options
        deadline = time.monotonic() + REFERENCE_WAIT_S
        while not RUN.ready.wait(timeout=0.5):
            _ask_for_reference(self.environment)
            if time.monotonic() > deadline:
                raise RuntimeError(f"no reference from the master within {REFERENCE_WAIT_S:g} s")
        self.sizes = itertools.cycle(batches(options))
        self.model, self.encoding = options.ec_model, options.ec_encoding
        if not self.host:
            raise RuntimeError("no endpoint: give --host URL")
        self.url = parse_endpoint(self.host).embeddings_url  # --host as the suite reads URLs
        self.headers = {"Content-Type": "application/json"}
        if options.ec_api_key:
            self.headers["Authorization"] = f"Bearer {options.ec_api_key}"

    @task
    def embed(self) -> None:
        if not RUN.take():
            if RUN.settled():
                _quota_spent(self.environment)
            raise StopUser()
        try:
            self._post()
        finally:
            RUN.answered_one()
        if RUN.settled():  # the last answer of the quota: this user tells whoever must hear
            _quota_spent(self.environment)

    def _post(self) -> None:
        size = next(self.sizes)
        batch, expected = RUN.window(size)
        body = json.dumps({"model": self.model, "input": batch, "encoding_format": self.encoding})
        with self.client.post(
            self.url,
            data=body,
            headers=self.headers,
            name=f"batch {size}",
            catch_response=True,
        ) as response:
            reply = Reply(response.status_code or 0, response.content or b"")
            vectors, why = decode_reply(reply)
            found = [why] if why else measure.judge_against(expected, RUN.normalized)(vectors)
            if found:
                response.failure("INVALID: " + "; ".join(found))
            else:
                response.success()


def _quota_spent(environment: Environment) -> None:
    """Once per process: a worker tells the master; a single process ends the run itself."""
    with RUN.lock:
        if RUN.spent:
            return
        RUN.spent = True
    runner = environment.runner
    if isinstance(runner, WorkerRunner):
        # This worker's last counts go first, on the same ordered channel: the master ends the
        # run on the last DONE and waits only half a second for reports after that.
        report: dict[str, Any] = {}
        fire = environment.events.report_to_master.fire
        fire(client_id=runner.client_id, data=report)  # type: ignore[no-untyped-call]
        runner.send_message("stats", report)
        runner.send_message(DONE_MESSAGE)
    elif runner is not None:
        gevent.spawn(runner.quit)


def _write_results(environment: Environment, **_: Any) -> None:
    """bench.json and the plots, from Locust's statistics (the master's, or the only process's)."""
    if isinstance(environment.runner, WorkerRunner) or environment.parsed_options is None:
        return
    options = environment.parsed_options
    rows = rows_of(environment, batches(options), options.num_users or 0)
    out = Path(options.ec_out)
    out.mkdir(parents=True, exist_ok=True)
    write_results(environment, options, rows, out)


def rows_of(environment: Environment, sizes: list[int], users: int) -> list[dict[str, Any]]:
    """One bench row per batch size: closed-loop load of ``users`` clients."""
    target = environment.host or "?"
    problems = first_problems(environment)
    rows = []
    for size in sizes:
        entry = environment.stats.entries.get((f"batch {size}", "POST"))
        requests = entry.num_requests if entry else 0
        invalid = entry.num_failures if entry else 0
        valid = requests > 0 and invalid == 0
        row: dict[str, Any] = {
            "target": target,
            "batch": size,
            "mode": "concurrency",
            "load": users,
            "requests": requests,
            "invalid": invalid,
            "status": "VALID" if valid else "INVALID",
            "problem": problems.get(size) or (None if requests else "no request was answered"),
            "bytes_per_answer": int(entry.avg_content_length) if entry else 0,
        }
        if valid and entry is not None:
            row |= {
                "p50_ms": float(entry.get_response_time_percentile(0.5)),
                "p90_ms": float(entry.get_response_time_percentile(0.9)),
                "p99_ms": float(entry.get_response_time_percentile(0.99)),
                "mean_ms": float(entry.avg_response_time),
                "inputs_per_s": float(entry.total_rps) * size,
            }
        else:
            row |= dict.fromkeys(("p50_ms", "p90_ms", "p99_ms", "mean_ms", "inputs_per_s"))
        rows.append(row)
    return rows


WRAPPED = re.compile(r"^\w+\((['\"])(.*)\1\)$", re.DOTALL)  # CatchResponseError('...')


def first_problems(environment: Environment) -> dict[int, str]:
    """Per batch size, the most frequent failure's message, without Locust's exception wrapper."""
    found: dict[int, tuple[int, str]] = {}
    for error in environment.stats.errors.values():
        size = int(str(error.name).removeprefix("batch "))
        text = str(error.error)
        if match := WRAPPED.match(text):
            text = match.group(2)
        if error.occurrences > found.get(size, (0, ""))[0]:
            found[size] = (error.occurrences, text)
    return {size: text for size, (_, text) in found.items()}


def write_results(
    environment: Environment, options: Any, rows: list[dict[str, Any]], out: Path
) -> None:
    from locust import __version__ as locust_version

    from conformance import __version__
    from conformance.bench import main, plots
    from conformance.bench.shared_options import MODEL
    from conformance.files import write_text_atomically

    workers = len(RUN.answered)
    results = {
        "format": main.FORMAT,
        "version": __version__,
        "tokens": options.ec_tokens,
        "rounds": 0,
        "warmup": 0,
        "reference": options.ec_reference or f"bundled {MODEL} (sentence-transformers)",
        "encoding": options.ec_encoding,
        "targets": [environment.host or "?"],
        "load_generator": {"tool": "locust", "version": locust_version, "workers": workers},
        "rows": rows,
    }
    write_text_atomically(out / "bench.json", json.dumps(results, indent=2) + "\n")
    title = (
        f"Locust ({workers or 'no'} workers, {options.num_users} users), "
        f"{options.ec_tokens}-token inputs, {options.ec_encoding}"
    )
    written = plots.latency_plot(rows, out, title) + plots.throughput_plot(rows, out, title)
    print(main.table(rows))
    print(f"wrote {out / 'bench.json'}, " + ", ".join(str(path) for path in written))


def _listen(hook: Any, listener: Callable[..., None]) -> None:
    hook.add_listener(listener)  # through Any: Locust's EventHook is untyped


_listen(events.init_command_line_parser, _options)
_listen(events.init, _init)
_listen(events.test_start, _test_start)
_listen(events.quitting, _write_results)
