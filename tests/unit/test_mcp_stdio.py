"""`memsieve mcp` over stdio answers every request the SDK cannot parse (memsieve.mcp.stdio)."""

from __future__ import annotations

import json

import pytest
from mcp import types
from memsieve.mcp.stdio import error_reply, repaired
from pydantic import ValidationError


def failure(line: str) -> ValidationError:
    """What the SDK's stdio reader sends the server for this stdin line."""
    with pytest.raises(ValidationError) as caught:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    return caught.value


def reply(line: str) -> dict[str, object] | None:
    out = error_reply(failure(line))
    return None if out is None else json.loads(out.message.model_dump_json(exclude_unset=True))


def test_a_lone_surrogate_in_a_request_gets_a_parse_error_with_its_id() -> None:
    secret = "hunter2-\\ud800"  # what the caller sent is never repeated
    line = (
        '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"remember",'
        f'"arguments":{{"content":"{secret}"}}}}}}\n'
    )
    got = reply(line)
    assert got is not None
    assert got["id"] == 7
    error = got["error"]
    assert isinstance(error, dict) and error["code"] == types.PARSE_ERROR
    assert "lone UTF-16 surrogate" in error["message"]
    assert "hunter2" not in json.dumps(got)
    got = reply('{"jsonrpc":"2.0","id":"abc","method":"ping","params":{"x":"\\udfff"}}')
    assert got is not None and got["id"] == "abc"


def test_a_request_of_the_wrong_shape_gets_invalid_request() -> None:
    got = reply('{"jsonrpc":"2.0","id":3,"method":42}')
    assert got == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {
            "code": types.INVALID_REQUEST,
            "message": "not a valid JSON-RPC message; check: method",
        },
    }


def test_a_notification_gets_no_answer() -> None:
    line = '{"jsonrpc":"2.0","method":"notifications/x","params":{"x":"\\ud800"}}'
    assert reply(line) is None


@pytest.mark.parametrize(
    ("line", "code"),
    [
        # No usable id: JSON-RPC 2.0 answers a parse error or an invalid request with a
        # null id (a black-box probe: these got no answer, and the client waited for ever).
        ('{"jsonrpc":"2.0","id":true,"method":"ping","params":{"x":"\\ud800"}}', -32700),
        ('{"jsonrpc":"2.0","id":[1],"method":"ping","params":{"x":"\\ud800"}}', -32700),
        ("{not json", -32700),
        ('{"jsonrpc":"2.0","id":3,"method":"ping"', -32700),  # cut short
        ('{"jsonrpc":"2.0","id":' + "9" * 5000 + ',"method":"ping"}', -32700),
        ("{}", -32600),
        ("5", -32600),
    ],
)
def test_a_line_whose_id_cannot_be_read_gets_an_error_with_a_null_id(line: str, code: int) -> None:
    got = reply(line)
    assert got is not None and got["id"] is None
    assert isinstance(got["error"], dict) and got["error"]["code"] == code


def test_a_request_without_a_method_and_a_batch_are_invalid_requests() -> None:
    got = reply('{"jsonrpc":"2.0","id":7}')
    assert got is not None and got["id"] == 7 and got["error"]["code"] == -32600  # type: ignore[index]
    got = reply('[{"jsonrpc":"2.0","id":1,"method":"ping"}]')
    assert got is not None and got["id"] is None
    assert "batches are not supported" in got["error"]["message"]  # type: ignore[index]


def test_a_request_behind_a_byte_order_mark_is_served() -> None:
    assert repaired(failure('\ufeff{"jsonrpc":"2.0","id":1,"method":"ping"}')) is not None
    assert repaired(failure("{not json")) is None


def test_other_exceptions_go_to_the_server_as_before() -> None:
    assert error_reply(RuntimeError("a transport error")) is None


def test_a_request_nested_past_the_parser_gets_a_parse_error_with_its_id() -> None:
    # json.loads raised RecursionError inside the relay, which stopped the server.
    deep = '{"jsonrpc":"2.0","id":9,"method":"tools/list","params":' + "[" * 1500
    got = reply(deep + "]" * 1500 + "}")
    assert got is not None and got["id"] == 9
    error = got["error"]
    assert isinstance(error, dict) and error["code"] == types.PARSE_ERROR
    # An id inside the nesting is not the request's.
    inner = '{"jsonrpc":"2.0","method":"ping","params":{"id":1,"x":' + "[" * 1500
    assert reply(inner + "]" * 1500 + "}}") is None
