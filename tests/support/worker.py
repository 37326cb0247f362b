"""`memsieve worker` with the test fault hooks: python -m tests.support.worker [ARGS...].

Run from the repository root (the acceptance fixtures do). Installs tests/support/faults.py's
hooks that the environment asks for, then runs `memsieve worker ARGS...` in this process.
"""

from __future__ import annotations

import sys

from memsieve.cli.main import main

from tests.support import faults

if __name__ == "__main__":
    faults.install()
    sys.exit(main(["worker", *sys.argv[1:]]))
