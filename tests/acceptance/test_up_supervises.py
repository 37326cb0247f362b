"""`memsieve up` supervises its worker (issue 13): a worker that exits is restarted with
backoff, the embedded PostgreSQL and Redis stay up, and events sent meanwhile are written."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from memsieve.cli.service import Supervised

from tests.support.cli import enqueue, written
from tests.support.up import Up, up_env
from tests.support.workers import wait_until


def _children(parent: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
                out.append(int(entry.name))
    return out


def _kill_tree(pid: int) -> None:
    """SIGKILL a worker and its pool processes, as the OOM killer or a crash would."""
    for p in [pid, *_children(pid)]:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _worker_pids(up_pid: int) -> list[int]:
    """`memsieve worker` processes whose parent is `up`."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == up_pid and b"worker" in cmd:
            pids.append(int(entry.name))
    return pids


def test_up_restarts_a_dead_worker_and_keeps_its_services(
    tmp_path: Path, services_home: Path
) -> None:
    env = up_env(services_home, MEMSIEVE_EMBEDDER="hashing", MEMSIEVE_FLOWER_PORT="0")
    with Up(env, tmp_path / "up.log") as up:
        assert wait_until(lambda: len(_worker_pids(up.pid)) == 1, timeout=30)
        first = _worker_pids(up.pid)[0]
        written(env, enqueue(env, "Pin the base image of every service.", "Images"))
        for round_ in (1, 2):
            _kill_tree(_worker_pids(up.pid)[0])
            assert wait_until(
                lambda r=round_: up.log().count("worker exited with code") == r, timeout=30
            )
            # Sent while no worker runs: waits on the queue, written by the next worker.
            eid = enqueue(env, f"Lesson number {round_}: rotate the deploy keys.", f"L{round_}")
            assert wait_until(
                lambda: (p := _worker_pids(up.pid)) != [] and p[0] != first, timeout=30
            )
            assert written(env, eid)["decision"] == "inserted"
            assert up.proc.poll() is None
        text = up.log()
        assert "restarting in 1 s" in text and "restarting in 2 s" in text
    text = up.log()
    assert up.code == 0, text[-3000:]
    assert "memsieve: stopped" in text


class _Exited:
    returncode = 3

    def poll(self) -> int:
        return 3


def test_backoff_doubles_up_to_a_minute_and_resets_after_a_healthy_run() -> None:
    now = [0.0]
    spawned: list[float] = []

    def spawn() -> _Exited:
        spawned.append(now[0])
        return _Exited()

    child = Supervised("worker", spawn, clock=lambda: now[0])  # type: ignore[arg-type]
    child.start()
    for _ in range(400):
        now[0] += 0.5
        child.tick()
    gaps = [b - a for a, b in zip(spawned, spawned[1:], strict=False)]
    # Each exit is seen at the next half-second tick, then waits out its delay.
    assert gaps[:8] == [1.5, 2.5, 4.5, 8.5, 16.5, 32.5, 60.5, 60.5]
    assert set(gaps[6:]) == {60.5}
    # A run of five minutes resets the delay.
    while child.restart_at is None:
        now[0] += 0.5
        child.tick()
    now[0] = child.restart_at
    child.tick()  # restarted now
    now[0] += Supervised.HEALTHY_AFTER
    child.tick()  # exits after a healthy run
    assert child.restart_at == now[0] + 1.0


def test_down_stops_a_running_up_before_its_services(tmp_path: Path, services_home: Path) -> None:
    """A black-box probe ran `memsieve down` beside `memsieve up`: the services stopped under
    the running worker, which retried a vanished Redis without end. `down` now stops `up`
    first (as Ctrl-C would), then the services."""
    import subprocess
    import sys

    from tests.support.paths import ROOT

    env = up_env(services_home, MEMSIEVE_EMBEDDER="hashing", MEMSIEVE_FLOWER_PORT="0")
    with Up(env, tmp_path / "up.log") as up:
        assert wait_until(lambda: len(_worker_pids(up.pid)) == 1, timeout=30)
        written(env, enqueue(env, "Pin the base image of every service.", "Images"))
        assert (services_home / "up.pid").read_text() == str(up.pid)
        down = subprocess.run(
            [sys.executable, "-m", "memsieve.cli.main", "down"],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=150,
        )
        assert down.returncode == 0, down.stdout + down.stderr
        assert f"stopping memsieve up (pid {up.pid})" in down.stdout
        assert up.proc.poll() is not None  # up had exited before down stopped the services
    text = up.log()
    assert up.code == 0, text[-3000:]
    assert "memsieve: stopped" in text and "Connection refused" not in text
    assert not (services_home / "up.pid").exists()
