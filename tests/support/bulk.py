"""Distinct retro events of one namespace, for tests that drain a namespace in batches."""

from __future__ import annotations

from typing import Any


def events(n: int, namespace: str = "bulk") -> list[dict[str, Any]]:
    return [
        {
            "event_id": f"e-{i}",
            "namespace": namespace,
            "kind": "retro",
            "heading": f"lesson {i}",
            "content": f"Deploy {i * 7919 % 1000} broke cache {i * 104729 % 977}",
        }
        for i in range(n)
    ]
