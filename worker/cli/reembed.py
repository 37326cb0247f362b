"""`memsieve reembed --to MODEL`: move the store to another embedder."""

from __future__ import annotations

import argparse
from dataclasses import replace

from memsieve.cli.common import emit_json, fail, resolve
from memsieve.settings import Settings

# A model name maps to the embedder that produces it.
KNOWN = {
    "all-MiniLM-L6-v2": "local",
    "text-embedding-3-small": "openai",
    "text-embedding-3-large": "openai",
}


def embedder_settings(settings: Settings, target: str) -> Settings:
    """Settings whose embedder produces `target` (an embedder name or a model name)."""
    if target in ("openai", "local", "hashing"):
        return replace(settings, embedder=target)
    if target in KNOWN:
        name = KNOWN[target]
        if name == "openai":
            return replace(settings, embedder=name, openai_model=target)
        return replace(settings, embedder=name)
    if target.startswith("hashing-v1-") and target[len("hashing-v1-") :].isdigit():
        return replace(settings, embedder="hashing", hashing_dims=int(target[len("hashing-v1-") :]))
    raise ValueError(target)


def cmd_reembed(settings: Settings, args: argparse.Namespace) -> int:
    from memsieve import embedders
    from memsieve.ops.reembed import reembed
    from memsieve.store.postgres import Store
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    try:
        target = embedder_settings(settings, args.to)
    except ValueError:
        return fail(
            f"unknown model {args.to!r}: use openai, local, hashing or one of {', '.join(KNOWN)}"
        )
    settings = resolve(settings, need_redis=False)
    store = Store(settings.database_url or "", max_size=2)
    store.migrate()
    emb = embedders.from_settings(replace(target, database_url=settings.database_url))
    bound = store.bound_embedder()
    if bound and bound["model"] == emb.model and int(bound["dims"]) == emb.dims:
        print(f"the store already holds {emb.model} vectors; nothing to do")
        return 0
    with Progress(
        TextColumn("re-embedding"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        disable=args.json,
    ) as bar:
        task = bar.add_task("reembed", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        result = reembed(store, emb, batch_size=args.batch_size, progress=progress)
    if args.json:
        emit_json(result.__dict__)
    else:
        print(
            f"moved {result.total} memories from {result.source or '(unbound)'} to {result.target}"
            f" ({result.already_staged} staged by an earlier run, {result.stragglers} written during the move)."
            "\nRestart workers with the matching MEMSIEVE_EMBEDDER; until then they refuse to write"
            " and their events stay pending."
        )
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "reembed", help="move the store to another embedder (resumable, atomic switch)"
    )
    p.add_argument(
        "--to",
        required=True,
        help="openai | local | hashing, or a model name such as all-MiniLM-L6-v2",
    )
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_reembed)
