"""The bundled server on each real model beyond MiniLM, judged by the packaged suite against that
model's bundled golden: served correctly it passes every requirement, under another name too
(identified by its vectors); each fault that changes vectors fails the requirement that guards
against it, as on all-MiniLM-L6-v2 (the mutation rows per model). And the bundled goldens are
what sentence-transformers computes from the fetched weights. Needs the weights: `tox -e models`
fetches them; without them (CI) each test skips, saying how to fetch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conformance.cli import main
from conformance.models.fetch import FetchedModel
from conformance.models.pinned import MPNET, NOMIC
from conformance.references import bundled_golden, load_golden
from conformance.tolerances import TIERS
from tests.conftest import FaultRoute, reference_server
from tests.e2e.test_suite_verdicts import FAST, IN_PLAY, MUTATIONS
from tests.models.test_real_models import folder_of
from tests.support.suite_runner import run_suite

pytestmark = pytest.mark.real_models

MODELS = [MPNET, NOMIC]
# 4 to 8 times all-MiniLM-L6-v2's compute per token: on two cores the requests at the documented
# limits take longer than the default 30 s (a correct server, only slower).
PATIENT = ("--request-timeout", "300")
# The faults that change a model's vectors: pooling, truncation, a prefix, a tokenizer,
# normalization, padding. Each must fail on every model as its row says.
VECTOR_FAULTS = (
    "cls-pooling",
    "truncate-64",
    "prefix-added",
    "another-tokenizer",
    "no-normalize",
    "padding-unmasked",
)
# Other names the models are served under: Ollama's, and an organisation-less short one
ALIASES = {MPNET.name: "mpnet", NOMIC.name: "nomic-embed-text"}


def by_name(model: FetchedModel) -> str:
    return model.name


@pytest.mark.parametrize("model", MODELS, ids=by_name)
def test_the_bundled_server_passes_every_requirement(
    tmp_path: Path, model: FetchedModel, fault_route: FaultRoute
) -> None:
    url = fault_route(model=str(folder_of(model)))
    run = run_suite(tmp_path, "--endpoint", url, *PATIENT)
    assert run.returncode == 0, run.output
    assert run.with_status("PASS") == IN_PLAY, run.output
    assert f"reference: bundled golden {model.name}/sentence-transformers" in run.output


@pytest.mark.parametrize("fault", VECTOR_FAULTS)
@pytest.mark.parametrize("model", MODELS, ids=by_name)
def test_a_fault_that_changes_vectors_fails_on_each_model(
    tmp_path: Path, model: FetchedModel, fault: str, fault_route: FaultRoute
) -> None:
    url = fault_route(fault, str(folder_of(model)))
    chosen = ",".join(sorted(MUTATIONS[fault]))
    run = run_suite(tmp_path, "--endpoint", url, *FAST, *PATIENT, "--requirements", chosen)
    assert run.returncode == 1, run.output
    failed = run.with_status("FAIL")
    assert MUTATIONS[fault] <= failed, f"{model.name} {fault}: failed {sorted(failed)}"
    assert f"reference: bundled golden {model.name}/sentence-transformers" in run.output


@pytest.mark.parametrize("model", MODELS, ids=by_name)
def test_a_model_served_under_another_name_is_identified_by_its_vectors(
    tmp_path: Path, model: FetchedModel
) -> None:
    alias = ALIASES[model.name]
    folder = str(folder_of(model))
    with reference_server("--model", folder, "--served-model-name", alias) as url:
        run = run_suite(tmp_path, "--endpoint", url, "--requirements", "reference.agreement")
    assert run.returncode == 0, run.output
    assert run.status("reference.agreement") == "PASS", run.output
    assert f"{model.name}/sentence-transformers" in run.output, run.output
    assert "identified by its vectors" in run.output, run.output


@pytest.mark.parametrize("model", MODELS, ids=by_name)
def test_the_bundled_golden_is_what_the_fetched_weights_give(
    tmp_path: Path, model: FetchedModel
) -> None:
    """Recorded again here from the fetched folder: the same weights (by hash), the same token
    ids, and vectors within the fp32 tier of the bundled ones (another CPU may round otherwise)."""
    folder = folder_of(model)
    out = tmp_path / "golden"
    assert main(["golden", "record", "--quiet", "--from", f"sentence-transformers:{folder}",
                 "--model", model.name, "--out", str(out)]) == 0  # fmt: skip
    bundled_path = bundled_golden(model.name)
    assert bundled_path is not None
    bundled, again = load_golden(bundled_path), load_golden(out)
    assert again.manifest["weights_sha256"] == bundled.manifest["weights_sha256"]
    assert again.manifest["case_ids"] == bundled.manifest["case_ids"]
    assert again.tokens == bundled.tokens
    tier = TIERS["fp32"]
    assert np.abs(again.vectors - bundled.vectors).max() <= tier.reference_atol
