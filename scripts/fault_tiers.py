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
    python scripts/fault_tiers.py --markdown  # faults.md again from faults.json

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
from conformance.references import bundled_golden, load_golden, reference_cases
from conformance.references.sources import record_endpoint
from conformance.server.faults import FAULTS
from conformance.server.process import ServerProcess
from conformance.suite.reference_corpus import compared_cases
from conformance.tolerances import PRECISIONS

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


def failed_at(url: str, tier: str, scratch: Path) -> list[str]:
    """The requirements of JUDGED the suite fails at ``tier`` (a SHOULD's warning included)."""
    results = scratch / f"results-{tier}.json"
    subprocess.run(
        [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "--basetemp", str(scratch / "pytest-tmp"), "--results-json", str(results),
            "--endpoint", url, "--precision", tier, "--requirements", JUDGED,
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
            correct = {tier: failed_at(base, tier, scratch) for tier in PRECISIONS}
            for fault in VECTOR_FAULTS:
                url = f"{base}/faults/{fault}"
                print(f"{fault}:", end=" ", flush=True)
                row = {"fault": fault, "mirrors": FAULTS[fault].mirrors, **distances(url)}
                row["failed"] = {tier: failed_at(url, tier, scratch) for tier in PRECISIONS}
                print(", ".join(f"{t} {len(f)}" for t, f in row["failed"].items()), flush=True)
                rows.append(row)
    return {"model": MODEL, "judged": JUDGED, "correct_server": correct, "faults": rows}


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
        "| fault | 1 - cos | max \\|Δ\\| | " + " | ".join(PRECISIONS) + " |",
        "|---|---|---|" + "---|" * len(PRECISIONS),
    ]
    for row in document["faults"]:
        cells = [_failed(row["failed"][tier]) for tier in PRECISIONS]
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
    return "\n".join(lines) + "\n"


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
    args = parser.parse_args(argv)
    if args.markdown:
        write(json.loads((OUT / "faults.json").read_text(encoding="utf-8")))
        return 0
    write({**measure(), "rounding": rounding()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
