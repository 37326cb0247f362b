"""The broker's envelope screen keeps a flush's lane (issue 16) and refuses anything else."""

from __future__ import annotations

import json
from typing import Any

import pytest
from memsieve import constants
from memsieve.delivery import envelope

FLUSH = constants.TASK_FLUSH


def screen(kwargs: dict[str, Any]) -> envelope.Clean:
    body = [["ns-a"], kwargs, {}]
    return envelope.screen(FLUSH, 2, {"task": FLUSH, "id": "f1"}, body, json.dumps(body).encode())


@pytest.mark.parametrize("lane", [*constants.QUEUES, None])
def test_a_flush_keeps_its_lane(lane: str | None) -> None:
    assert screen({"lane": lane}).body[:2] == [["ns-a"], {"lane": lane}]


def test_a_flush_without_a_lane_stays_without() -> None:
    assert screen({}).body[:2] == [["ns-a"], {}]


@pytest.mark.parametrize("kwargs", [{"lane": "elsewhere"}, {"lane": 3}, {"other": 1}])
def test_anything_else_is_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(envelope.Refused) as e:
        screen(kwargs)
    assert e.value.reason == "invalid_task_message"
