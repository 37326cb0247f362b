"""`memsieve recall | events | stats`: reading the store (history: worker/cli/history.py)."""

from __future__ import annotations

import argparse
from typing import Any

from memsieve.cli.common import at_least_one, emit_json, fail, open_reads, resolve, say, short_ts
from memsieve.settings import Settings


def _store(settings: Settings) -> Any:
    from memsieve.store.postgres import Store

    settings = resolve(settings, need_redis=False)
    return Store(settings.database_url or "", max_size=1), settings


def cmd_recall(settings: Settings, args: argparse.Namespace) -> int:
    from memsieve import embedders

    store, settings = _store(settings)
    bound = store.bound_embedder()
    emb = embedders.from_settings(settings)
    if bound and (bound["model"] != emb.model or int(bound["dims"]) != emb.dims):
        return fail(f"store holds {bound['model']} vectors; set MEMSIEVE_EMBEDDER to match")
    if args.as_of is not None:
        from memsieve.history import lineage
        from memsieve.history.format import fmt_ts, parse_time

        as_of = parse_time(args.as_of)
        vector = emb.embed([args.query])[0]
        found = lineage.recall_as_of(store, args.namespace, vector, emb.model, as_of, args.k)
        rows = [vars(r) for r in found]
    elif bound:
        rows = store.recall(args.namespace, emb.embed([args.query])[0], emb.model, args.k)
    else:
        rows = []
    out = [
        {
            "memory_id": r["memory_id"],
            "kind": r["kind"],
            "heading": r["heading"],
            "content": r["content"],
            "tags": r["tags"],
            "distance": round(r["distance"], 6),
            "created_at": r["created_at"],
            "conflicts": r.get("conflicts", []),
        }
        for r in rows
    ]
    if args.json:
        emit_json(out)
        return 0
    if args.as_of is not None:
        say(f"as of {fmt_ts(as_of)}:")
    if not out:
        if args.as_of is not None:
            say(f"no memories were live in namespace {args.namespace!r} then")
        else:
            say(f"no live memories in namespace {args.namespace!r}")
    for r in out:
        # max(0, …): an exact match's cosine distance can come back as -0.0000.
        say(f"{max(0.0, r['distance']):.4f}  {r['memory_id']}  [{r['kind']}] {r['heading']}")
        say(f"        {r['content']}")
        for c in r["conflicts"]:
            which = "updates" if c["this_is"] == "newer" else "updated by"
            say(f"        ! conflict {c['conflict_id']}: {which} {c['with']} ({c['detail']})")
    return 0


def cmd_events(settings: Settings, args: argparse.Namespace) -> int:
    store = open_reads(settings)
    if args.event_id and not args.namespace:
        # Event ids are per namespace: an id tenants share is not listed across them.
        from memsieve.history.explain import AmbiguousEvent

        shared = len(store.event_namespaces(args.event_id))
        if shared > 1:
            return fail(str(AmbiguousEvent(args.event_id, shared)), 1)
    rows = store.list_events(args.namespace, args.status, args.event_id, args.limit)
    if args.json:
        emit_json(rows)
        return 0
    for r in rows:
        outcome = r["decision"] or r["status"]
        extra = f" reason={r['reason']}" if r["reason"] and r["status"] != "written" else ""
        say(
            f"{short_ts(r['received_at'])}  {r['event_id']}  {r['namespace'] or '-'}  {outcome}{extra}"
            + (f"  {r['detail']}" if r["detail"] and r["status"] != "written" else "")
        )
    return 0


def cmd_stats(settings: Settings, args: argparse.Namespace) -> int:
    store = open_reads(settings)
    rows, live = store.event_stats(), store.memory_stats()
    if args.json:
        out: dict[str, Any] = {"events": rows, "memories": live}
        if settings.metrics_hash_namespaces:
            from memsieve import metrics
            from memsieve.ops import home

            key = home.install_key(settings.key_path)
            names = sorted({r["namespace"] for r in rows} | {r["namespace"] for r in live})
            out["metrics_labels"] = {ns: metrics.namespace_label(ns, key) for ns in names}
        emit_json(out)
        return 0
    say("events by namespace, status and decision/reason:")
    for r in rows:
        say(f"  {r['namespace']:<24} {r['status']:<9} {r['outcome']:<22} {r['n']}")
    say("memories:")
    for r in live:
        say(
            f"  {r['namespace']:<24} live {r['live']:<8} all versions {r['total']:<8}"
            f" open conflicts {r['open_conflicts']}"
        )
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("recall", help="live memories nearest a query")
    p.add_argument("namespace")
    p.add_argument("query")
    p.add_argument("-k", type=at_least_one, default=5, help="how many memories [5]")
    p.add_argument(
        "--as-of",
        dest="as_of",
        metavar="TIME",
        help="answer from the memories live at TIME (ISO 8601; no zone = UTC, a date = 00:00 UTC)",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_recall)
    p = sub.add_parser("events", help="the capture ledger")
    p.add_argument("--namespace")
    p.add_argument("--status", choices=["pending", "written", "rejected", "dead"])
    p.add_argument("--event-id", dest="event_id")
    p.add_argument("--limit", type=at_least_one, default=100, help="rows at most [100]")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_events)
    p = sub.add_parser("stats", help="decisions and reasons per namespace")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_stats)
