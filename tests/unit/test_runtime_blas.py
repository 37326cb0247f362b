"""Each worker process runs its BLAS on one thread (memsieve.flow.runtime.one_blas_thread)."""

from __future__ import annotations

import subprocess
import sys


def test_one_blas_thread_limits_numpys_blas_in_the_process() -> None:
    code = (
        "import numpy\n"
        "from threadpoolctl import threadpool_info\n"
        "from memsieve.flow.runtime import one_blas_thread\n"
        "one_blas_thread()\n"
        "blas = [p for p in threadpool_info() if p['user_api'] == 'blas']\n"
        "assert blas, threadpool_info()\n"
        "print(sorted({p['num_threads'] for p in blas}))\n"
    )
    env = {"OPENBLAS_NUM_THREADS": "2", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[1]"
