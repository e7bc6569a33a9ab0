"""The precision tiers, measured (issue 38): how far a correct server's vectors and rankings move
from the reference when it serves the model's weights at lower precision.

Each model is served by llama.cpp's server (llama-cpp-python, the matrix's environment and peer
definitions) from GGUF files made by llama.cpp's own converter and quantizer: all-MiniLM-L6-v2
at f32, f16, bf16, q8_0 and q4_K_M, and nomic-embed-text-v1.5 from its authors' f16 GGUF at f16,
bf16, q8_0 and q4_K_M. The whole reference corpus is embedded in batches (as a golden is
recorded) and each input alone, and compared with the model's bundled sentence-transformers
golden:

- agreement: 1 - cosine, max |Δ| and |‖v‖ - 1| per input (the inputs reference.agreement
  judges; the inputs past MiniLM's context are listed apart: truncation, not precision);
- batch noise: max |Δ| between an input's vector alone and in a batch (the limit for answers
  that must be the same vector: batch, order, determinism, base64 parity);
- retrieval: the corpus's retrieval queries against its documents (and, for more pairs, against
  every compared input): the largest change of a query-document score, and how top-3 sets move.

A tier's limits are its measured maxima (over both models) times MARGIN, rounded up to 1, 2 or
5 x 10^k. fp32 is not derived here (its limits rest on bare vLLM against sentence-transformers:
tolerances.py); its measurement must fit inside them, and so must fp16's and bf16's, which are
kept unless the measurement says they are too tight.

    python scripts/measure_tiers.py              # measure, write docs/tiers/
    python scripts/measure_tiers.py --check      # measure, exit 1 unless it reproduces TIERS
    python scripts/measure_tiers.py --kernel     # the quantized servers against their own
                                                 # weights (issue 57): docs/tiers/kernel.*

--kernel judges each quantized MiniLM server against the golden of the very weights it serves
(`golden record --from gguf:FILE`: its GGUF dequantized, recorded in fp32): what is left is its
kernels' arithmetic, the limit a kernel tier needs. The same for nomic-embed-text-v1.5's q8_0
and q4_K_M files (made from its authors' f16 GGUF by llama.cpp's quantizer).

Needs the matrix's llama-cpp-python environment (installed when missing: a source build of
minutes) and nomic-embed-text-v1.5's GGUF (`embedding-conformance models fetch
nomic-embed-text-v1.5-gguf`). Nothing is left behind but the files under docs/tiers.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import requests
from tqdm import tqdm

from conformance.checks.agreement import cosine_distances, cosine_scores, top_k
from conformance.client import parse_endpoint
from conformance.client.preflight import open_client
from conformance.corpus import Case
from conformance.matrix import build, environments, peers
from conformance.models.fetch import fetched
from conformance.models.pinned import NOMIC as NOMIC_FOLDER
from conformance.references import bundled_golden, load_golden, reference_cases
from conformance.references.gguf_golden import record_gguf
from conformance.references.recording import Recording
from conformance.references.sources import record_endpoint
from conformance.suite.reference_corpus import compared_cases
from conformance.tolerances import KERNEL, MODEL_TIERS, TIERS

MARGIN = 2.0
OUT = Path(__file__).resolve().parents[1] / "docs" / "tiers"
DERIVED = ("q8_0", "q4_k_m")  # tiers whose limits this measurement sets
CONFIRMED = ("fp32", "fp16", "bf16")  # tiers whose limits it must fit inside (but the tie)
MINILM, NOMIC = "all-MiniLM-L6-v2", "nomic-embed-text-v1.5"


@dataclass(frozen=True)
class Served:
    """One model at one precision: the matrix peer that serves it, and, when the file is made
    here, the file it is made from (in the peer's environment or model folder) and the kind."""

    model: str
    tier: str
    peer: str
    source: str = ""  # a GGUF file name, made into `kind` in a scratch folder
    kind: str = ""
    # shown, not used for the tier's limits: llama.cpp's f32 file computes its GELU from an
    # fp16 table (triage.toml), so it is not an fp32 computation
    informative: bool = False


SERVED = (
    Served(MINILM, "fp32", "llama-cpp-python-f32", informative=True),
    Served(MINILM, "fp16", "llama-cpp-python-f16"),
    Served(MINILM, "bf16", "llama-cpp-python-f32", "all-MiniLM-L6-v2-f32.gguf", "bf16"),
    Served(MINILM, "q8_0", "llama-cpp-python-q8-0"),
    Served(MINILM, "q4_k_m", "llama-cpp-python-q4-k-m"),
    Served(NOMIC, "fp16", "llama-cpp-python-nomic"),
    Served(NOMIC, "bf16", "llama-cpp-python-nomic", "nomic-embed-text-v1.5.f16.gguf", "bf16"),
    Served(NOMIC, "q8_0", "llama-cpp-python-nomic", "nomic-embed-text-v1.5.f16.gguf", "q8_0"),
    Served(NOMIC, "q4_k_m", "llama-cpp-python-nomic", "nomic-embed-text-v1.5.f16.gguf", "q4_k_m"),
)


def nice_ceil(value: float) -> float:
    """The smallest of 1, 2, 5 x 10^k at or above ``value``."""
    if value <= 0:
        return 0.0
    exponent = math.floor(math.log10(value))
    for step in (1, 2, 5, 10):
        candidate = float(f"{step}e{exponent}")
        if candidate >= value * (1 - 1e-12):
            return candidate
    raise AssertionError(value)


def spread(values: np.ndarray, ids: Sequence[str]) -> dict[str, Any]:
    """Median, p90, p99 and max of a per-input measure, with the input at the max."""
    worst = int(np.argmax(values))
    quantiles = np.quantile(values, [0.5, 0.9, 0.99])
    return {
        "p50": float(quantiles[0]),
        "p90": float(quantiles[1]),
        "p99": float(quantiles[2]),
        "max": float(values[worst]),
        "worst": ids[worst],
    }


def unit(matrix: np.ndarray) -> np.ndarray:
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def agreement(served: Recording, golden: Recording, ids: Sequence[str]) -> dict[str, Any]:
    actual, expected = served.matrix(ids), golden.matrix(ids)
    return {
        "inputs": len(ids),
        "one_minus_cosine": spread(cosine_distances(actual, expected), ids),
        "max_abs_diff": spread(np.abs(actual - expected).max(axis=1), ids),
    }


def ranking(
    served: Recording, golden: Recording, queries: Sequence[str], documents: Sequence[str], k: int
) -> dict[str, Any]:
    """How the queries' rankings of the documents move: the largest score change, the top-k
    sets' overlap, Spearman's rank correlation per query, and each swap across the top-k
    boundary with the reference's score gap between the two documents."""
    # the scores and top-k sets reference.retrieval judges by (checks/agreement.py)
    mine = cosine_scores(served.matrix(queries), served.matrix(documents))
    theirs = cosine_scores(golden.matrix(queries), golden.matrix(documents))
    tops_mine = top_k(served.matrix(queries), served.matrix(documents), k)
    tops_theirs = top_k(golden.matrix(queries), golden.matrix(documents), k)
    overlaps, correlations, swaps = [], [], []
    for row, query in enumerate(queries):
        top_mine, top_theirs = set(tops_mine[row]), set(tops_theirs[row])
        kth = theirs[row][tops_theirs[row][-1]]
        overlaps.append(len(top_mine & top_theirs) / k)
        correlations.append(spearman(mine[row], theirs[row]))
        for entered in sorted(top_mine - top_theirs):
            swaps.append({"query": query, "document": documents[entered],
                          "reference_gap": float(kth - theirs[row][entered])})  # fmt: skip
    return {
        "queries": len(queries),
        "documents": len(documents),
        "max_score_change": float(np.abs(mine - theirs).max()),
        "top_k": k,
        "mean_top_k_overlap": float(np.mean(overlaps)),
        "min_spearman": float(np.min(correlations)),
        "swaps": swaps,
        "largest_swap_gap": max((s["reference_gap"] for s in swaps), default=0.0),
    }


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    ranks_a, ranks_b = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ranks_a, ranks_b)[0, 1])


def alone(client: Any, cases: Sequence[Case]) -> np.ndarray:
    """Each input embedded by itself: batch noise is its distance from the batched vector."""
    rows = []
    for case in tqdm(cases, desc="  each input alone", unit="case", leave=False):
        exchange = client.embed(case.text, encoding_format="float")
        assert exchange.ok and exchange.batch is not None, exchange.describe()
        rows.append(exchange.batch.items[0].vector)
    return np.stack(rows)


def tokenized_otherwise(url: str, golden: Recording, cases: Sequence[Case]) -> list[str]:
    """The inputs llama.cpp's tokenizer splits otherwise than the model's (its WordPiece
    normalizer on Hangul, Devanagari marks, very long words: triage.toml): wrong at every
    precision, so measured apart from the rest."""
    with requests.Session() as session:
        return [
            case.id
            for case in cases
            if session.post(f"{url}/extras/tokenize", json={"input": case.text}, timeout=60).json()[
                "tokens"
            ]
            != golden.token_ids(case.id)
        ]


def retrieval_set(cases: Sequence[Case]) -> tuple[list[str], list[str]]:
    """The corpus's retrieval queries and documents among ``cases``."""
    queries = [c.id for c in cases if "retrieval-query" in c.tags]
    return queries, [c.id for c in cases if "retrieval-doc" in c.tags]


def record_served(served: Served, url: str) -> Recording:
    """The corpus as the server embeds it, in batches (as a golden is recorded)."""
    client = open_client(parse_endpoint(url), served.model, None, 600.0)
    recording = record_endpoint(client, reference_cases(), behaviour=False, progress=True)
    # llama.cpp's server does not normalize (triage.toml): directions are compared, as the
    # suite compares a server that does not normalize, and norms are normalization's to judge
    return dataclasses.replace(recording, vectors=unit(recording.vectors))


def measure_one(
    served: Served, url: str, golden: Recording, recording: Recording | None = None
) -> dict[str, Any]:
    """``served``'s answers (``recording``, or recorded now) measured against ``golden``."""
    client = open_client(parse_endpoint(url), served.model, None, 600.0)
    cases = reference_cases()
    recording = recording or record_served(served, url)
    within = [c for c in compared_cases(golden) if c.id in recording.rows]
    otherwise = tokenized_otherwise(url, golden, within)
    inside = [c for c in within if c.id not in otherwise]
    ids = [c.id for c in inside]
    beyond = [c.id for c in cases if "over-context" in c.tags and c.id in recording.rows]
    batch_noise = np.abs(unit(alone(client, inside)) - recording.matrix(ids)).max(axis=1)
    queries, documents = retrieval_set(inside)
    pool = [i for i in ids if i not in queries]
    return {
        "model": served.model,
        "tier": served.tier,
        "served_by": served.peer + (f" ({served.kind} of {served.source})" if served.kind else ""),
        "informative": served.informative,
        "agreement": agreement(recording, golden, ids),
        "tokenized_otherwise": agreement(recording, golden, otherwise) if otherwise else None,
        "past_context": agreement(recording, golden, [i for i in beyond if i in golden.rows])
        if beyond
        else None,
        "batch_noise": spread(batch_noise, ids),
        "retrieval": ranking(recording, golden, queries, documents, 3),
        "retrieval_whole_corpus": ranking(recording, golden, queries, pool, 3),
    }


@contextmanager
def serving(served: Served, scratch: Path, gguf: Path | None = None) -> Iterator[str]:
    """The peer serving ``served``, its GGUF made first when this measurement makes it (or
    ``gguf``, made already)."""
    catalogue = peers.load()
    peer = catalogue.peer(served.peer)
    root = environments.cache_root()
    model = build.model_folder(root)
    if served.kind:
        peer = with_model_file(peer, gguf or made(served, peer, catalogue, root, model, scratch))
    outcome = build.Outcome(peer.name, peer.title, peer.homepage, peer.about, peer.package)
    with build.serving_peer(catalogue, peer, root, model, lambda _: None, outcome) as (values, _):
        yield peers.expand(peer.endpoint, values)


def made(
    served: Served, peer: peers.Peer, catalogue: Any, root: Path, model: Path, scratch: Path
) -> Path:
    """The GGUF ``served`` names, made by llama.cpp's quantizer in the peer's environment."""
    environment = catalogue.environments[peer.environments[-1]]
    python = environments.ensure(environment, root, model, scratch / "log")
    if peer.weights:
        folder = build.served_folder(peer, root, model, lambda _: None)
        source = folder / served.source
    else:
        source = root / environment.name / served.source
    out = scratch / f"{served.model}-{served.kind}.gguf"
    subprocess.run(
        [str(python), peers.tool_paths()["quantize"], str(source), str(out), served.kind],
        check=True,
        capture_output=True,
    )
    return out


def with_model_file(peer: peers.Peer, gguf: Path) -> peers.Peer:
    """The peer serving ``gguf`` in place of the file its --model names."""
    process = peer.processes[-1]
    argv = list(process.argv)
    argv[argv.index("--model") + 1] = str(gguf)
    processes = (*peer.processes[:-1], dataclasses.replace(process, argv=tuple(argv)))
    return dataclasses.replace(peer, processes=processes)


def model_file(peer: peers.Peer, envdir: Path) -> Path:
    """The file the peer's --model names (one in its environment, made when it was installed)."""
    argv = peer.processes[-1].argv
    return Path(peers.expand(argv[argv.index("--model") + 1], {"envdir": str(envdir)}))


def fp32_from_goldens(model: str) -> dict[str, Any]:
    """fp32 as the bundled goldens measure it: bare vLLM's vectors against sentence-transformers'
    (both fp32 computations; no batch noise is measured from a recording)."""
    golden = load_golden(bundled_golden(model) or "")
    vllm = load_golden(bundled_golden(f"{model}/vllm") or "")
    inside = [c for c in compared_cases(golden) if c.id in vllm.rows]
    ids = [c.id for c in inside]
    queries, documents = retrieval_set(inside)
    return {
        "model": model,
        "tier": "fp32",
        "served_by": f"bare vLLM {vllm.manifest.get('server', '')} (golden {model}/vllm)",
        "agreement": agreement(vllm, golden, ids),
        "retrieval": ranking(vllm, golden, queries, documents, 3),
        "retrieval_whole_corpus": ranking(vllm, golden, queries, ids, 3),
    }


# Fields the measurement cannot set: llama.cpp's server does not normalize, and a server that
# does (llama-server, Ollama) normalizes the pooled vector in f32 whatever its weights, so a
# quantized tier keeps the fp32 tier's bar for the norm; batch noise and base64 parity are owed
# at least the fp32 tier's limit (a server with none here may have some elsewhere).
FLOORS = {k: dataclasses.asdict(TIERS["fp32"])[k] for k in ("vector_atol", "base64_atol")}


# measured field -> the Tolerances fields it sets
FIELDS = {
    ("batch_noise", "max"): ("vector_atol", "base64_atol"),
    ("agreement", "max_abs_diff", "max"): ("reference_atol",),
    ("agreement", "one_minus_cosine", "max"): ("cosine_atol",),
    ("agreement", "one_minus_cosine", "p50"): ("cosine_median_atol",),
    ("retrieval", "max_score_change"): ("retrieval_tie",),
}

# No limit may accept a vector at right angles to the reference (1 - cosine 1), nor one
# halfway there: a limit the margin takes past this is held at it (the page names it).
CEILINGS = {"cosine_atol": 0.5}


def derive(measured: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Each tier's limits: its worst measurement over the models, times MARGIN, rounded up
    (a field no measurement of the tier has is left out), held at CEILINGS."""
    limits: dict[str, dict[str, float]] = {}
    for m in measured:
        if m.get("informative"):
            continue
        tier = limits.setdefault(m["tier"], {})
        for path, names in FIELDS.items():
            value: Any = m
            for key in path:
                value = value.get(key) if isinstance(value, dict) else None
            if value is None:
                continue
            for name in names:
                limit = max(nice_ceil(MARGIN * float(value)), FLOORS.get(name, 0.0))
                limit = min(limit, CEILINGS.get(name, limit))
                tier[name] = max(tier.get(name, 0.0), limit)
    return limits


def derive_by_model(measured: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """The derived tiers' limits of each measured model alone (tolerances.MODEL_TIERS): a
    server of that model is judged by what its own weights move, not by the other model's."""
    return {
        model: {
            tier: limits
            for tier, limits in derive([m for m in measured if m["model"] == model]).items()
            if tier in (*DERIVED, KERNEL)
        }
        for model in sorted({m["model"] for m in measured})
    }


def verdicts(
    limits: dict[str, dict[str, float]], by_model: dict[str, dict[str, dict[str, float]]]
) -> list[str]:
    """What differs from the published TIERS and MODEL_TIERS: a derived tier (and every tier's
    retrieval tie) must equal its measurement's limits, a confirmed one must hold them."""
    problems = []
    published_tiers = [(tier, None, derived) for tier, derived in limits.items()]
    published_tiers += [
        (tier, model, derived) for model, own in by_model.items() for tier, derived in own.items()
    ]
    for tier, model, derived in published_tiers:
        name = f"{tier} ({model})" if model else tier
        if tier not in TIERS or (model and tier not in MODEL_TIERS.get(model, {})):
            problems.append(f"{name}: measured, not published (tolerances)")
            continue
        published = dataclasses.asdict(MODEL_TIERS[model][tier] if model else TIERS[tier])
        for field, value in derived.items():
            if field not in published:
                problems.append(f"{name} {field}: measured {value:g}, not published")
                continue
            if (tier in (*DERIVED, KERNEL) or field == "retrieval_tie") and not math.isclose(
                published[field], value
            ):
                problems.append(
                    f"{name} {field}: measured {value:g}, published {published[field]:g}"
                )
            elif tier in CONFIRMED and published[field] < value:
                problems.append(
                    f"{name} {field}: measured {value:g} > published {published[field]:g}"
                )
    return problems


def tier_document(measured: list[dict[str, Any]]) -> dict[str, Any]:
    """measurement.json: the measurements and the tiers' limits, over both models and each."""
    return {
        "margin": MARGIN,
        "measured": measured,
        "limits": derive(measured),
        "by_model": derive_by_model(measured),
    }


def write(document: dict[str, Any]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "measurement.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    readme = markdown(document["measured"], document["limits"], document["by_model"])
    (OUT / "README.md").write_text(readme, encoding="utf-8")
    print(f"wrote {OUT / 'measurement.json'} and {OUT / 'README.md'}")


def markdown(
    measured: list[dict[str, Any]],
    limits: dict[str, dict[str, float]],
    by_model: dict[str, dict[str, dict[str, float]]],
) -> str:
    """The measurement as tables: agreement per model and tier, rankings, the limits."""
    lines = [
        "# Precision tiers, measured",
        "",
        "Written by `python scripts/measure_tiers.py` (its docstring says how); "
        "`measurement.json` holds every number. Vectors are compared as directions "
        "(llama.cpp's server does not normalize); the inputs llama.cpp tokenizes otherwise "
        "than the model are counted apart: they are wrong at any precision.",
        "",
        "## Agreement with the sentence-transformers golden",
        "",
        "| model | tier | served by | inputs | 1 - cos p50 / p99 / max "
        "| max \\|Δ\\| p50 / p99 / max | batch noise max | tokenized otherwise |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for m in measured:
        a, noise, other = m["agreement"], m.get("batch_noise"), m.get("tokenized_otherwise")
        tier = m["tier"] + (" (shown only)" if m.get("informative") else "")
        otherwise = "0"
        if other:
            otherwise = f"{other['inputs']} (1 - cos up to {_g(other['one_minus_cosine']['max'])})"
        lines.append(
            f"| {m['model']} | {tier} | {m['served_by']} | {a['inputs']} "
            f"| {_spread(a['one_minus_cosine'])} | {_spread(a['max_abs_diff'])} "
            f"| {_g(noise['max']) if noise else '—'} | {otherwise} |"
        )
    lines += [
        "",
        "## Rankings: the retrieval queries against the retrieval documents (and every input)",
        "",
        "| model | tier | max score change | mean top-3 overlap | min Spearman "
        "| swaps across the top 3 (largest reference gap) | over every input: max score change, "
        "swaps (largest gap) |",
        "|---|---|---|---|---|---|---|",
    ]
    for m in measured:
        r, w = m["retrieval"], m["retrieval_whole_corpus"]
        tier = m["tier"] + (" (shown only)" if m.get("informative") else "")
        lines.append(
            f"| {m['model']} | {tier} | {_g(r['max_score_change'])} "
            f"| {r['mean_top_k_overlap']:.3f} | {r['min_spearman']:.4f} "
            f"| {len(r['swaps'])} ({_g(r['largest_swap_gap'])}) "
            f"| {_g(w['max_score_change'])}, {len(w['swaps'])} ({_g(w['largest_swap_gap'])}) |"
        )
    lines += [
        "",
        f"## Limits: the worst measurement x {MARGIN:g}, rounded up to 1, 2 or 5 x 10^k",
        "",
        "| tier | " + " | ".join(FIELD_NAMES) + " |",
        "|---|" + "---|" * len(FIELD_NAMES),
    ]
    for tier, derived in limits.items():
        cells = _limit_cells(derived)
        lines.append(f"| {tier} | " + " | ".join(cells) + " |")
        if tier in CONFIRMED:
            published = dataclasses.asdict(TIERS[tier])
            cells = [_g(published[f]) for f in FIELD_NAMES]
            lines.append(f"| {tier} as published | " + " | ".join(cells) + " |")
    for model, own in by_model.items():
        for tier, derived in own.items():
            cells = _limit_cells(derived)
            lines.append(f"| {tier}, {model} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"{', '.join(DERIVED)} publish these limits (tolerances.TIERS over both models, "
        "tolerances.MODEL_TIERS each model's own, chosen by the reference's model) and every "
        f"tier its retrieval tie; {', '.join(CONFIRMED)} keep their own (tolerances.py), which "
        "hold the measurement. 1 - cosine limits stop at "
        + ", ".join(f"{name} {value:g}" for name, value in CEILINGS.items())
        + ": no tier accepts a vector at right angles to the reference.",
    ]
    return "\n".join(lines) + "\n"


FIELD_NAMES = (
    "vector_atol",
    "base64_atol",
    "reference_atol",
    "cosine_atol",
    "cosine_median_atol",
    "retrieval_tie",
)


def _limit_cells(limits: dict[str, float]) -> list[str]:
    """A row of a limits table: each of FIELD_NAMES, or a dash where not derived."""
    return [_g(limits[f]) if f in limits else "—" for f in FIELD_NAMES]


def _g(value: float) -> str:
    return f"{value:.2g}"


def _spread(values: dict[str, Any]) -> str:
    return f"{_g(values['p50'])} / {_g(values['p99'])} / {_g(values['max'])} ({values['worst']})"


def measure_kernel(write: bool) -> int:
    """The quantized servers against their own weights' golden and against the fp32
    golden, side by side; the kernel tier's limits derived from the first as a tier's are."""
    measured = []
    with tempfile.TemporaryDirectory(prefix="ec-kernel-") as scratch:
        for served in SERVED:
            if served.tier not in DERIVED:
                continue
            fp32 = load_golden(bundled_golden(served.model) or "")
            gguf, base = served_gguf(served, Path(scratch))
            print(f"{served.model} at {served.tier}: {served.peer}, own weights {gguf.name}")
            own = record_gguf(
                gguf, base, reference_cases(), scratch_beside=Path(scratch) / "golden",
                progress=False,
            )  # fmt: skip
            with serving(served, Path(scratch), gguf) as url:
                answers = record_served(served, url)
                kernel = measure_one(served, url, own, answers)
                tier = measure_one(served, url, fp32, answers)
            kernel["against"], tier["against"] = f"own weights ({gguf.name})", "fp32 golden"
            # the weights' own rounding, every compared input (both tokenize as the model does)
            weights_only = agreement(own, fp32, [c.id for c in compared_cases(fp32)])
            measured.append({"kernel": kernel, "tier": tier, "weights_only": weights_only})
            for name, m in (("own weights", kernel), ("fp32", tier)):
                a = m["agreement"]
                print(
                    f"  vs {name}: 1 - cos p50 {a['one_minus_cosine']['p50']:.3g} "
                    f"max {a['one_minus_cosine']['max']:.3g}, "
                    f"max |Δ| {a['max_abs_diff']['max']:.3g}",
                    flush=True,
                )
    document = kernel_document(measured)
    print(f"kernel tier (worst x {MARGIN:g}, rounded up): {document['limits'].get(KERNEL)}")
    problems = verdicts(document["limits"], document["by_model"])
    for line in problems:
        print(line)
    if write:
        write_kernel(document)
    return 1 if problems else 0


def kernel_document(measured: list[dict[str, Any]]) -> dict[str, Any]:
    """kernel.json: the measurements and the kernel tier's limits, over both models and each."""
    as_tier = [{**m["kernel"], "tier": KERNEL} for m in measured]
    return {
        "margin": MARGIN,
        "measured": measured,
        "limits": derive(as_tier),
        "by_model": derive_by_model(as_tier),
    }


def write_kernel(document: dict[str, Any]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "kernel.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    (OUT / "kernel.md").write_text(kernel_markdown(document), encoding="utf-8")
    print(f"wrote {OUT / 'kernel.json'} and {OUT / 'kernel.md'}")


def kernel_markdown(document: dict[str, Any]) -> str:
    """kernel.json as a table: each quantized server against its own weights and the fp32
    golden, and the weights' own rounding; the limits derived from the first."""
    lines = [
        "# Quantized servers against their own weights",
        "",
        "Written by `python scripts/measure_tiers.py --kernel` (`kernel.json` holds every number). "
        "Each llama.cpp server (llama-cpp-python) is compared with the golden of the GGUF it "
        "serves (`golden record --from gguf:FILE`: its weights dequantized, computed in fp32), "
        "so what is left is its kernels' arithmetic; beside it, the same answers against the "
        "fp32 golden (both over the inputs the tier measurement judges), and the dequantized "
        "weights alone against the fp32 golden (every compared input). 1 - cos as p50 / p99 / "
        "max (the input at the max).",
        "",
        "| model | file | vs its own weights | vs the fp32 golden | the weights alone "
        "| batch noise max |",
        "|---|---|---|---|---|---|",
    ]
    for m in document["measured"]:
        kernel, tier = m["kernel"], m["tier"]
        lines.append(
            f"| {kernel['model']} | {kernel['tier']} "
            f"| {_spread(kernel['agreement']['one_minus_cosine'])} "
            f"| {_spread(tier['agreement']['one_minus_cosine'])} "
            f"| {_spread(m['weights_only']['one_minus_cosine'])} "
            f"| {_g(kernel['batch_noise']['max'])} |"
        )
    lines += [
        "",
        f"The kernel tier (`--precision kernel`), the worst x {document['margin']:g} rounded up, "
        "over all four and for each model (chosen by the reference's model):",
        "",
        "| limits of | " + " | ".join(FIELD_NAMES) + " |",
        "|---|" + "---|" * len(FIELD_NAMES),
    ]
    rows = [("any model", document["limits"].get(KERNEL, {}))]
    rows += [(model, own[KERNEL]) for model, own in document["by_model"].items()]
    for label, limits in rows:
        cells = _limit_cells(limits)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def served_gguf(served: Served, scratch: Path) -> tuple[Path, Path]:
    """The GGUF ``served`` is served from (made here when the measurement makes it), and the
    sentence-transformers folder it was converted from."""
    catalogue = peers.load()
    peer = catalogue.peer(served.peer)
    root = environments.cache_root()
    model = build.model_folder(root)
    base = fetched(NOMIC_FOLDER) if served.model == NOMIC else model
    if base is None:
        raise SystemExit("first: embedding-conformance models fetch nomic-embed-text-v1.5")
    if served.kind:
        return made(served, peer, catalogue, root, model, scratch), base
    return model_file(peer, root / peer.environments[-1]), base


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="measure and compare with the published tiers only (write nothing); exit 1 on a "
        "difference",
    )
    parser.add_argument(
        "--only", default="", help="comma-separated MODEL:TIER pairs to measure (default: all)"
    )
    parser.add_argument(
        "--kernel",
        action="store_true",
        help="measure the quantized servers against their own weights' golden instead "
        "(writes docs/tiers/kernel.json)",
    )
    parser.add_argument(
        "--markdown",
        action="store_true",
        help="derive the limits again from the recorded measurements (measurement.json, "
        "kernel.json) and write both pages; exit 1 unless they are the published ones",
    )
    args = parser.parse_args(argv)
    if args.markdown:
        return render_recorded()
    if args.kernel:
        return measure_kernel(write=not args.check)
    chosen = {s for s in args.only.split(",") if s}
    measured = [
        fp32_from_goldens(model)
        for model in (MINILM, NOMIC)
        if not chosen or f"{model}:fp32" in chosen
    ]
    with tempfile.TemporaryDirectory(prefix="ec-tiers-") as scratch:
        for served in SERVED:
            if chosen and f"{served.model}:{served.tier}" not in chosen:
                continue
            print(f"{served.model} at {served.tier}: {served.peer} {served.kind}", flush=True)
            golden = load_golden(bundled_golden(served.model) or "")
            with serving(served, Path(scratch)) as url:
                measured.append(measure_one(served, url, golden))
            summary = measured[-1]["agreement"]
            print(
                f"  1 - cos max {summary['one_minus_cosine']['max']:.3g}, "
                f"max |Δ| {summary['max_abs_diff']['max']:.3g}, "
                f"batch noise {measured[-1]['batch_noise']['max']:.3g}, "
                f"score change {measured[-1]['retrieval']['max_score_change']:.3g}",
                flush=True,
            )
    document = tier_document(measured)
    problems = verdicts(document["limits"], document["by_model"])
    for line in problems:
        print(line)
    if not args.check:
        write(document)
    return 1 if problems else 0


def render_recorded() -> int:
    """Both pages again from the recorded measurements, their limits derived anew."""
    measured = json.loads((OUT / "measurement.json").read_text(encoding="utf-8"))["measured"]
    kernel = json.loads((OUT / "kernel.json").read_text(encoding="utf-8"))["measured"]
    tiers, kernels = tier_document(measured), kernel_document(kernel)
    problems = verdicts(tiers["limits"], tiers["by_model"])
    problems += verdicts(kernels["limits"], kernels["by_model"])
    write(tiers)
    write_kernel(kernels)
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
