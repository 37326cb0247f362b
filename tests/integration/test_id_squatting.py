"""An event cannot take another lesson's derived id (found by a black-box probe: sending
`h-<hash>` of a lesson first made the real lesson `event_id_reused`, never written)."""

from __future__ import annotations

from typing import Any

from memsieve.schemas.events import CaptureEvent

LESSON = {
    "namespace": "sq",
    "kind": "retro",
    "heading": "Pin images",
    "content": "Pin base images.",
}


def test_a_derived_id_cannot_be_squatted(pipeline: Any) -> None:
    derived = CaptureEvent.model_validate(LESSON).resolved_id()
    squatter = {**LESSON, "content": "Something else entirely.", "event_id": derived}
    (first,) = pipeline.accept([squatter])
    assert (first.status, first.reason) == ("rejected", "invalid_event")
    assert first.event_id != derived  # recorded under its raw bytes, not the lesson's id
    (real,) = pipeline.accept([LESSON])
    assert (real.event_id, real.status) == (derived, "pending")
    # Its own derived id spelled out is still a valid event id (what becomes of it is the
    # ledger's usual rule for one id with two payloads).
    assert CaptureEvent.model_validate({**LESSON, "event_id": derived}).event_id == derived
