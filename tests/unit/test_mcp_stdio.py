"""`memsieve mcp` over stdio answers every request the SDK cannot parse (memsieve.mcp.stdio)."""

from __future__ import annotations

import json

import pytest
from mcp import types
from memsieve.mcp.stdio import error_reply, invalid_id_reply, repaired
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


@pytest.mark.parametrize(
    ("ident", "kind"),
    [("1.5", "a number with a fraction"), ('{"a":1}', "an object"), ("null", "null"),
     ("false", "a boolean"), ("[1]", "a list")],
)  # fmt: skip
def test_a_request_whose_id_is_no_string_or_integer_gets_invalid_request(
    ident: str, kind: str
) -> None:
    line = '{"jsonrpc":"2.0","id":' + ident + ',"method":"tools/call","params":{"x":"s3cr3t"}}\n'
    # What the SDK would do: read it as a notification (which nobody answers).
    assert isinstance(types.jsonrpc_message_adapter.validate_json(line, by_name=False),
                      types.JSONRPCNotification)  # fmt: skip
    out = invalid_id_reply(line)
    assert out is not None
    got = json.loads(out.message.model_dump_json(exclude_unset=True))
    assert got["id"] is None and got["error"]["code"] == types.INVALID_REQUEST
    assert got["error"]["message"].endswith(kind) and "s3cr3t" not in json.dumps(got)


def test_a_bad_id_after_a_byte_order_mark_gets_invalid_request_too() -> None:
    # Without the screen, `repaired` would serve it past the mark as a notification.
    line = '\ufeff{"jsonrpc":"2.0","id":2.5,"method":"ping"}\n'
    out = invalid_id_reply(line)
    assert out is not None
    got = json.loads(out.message.model_dump_json(exclude_unset=True))
    assert got["id"] is None and got["error"]["code"] == types.INVALID_REQUEST
    assert invalid_id_reply('\ufeff{"jsonrpc":"2.0","id":7,"method":"ping"}') is None


@pytest.mark.parametrize(
    "line",
    [
        '{"jsonrpc":"2.0","id":3,"method":"ping"}',
        '{"jsonrpc":"2.0","id":"x","method":"ping"}',
        '{"jsonrpc":"2.0","method":"notifications/x","params":{"id":1.5}}',  # a nested id
        '{"jsonrpc":"2.0","id":1.5,"result":{}}',  # a response, not a request
        "{not json",
    ],
)
def test_other_lines_are_left_to_the_sdk(line: str) -> None:
    assert invalid_id_reply(line) is None
