"""What memsieve's Flower launcher lets Flower keep of an event or an inspect reply."""

from __future__ import annotations

from memsieve.ops import flower

AWS = "AKIA" + "Q3TZ7N2WXKJ5LM8P"


def test_a_producers_task_sent_event_loses_its_arguments() -> None:
    event = {
        "type": "task-sent",
        "uuid": "u1",
        "name": "memsieve.capture",
        "args": f"[{{'content': 'lesson text with {AWS}'}}]",
        "kwargs": "{}",
        "argsrepr": f"({AWS},)",
        "kwargsrepr": "{'k': 'v'}",
    }
    out = flower.scrub_event(dict(event))
    assert out["args"] == out["argsrepr"] == out["kwargsrepr"] == flower.HIDDEN
    assert out["kwargs"] == "{}" and out["uuid"] == "u1" and out["name"] == "memsieve.capture"
    assert AWS not in repr(out)


def test_memsieves_own_summaries_and_counts_stay() -> None:
    summary = "[3 event(s) ns=web first=bf-1a2b]"
    out = flower.scrub_event({"args": summary, "result": "{'pending': 2, 'rejected': 1}"})
    assert out == {"args": summary, "result": "{'pending': 2, 'rejected': 1}"}
    assert flower.scrub_event({"args": "['web']"}) == {"args": "['web']"}


def test_a_summary_shaped_forgery_holding_a_secret_is_hidden() -> None:
    forged = "[1 event(s) ns=web first=" + AWS + "]"
    assert flower.scrub_event({"args": forged})["args"] == flower.HIDDEN
    assert (
        flower.scrub_event({"args": "['" + "sk_live_" + "a1B2c3D4e5F6g7H8i9J0k1L2" + "']"})["args"]
        == flower.HIDDEN
    )


def test_exception_texts_are_redacted() -> None:
    out = flower.scrub_event(
        {
            "exception": f"DataError('invalid input: {AWS}')",
            "traceback": "postgresql://memsieve:hunter22pw@db/x refused",
        }
    )
    assert AWS not in out["exception"] and "hunter22pw" not in out["traceback"]


def test_inspect_replies_hide_arguments_and_broker_passwords() -> None:
    active = [{"id": "t", "args": f"['{AWS}']", "kwargs": {"x": AWS}}]
    assert AWS not in repr(flower.scrub_reply("active", active))
    scheduled = [{"eta": "x", "request": {"args": f"['{AWS}']"}}]
    assert AWS not in repr(flower.scrub_reply("scheduled", scheduled))
    stats = {"broker": {"hostname": "h", "password": "pw-123456", "userid": "memsieve"}}
    assert "pw-123456" not in repr(flower.scrub_reply("stats", stats))
    conf = {"broker_url": "redis://memsieve:s3cretpass99@h:6379/0"}
    assert "s3cretpass99" not in repr(flower.scrub_reply("conf", conf))


def test_the_launchers_environment_carries_options_and_no_command_line_does() -> None:
    from memsieve.settings import Settings

    settings = Settings.from_env(
        {
            "MEMSIEVE_BROKER_URL": "redis://memsieve:pw-abcdef12@127.0.0.1:1/0",
            "MEMSIEVE_REDIS_URL": "redis://memsieve:pw-abcdef12@127.0.0.1:1/0",
            "MEMSIEVE_FLOWER_BASIC_AUTH": "ops:flower-pw-1",
            "MEMSIEVE_EMBEDDER": "hashing",
        }
    )
    env = flower.environment(settings, {"FLOWER_UNRELATED": "x", "PATH": "/bin"})
    assert env["CELERY_BROKER_URL"] == settings.broker_url
    assert env["FLOWER_BASIC_AUTH"] == "ops:flower-pw-1" and "FLOWER_UNRELATED" not in env
    assert not any("pw" in part for part in flower.command())


def test_the_task_summary_names_only_well_formed_namespaces() -> None:
    from memsieve.ids import describe_payload

    items = [
        {"namespace": "web", "kind": "retro"},
        {"namespace": "caf\udce9 lesson text"},
        {"namespace": "xoxb-" + "12345678901-1234567890123-" + "abcdefghij0123456789klmn"},
        "just text",
    ]
    summary = describe_payload(items)
    assert summary.startswith("[4 event(s) ns=web first=")
    assert "lesson" not in summary and "xoxb" not in summary and "\udce9" not in summary
