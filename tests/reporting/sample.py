"""A realistic results document for the renderers' tests: every status, a SHOULD warning,
hostile server text in failures, and enough series data to draw every plot."""

from __future__ import annotations

import copy
import math
import random
from typing import Any

HOSTILE = "<script>alert(1)</script>"
REPRODUCER = (
    "curl -sS http://127.0.0.1:8000/v1/embeddings -H 'Content-Type: application/json' "
    '-H "Authorization: Bearer $EMBEDDINGS_API_KEY" '
    '-d \'{"model": "all-MiniLM-L6-v2", "input": ["a | b", "c"]}\''
)


def _requirement(id_: str, level: str, status: str, **fields: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": id_,
        "area": id_.partition(".")[0],
        "level": level,
        "status": status,
        "why": f"What a client loses when {id_} breaks.",
        "guards": "a real-world bug",
        "tests": 0 if status == "NOT RUN" else 2,
        "duration_s": 0.0 if status == "NOT RUN" else 0.125,
        "measured": None,
        "limit": None,
        "margin": None,
        "worst_cases": [],
        "failures": [],
        "notes": [],
        "reason": "",
    }
    entry.update(fields)
    return entry


def _requirements() -> list[dict[str, Any]]:
    agreement_failure = {
        "test": "test_reference.py::test_agreement[long-text]",
        "detail": f"1 - cosine 0.0021 > 1e-05 for case long-text; server said {HOSTILE}",
        "response": f'HTTP 200 application/json\n{{"object": "list", "model": "{HOSTILE}"}}',
        "reproducer": REPRODUCER,
    }
    return [
        _requirement(
            "envelope.object-list",
            "MUST",
            "PASS",
            worst_cases=[
                {
                    "test": "test_envelope.py::test_object",
                    "case": None,
                    "passed": True,
                    "measured": "list",
                    "limit": "== list",
                    "margin": None,
                    "detail": "top-level object",
                }
            ],
        ),
        _requirement(
            "normalization.unit-norm",
            "MUST",
            "PASS",
            measured=1.19e-7,
            limit="<= 0.001",
            margin=0.000999881,
            notes=["norms checked on 50 inputs"],
        ),
        _requirement(
            "reference.agreement",
            "MUST",
            "FAIL",
            measured=0.0021,
            limit="<= 1e-05",
            margin=-0.00209,
            failures=[agreement_failure],
            worst_cases=[
                {
                    "test": "test_reference.py::test_agreement[long-text]",
                    "case": "long-text",
                    "passed": False,
                    "measured": 0.0021,
                    "limit": "<= 1e-05",
                    "margin": -0.00209,
                    "detail": "1 - cosine to the reference",
                },
                {
                    "test": "test_reference.py::test_agreement[short]",
                    "case": "short",
                    "passed": True,
                    "measured": 0.0,
                    "limit": "<= 1e-05",
                    "margin": 1e-05,
                    "detail": "1 - cosine to the reference",
                },
            ],
        ),
        _requirement(
            "errors.content-type",
            "SHOULD",
            "FAIL",
            measured="text/plain | charset=utf-8",
            limit="== application/json",
            failures=[
                {
                    "test": "test_errors.py::test_content_type",
                    "detail": "error body sent as text/plain | charset=utf-8 \x1b[31mred\x1b[0m",
                    "response": "HTTP 400 text/plain\nbad request | try again",
                    "reproducer": REPRODUCER,
                }
            ],
        ),
        _requirement(
            "input.token-ids",
            "MUST",
            "STALE",
            known_failure={"reason": "vLLM issue 1234", "link": None, "case": None},
        ),
        _requirement(
            "batch.large",
            "MUST",
            "XFAIL",
            known_failure={"reason": "server caps batches at 32", "link": None, "case": None},
            failures=[
                {
                    "test": "test_batch.py::test_large",
                    "detail": "HTTP 413 for 256 inputs",
                    "response": "HTTP 413 text/plain\ntoo large",
                    "reproducer": None,
                }
            ],
        ),
        _requirement(
            "dimensions.honoured",
            "MUST",
            "UNSUPPORTED",
            reason="the server rejects the dimensions parameter with a 400",
            capability={"name": "dimensions", "declared": False, "judgement": "not offered"},
        ),
        _requirement(
            "reference.token-ids",
            "MUST",
            "SKIPPED",
            reason="the reference has no tokenizer",
        ),
        _requirement(
            "concurrency.isolation",
            "MUST",
            "NOT RUN",
            reason="deselected (-k, -m or --requirements)",
        ),
    ]


def _series() -> dict[str, Any]:
    rng = random.Random(7)  # the same plots every run
    norms = [
        {"case": f"text-{i}", "value": 1.0 + rng.uniform(-2e-7, 2e-7), "limit": None}
        for i in range(50)
    ]
    agreement = []
    for i in range(50):
        value = 0.0 if i % 7 == 0 else 10 ** rng.uniform(-9, -6)
        agreement.append({"case": f"case-{i} | {HOSTILE}", "value": value, "limit": 1e-05})
    agreement[-1]["value"] = 0.0021  # the failing case
    latency = [
        {
            "test": f"test_{i % 6}[{HOSTILE}]",
            "seconds": round(math.exp(rng.gauss(math.log(0.012), 0.5)), 6),
            "status": 200,
            "inputs": 1 + i % 4,
        }
        for i in range(60)
    ]
    latency[17].update(seconds=1.8, inputs=256, status=413)  # the large batch
    latency[41].update(seconds=30.0, status=0)  # a timeout: no answer
    return {"norms": norms, "agreement": agreement, "latency": latency}


def sample_document(**overrides: Any) -> dict[str, Any]:
    """A schema-valid failing run; each keyword replaces one top-level key."""
    document: dict[str, Any] = {
        "format": 1,
        "suite": {
            "name": "embedding-conformance",
            "version": "0.9.0",
            "catalogue_sha256": "3f" * 32,
        },
        "run": {
            "started": "2025-06-01T12:00:00+00:00",
            "finished": "2025-06-01T12:01:23+00:00",
            "duration_s": 83.4,
            "profile": "full",
            "precision": "fp32",
            "tolerances": {
                "vector_atol": 1e-05,
                "norm_atol": 0.001,
                "base64_atol": 1e-05,
                "reference_atol": 1e-05,
                "cosine_atol": 1e-05,
                "retrieval_tie": 5e-07,
            },
            "selection": {"requirements": None, "keyword": None, "markers": None, "deselected": 1},
            "certify": True,
            "known_failures": "known-failures.toml",
            "capabilities": None,
            "requests": {"sent": 1234, "retries": 12, "tokens": 98765, "untold": 1},
        },
        "endpoint": {
            "url": "http://127.0.0.1:8000/v1/embeddings",
            "model": "all-MiniLM-L6-v2",
            "options": {"api_key": "<redacted>", "timeout": 30.0, "batch_size": 32},
        },
        "server": {
            "models": ["all-MiniLM-L6-v2"],
            "server_header": f"uvicorn {HOSTILE}",
            "version": "0.32.0",
        },
        "reference": {
            "kind": "golden",
            "spec": "golden:all-MiniLM-L6-v2",
            "name": "all-MiniLM-L6-v2",
            "sha256": "ab" * 32,
            "source": "sentence-transformers 3.0.1",
            "description": "golden all-MiniLM-L6-v2 (sentence-transformers 3.0.1)",
        },
        "verdict": "FAIL",
        "counts": {
            "passed": 2,
            "failed": 1,
            "warnings": 1,
            "unsupported": 1,
            "not_applicable": 1,
            "not_run": 1,
            "xfail": 1,
            "stale": 1,
        },
        "requirements": _requirements(),
        "series": _series(),
        "certification": {
            "certified": False,
            "reasons": ["reference.agreement failed", "input.token-ids: known failure is stale"],
        },
        "integrity": {"digest": {"algorithm": "sha256", "value": "cd" * 32}},
    }
    document.update(copy.deepcopy(overrides))
    return document
