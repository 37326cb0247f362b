"""The agent-facing Python API over history, as-of recall and explanations.

from memsieve.history.api import History
h = History.from_settings(Settings.from_env().resolved())
h.history(memory_id)                         # Lineage: every version, both directions
h.recall_as_of("deploys", "deploy day", as_of=datetime(2026, 1, 15, tzinfo=UTC))
h.explain(memory_or_event_id).text            # plain English; the object holds the facts
h.conflicts("infra")                          # open conflicts: updates kept beside the old value
h.resolve(conflict_id, "newer", actor="me")   # the winner supersedes the other (reason update)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memsieve import errors
from memsieve.history import conflicts as conflicts_mod
from memsieve.history import explain
from memsieve.history.lineage import Lineage, Recalled, lineage, live_as_of, recall_as_of
from memsieve.store.postgres import Store


@dataclass
class History:
    """History, as-of recall and explanations for one store (the agent-facing API)."""

    store: Store
    embedder: Any = None  # an embedders.Embedder; needed by recall_as_of only
    _checked: bool = field(default=False, repr=False)

    @classmethod
    def from_settings(cls, settings: Any) -> History:
        """The store `settings` name; with no database URL set, the embedded services'
        (`Settings.resolved`, as the CLI finds them), or ConfigError when none runs: never
        whatever PostgreSQL libpq would reach by default."""
        from memsieve import embedders

        if not settings.database_url:
            settings = settings.resolved()
        return cls(Store(settings.database_url, max_size=2), embedders.from_settings(settings))

    def history(self, memory_id: str) -> Lineage:
        lin = lineage(self.store, memory_id)
        if lin is None:
            raise errors.PermanentError(f"no memory with id {memory_id}")
        return lin

    def recall_as_of(
        self, namespace: str, query: str, as_of: datetime, k: int = 5
    ) -> list[Recalled]:
        """What recall would have answered at `as_of`: nearest among the memories live then."""
        if self.embedder is None:
            raise errors.ConfigError("recall_as_of needs an embedder: History(store, embedder)")
        if not self._checked:
            bound = self.store.bound_embedder()
            if bound and (
                bound["model"] != self.embedder.model or int(bound["dims"]) != self.embedder.dims
            ):
                raise errors.EmbedderMismatch(
                    f"store holds {bound['model']} vectors; this embedder is {self.embedder.model}"
                )
            self._checked = True
        vector = self.embedder.embed([query])[0]
        return recall_as_of(self.store, namespace, vector, self.embedder.model, as_of, k)

    def live_as_of(self, namespace: str, as_of: datetime) -> list[dict[str, Any]]:
        return live_as_of(self.store, namespace, as_of)

    def explain(self, id_: str, namespace: str | None = None) -> Any:
        """Why a memory exists, or what became of an event: `.text` and structured fields.
        Event ids are per namespace: give `namespace` when more than one uses the id."""
        return explain.explain(self.store, id_, namespace)

    def conflicts(self, namespace: str | None = None) -> list[conflicts_mod.Conflict]:
        """Open conflicts (of one namespace, or all), oldest first."""
        return conflicts_mod.open_conflicts(self.store, namespace)

    def resolve(
        self, conflict_id: int, winner: str, actor: str | None = None
    ) -> conflicts_mod.Resolution:
        """Settle a conflict: `winner` ("newer", "older" or a member's id) supersedes the
        other with reason `update`; `memsieve revert <winner>` undoes it."""
        return conflicts_mod.resolve(self.store, conflict_id, winner, actor)
