"""A peer's processes: started in their own session, waited for, and stopped with everything
they spawned, whether the peer came up, failed to, or the build was interrupted.

Servers spawn engine cores, actor pools and model workers; some of those start sessions of
their own. ``stop`` therefore signals the process group and every descendant it finds in /proc
(taken before the first signal, while they still have their parent), SIGTERM first, SIGKILL
after a grace period, then checks that nothing still listens on the peer's ports.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import requests

from conformance.matrix.environments import tail
from conformance.matrix.peers import Process, expand, tool_paths

GRACE_S = 30.0  # for a clean exit after SIGTERM (vLLM shuts its engine core down)
POLL_S = 1.0


class StartError(RuntimeError):
    """The peer did not come up; the message says how (exit code or timeout, log tail)."""


@dataclass
class Launched:
    popen: subprocess.Popen[bytes]
    name: str  # argv[0..2], for messages


def free_ports(count: int) -> list[int]:
    """Ports free on 127.0.0.1 now (held open together, so they differ)."""
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for probe in sockets:
            probe.bind(("127.0.0.1", 0))
        return [int(probe.getsockname()[1]) for probe in sockets]


@contextlib.contextmanager
def serving(
    processes: Sequence[Process],
    values: Mapping[str, str],
    pythons: Mapping[str, Path],
    log: Path,
    timeout: float,
) -> Iterator[float]:
    """Start ``processes`` in order, each once the previous one is ready; yield the seconds it
    took; stop them all (the last first) on the way out, however it is left."""
    launched: list[Launched] = []
    started = time.monotonic()
    ours_before = descendants(os.getpid())
    # Their temp files (engines' IPC sockets, compile caches) go to a folder of their own,
    # removed once they have stopped: a build leaves nothing in the shared temp directory.
    scratch = tempfile.TemporaryDirectory(prefix="ec-peer-", ignore_cleanup_errors=True)
    try:
        for process in processes:
            item = _launch(process, values, pythons[process.environment], log, scratch.name)
            if process.setup:
                _run_to_end(item, launched, log, started + timeout)
            else:
                launched.append(item)
            if process.ready:
                _wait_ready(process, values, launched, log, started + timeout)
        yield time.monotonic() - started
    finally:
        for item in reversed(launched):
            stop(item.popen)
        # A daemon that left its session and parent: handed to us under subreaper(), or gone
        if strays := descendants(os.getpid()) - ours_before:
            _terminate(strays)
        ports = [int(values[key]) for key in ("port", "port2", "port3") if key in values]
        listening = [port for port in ports if is_listening(port)]
        scratch.cleanup()
        if listening and sys.exc_info()[0] is None:  # never hide the error that got us here
            raise RuntimeError(f"still listening on 127.0.0.1 port {listening} after the stop")


def _launch(
    process: Process, values: Mapping[str, str], python: Path, log: Path, tmp: str
) -> Launched:
    own = {**values, **tool_paths(), "python": str(python), "bin": str(python.parent)}
    own["envdir"] = str(python.parents[2])  # <envdir>/venv/bin/python
    argv = [expand(part, own) for part in process.argv]
    env = {**os.environ, "TMPDIR": tmp, **{k: expand(v, own) for k, v in process.env.items()}}
    with log.open("a", encoding="utf-8") as out:
        print(f"$ {' '.join(argv)}", file=out, flush=True)
        popen = subprocess.Popen(
            argv,
            cwd=values["work"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # its own group: stopped as one, never by our Ctrl-C alone
        )
    return Launched(popen, _describe(argv))


def _describe(argv: Sequence[str]) -> str:
    """``python -m module``, ``python -c ...`` or the program's name, for messages."""
    program = Path(argv[0]).name
    if len(argv) > 2 and argv[1] == "-m":
        return f"{program} -m {argv[2]}"
    if len(argv) > 1 and argv[1] == "-c":
        return f"{program} -c ..."
    return f"{program} {argv[1]}" if len(argv) > 1 and not argv[1].startswith("-") else program


def _last_words(log: Path) -> str:
    lines = [line.strip() for line in tail(log, 40).splitlines() if line.strip()]
    return f"; last output: {lines[-1][:300]}" if lines else ""


def _run_to_end(item: Launched, servers: Sequence[Launched], log: Path, deadline: float) -> None:
    """Wait for a setup command to end well, while the servers before it keep running."""
    try:
        while (code := item.popen.poll()) is None:
            _check_alive(servers, log)
            if time.monotonic() > deadline:
                raise StartError(f"{item.name} did not end in time{_last_words(log)}")
            time.sleep(POLL_S / 4)
    finally:
        stop(item.popen)
    if code != 0:
        raise StartError(f"{item.name} exited with code {code}{_last_words(log)}")


def _check_alive(launched: Sequence[Launched], log: Path) -> None:
    for item in launched:
        if (code := item.popen.poll()) is not None:
            raise StartError(f"{item.name} exited with code {code}{_last_words(log)}")


def _wait_ready(
    process: Process,
    values: Mapping[str, str],
    launched: Sequence[Launched],
    log: Path,
    deadline: float,
) -> None:
    url = expand(process.ready, values)
    while True:
        _check_alive(launched, log)
        with contextlib.suppress(requests.RequestException):
            answer = requests.get(url, timeout=5)
            if answer.ok and process.ready_text in answer.text:
                return
        if time.monotonic() > deadline:
            raise StartError(f"{url} did not answer ready in time{_last_words(log)}")
        time.sleep(POLL_S)


def stop(popen: subprocess.Popen[bytes], grace: float = GRACE_S) -> None:
    """SIGTERM to the group and every descendant, SIGKILL to what is left after ``grace``."""
    family = {popen.pid, *descendants(popen.pid)}
    _signal(popen.pid, family, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        popen.wait(timeout=grace)
    deadline = time.monotonic() + grace
    while _alive(family) and time.monotonic() < deadline:
        time.sleep(0.2)
    family |= descendants(popen.pid)
    _signal(popen.pid, family, signal.SIGKILL)
    popen.wait()
    deadline = time.monotonic() + 10
    while _alive(family) and time.monotonic() < deadline:
        time.sleep(0.1)
    _reap(family)


def _terminate(pids: set[int], grace: float = GRACE_S) -> None:
    """SIGTERM, then SIGKILL to what is left after ``grace``: processes that are no Popen's."""
    for signum in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signum)
        deadline = time.monotonic() + grace
        while _alive(pids) and time.monotonic() < deadline:
            time.sleep(0.1)


def _signal(group: int, pids: set[int], signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signum)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def _alive(pids: set[int]) -> bool:
    _reap(pids)
    return any(_running(pid) for pid in pids)


def _running(pid: int) -> bool:
    """Alive and not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` now, from /proc (children of children included)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _reap(pids: set[int]) -> None:
    """Collect the exit status of orphans handed to us as their subreaper (see below), so
    none stays a zombie; processes that are not our children are none of our business."""
    for pid in pids:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


@contextlib.contextmanager
def subreaper() -> Iterator[None]:
    """Within: orphaned descendants (a daemon that double-forked away from its server) become
    our children instead of init's, so ``descendants`` still finds them at the stop. Linux
    only; elsewhere the process group and the /proc walk are all there is."""
    _set_child_subreaper(1)
    try:
        yield
    finally:
        _set_child_subreaper(0)


def _set_child_subreaper(flag: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, flag, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def is_listening(port: int) -> bool:
    """Whether something listens on 127.0.0.1:port (a port in TIME_WAIT is not listening)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False
