"""Shared fixtures of the project's own tests: the bundled reference server, a hostile server."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator

import pytest

from conformance.server.process import ServerProcess
from conformance.server.runtime import OPENMP_WAIT_SETTINGS
from tests.support.server_process import running_server

pytest_plugins = ["pytester"]

API_KEY = "secret-test-key"

# These tests run many servers side by side on few cores: OpenMP threads that spin for work
# (the workers' default, for cores of their own) take the cores the others need. A whole run
# took 25 min so, 15 with threads that sleep at once. A setting of the caller's wins.
if not any(key in os.environ for key in OPENMP_WAIT_SETTINGS):
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
# And one thread a server: two passive threads on a batch-1 forward pass finish no sooner than one
# (two full suite runs, 32-34 s either way) and cost a quarter more CPU (89 s vs 67 s in the
# worker), which the other servers and runs on the same cores wait for. Not where bare vLLM
# runs (tox -e vllm): vLLM sets its own threads from OMP_NUM_THREADS.
if "OMP_NUM_THREADS" not in os.environ and importlib.util.find_spec("vllm") is None:
    os.environ["OMP_NUM_THREADS"] = "1"

# Runtime files (worker sockets, reproducers' bodies) of the servers and suite runs these tests
# start go to the private folder under XDG_RUNTIME_DIR (conformance.runtime_dir): here a fresh
# folder of this process, removed at its end, so no run leaves anything in the temp directory.
# Short (mkdtemp, not the deep tmp_path): a socket path must fit in 107 bytes.
RUNTIME_DIR = tempfile.mkdtemp(prefix="ec-")
os.environ["XDG_RUNTIME_DIR"] = RUNTIME_DIR
# Importing sentence-transformers (torch._dynamo) makes torch's compile-cache folder,
# <tmp>/torchinductor_<user>, in this process and every server it starts: theirs go here too.
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(RUNTIME_DIR, "torchinductor"))


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: there only when it is installed
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker more than this process has cores. Most of these tests wait on a
    single-threaded server, a timeout or a hung peer, and a core stays idle while they do; the
    extra worker fills it."""
    return len(os.sched_getaffinity(0)) + 1


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(RUNTIME_DIR, ignore_errors=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slow tests first (stable otherwise): under xdist the workers start on them and the
    run ends on short ones, instead of one worker finishing a minute-long suite run alone while
    the other idles (with --dist worksteal, pyproject.toml). The real models' tests run only
    when asked for (``-m real_models``; ``tox -e models``): with their weights fetched they take
    half an hour on two cores, which the project's test command must not cost whoever once ran
    ``models fetch``."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    if "real_models" in (config.option.markexpr or ""):
        return
    skip = pytest.mark.skip(reason="real models: run with -m real_models (tox -e models)")
    for item in items:
        if item.get_closest_marker("real_models"):
            item.add_marker(skip)


def reference_server(*args: str) -> ServerProcess:
    """The bundled server (`python -m conformance.server --port 0 ...`) for a with-block."""
    return running_server("conformance.server", *args)


FaultRoute = Callable[..., str]


@pytest.fixture(scope="session")
def fault_route() -> Iterator[FaultRoute]:
    """``fault_route(fault=None, model=None)``: the base URL under which a correct reference
    server of ``model`` (None: the bundled one) serves ``fault`` (None: no fault). Faults that
    need no process of their own share one server per model (``--fault-routes``), started on
    first use: the mutation table costs a few server starts, not one per fault."""
    with contextlib.ExitStack() as servers:
        started: dict[str | None, str] = {}

        def route(fault: str | None = None, model: str | None = None) -> str:
            if model not in started:
                model_args = ("--model", model) if model else ()
                started[model] = servers.enter_context(
                    reference_server("--fault-routes", *model_args)
                )
            return started[model] + (f"/faults/{fault}" if fault else "")

        yield route


@pytest.fixture(scope="session")
def clean_server(fault_route: FaultRoute) -> str:
    """A correct reference server (transport auto: shared memory on this machine); its
    /faults routes serve the mutation table."""
    return fault_route()


@pytest.fixture(scope="session")
def auth_server() -> Iterator[str]:
    """A correct reference server that requires 'Authorization: Bearer <API_KEY>'."""
    with reference_server("--api-key", API_KEY) as base_url:
        yield base_url


@pytest.fixture(scope="session")
def hostile_server() -> Iterator[str]:
    """Base URL of a server that misbehaves on list inputs (routes under /<behaviour>/v1/...)."""
    with running_server("tests.support.hostile_server", "--host", "0.0.0.0") as base_url:
        yield base_url
