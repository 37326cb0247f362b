"""What a fresh interpreter has imported after running some code: how the tests keep a
command's start-up free of what it does not use."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable


def loaded_after(code: str, modules: Iterable[str]) -> list[str]:
    """Of `modules`, those a new `python -c` process holds in sys.modules after `code`."""
    names = list(modules)
    probe = (
        f"{code}\nimport json, sys\nprint(json.dumps([m for m in {names!r} if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return list(json.loads(out.stdout.strip().splitlines()[-1]))
