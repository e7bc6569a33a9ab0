"""Which planted faults each precision tier still sees (issue 57, item 3): a faulty server's
vectors judged by the suite at every tier against the fp32 golden, beside how far they are from
it and how far a correct quantized server's are.

The bundled reference server (all-MiniLM-L6-v2 in fp32) serves each fault that changes vectors
under its /faults route. For each fault the suite runs, at each tier, the requirements vectors
decide (``JUDGED``) and its results give the FAILs; and the corpus is recorded from the route (in
batches, as a golden is) and measured against the bundled golden: 1 - cosine and max |Δ| per
input of the inputs reference.agreement compares, as directions (the norm is normalization's).
Beside them, the correct llama.cpp servers of docs/tiers/measurement.json: a limit on the
reference tells a fault from rounding only where the fault moves vectors further.

    python scripts/fault_tiers.py             # measure, write docs/tiers/faults.json and faults.md
    python scripts/fault_tiers.py --served-weights  # the same faults on quantized weights
    python scripts/fault_tiers.py --markdown  # faults.md again from faults.json

--served-weights serves the faults from the bundled server computing with the weights of the
matrix's q8_0 and q4_K_M GGUFs of MiniLM (dequantized) and judges each at the kernel tier against
the golden of those weights (``golden record --from gguf:FILE``) and at its tier against the fp32
golden: every fault of a wrong computation must fail both ways (noise and float16 output are
rounding, which those tiers allow). It needs the matrix's llama-cpp-python environment
(``embedding-conformance matrix install llama-cpp-python-q8-0``), where the GGUFs are made.

Out of CI (a few minutes on two cores); nothing is left behind but the two files.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from measure_tiers import agreement, unit  # scripts/: the tier measurement's comparison

from conformance.client import parse_endpoint
from conformance.client.preflight import open_client
from conformance.matrix import build, environments
from conformance.references import bundled_golden, load_golden, reference_cases
from conformance.references.dequantize_gguf import write_folder
from conformance.references.gguf_golden import record_gguf
from conformance.references.recording import save
from conformance.references.sources import record_endpoint
from conformance.server.faults import FAULTS
from conformance.server.process import ServerProcess
from conformance.suite.reference_corpus import compared_cases
from conformance.tolerances import KERNEL, PRECISIONS

OUT = Path(__file__).resolve().parents[1] / "docs" / "tiers"
MODEL = "all-MiniLM-L6-v2"
# The faults that change vectors, by what they break (issue 57's list, and the rounding faults)
VECTOR_FAULTS = (
    "cls-pooling",  # pooling
    "prefix-added",  # a prompt the client did not send
    "truncate-64",  # truncation, too short
    "context-of-positions",  # truncation, too long
    "another-tokenizer",  # tokenizer
    "no-sep",  # special tokens
    "padding-unmasked",  # padding
    "positions-shifted",  # positions
    "no-normalize",  # normalization
    "noise",  # a little noise on every element
    "fp16-vectors",  # the output rounded to float16
)
# The requirements a model's vectors decide
JUDGED = (
    "reference.,determinism.,normalization.,batch.single-vs-batch,batch.large,usage.counts-tokens"
)
# The correct quantized servers measured in docs/tiers (the rounding a tier must allow)
ROUNDING_TIERS = ("q8_0", "q4_k_m")
# The tiers that judge against the fp32 golden (the kernel tier is for a golden of served weights)
TIERS = tuple(tier for tier in PRECISIONS if tier != KERNEL)


def distances(url: str) -> dict[str, Any]:
    """The route's vectors against the bundled golden, over the inputs reference.agreement
    compares, as directions: the tier measurement's own comparison."""
    golden = load_golden(bundled_golden(MODEL) or "")
    client = open_client(parse_endpoint(url), MODEL, None, 600.0)
    recording = record_endpoint(client, reference_cases(), behaviour=False, progress=False)
    directions = dataclasses.replace(recording, vectors=unit(recording.vectors))
    return agreement(
        directions, golden, [c.id for c in compared_cases(golden) if c.id in recording.rows]
    )


def failed_at(url: str, tier: str, scratch: Path, reference: Path | None = None) -> list[str]:
    """The requirements of JUDGED the suite fails at ``tier`` (a SHOULD's warning included),
    against ``reference`` (a golden folder) or the bundled golden."""
    results = scratch / f"results-{tier}.json"
    against = ["--reference", f"golden:{reference}"] if reference else []
    subprocess.run(
        [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "--basetemp", str(scratch / "pytest-tmp"), "--results-json", str(results),
            "--endpoint", url, "--precision", tier, "--requirements", JUDGED, *against,
        ],
        cwd=scratch, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    if not results.exists():
        raise SystemExit(f"the suite wrote no results for {url} at {tier}")
    document = json.loads(results.read_text(encoding="utf-8"))
    results.unlink()
    return sorted(r["id"] for r in document["requirements"] if r["status"] == "FAIL")


def measure() -> dict[str, Any]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="ec-faults-") as folder:
        scratch = Path(folder)
        with ServerProcess("--fault-routes") as base:
            correct = {tier: failed_at(base, tier, scratch) for tier in TIERS}
            for fault in VECTOR_FAULTS:
                url = f"{base}/faults/{fault}"
                print(f"{fault}:", end=" ", flush=True)
                row = {"fault": fault, "mirrors": FAULTS[fault].mirrors, **distances(url)}
                row["failed"] = {tier: failed_at(url, tier, scratch) for tier in TIERS}
                print(", ".join(f"{t} {len(f)}" for t, f in row["failed"].items()), flush=True)
                rows.append(row)
    return {"model": MODEL, "judged": JUDGED, "correct_server": correct, "faults": rows}


def measure_served_weights() -> dict[str, Any]:
    """Each fault on the weights of each quantized GGUF: its FAILs at the kernel tier against
    the golden of those weights, and at its tier against the fp32 golden."""
    root = environments.cache_root()
    gguf_folder, base = root / "llama-cpp-python", build.model_folder(root)
    document: dict[str, Any] = {}
    for tier in ROUNDING_TIERS:
        gguf = gguf_folder / f"{MODEL}-{tier}.gguf"
        if not gguf.exists():
            raise SystemExit(f"{gguf} is missing: `embedding-conformance matrix install` makes it")
        with tempfile.TemporaryDirectory(prefix="ec-faults-") as folder:
            scratch = Path(folder)
            golden = scratch / "golden"
            recording = record_gguf(gguf, base, reference_cases(), scratch_beside=scratch)
            save(recording, golden)
            write_folder(gguf, base, scratch / MODEL)
            print(f"{tier} weights ({gguf.name}):", flush=True)
            with ServerProcess("--fault-routes", "--model", str(scratch / MODEL)) as url:
                correct = both_ways(url, tier, scratch, golden)
                failed = {}
                for fault in VECTOR_FAULTS:
                    failed[fault] = both_ways(f"{url}/faults/{fault}", tier, scratch, golden)
                    counts = ", ".join(f"{k} {len(v)}" for k, v in failed[fault].items())
                    print(f"  {fault}: {counts}", flush=True)
        document[tier] = {"gguf": gguf.name, "correct_server": correct, "failed": failed}
    return document


def both_ways(url: str, tier: str, scratch: Path, golden: Path) -> dict[str, list[str]]:
    """The route's FAILs at the kernel tier against ``golden`` (the served weights') and at
    ``tier`` against the bundled fp32 golden."""
    return {
        "kernel": failed_at(url, KERNEL, scratch, golden),
        "tier": failed_at(url, tier, scratch),
    }


def rounding() -> list[dict[str, Any]]:
    """The correct quantized servers' agreement with their fp32 golden (docs/tiers)."""
    measured = json.loads((OUT / "measurement.json").read_text(encoding="utf-8"))["measured"]
    return [
        {"model": m["model"], "tier": m["tier"], **m["agreement"]}
        for m in measured
        if m["tier"] in ROUNDING_TIERS
    ]


def markdown(document: dict[str, Any]) -> str:
    lines = [
        "# Which faults each tier sees",
        "",
        "Written by `python scripts/fault_tiers.py` (`faults.json` holds every number). The "
        f"bundled reference server ({document['model']}, fp32) serves each fault that changes "
        "vectors; the suite judges it at every tier against the fp32 golden on "
        f"`{document['judged']}`. A cell lists the requirements that FAIL; **blind** means the "
        "tier passes the faulty server on all of them. 1 - cos and max |Δ| are per input over "
        "the inputs `reference.agreement` compares, as directions, p50 / p99 / max.",
        "",
        "| fault | 1 - cos | max \\|Δ\\| | " + " | ".join(TIERS) + " |",
        "|---|---|---|" + "---|" * len(TIERS),
    ]
    for row in document["faults"]:
        cells = [_failed(row["failed"][tier]) for tier in TIERS]
        lines.append(
            f"| `{row['fault']}` | {_spread(row['one_minus_cosine'])} "
            f"| {_spread(row['max_abs_diff'])} | " + " | ".join(cells) + " |"
        )
    correct = document["correct_server"]
    lines += [
        "",
        "The correct server (the same routes without a fault) fails "
        + (", ".join(f"{t}: {_failed(f)}" for t, f in correct.items() if f) or "nothing")
        + " at any tier.",
        "",
        "What a correct quantized server moves (llama.cpp, docs/tiers/README.md): the limits of "
        "a tier must hold these, so a fault that moves vectors less cannot be told from them "
        "against the fp32 golden.",
        "",
        "| model | tier | 1 - cos | max \\|Δ\\| |",
        "|---|---|---|---|",
    ]
    for m in document["rounding"]:
        lines.append(
            f"| {m['model']} | {m['tier']} | {_spread(m['one_minus_cosine'])} "
            f"| {_spread(m['max_abs_diff'])} |"
        )
    return "\n".join(lines + served_weights_lines(document.get("served_weights"))) + "\n"


def served_weights_lines(served: dict[str, Any] | None) -> list[str]:
    """The table of ``--served-weights``: each fault on quantized weights, judged against the
    golden of those weights (kernel tier) and against the fp32 golden (the weights' tier)."""
    if not served:
        return []
    heads = [
        f"{tier}: {label}"
        for tier in served
        for label in ("kernel vs its weights", f"{tier} vs fp32")
    ]
    lines = [
        "",
        "## On quantized weights",
        "",
        "`python scripts/fault_tiers.py --served-weights`: the same faults served by the bundled "
        "server computing with the weights of the matrix's q8_0 and q4_K_M GGUFs of "
        f"{MODEL} (dequantized), judged at the kernel tier against the golden of those weights "
        "(`golden record --from gguf:FILE`) and at their tier against the fp32 golden.",
        "",
        "| fault | " + " | ".join(heads) + " |",
        "|---|" + "---|" * len(heads),
    ]
    faults = next(iter(served.values()))["failed"]
    for fault in faults:
        cells = [
            _failed(served[tier]["failed"][fault][kind])
            for tier in served
            for kind in ("kernel", "tier")
        ]
        lines.append(f"| `{fault}` | " + " | ".join(cells) + " |")
    correct = [
        f"{tier} {kind}: {_failed(found)}"
        for tier in served
        for kind, found in served[tier]["correct_server"].items()
        if found
    ]
    found = "; ".join(correct) or "nothing"
    return [*lines, "", f"The correct server on those weights fails {found} either way."]


def _failed(requirements: Sequence[str]) -> str:
    return ", ".join(f"`{r}`" for r in requirements) if requirements else "**blind**"


def _spread(values: dict[str, float]) -> str:
    return " / ".join(f"{values[k]:.2g}" for k in ("p50", "p99", "max"))


def write(document: dict[str, Any]) -> None:
    (OUT / "faults.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    (OUT / "faults.md").write_text(markdown(document), encoding="utf-8")
    print(f"wrote {OUT / 'faults.json'} and {OUT / 'faults.md'}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--markdown", action="store_true", help="write faults.md again from faults.json only"
    )
    parser.add_argument(
        "--served-weights",
        action="store_true",
        help="measure the faults on the quantized GGUFs' weights only (the rest of faults.json "
        "is kept)",
    )
    args = parser.parse_args(argv)
    published = OUT / "faults.json"
    if args.markdown or args.served_weights:
        document = json.loads(published.read_text(encoding="utf-8"))
        if args.served_weights:
            document["served_weights"] = measure_served_weights()
        write(document)
        return 0
    previous = json.loads(published.read_text(encoding="utf-8")) if published.exists() else {}
    served = {"served_weights": previous["served_weights"]} if "served_weights" in previous else {}
    write({**measure(), "rounding": rounding(), **served})
    return 0


if __name__ == "__main__":
    sys.exit(main())
