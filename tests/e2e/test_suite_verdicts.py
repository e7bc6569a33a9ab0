"""The suite against the bundled reference server: clean on both transports it passes; each
planted fault fails the requirement that guards against it (the mutation table)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.requirements import BY_ID, CATALOGUE, GATE_PREFIX
from conformance.server.faults import FAULTS
from tests.conftest import FaultRoute, reference_server
from tests.support.suite_runner import SuiteRun, run_suite

# fault -> requirements that must FAIL on it (others may fail too). Every fault of the server
# is here, except those invisible from outside, which the server's own tests catch.
MUTATIONS = {
    "per-token": {
        "dimension.fixed-across-lengths",
        "envelope.embedding-number-array",
        "batch.single-vs-batch",  # rows of different lengths: not measurable, so FAIL
        "semantics.distinct-texts",
    },
    "no-normalize": {"normalization.unit-norm"},
    "cls-pooling": {"reference.agreement", "reference.token-ids"},
    "truncate-64": {"reference.agreement", "reference.over-context"},
    "fp16-vectors": {"reference.agreement"},
    "padding-unmasked": {"batch.single-vs-batch"},
    "noise": {"determinism.repeat"},
    "dimensions-ignored": {"dimensions.honoured"},
    "one-vector": {
        "reference.agreement",
        "reference.retrieval",
        "semantics.distinct-texts",
        "semantics.paraphrase-closer",
    },
    "dimensions-not-renormalized": {"dimensions.renormalized"},
    "nan-whitespace": {"finite.values"},
    "null-thai": {"reference.agreement", "batch.large"},  # not measurable: FAIL, not SKIPPED
    # ctl-nul-*: the text after U+0000 lost, alone and in a batch alike (so batch.large passes;
    # usage.counts-tokens does not judge the count of a case whose vector turned away)
    "cut-at-nul": {"reference.agreement"},
    # another tokenizer for Hangul and Devanagari: one root cause, one FAIL (tested below too)
    "another-tokenizer": {"reference.agreement"},
    # a task prefix the client did not send, on text (token ids are embedded as sent)
    "prefix-added": {"reference.agreement"},
    "usage-characters": {"usage.counts-tokens"},
    "chunks-reversed": {"batch.large"},  # batches of up to 32 are right
    "duplicates-misaligned": {"batch.duplicates"},
    "token-ids-as-text": {"input.token-ids", "input.token-id-arrays"},
    "big-endian-base64": {"base64.float-parity", "base64.openai-client"},
    "float16-base64": {"base64.decodes"},
    "base64-ignored": {"base64.honoured"},
    "rows-reversed": {
        "batch.single-vs-batch",
        "batch.permutation",
        "semantics.paraphrase-closer",
    },
    "wrong-index": {"envelope.index-order"},
    "missing-usage": {"envelope.usage"},
    "500-on-bad-input": {"errors.rejected", "fuzz.robust"},
    "cross-talk": {"concurrency.isolation"},
    # one request of more than 128 tokens (each heaviest request, sent right before the canary)
    # poisons the route: state.unchanged is the only requirement run, and fails
    "zeros-after-long-request": {"state.unchanged"},
    "coerced-then-ignored": {"errors.lenient-but-right"},  # '32' read as 32, then dropped
    "plain-text-as-input": {"errors.lenient-but-right"},  # text/plain accepted, misread
    # model-specific: each runs on the derived variant that has the feature it breaks
    # (batch rows equal single answers there: batch.large passes, one cause fails once)
    "dense-skipped": {"dimension.expected", "reference.agreement"},
    "forced-normalize": {"reference.agreement"},  # same direction, wrong length
    "mean-pooling": {"reference.agreement", "reference.token-ids"},
    "last-token-padded": {"batch.single-vs-batch", "batch.duplicates", "reference.agreement"},
    # --- issue 57 (item 3): the bugs of a tokenizer, the positions and the context ---
    # (the server counts the tokens it embedded, one fewer: a count with [CLS] and without
    # [SEP], which usage.counts-tokens accepts; the vectors are reference.*'s to fail)
    "no-sep": {"reference.agreement"},
    "positions-shifted": {"reference.agreement", "reference.token-ids"},
    "context-of-positions": {"reference.over-context"},  # inputs of 257-512 tokens, embedded whole
    # --- issue 28 (items 3, 5) ---
    "null-refused": {"input.null-optional-fields"},  # a SHOULD: warns, the run passes
    "503-after-rejection": {"errors.recovers"},  # the first answer judged, never a retried one
    # --- issue 34 (item 3): an unknown encoding_format ---
    "unknown-format-as-float": {"errors.unknown-value-rejected"},  # a SHOULD: warns, passes
    "unknown-format-as-base64": {"errors.lenient-but-right"},  # strings where floats are owed
    # --- issue 35: request shapes (concurrency.isolation's 16 distinct texts pass both bursts') ---
    "equal-lengths-unmasked": {"batch.request-shapes"},
    "overlong-shifts-rows": {"batch.request-shapes"},
    "step-boundary-tail": {"batch.documented-limits"},  # the request of 32,000+ tokens
    "500-past-256-inputs": {"batch.documented-limits"},
    "large-batch-sorted": {"batch.documented-limits"},  # the request of 2,048 inputs
    "shared-inflight-cache": {"concurrency.mixed-bursts"},
    "merged-batch-index": {"concurrency.mixed-bursts"},
    "stale-after-huge-request": {"state.unchanged"},  # the canary right after 32,000+ tokens
    "native-dimensions-refused": {"dimensions.native"},
    "user-refused": {"input.user-field"},
}
INVISIBLE = {
    "leak-shm": "the client sees correct answers; tests/server/test_shm.py counts the segments",
    "token-ids-rejected": "not a bug: must be UNSUPPORTED (tested below)",
    "empty-input-200": "not a bug: [] answered with no vectors is a SHOULD warning (tested below)",
    "wedged-worker": "fails whatever runs after the hang; tests/e2e/test_suite_hung.py times it",
}
# fault -> requirements run with its row that must PASS: the fault is one cause, judged once
ALSO_PASS = {
    "missing-usage": {"base64.openai-client"},  # the SDK's answer read without usage
    # issue 57, item 4, at the loosest tier: the norm is normalization's; a token count that
    # follows the server's own tokenization is not counted against it again
    "no-normalize": {"reference.agreement", "reference.token-ids", "reference.over-context"},
    "no-sep": {"usage.counts-tokens"},
    "another-tokenizer": {"usage.counts-tokens"},
}
# fault -> {requirement: the FAILs it follows from}: FAILs that say nothing their cause does not
# (one cause, one FAIL; conformance/verdicts/causes.py). Each stays FAIL and names its cause.
FOLLOWS = {
    "base64-ignored": {
        "base64.decodes": ["base64.honoured"],
        "base64.float-parity": ["base64.honoured", "base64.decodes"],
    },
    "dimensions-ignored": {"dimensions.renormalized": ["dimensions.honoured"]},
    "missing-usage": {"usage.counts-tokens": ["envelope.usage"]},
    # vectors of another length cannot be compared with the reference's or with each other
    "dense-skipped": {"reference.agreement": ["dimension.expected"]},
    "per-token": {
        "batch.single-vs-batch": ["dimension.fixed-across-lengths"],
        "semantics.distinct-texts": ["dimension.fixed-across-lengths"],
    },
}
# Each row runs at the loosest tier, q4_k_m (MiniLM's own limits, its reference's model): the
# tiers nest (tests/tolerances/), so a fault caught there is caught at q8_0 and fp32 too. A row
# q4_k_m cannot see runs at the loosest tier that does; docs/tiers/faults.md shows each.
LOOSEST = "q4_k_m"
SEEN_ONLY_AT = {
    "fp16-vectors": "fp32",  # float16 rounding of the output: what fp16 and looser allow
    "noise": "fp16",  # sd 1e-3 per element (|Δ| ~6e-3): inside bf16's, q8_0's and q4_k_m's limits
    # 1 - cosine 0.099 on the longest input, inside MiniLM's own q4_k_m limit, 0.1 (its worst
    # corpus input, 0.035, times 2); against the golden of the served weights the kernel tier
    # sees it (docs/tiers/faults.md)
    "context-of-positions": "q8_0",
}
# Fewer generated bodies and no generated request shapes: the fixed shapes show each shape fault
FAST = ("--fuzz-examples", "30", "--shape-examples", "0")
# Faults whose row needs only some of its requirements' tests: one failing test fails the
# requirement, and the others would only cost time. 503-after-rejection: each of errors.recovers'
# 26 tests waits out a client's backoff (1.5 s) for the retries it reports; two show it.
NARROWED = {"503-after-rejection": ("-k", "malformed or nested")}
IN_PLAY = {r.id for r in CATALOGUE if not r.id.startswith(GATE_PREFIX)}  # no --baseline given


def suite_against(tmp_path: Path, *server_args: str, suite_args: tuple[str, ...] = ()) -> SuiteRun:
    with reference_server(*server_args) as base_url:
        return run_suite(tmp_path, "--endpoint", base_url, *suite_args)


def test_every_fault_is_in_the_mutation_table() -> None:
    assert set(MUTATIONS) | set(INVISIBLE) == set(FAULTS)


# The correct server's full run: the README's shortest workflow through the GitHub Action, a
# signed certification run with an API key, every report written, on the transport 'auto' picks
# (tests/support/certified_run.py); base64 answers every request alike, byte for byte
# (tests/server/test_machinery.py).


def test_matryoshka_variant_truncated_without_renormalizing_fails(
    tmp_path: Path, fault_route: FaultRoute
) -> None:
    url = fault_route("dimensions-not-renormalized", "minilm-matryoshka")
    run = run_suite(tmp_path, "--endpoint", url, "--requirements", "dimensions.")
    assert run.returncode == 1, run.output
    assert run.with_status("FAIL") == {"dimensions.renormalized"}, run.output


# What a model's vectors decide; the envelope, input forms, errors, the fuzzer's answers, the
# request shapes and the state canary are the server's, the same whatever model it serves
# (judged on the bundled model above). Without state.*, no run of these sends the heaviest
# requests (2,048 inputs, 32,000 tokens): 13 s of each run on an idle machine.
BY_MODEL = (
    "dimension.", "finite.", "normalization.", "dimensions.", "batch.single-vs-batch",
    "batch.permutation", "batch.large", "batch.duplicates", "determinism.",
    "concurrency.isolation", "usage.", "semantics.", "reference.", "base64.float-parity",
)  # fmt: skip
JUDGED_BY_MODEL = {r for r in IN_PLAY if r.startswith(BY_MODEL)}


@pytest.mark.parametrize(
    "model", ["minilm-cls-dense-256", "minilm-matryoshka", "minilm-last-token"]
)
@pytest.mark.slow
def test_a_correct_server_passes_every_requirement_on_each_variant(
    tmp_path: Path, model: str, fault_route: FaultRoute
) -> None:
    """Other poolings, a Dense projection, no normalization: each against its bundled golden
    (served by the variant's fault server, on its correct /v1 routes)."""
    url = fault_route(model=model)
    run = run_suite(tmp_path, "--endpoint", url, "--requirements", ",".join(BY_MODEL))
    assert run.returncode == 0, run.output
    unnormalized = {"normalization.unit-norm"} if model == "minilm-cls-dense-256" else set()
    expected = JUDGED_BY_MODEL - unnormalized
    assert run.with_status("PASS") == expected, run.output
    assert f"reference: bundled golden {model}/sentence-transformers" in run.output


@pytest.mark.parametrize("fault", sorted(MUTATIONS))
def test_planted_bug_fails_the_right_requirement(
    tmp_path: Path, fault: str, fault_route: FaultRoute
) -> None:
    # Only the requirements that must fail are run (--requirements), which keeps the table
    # fast; the correct server's runs above and below run everything. Each fault is served
    # under its route of one server per model (tests/server/test_fault_routes.py shows a
    # route answers as a server started with --fault does).
    passing, following = ALSO_PASS.get(fault, set()), FOLLOWS.get(fault, {})
    chosen = ",".join(sorted(MUTATIONS[fault] | passing | set(following)))
    url = fault_route(fault, FAULTS[fault].model)
    narrowed = NARROWED.get(fault, ())
    tier = ("--precision", SEEN_ONLY_AT.get(fault, LOOSEST))
    run = run_suite(tmp_path, "--endpoint", url, *FAST, *tier, "--requirements", chosen, *narrowed)
    musts = [r for r in MUTATIONS[fault] if BY_ID[r].level == "MUST"]
    assert run.returncode == (1 if musts else 0), run.output  # a failed SHOULD only warns
    failed = run.with_status("FAIL")
    assert MUTATIONS[fault] <= failed, f"{fault}: failed {sorted(failed)}\n{run.output}"
    assert passing <= run.with_status("PASS"), run.output
    assert run.results is not None
    named = {r["id"]: r.get("follows_from", []) for r in run.results["requirements"]}
    assert all(not named[r] for r in MUTATIONS[fault] - set(following)), run.output
    assert {r: named[r] for r in following} == following, run.output
    for requirement_id in MUTATIONS[fault]:  # the failure message (or warning) names it
        assert f"{BY_ID[requirement_id].level} {requirement_id}]" in run.output
    assert "reproduce: curl" in run.output


# batch.* but the requests at OpenAI's limits (2,048 inputs, 32,000 tokens: ~13 CPU-s a run), which
# judge their rows against their inputs alone as batch.large does, on inputs of the same pool as
# batch.request-shapes (the correct server's full run judges them)
BATCH_BELOW_THE_LIMITS = (
    "batch.single-vs-batch,batch.permutation,batch.large,batch.duplicates,batch.request-shapes"
)


@pytest.mark.slow
def test_another_tokenizer_fails_the_reference_requirements_only(
    tmp_path: Path, fault_route: FaultRoute
) -> None:
    """Hangul and Devanagari tokenized otherwise, consistently alone and in batches, usage
    counting the tokens embedded: reference.* fails it, usage and batch requirements do not
    count it again, and usage.counts-tokens names the counts it did not judge, and why."""
    chosen = f"reference.,usage.,{BATCH_BELOW_THE_LIMITS},semantics."
    url = fault_route("another-tokenizer")
    run = run_suite(tmp_path, "--endpoint", url, "--requirements", chosen, *FAST)
    assert run.returncode == 1, run.output
    failed = run.with_status("FAIL")
    assert "reference.agreement" in failed, run.output
    assert all(r.startswith("reference.") for r in failed), run.output
    for requirement_id in ("usage.counts-tokens", "batch.large", "batch.single-vs-batch"):
        assert run.status(requirement_id) == "PASS", run.output
    assert run.results is not None
    (counts,) = (r for r in run.results["requirements"] if r["id"] == "usage.counts-tokens")
    detail = counts["worst_cases"][0]["detail"]
    assert "not judged, tokenized otherwise (see reference.agreement): " in detail, detail
    assert "ko-" in detail and "hi-" in detail, detail


@pytest.mark.slow
def test_the_state_canary_is_asked_again_after_every_worker_has_finished(tmp_path: Path) -> None:
    """Under xdist the controller asks the canary at the run's end, after the last test of every
    worker, and names that test; a server of its own, so that no other run's long request has
    poisoned it before this run's first canary."""
    suite_args = ("-n", "2", "--requirements", "state.unchanged")
    run = suite_against(tmp_path, "--fault", "zeros-after-long-request", suite_args=suite_args)
    assert run.returncode == 1, run.output
    assert run.status("state.unchanged") == "FAIL"
    assert run.results is not None
    failures = [f["test"] for r in run.results["requirements"] for f in r["failures"]]
    assert "state canary: the run's end" in failures, run.output
    assert "FAILED state canary: the run's end" in run.output
    assert "the canary right after 2048 inputs in one request (answered HTTP 200)" in run.output
    end = run.output[run.output.index("the canary at the run's end, after its last test") :]
    assert end.splitlines()[0].count("test_state.py::test_the_canary_is_unchanged") == 1


# The requirements whose requests carry what a request validator judges: names, types, values
REQUEST_READING = ("envelope.", "input.", "base64.", "dimensions.", "errors.", "fuzz.")


@pytest.mark.slow
def test_a_lenient_but_right_server_passes_every_must(tmp_path: Path) -> None:
    """text/plain read as JSON, any model name served, '32' and [0, "0"] read as numbers: no
    rule of the API is broken, so only the hygiene SHOULDs are reported, each with its reason
    (and 400 fuzzed bodies find no 'invalid' one it accepts). Only the requirements whose
    requests a lax validator can read otherwise are run: a valid request reads alike on both,
    so the vectors are the clean server's, judged above."""
    suite_args = ("--fuzz-examples", "400", "--requirements", ",".join(REQUEST_READING))
    run = suite_against(tmp_path, "--lenient", suite_args=suite_args)
    assert run.returncode == 0, run.output
    judged = {r for r in IN_PLAY if r.startswith(REQUEST_READING)}
    assert run.with_status("PASS") | run.with_status("FAIL") == judged, run.output
    assert run.with_status("FAIL") == {
        "errors.unknown-model",
        "errors.content-type",
        "errors.unknown-value-rejected",  # an unknown encoding_format answered with floats
    }
    assert run.status("errors.lenient-but-right") == "PASS"
    assert "rejecting it matters: a browser sends text/plain cross-site" in run.output
    assert "rejecting it matters: single-model servers" in run.output
    assert "rejecting it matters: no client sends one" in run.output
    assert "(3 SHOULD warnings)" in run.output


@pytest.mark.slow
def test_a_short_context_enforced_with_400s_passes_every_must(tmp_path: Path) -> None:
    """Inputs past a 128-token context refused the vLLM way (a clean 400, max_model_len listed):
    the long inputs are cut to fit, and corpus inputs past it are not owed an answer."""
    run = suite_against(tmp_path, "--max-model-len", "128", suite_args=FAST)
    assert run.returncode == 0, run.output
    assert run.with_status("PASS") == IN_PLAY, run.output
    assert "reference.agreement: refused, past the context of 128 tokens: en-para-01" in run.output


def test_a_limit_of_32_inputs_per_request_is_no_red(tmp_path: Path) -> None:
    """TEI's default: more than 32 inputs in one request refused with a clean 413. The corpus's
    43 token-id inputs go in batches, as its texts do, and are judged; a batch of 128 is a limit,
    UNSUPPORTED. (The full run against such a server passes every MUST: issue 58's note.)"""
    chosen = ("--requirements", "reference.token-ids,batch.large")
    run = suite_against(tmp_path, "--max-batch", "32", suite_args=(*FAST, *chosen))
    assert run.returncode == 0, run.output
    assert run.status("reference.token-ids") == "PASS", run.output
    assert run.status("batch.large") == "UNSUPPORTED", run.output
    assert "128 inputs in one request cleanly refused with HTTP 413" in run.output


def test_cleanly_refusing_an_optional_feature_is_unsupported(
    tmp_path: Path, fault_route: FaultRoute
) -> None:
    url = fault_route("token-ids-rejected")  # the input forms: the others judge it as any server
    run = run_suite(tmp_path, "--endpoint", url, "--requirements", "input.")
    assert run.returncode == 0, run.output
    assert run.status("input.token-ids") == "UNSUPPORTED"
    assert run.status("input.token-id-arrays") == "UNSUPPORTED"
    assert "token-id input cleanly refused with HTTP 400" in run.output


def test_an_empty_list_answered_with_no_vectors_is_only_a_warning(
    tmp_path: Path, fault_route: FaultRoute
) -> None:
    """[] breaks the schema (at least one input) but the answer, no vectors, is consistent:
    hygiene, reported under input.empty-rejected with its reason, never a failed MUST."""
    chosen = "input.empty-rejected,errors.rejected,errors.no-5xx,fuzz.robust"
    url = fault_route("empty-input-200")
    fuzzed = ("--fuzz-examples", "200")  # enough to draw input [] (as hygiene, not 'invalid')
    run = run_suite(tmp_path, "--endpoint", url, *fuzzed, "--requirements", chosen)
    assert run.returncode == 0, run.output
    assert run.with_status("FAIL") == {"input.empty-rejected"}, run.output
    assert "input is []; rejecting it matters: the API's schema asks for" in run.output


# Every requirement an answer to an unknown encoding_format could fail
UNKNOWN_FORMAT_JUDGES = (
    "errors.unknown-value-rejected,errors.rejected,errors.no-5xx,errors.lenient-but-right,"
    "errors.envelope,errors.recovers,fuzz.robust"
)


def test_an_unknown_encoding_format_answered_as_if_absent_is_only_a_warning(
    tmp_path: Path, fault_route: FaultRoute
) -> None:
    """'unknown', '' and 123 answered with the floats of the request without them: hygiene,
    reported under errors.unknown-value-rejected with its reason, never a failed MUST (the
    fuzzer draws such bodies too: 200 examples, and it must not demand a 4xx of them)."""
    url = fault_route("unknown-format-as-float")
    fuzzed = ("--fuzz-examples", "200")
    run = run_suite(tmp_path, "--endpoint", url, *fuzzed, "--requirements", UNKNOWN_FORMAT_JUDGES)
    assert run.returncode == 0, run.output
    assert run.with_status("FAIL") == {"errors.unknown-value-rejected"}, run.output
    assert run.status("errors.lenient-but-right") == "PASS"  # measured: the same floats
    assert run.status("fuzz.robust") == "PASS"
    assert "encoding_format 'unknown'; rejecting it matters: no client sends one" in run.output


@pytest.mark.parametrize(
    ("fault", "must"),
    [
        ("500-on-bad-input", "errors.no-5xx"),
        ("unknown-format-as-base64", "errors.lenient-but-right"),
    ],
)
def test_an_unknown_encoding_format_answered_wrongly_still_fails_a_must(
    tmp_path: Path, fault_route: FaultRoute, fault: str, must: str
) -> None:
    """Only the three encoding_format cases are sent (-k): a 5xx to them fails errors.no-5xx,
    and base64 where the request without the field gets floats fails
    errors.lenient-but-right; each is a MUST, so the run fails."""
    url = fault_route(fault)
    run = run_suite(
        tmp_path, "--endpoint", url, "--requirements", must, "-k", "encoding-format", *FAST
    )
    assert run.returncode == 1, run.output
    assert run.with_status("FAIL") == {must}, run.output
    assert f"[MUST {must}]" in run.output and "encoding_format" in run.output


def test_fuzzing_reports_the_planted_5xx_with_a_reproducer(
    tmp_path: Path, fault_route: FaultRoute
) -> None:
    run = run_suite(tmp_path, "--endpoint", fault_route("500-on-bad-input"), "-k", "fuzz")
    assert run.status("fuzz.robust") == "FAIL"  # within the default budget of 100 examples
    message = run.output[run.output.index("[MUST fuzz.robust]") :]
    assert "measured HTTP 500 vs allowed < 500" in message
    assert "reproduce: curl" in message


def test_without_a_reference_a_large_batch_is_checked_against_single_requests(
    tmp_path: Path, fault_route: FaultRoute
) -> None:
    url = fault_route("chunks-reversed")
    run = run_suite(tmp_path, "--endpoint", url, "--reference", "none", "-k", "batch")
    assert run.status("batch.large") == "FAIL", run.output
    assert "row i of one request of 128 inputs vs input i sent alone" in run.output
    assert run.status("batch.single-vs-batch") == "PASS"  # 32 inputs: one chunk, right


def test_failure_message_explains_itself(tmp_path: Path, fault_route: FaultRoute) -> None:
    base_url = fault_route("no-normalize")
    run = run_suite(tmp_path, "--endpoint", base_url, "-k", "normalization.unit-norm:batch")
    message = run.output[run.output.index("[MUST normalization.unit-norm]") :]
    assert "measured" in message and "vs allowed <= 0.001" in message
    assert "input: case 'batch-" in message
    assert f"reproduce: curl -sS {base_url}/v1/embeddings" in message


@pytest.mark.slow
def test_parallel_run_still_fails_a_broken_server(tmp_path: Path, fault_route: FaultRoute) -> None:
    chosen = ("--requirements", f"normalization.,reference.,{BATCH_BELOW_THE_LIMITS}", *FAST)
    run = run_suite(tmp_path, "--endpoint", fault_route("no-normalize"), "-n", "2", *chosen)
    assert run.returncode == 1, run.output
    # exactly the serial verdicts, the norm judged once: the vectors' directions are the
    # reference's, and batch rows still equal the server's own single answers
    assert run.with_status("FAIL") == {"normalization.unit-norm"}, run.output


def test_core_profile_runs_only_core_requirements(clean_server: str, tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--endpoint", clean_server, "--conformance-profile", "core")
    assert run.returncode == 0, run.output
    assert run.status("batch.single-vs-batch") == "NOT RUN"
    assert run.status("normalization.unit-norm") == "PASS"


def test_requirements_option_runs_only_those(clean_server: str, tmp_path: Path) -> None:
    chosen = "reference.,usage.counts-tokens"
    run = run_suite(tmp_path, "--endpoint", clean_server, "--requirements", chosen)
    assert run.returncode == 0, run.output
    ran = {r for r in IN_PLAY if r.startswith("reference.")} | {"usage.counts-tokens"}
    assert run.with_status("PASS") == ran
    assert run.status("batch.large") == "NOT RUN"
    unknown = run_suite(tmp_path, "--endpoint", clean_server, "--requirements", "nosuch.thing")
    assert unknown.returncode == 4
    assert "--requirements: no requirement nosuch.thing in the catalogue" in unknown.output


@pytest.mark.slow
def test_float16_vectors_fail_at_fp32_and_pass_at_fp16(
    tmp_path: Path, fault_route: FaultRoute
) -> None:
    base_url = fault_route("fp16-vectors")
    # the corpus test alone: the message is what this shows (the row above judges the verdict)
    strict = run_suite(tmp_path, "--endpoint", base_url, "-k", "every_input_agrees", *FAST)
    by_model = ("--requirements", ",".join(BY_MODEL))  # where the precision tier applies
    half = run_suite(tmp_path, "--endpoint", base_url, "--precision", "fp16", *by_model)
    assert strict.status("reference.agreement") == "FAIL", strict.output
    message = strict.output[strict.output.index("[MUST reference.agreement]") :]
    assert "max |Δ| per input" in message and "vs allowed <= 1e-05" in message
    assert half.returncode == 0, half.output
    assert half.with_status("PASS") == JUDGED_BY_MODEL, half.output


def test_wrong_pooling_is_named_by_cosine_with_the_worst_cases(
    tmp_path: Path, fault_route: FaultRoute
) -> None:
    base_url = fault_route("cls-pooling")
    run = run_suite(tmp_path, "--endpoint", base_url, "-k", "every_input_agrees")
    message = run.output[run.output.index("[MUST reference.agreement]") :]
    assert "1 - cosine per input, worst " in message
    assert "input: case '" in message and "reproduce: curl" in message


def test_a_failing_request_shape_is_shrunk_to_the_smallest_and_reproduced(
    tmp_path: Path, fault_route: FaultRoute
) -> None:
    """The fixed shapes (at most 40 inputs) pass a server that fails past 256 inputs; the
    generated ones find it, and Hypothesis shrinks the failing shape to 257 inputs: the message
    names that shape, and its seed draws the same requests again."""
    url = fault_route("500-past-256-inputs")
    run = run_suite(tmp_path, "--endpoint", url, "--requirements", "batch.request-shapes")
    assert run.returncode == 1, run.output
    message = run.output[run.output.index("[MUST batch.request-shapes]") :]
    assert "measured HTTP 500 vs allowed HTTP 200 with an embeddings envelope" in message
    assert "Shape(kind='mixed', size=257, variant=0, seed=0): 257 inputs" in message
    assert "reproduce: curl" in message
    assert "drawn with --shape-seed 20261204, --shape-examples 6" in run.output
