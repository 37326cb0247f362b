"""Backfill pieces against a real Postgres: ids, checkpoint, ledger summary, dry run, logs."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from memsieve.errors import ConfigError
from memsieve.ops import backfill as bf
from memsieve.ops.backfill_dry import dry_run
from memsieve.settings import Settings
from memsieve.store.postgres import Store

from tests.data.make_retros import generate
from tests.support import db

MD = """---
namespace: web
kind: failure
date: 2024-05-01
tags: [deploy]
---
# Retro 2024-05-01

## Deploys need the migration first

The API deploy failed because the migration had not run. Always migrate first.

```bash
# not a heading: inside a fence
make migrate
```

## Pin the driver

We should pin psycopg; 3.3 changed the pool default.
"""


def test_markdown_sections_front_matter_and_fences(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(MD)
    items = bf.read_source(tmp_path, None)
    assert [i.payload["heading"] for i in items] == [
        "Deploys need the migration first",
        "Pin the driver",
    ]  # type: ignore[index]
    first = items[0].payload
    assert isinstance(first, dict)
    assert (
        first["namespace"] == "web" and first["kind"] == "failure" and first["tags"] == ["deploy"]
    )
    assert first["occurred_at"] == "2024-05-01"
    assert "# not a heading: inside a fence" in first["content"]
    # Same source, same ids; another namespace or path, other ids.
    assert [i.event_id for i in bf.read_source(tmp_path, None)] == [i.event_id for i in items]
    (tmp_path / "b.md").write_text(MD.replace("namespace: web", "namespace: api"))
    ids_b = [i.event_id for i in bf.read_source(tmp_path / "b.md", None)]
    assert not set(ids_b) & {i.event_id for i in items}


def test_markdown_without_namespace_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x.md").write_text("## lesson\n\nAlways do it.\n")
    with pytest.raises(ConfigError, match="x.md: no namespace"):
        bf.read_source(tmp_path, None)


def test_markdown_that_is_not_utf8_is_refused_not_replaced(tmp_path: Path) -> None:
    """As enqueue and write refuse such bytes (a black-box probe saw `caf\\xe9` stored as
    U+FFFD): nothing is read from the folder until the file is converted."""
    (tmp_path / "a.md").write_text("---\nnamespace: web\n---\n## ok\n\nPin the image.\n")
    (tmp_path / "b.md").write_bytes(b"---\nnamespace: web\n---\n## caf\xe9\n\nLatin-1 text.\n")
    with pytest.raises(ConfigError, match="b.md: not valid UTF-8 \\(byte 29\\)"):
        bf.read_source(tmp_path, None)


def test_a_jsonl_line_nested_too_deep_is_recorded_and_its_neighbours_are_written(
    tmp_path: Path, pipeline: Any, store: Store
) -> None:
    good = {"namespace": "ops", "kind": "retro", "heading": "h", "content": "Pin the base image."}
    very = '{"source": ' + "[" * 5000 + "]" * 5000 + "}"  # overflows the decoder
    deep = '{"source": ' + '{"a": ' * 900 + "1" + "}" * 900 + "}"  # would overflow later
    f = tmp_path / "old.jsonl"
    f.write_text("\n".join([very, json.dumps(good), deep]) + "\n")
    items = bf.read_source(f, "ops")
    assert [type(i.payload) for i in items] == [str, dict, str]
    pipeline.accept([i.payload for i in items])
    s = bf.summarize(store, items)
    assert (s.items, s.events, s.pending) == (3, 3, 1)
    assert s.rejected == {"invalid_event": 2}


def test_a_jsonl_line_holding_an_array_gives_one_item_per_element(
    tmp_path: Path, pipeline: Any, store: Store
) -> None:
    good = [
        {"heading": "h", "content": f"Pin the base image of service {n} to a digest."}
        for n in (1, 2)
    ]
    f = tmp_path / "old.jsonl"
    f.write_text(json.dumps([good[0], 5, good[1]]) + "\n")
    items = bf.read_source(f, "ops")
    assert [i.origin for i in items] == ["old.jsonl:1[0]", "old.jsonl:1[1]", "old.jsonl:1[2]"]
    pipeline.accept([i.payload for i in items])
    s = bf.summarize(store, items)
    assert (s.items, s.events, s.pending) == (3, 3, 2)
    assert s.rejected == {"not_an_event": 1}


def test_jsonl_ids_are_the_ones_the_ledger_records(
    tmp_path: Path, pipeline: Any, store: Store
) -> None:
    f = tmp_path / "old.jsonl"
    lines = [
        {
            "event_id": "given-1",
            "namespace": "ops",
            "kind": "retro",
            "heading": "h",
            "content": "Always run the migration before the deploy starts.",
        },
        {"heading": "no id", "content": "Never retry without jitter because the herd returns."},
        {
            "heading": "no id",
            "content": "Never retry without jitter because the herd returns.",
        },  # same line twice: one event
        {"namespace": "ops", "kind": "nonsense", "heading": "h", "content": "c"},
    ]
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n{not json\n")
    items = bf.read_source(f, "ops")
    assert items[0].event_id == "given-1"
    assert items[1].event_id == items[2].event_id and items[1].event_id.startswith("bf-")
    assert items[4].event_id.startswith("raw-")
    accepted = pipeline.accept([i.payload for i in items])
    assert [a.event_id for a in accepted] == [i.event_id for i in items]
    s = bf.summarize(store, items)
    assert (s.items, s.events, s.pending, s.unseen) == (5, 4, 2, 0)
    assert s.rejected == {"invalid_event": 1, "malformed_json": 1}


def test_checkpoint_resumes_only_on_the_same_source(tmp_path: Path) -> None:
    src = tmp_path / "src"
    ids = [f"e{i}" for i in range(10)]
    ck = bf.Checkpoint.load(tmp_path, src, "ns", ids)
    assert ck.sent == 0
    ck.advance(ids, 4)
    assert bf.Checkpoint.load(tmp_path, src, "ns", ids).sent == 4
    assert bf.Checkpoint.load(tmp_path, src, "other", ids).sent == 0  # another namespace
    assert bf.Checkpoint.load(tmp_path, src, "ns", ["x"] + ids[1:]).sent == 0  # source changed
    assert bf.Checkpoint.load(tmp_path, src, "ns", ids + ["e10"]).sent == 4  # appended: fine


def test_dry_run_predicts_exactly_what_a_real_run_writes(
    tmp_path: Path, settings: Settings, pipeline: Any, store: Store
) -> None:
    exp = generate(tmp_path / "r", files=40, lessons=3)
    items = bf.read_source(tmp_path / "r", "dry")
    done, would = dry_run(settings, items)
    assert done.events == 0 and would.events == exp.lessons
    assert db.query(store, "SELECT count(*)::int AS n FROM events")[0]["n"] == 0
    pipeline.accept([i.payload for i in items])
    pipeline.flush("dry")
    real = bf.summarize(store, items)
    assert real.as_dict() | {"items": 0} == would.as_dict() | {"items": 0, "unseen": 0}
    # Run again on a ledger that has them: all reported as already there.
    done2, would2 = dry_run(settings, items)
    assert done2.events == exp.lessons and would2.events == 0


def test_decision_log_lines_carry_ids_not_text(
    pipeline: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="memsieve.decision")
    out = pipeline.write_now(
        {
            "namespace": "logs",
            "kind": "retro",
            "heading": "UNIQUEHEAD",
            "content": "Always UNIQUEBODY.",
        }
    )
    recs = [r for r in caplog.records if r.name == "memsieve.decision"]
    assert [(r.event_id, r.namespace, r.decision, r.memory_id) for r in recs] == [  # type: ignore[attr-defined]
        (out["event_id"], "logs", "inserted", out["memory_id"])
    ]
    assert hasattr(recs[0], "distance")
    dumped = json.dumps([r.__dict__ for r in recs], default=str)
    assert "UNIQUEHEAD" not in dumped and "UNIQUEBODY" not in dumped


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-be"])
def test_a_file_with_a_byte_order_mark_is_read_as_its_text(tmp_path: Path, encoding: str) -> None:
    """A black-box probe: Notepad's UTF-8 BOM made the first line malformed_json, and a
    UTF-16 file came out as malformed_json line by line, with no word on why."""
    lines = [
        {"heading": "h", "content": f"Pin the base image of service {n} to a digest."}
        for n in (1, 2)
    ]
    f = tmp_path / "old.jsonl"
    text = "".join(json.dumps(x) + "\n" for x in lines)
    # utf-8-sig and utf-16 write their own mark; utf-16-be needs it written.
    f.write_bytes((text if encoding != "utf-16-be" else "\ufeff" + text).encode(encoding))
    items = bf.read_source(f, "ops")
    assert [i.payload["content"] for i in items] == [x["content"] for x in lines]  # type: ignore[index]
    md = tmp_path / "retro.md"
    md.write_bytes("# R\n\n## Pin images\n\nPin images to digests.\n".encode("utf-16"))
    assert [i.payload["heading"] for i in bf.read_source(md, "ops")] == ["Pin images"]  # type: ignore[index]
