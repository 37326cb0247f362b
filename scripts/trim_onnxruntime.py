"""Remove onnxruntime's C API library from the venv when its Python binding does not load it.

The onnxruntime wheel ships `capi/libonnxruntime.so.<version>` (34 MB, for C/C++ callers)
beside `capi/onnxruntime_pybind11_state*.so`, which is statically linked. The library is
deleted only if the binding's dynamic section does not name it (`ldd`) and no Python file
of the package mentions it; an import and a session on a one-node model then check that
the runtime still works. Anything unexpected leaves the venv as it was. Idempotent.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path


def main() -> int:
    spec = importlib.util.find_spec("onnxruntime")
    if spec is None or spec.origin is None:
        return 0
    capi = Path(spec.origin).parent / "capi"
    libs = sorted(capi.glob("libonnxruntime.so*"))
    bindings = sorted(capi.glob("onnxruntime_pybind11_state*.so"))
    if not libs or len(bindings) != 1 or shutil.which("ldd") is None:
        return 0
    linked = subprocess.run(["ldd", str(bindings[0])], capture_output=True, text=True)
    if linked.returncode != 0 or "libonnxruntime.so" in linked.stdout:
        return 0
    package = capi.parent
    if any("libonnxruntime.so" in p.read_text("utf-8", "replace") for p in package.rglob("*.py")):
        return 0
    aside = [lib.with_name(lib.name + ".trimmed") for lib in libs]
    for lib, to in zip(libs, aside, strict=True):
        lib.rename(to)
    check = subprocess.run([sys.executable, "-c", _CHECK], capture_output=True, text=True)
    if check.returncode != 0:
        for lib, to in zip(libs, aside, strict=True):
            to.rename(lib)
        print("trim_onnxruntime: kept the library (" + check.stderr.strip()[-200:] + ")")
        return 0
    for to in aside:
        to.unlink()
    return 0


# A session on a one-node model (Identity), built without the `onnx` package.
_CHECK = """
import numpy as np, onnxruntime as ort
from memsieve.embedders import onnx_proto as p
x = p.value_info("x", 1, [1, 2])
y = p.value_info("y", 1, [1, 2])
m = p.model([p.node("Identity", ["x"], ["y"], "n")], "g", [x], [y], [], [("", 13)], 8, "t", "1")
s = ort.InferenceSession(m, providers=["CPUExecutionProvider"])
out = s.run(None, {"x": np.array([[1.0, 2.0]], dtype=np.float32)})[0]
assert out.tolist() == [[1.0, 2.0]], out
"""


if __name__ == "__main__":
    raise SystemExit(main())
