"""``matrix gate OLD NEW``: the "Before upgrading vLLM" recipe (docs/references.md) run on two
real peers.

The old peer is started and recorded (``golden record --from-endpoint``: its vectors, response
fields and error answers) and judged (``--results-json`` into the baseline); it is stopped, the
new one started and judged with ``--baseline``. ``gate.md`` says what the gate said: the three
baseline requirements, the regressions, and the diff of the two runs.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from conformance.files import write_text_atomically
from conformance.matrix import processes, scrub
from conformance.matrix.build import Outcome, Progress, model_folder, run_suite, serving_peer
from conformance.matrix.peers import Catalogue, Peer, expand
from conformance.reporting import compare
from conformance.reporting.compare_markdown import render_diff_markdown
from conformance.reporting.escape import markdown_text
from conformance.reporting.writer import render_results
from conformance.requirements import CATALOGUE, GATE_PREFIX

GATE_REQUIREMENTS = tuple(r.id for r in CATALOGUE if r.id.startswith(GATE_PREFIX))


def gate(catalogue: Catalogue, old: str, new: str, out: Path, root: Path, say: Progress) -> int:
    """Run the gate from peer ``old`` to peer ``new``; write ``out``; the suite's exit code on
    the new peer (1: it regressed or failed)."""
    model = model_folder(root)
    with tempfile.TemporaryDirectory(prefix="ec-gate-") as scratch, processes.subreaper():
        baseline = Path(scratch) / "baseline"
        old_peer, new_peer = catalogue.peer(old), catalogue.peer(new)
        old_version = _serve(catalogue, old_peer, root, model, say, _record(baseline))
        after = Path(scratch) / "after.json"
        args = ["--baseline", str(baseline), "--results-json", str(after)]
        codes: list[int | None] = []
        new_version = _serve(catalogue, new_peer, root, model, say, _judge(args, codes))
        out.mkdir(parents=True, exist_ok=True)
        scrubber = scrub.scrubber(model, root)
        for results, published in (
            (baseline / "results.json", "before.json"),
            (after, "after.json"),
        ):
            document = scrub.scrub_results(json.loads(results.read_text("utf-8")), scrubber)
            write_text_atomically(out / published, render_results(document))
    labels = (f"{old_peer.title} {old_version}", f"{new_peer.title} {new_version}")
    write_text_atomically(out / "gate.md", render(out, labels, codes[0]))
    say(f"gate verdict in {out / 'gate.md'} (suite exit {codes[0]})")
    return 1 if codes[0] != 0 else 0


Step = Callable[[Peer, dict[str, str], Path], None]  # (peer, values, logs), while it serves


def _serve(
    catalogue: Catalogue, peer: Peer, root: Path, model: Path, say: Progress, step: Step
) -> str:
    outcome = Outcome(peer.name, peer.title, peer.homepage, peer.about, peer.package)
    with serving_peer(catalogue, peer, root, model, say, outcome) as (values, logs):
        step(peer, values, logs)
    return outcome.version


def _record(baseline: Path) -> Step:
    def step(peer: Peer, values: dict[str, str], logs: Path) -> None:
        endpoint = expand(peer.endpoint, values)
        command = [sys.executable, "-m", "conformance.cli", "golden", "record"]
        command += ["--from-endpoint", endpoint, "--model", peer.model, "--out", str(baseline)]
        with (logs / "record.log").open("w") as log:
            subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=True)
        run_suite(
            peer, values, ["--results-json", str(baseline / "results.json")], logs / "suite.log"
        )

    return step


def _judge(args: list[str], codes: list[int | None]) -> Step:
    def step(peer: Peer, values: dict[str, str], logs: Path) -> None:
        codes.append(run_suite(peer, values, args, logs / "suite.log")[0])

    return step


def render(out: Path, labels: tuple[str, str], code: int | None) -> str:
    """gate.md from the two results documents in ``out``; their text (a server's details, its
    version in the labels) escaped as Markdown."""
    before = json.loads((out / "before.json").read_text(encoding="utf-8"))
    after = json.loads((out / "after.json").read_text(encoding="utf-8"))
    regressions = after.get("baseline", {}).get("regressions", [])
    verdict = "PASSED" if code == 0 else "FAILED"
    day = markdown_text(after["run"]["finished"][:10])
    lines = [
        f"# Upgrade gate: {markdown_text(labels[0])} → {markdown_text(labels[1])}",
        "",
        f"Run {day} by `embedding-conformance matrix gate`: "
        "the README's recipe on two real servers. While the old release served:",
        "`embedding-conformance golden record --from-endpoint URL --out baseline` and "
        "`pytest --endpoint URL --results-json baseline/results.json`; then, on the new "
        "release with the same model and flags: `pytest --endpoint URL --baseline baseline`.",
        "",
        f"Verdict: **{verdict}** (the suite's exit code on the new release: {code}).",
        "",
    ]
    by_id = {entry["id"]: entry for entry in after["requirements"]}
    for requirement in GATE_REQUIREMENTS:
        entry = by_id.get(requirement, {})
        details = [case["detail"] for case in entry.get("worst_cases", [])[:2]]
        details += [failure["detail"] for failure in entry.get("failures", [])[:3]]
        text = "; ".join(_plain_url(detail) for detail in details)
        status = markdown_text(entry.get("status", "NOT RUN"))
        lines.append(f"- `{requirement}` {status}: {markdown_text(text)}")
    lines += ["", "Requirements doing worse than on the old release:", ""]
    lines += [f"- REGRESSION {markdown_text(line)}" for line in regressions] or ["- none"]
    runs = [
        compare.Run(out / "before.json", before, labels[0]),
        compare.Run(out / "after.json", after, labels[1]),
    ]
    lines += ["", "## What changed between the two runs", ""]
    lines.append(render_diff_markdown(compare.diff(*runs)).rstrip())
    return "\n".join(lines) + "\n"


def _plain_url(text: str) -> str:
    """Details name the baseline's endpoint, a port of a server long gone: say what it was."""
    return re.sub(r"\(http://127\.0\.0\.1:\d+[^)]*\)", "(the old release)", text)
