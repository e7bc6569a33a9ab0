"""The bench's wait for a quiet machine: /proc/stat read as the kernel writes it, the wait ended
by a quiet sample or by its limit, and said so either way."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from conformance.bench.settle import (
    Settle,
    busy_cores,
    cpu_ticks,
    describe,
    steal_share,
    steal_ticks,
)

STAT = "cpu  100 5 50 1000 20 3 2 40 0 0\ncpu0 50 2 25 500 10 1 1 20 0 0\nintr 1 2 3\n"


def test_ticks_count_work_as_busy_and_leave_steal_out(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    stat.write_text(STAT)
    assert cpu_ticks(stat) == (100 + 5 + 50 + 3 + 2, 100 + 5 + 50 + 3 + 2 + 1000 + 20)
    assert cpu_ticks(tmp_path / "absent") is None


def test_steal_is_the_hypervisors_share_of_all_the_time(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    stat.write_text(STAT)
    before = steal_ticks(stat)
    assert before == (40, 100 + 5 + 50 + 1000 + 20 + 3 + 2 + 40)
    stat.write_text("cpu  130 5 50 1040 20 3 2 70 0 0\n")  # 100 ticks later, 30 of them stolen
    assert steal_share(before, steal_ticks(stat)) == 0.3
    assert steal_ticks(tmp_path / "absent") is None and steal_share(None, before) is None
    summary = {**Settle(sample=lambda: 0.0).summary(), "steal_share": 0.3}
    assert "the hypervisor took 30.0% of this machine's CPU time" in describe(summary)


def test_this_machine_reads_as_a_number_of_cores() -> None:
    load = busy_cores(0.05)
    assert load is not None and 0 <= load <= (os.cpu_count() or 1) + 0.01


def test_the_wait_ends_on_the_first_quiet_sample() -> None:
    samples = iter([1.0, 0.9, 0.1])
    wait = Settle(cores=0.5, limit_s=60, sample=lambda: next(samples))
    wait()
    assert len(wait.waits) == 1 and wait.busy == 0
    assert "0 of 1 requests sent with it still busy" in describe(wait.summary())


def test_a_machine_that_stays_busy_is_waited_for_only_up_to_the_limit() -> None:
    wait = Settle(cores=0.5, limit_s=0.0, sample=itertools.repeat(1.0).__next__)
    wait()
    wait()
    assert wait.busy == 2 and wait.summary()["timed_busy"] == 2
    assert "2 of 2 requests sent with it still busy after 0 s" in describe(wait.summary())


def test_no_proc_stat_no_wait_and_the_output_says_so() -> None:
    wait = Settle(sample=lambda: None)
    wait()
    assert wait.unreadable and wait.waits == []
    assert "cannot be read" in describe(wait.summary())
    off = Settle(cores=0, sample=lambda: 1 / 0)  # never sampled
    off()
    assert "off (--settle 0)" in describe(off.summary())
