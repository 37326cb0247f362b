"""The few ONNX protobuf messages an inference graph needs, written without the `onnx` package.

worker.embedders.minilm_graph builds its graph once per machine; with the `onnx` package that
cost 31 MB of the default install (plus ml_dtypes) for about a hundred lines of serialisation.
The ONNX file format is protobuf (onnx/onnx.proto, a stable, versioned format); this module
writes the messages the graph uses, field numbers from onnx.proto, fields in number order as
protobuf's own serialiser writes them, so `onnx.load_from_string(b).SerializeToString() == b`
(tests/unit/test_onnx_proto.py checks that, and onnx's checker, where `onnx` is installed: the
dev extra). ONNX Runtime loads the bytes as it loads any model.

Each function returns one serialised message (bytes); a message field is its bytes nested.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence

import numpy as np

# TensorProto.DataType
FLOAT = 1
INT32 = 6
INT64 = 7
_DTYPES = {np.dtype(np.float32): FLOAT, np.dtype(np.int32): INT32, np.dtype(np.int64): INT64}
# AttributeProto.AttributeType
_ATTR_FLOAT, _ATTR_INT, _ATTR_INTS = 1, 2, 7
_VARINT, _FIXED32, _LEN = 0, 5, 2


def _varint(value: int) -> bytes:
    if value < 0:  # int64 fields: two's complement in ten bytes
        value += 1 << 64
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _int(field: int, value: int) -> bytes:
    return _key(field, _VARINT) + _varint(value)


def _bytes(field: int, value: bytes | str) -> bytes:
    raw = value.encode("utf-8") if isinstance(value, str) else value
    return _key(field, _LEN) + _varint(len(raw)) + raw


def _each(field: int, values: Iterable[bytes | str]) -> bytes:
    return b"".join(_bytes(field, v) for v in values)


def tensor(name: str, array: np.ndarray) -> bytes:
    """TensorProto: dims (1), data_type (2), name (8), raw_data (9, little-endian)."""
    arr = np.ascontiguousarray(array)
    dtype = _DTYPES[arr.dtype]
    dims = b"".join(_int(1, d) for d in arr.shape)
    raw = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
    return dims + _int(2, dtype) + _bytes(8, name) + _bytes(9, raw)


def _attribute(name: str, value: int | float | Sequence[int]) -> bytes:
    """AttributeProto: name (1), f (2), i (3), ints (8, unpacked as proto2 writes), type (20)."""
    if isinstance(value, bool) or isinstance(value, int):
        return _bytes(1, name) + _int(3, int(value)) + _int(20, _ATTR_INT)
    if isinstance(value, float):
        f = _key(2, _FIXED32) + struct.pack("<f", value)
        return _bytes(1, name) + f + _int(20, _ATTR_FLOAT)
    ints = b"".join(_int(8, int(v)) for v in value)
    return _bytes(1, name) + ints + _int(20, _ATTR_INTS)


def node(
    op_type: str,
    inputs: Sequence[str],
    outputs: Sequence[str],
    name: str,
    domain: str = "",
    **attrs: int | float | Sequence[int],
) -> bytes:
    """NodeProto: input (1), output (2), name (3), op_type (4), attribute (5, sorted by
    name as onnx.helper.make_node sorts them), domain (7)."""
    body = _each(1, inputs) + _each(2, outputs) + _bytes(3, name) + _bytes(4, op_type)
    body += b"".join(_bytes(5, _attribute(k, attrs[k])) for k in sorted(attrs))
    return body + (_bytes(7, domain) if domain else b"")


def value_info(name: str, elem_type: int, shape: Sequence[int | str]) -> bytes:
    """ValueInfoProto: name (1), type (2): TypeProto.tensor_type (1): elem_type (1), shape (2);
    a dimension is dim_value (1) when a number, dim_param (2) when a name."""
    dims = b"".join(_bytes(1, _int(1, d) if isinstance(d, int) else _bytes(2, d)) for d in shape)
    tensor_type = _int(1, elem_type) + _bytes(2, dims)
    return _bytes(1, name) + _bytes(2, _bytes(1, tensor_type))


def model(
    nodes: Sequence[bytes],
    name: str,
    inputs: Sequence[bytes],
    outputs: Sequence[bytes],
    initializers: Sequence[bytes],
    opsets: Sequence[tuple[str, int]],
    ir_version: int,
    producer_name: str,
    producer_version: str,
) -> bytes:
    """ModelProto: ir_version (1), producer_name (2), producer_version (3), graph (7),
    opset_import (8: domain (1), version (2)). GraphProto: node (1), name (2),
    initializer (5), input (11), output (12)."""
    graph = (
        _each(1, nodes)
        + _bytes(2, name)
        + _each(5, initializers)
        + _each(11, inputs)
        + _each(12, outputs)
    )
    # onnx.helper.make_opsetid sets the domain even when empty: written either way.
    opset_msgs = [_bytes(1, d) + _int(2, v) for d, v in opsets]
    return (
        _int(1, ir_version)
        + _bytes(2, producer_name)
        + _bytes(3, producer_version)
        + _bytes(7, graph)
        + _each(8, opset_msgs)
    )
