"""The workers' runtime settings: ours by default, the user's when given."""

from __future__ import annotations

from conformance.server.runtime import worker_environment


def test_workers_spin_briefly_for_openmp_work_by_default() -> None:
    environment = worker_environment({"PATH": "/bin"})
    assert environment["GOMP_SPINCOUNT"] == "30000"
    assert "OMP_WAIT_POLICY" not in environment
    assert environment["PATH"] == "/bin"


def test_a_users_wait_policy_is_not_overridden_by_our_spin_count() -> None:
    # libgomp lets GOMP_SPINCOUNT override OMP_WAIT_POLICY: setting ours would undo the user's.
    environment = worker_environment({"OMP_WAIT_POLICY": "PASSIVE"})
    assert environment["OMP_WAIT_POLICY"] == "PASSIVE"
    assert "GOMP_SPINCOUNT" not in environment


def test_the_users_settings_win() -> None:
    environment = worker_environment({"GOMP_SPINCOUNT": "0", "MALLOC_TRIM_THRESHOLD_": "1"})
    assert environment["GOMP_SPINCOUNT"] == "0"
    assert environment["MALLOC_TRIM_THRESHOLD_"] == "1"
