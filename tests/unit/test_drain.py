"""The drain watcher's rule, with scripted checks: stop once every check reads 0 for
`settle` looks in a row; stop with EXIT_TIMEOUT when that never happens in time."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from memsieve.flow.drain import EXIT_TIMEOUT, Drain


def script(*values: int) -> Callable[[], int]:
    """A check returning `values` in turn, then the last one for ever."""
    it: Iterator[int] = iter(values)
    last = [values[-1]]

    def check() -> int:
        last[0] = next(it, last[0])
        return last[0]

    return check


def run(drain: Drain) -> list[bool]:
    stops: list[bool] = []
    drain.stop = stops.append
    drain.run()
    return stops


def test_stops_drained_only_after_settle_quiet_looks_in_a_row() -> None:
    calls = []
    busy = script(2, 1, 0, 0, 1, 0, 0, 0)  # quiet, then busy again (a retry), then quiet

    def counted() -> int:
        calls.append(1)
        return busy()

    drain = Drain([counted, script(0)], timeout=10, interval=0.001, settle=3)
    assert run(drain) == [True]
    assert drain.result == 0
    assert len(calls) == 8  # the 1 at look 5 reset the count: looks 6, 7, 8 end it


def test_any_check_with_work_keeps_it_running() -> None:
    drain = Drain([script(0), script(3, 3, 0)], timeout=10, interval=0.001, settle=2)
    assert run(drain) == [True] and drain.result == 0


def test_work_left_at_the_timeout_stops_it_with_a_failure_code() -> None:
    drain = Drain([script(0), script(1)], timeout=0.05, interval=0.001, settle=2)
    assert run(drain) == [False]
    assert drain.result == EXIT_TIMEOUT != 0


def test_a_failing_check_counts_as_work() -> None:
    looks = iter([RuntimeError("broker blip"), 0, 0])

    def flaky() -> int:
        value = next(looks, 0)
        if isinstance(value, Exception):
            raise value
        return value

    drain = Drain([flaky], timeout=10, interval=0.001, settle=2)
    assert run(drain) == [True] and drain.result == 0
