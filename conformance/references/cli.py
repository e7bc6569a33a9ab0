"""``embedding-conformance golden record|verify``: make and check golden directories."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.api_key import api_key_from_environment
from conformance.client import EndpointError, parse_endpoint
from conformance.client.preflight import PreflightError, open_client
from conformance.references import reference_cases
from conformance.references.gguf_golden import record_gguf
from conformance.references.recording import (
    MANIFEST,
    GoldenError,
    Recording,
    check_writable,
    problems,
    save,
)
from conformance.references.sources import (
    RecordError,
    record_endpoint,
    record_sentence_transformers,
)

ST_PREFIX = "sentence-transformers:"
GGUF_PREFIX = "gguf:"


def add_golden_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="golden_command", metavar="ACTION", required=True)
    record = actions.add_parser(
        "record",
        help="record reference vectors for the reference corpus",
        description="Record reference vectors for every case of the packaged reference corpus "
        "into a golden directory (manifest.json + vectors.npy).",
    )
    source = record.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--from",
        dest="source",
        metavar="sentence-transformers:PATH|gguf:FILE",
        help="run a sentence-transformers model folder here; or a GGUF file's weights (as a "
        "llama.cpp server computes with them) in the folder of --base-model",
    )
    source.add_argument(
        "--from-endpoint",
        metavar="URL",
        help="ask a live OpenAI-compatible endpoint (e.g. the server before an upgrade); "
        "also records its response shape and error answers for --baseline",
    )
    record.add_argument(
        "--model",
        metavar="NAME",
        help="model name (endpoint: sent with each request, default "
        "the first from /v1/models; sentence-transformers: the name in the manifest)",
    )
    record.add_argument(
        "--api-key",
        metavar="KEY",
        help="bearer token for the endpoint (default: EMBEDDINGS_API_KEY, then OPENAI_API_KEY)",
    )
    record.add_argument(
        "--weights",
        metavar="DIR",
        help="model folder the endpoint serves: its weights' sha256, pooling and context "
        "length go into the manifest",
    )
    record.add_argument(
        "--base-model",
        metavar="DIR",
        help="with --from gguf:FILE: the sentence-transformers folder the GGUF was converted "
        "from (its tokenizer, config and pooling; its weights replaced by the GGUF's)",
    )
    record.add_argument(
        "--request-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="per request (default 60)",
    )
    record.add_argument("--out", required=True, metavar="DIR", help="golden directory to write")
    record.add_argument("--force", action="store_true", help="replace DIR if it exists")
    record.add_argument("--quiet", action="store_true", help="no progress bar")
    record.set_defaults(golden_handler=_record)
    verify = actions.add_parser(
        "verify",
        help="check golden directories against their manifests",
        description="Check every golden directory under DIR (hashes, shapes, row count).",
    )
    verify.add_argument("directories", nargs="+", metavar="DIR")
    verify.set_defaults(golden_handler=_verify)


def _record(args: argparse.Namespace) -> int:
    cases = reference_cases()
    check_writable(Path(args.out), overwrite=args.force)
    if (args.base_model is not None) != (args.source or "").startswith(GGUF_PREFIX):
        raise RecordError("--base-model goes with --from gguf:FILE, and --from gguf:FILE with it")
    if args.source is not None and args.source.startswith(GGUF_PREFIX):
        recording = record_gguf(
            args.source.removeprefix(GGUF_PREFIX),
            args.base_model,
            cases,
            scratch_beside=Path(args.out),
            name=args.model,
            progress=not args.quiet,
        )
    elif args.source is not None:
        if not args.source.startswith(ST_PREFIX):
            raise RecordError(
                f"--from {args.source!r}: expected sentence-transformers:PATH or gguf:FILE"
            )
        folder = args.source.removeprefix(ST_PREFIX)
        recording = record_sentence_transformers(
            folder, cases, name=args.model, progress=not args.quiet
        )
    else:
        api_key = args.api_key or api_key_from_environment()
        try:
            endpoint = parse_endpoint(args.from_endpoint)
            client = open_client(endpoint, args.model, api_key, args.request_timeout)
        except PreflightError as exc:
            raise RecordError(str(exc)) from None
        recording = record_endpoint(client, cases, model_dir=args.weights, progress=not args.quiet)
    save(recording, Path(args.out), overwrite=args.force)
    _print_summary(recording, args.out)
    return 0


def _print_summary(recording: Recording, out: str) -> None:
    m = recording.manifest
    print(
        f"recorded {len(m['case_ids'])} of {m['corpus']['cases']} cases "
        f"({len(m['rejected'])} rejected by the source), dimension {recording.dimension}, "
        f"normalized {m['normalized']}, from {recording.source} -> {out}"
    )
    if "gguf" in m:
        types = ", ".join(f"{n} {kind}" for kind, n in m["gguf"]["tensor_types"].items())
        derived = m["derived_from"]["golden"] or "no bundled golden (another model)"
        print(f"weights: {m['gguf']['file']} ({types}); the fp32 golden of its model: {derived}")


def _verify(args: argparse.Namespace) -> int:
    found: list[str] = []
    checked = 0
    for directory in args.directories:
        manifests = sorted(Path(directory).rglob(MANIFEST))
        if not manifests:
            found.append(f"{directory}: no {MANIFEST} in it")
        for manifest in manifests:
            checked += 1
            found += problems(manifest.parent)
    for problem in found:
        print(problem, file=sys.stderr)
    print(
        f"{checked} golden director{'y' if checked == 1 else 'ies'} checked, "
        f"{len(found)} problem{'' if len(found) == 1 else 's'}"
    )
    return 1 if found else 0


def run_golden(args: argparse.Namespace) -> int:
    try:
        return int(args.golden_handler(args))
    except (RecordError, GoldenError, EndpointError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
