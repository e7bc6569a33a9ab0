"""The bench's plots, PNG and SVG: latency percentiles against batch size per target, and
throughput against load. INVALID rows are left out (their times are not latencies), unless
--time-invalid recorded them: then their p50 is drawn apart, labelled as a payload time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

PERCENTILES = (("p50_ms", "-", "p50"), ("p90_ms", "--", "p90"), ("p99_ms", ":", "p99"))


def _figure() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display here or in CI
    import matplotlib.pyplot as plt

    return plt


def _save(plt: Any, figure: Any, out: Path, stem: str) -> list[Path]:
    paths = [out / f"{stem}.png", out / f"{stem}.svg"]
    for path in paths:
        figure.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(figure)
    return paths


def latency_plot(rows: list[dict[str, Any]], out: Path, title: str) -> list[Path]:
    """p50 (solid), p90 and p99 (dashed, dotted) in ms against batch size, log-log."""
    plt = _figure()
    figure, axes = plt.subplots(figsize=(8, 5))
    targets = list(dict.fromkeys(r["target"] for r in rows))
    for number, target in enumerate(targets):
        colour = f"C{number}"
        payloads = sorted(
            (r for r in rows if r["target"] == target and "invalid_timing" in r),
            key=lambda r: r["batch"],
        )
        if payloads:  # --time-invalid: transfer times of wrong answers, drawn apart
            axes.plot(
                [r["batch"] for r in payloads],
                [r["invalid_timing"]["p50_ms"] for r in payloads],
                "-.",
                marker="x",
                color=colour,
                label=f"{target} p50 (INVALID: payload time)",
            )
        mine = sorted(
            (r for r in rows if r["target"] == target and r["status"] == "VALID"),
            key=lambda r: r["batch"],
        )
        if not mine:
            continue
        for key, style, label in PERCENTILES:
            axes.plot(
                [r["batch"] for r in mine],
                [r[key] for r in mine],
                style,
                marker="o" if key == "p50_ms" else None,
                color=colour,
                label=f"{target} {label}",
            )
    axes.set(xscale="log", yscale="log", xlabel="inputs per request", ylabel="latency (ms)")
    axes.set_title(title, fontsize=10)
    axes.grid(True, which="both", alpha=0.3)
    if axes.get_lines():
        axes.legend(fontsize=7)
    else:  # every row INVALID: say so rather than leave an empty chart
        axes.text(0.5, 0.5, "no valid answers: no latency", transform=axes.transAxes, ha="center")
    return _save(plt, figure, out, "latency")


def throughput_plot(rows: list[dict[str, Any]], out: Path, title: str) -> list[Path]:
    """Inputs per second per target: against the load (clients, or requests per second), one
    line per batch size; or, with a single load level, against the batch size."""
    plt = _figure()
    figure, axes = plt.subplots(figsize=(8, 5))
    valid = [r for r in rows if r["status"] == "VALID"]
    mode = rows[0]["mode"] if rows else "concurrency"
    unit = "clients" if mode == "concurrency" else "requests/s offered"
    levels = sorted({r["load"] for r in rows})
    by_batch = len(levels) == 1
    x_key, line_keys = ("batch", ("target",)) if by_batch else ("load", ("target", "batch"))
    for line in dict.fromkeys(tuple(r[k] for k in line_keys) for r in valid):
        mine = sorted(
            (r for r in valid if tuple(r[k] for k in line_keys) == line), key=lambda r: r[x_key]
        )
        label = line[0] if by_batch else f"{line[0]}, batch {line[1]}"
        axes.plot(
            [r[x_key] for r in mine], [r["inputs_per_s"] for r in mine], marker="o", label=label
        )
    if by_batch:
        axes.set(xscale="log", xlabel=f"inputs per request (load: {levels[0]:g} {unit})")
    else:
        axes.set(xlabel="concurrent clients" if mode == "concurrency" else unit)
    axes.set(ylabel="inputs per second (valid answers)")
    axes.set_title(title, fontsize=10)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=7)
    return _save(plt, figure, out, "throughput")
