"""What the ledger keeps of an event refused for a secret: nothing that leaks it, not even
its id, namespace or source, and a fingerprint only the install's key can compute."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import pytest
from memsieve.ids import event_id_for

from tests.support import db

GHP = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa9"
AKIA = "AKIA" + "Q3TZ7N2WXKJ5LM8P"
NS_TOKEN = "xoxb-" + "12345678901-1234567890123-" + "abcdefghij0123456789klmn"
BASE = {"namespace": "sec", "kind": "retro", "heading": "Leak", "content": "Rotate keys daily."}


@pytest.mark.parametrize(
    ("change", "needle", "keyed"),
    [
        ({"content": f"Rotate {GHP} daily."}, GHP, True),  # derived id hashes the secret
        ({"content": f"Rotate {GHP} daily.", "event_id": "e-1"}, GHP, False),
        ({"event_id": AKIA}, AKIA, True),
        ({"source": {"agent": GHP, "session": "s"}}, GHP, True),
        ({"namespace": NS_TOKEN}, NS_TOKEN, True),
        ({"heading": "Leak " + GHP[:20], "content": GHP[20:] + " rotate it"}, GHP[:20], True),
    ],
)
def test_nothing_of_the_secret_is_kept(
    pipeline: Any, change: dict[str, Any], needle: str, keyed: bool
) -> None:
    event = {**BASE, **change}
    (accepted,) = pipeline.accept([event])
    assert (accepted.status, accepted.reason) == ("rejected", "secret")
    assert accepted.event_id == event_id_for(event, pipeline.key)
    assert accepted.event_id.startswith("s-") == keyed
    (row,) = db.query(
        pipeline.store, "SELECT * FROM events WHERE event_id = %s", (accepted.event_id,)
    )
    assert needle not in repr(row)
    assert row["agent"] is None and row["session"] is None and row["tags"] in ([], None)
    if "namespace" in change:
        assert row["namespace"] is None
    text = f"{event['heading']}\n\n{event['content']}"
    keyed_fp = hmac.new(pipeline.key, text.encode(), hashlib.sha256).hexdigest()
    assert row["payload_hash"] == keyed_fp != hashlib.sha256(text.encode()).hexdigest()
    # The same message again is the same event.
    assert pipeline.accept([event])[0].status == "duplicate"
    assert pipeline.redis.get("memsieve:refusals") is not None


def test_an_invalid_event_keeps_no_secret_in_its_id_or_detail(pipeline: Any) -> None:
    event = {**BASE, "event_id": GHP, GHP: "x"}  # well-formed secret id, made-up field
    (accepted,) = pipeline.accept([event])
    assert accepted.status == "rejected" and accepted.reason == "invalid_event"
    assert accepted.event_id.startswith("s-")
    (row,) = db.query(
        pipeline.store, "SELECT * FROM events WHERE event_id = %s", (accepted.event_id,)
    )
    assert GHP not in repr(row)


def test_content_too_long_to_keep_is_not_kept(pipeline: Any) -> None:
    """Refused for its length before the scan (its cost grows with the text): whatever the
    content holds, the row keeps none of it; the heading, scanned, stays."""
    event = {**BASE, "heading": "Huge paste", "content": f"Rotate {GHP} daily. " + "x" * 9000}
    (accepted,) = pipeline.accept([event])
    assert (accepted.status, accepted.reason) == ("rejected", "too_long")
    (row,) = db.query(
        pipeline.store, "SELECT * FROM events WHERE event_id = %s", (accepted.event_id,)
    )
    assert row["content"] is None and row["heading"] == "Huge paste"
    assert GHP not in repr(row) and "not kept" in row["detail"]
