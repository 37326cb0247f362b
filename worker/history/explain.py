"""`explain(id)`: why a memory exists, or what became of a capture event, in plain words.

Written for a person who has not read the code: every sentence names the event, the memory
(short id and heading), the numbers the gate compared, and what a reader can do next. The
structured fields carry the same facts for programs (`memsieve explain --json`).
The facts come from the decision record the gate wrote (memories.decision and
events.decision_record), the events ledger and the revision log (memsieve.history.lineage).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from memsieve import errors
from memsieve.history import lineage as hist
from memsieve.history.format import canonical_id, fmt_ts, is_uuid, quote, short
from memsieve.store import queries as q

if TYPE_CHECKING:
    # Reads, not Store: `memsieve explain` imports neither the gate nor numpy.
    from memsieve.store.reads import Reads

# Capture-policy and ledger reasons, said for a person.
REASONS = {
    "secret": "it looked like it contained a secret (only a redacted copy and a fingerprint "
    "were kept)",
    "kind_not_allowed": "this kind of event is not stored in its namespace",
    "too_short": "its content is too short to be a lesson",
    "too_long": "its content is longer than the namespace allows",
    "denied_pattern": "it matches a pattern the namespace refuses",
    "reasoning": "it is intermediate reasoning, which belongs in working memory, not here",
    "trivia": "it is session trivia (a log line, not a lesson)",
    "derivable": "it can be read from the repository or its docs, so it belongs there",
    "invalid": "it is not a valid capture event",
    "invalid_event": "it is not a valid capture event",
    "malformed_json": "it is not valid JSON",
    "not_an_event": "it is not a JSON object",
    "invalid_task_message": "its message is not a well-formed memsieve task",
    "not_a_task_message": "its broker item is not a task message",
    "unexpected_keyword_argument": "its message had keyword arguments capture does not take "
    "(the message's events were recorded on their own)",
    "undecodable_message": "its message could not be decoded",
    "unknown_task": "its message names no memsieve task",
    "message_too_large": "its message is larger than MEMSIEVE_MAX_MESSAGE_BYTES",
    "supersedes_unknown": "the memory it supersedes is not a memory of its namespace",
    "retries_exhausted": "writing it kept failing until it ran out of attempts",
}


@dataclass
class Explanation:
    id: str
    subject: str  # memory | event
    outcome: str  # inserted | superseded | merged | rejected | dead | pending | unknown
    live: bool | None
    text: str
    facts: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _memory(cur: Any, memory_id: str) -> dict[str, Any] | None:
    return q.one(cur, "explain_memory", (memory_id,))  # type: ignore[no-any-return]


def _label(cur: Any, memory_id: str | None) -> str:
    """'memory 9a1c22e0 ('Deploy day: Deploys run on Fridays')'."""
    if not memory_id:
        return "an unknown memory"
    m = _memory(cur, memory_id)
    if m is None:
        return f"memory {short(memory_id)}"
    return f"memory {short(memory_id)} ({quote(m['heading'] + ': ' + m['content'])})"


def _event_phrase(ev: dict[str, Any] | None, event_id: str, when: Any) -> str:
    """'event e-17 (correction from agent ci-bot, 2026-01-12 09:00 UTC)'."""
    if ev is None:
        return f"event {event_id} ({fmt_ts(when)})"
    who = f" from agent {ev['agent']}" if ev.get("agent") else ""
    return f"event {event_id} ({ev['kind']}{who}, {fmt_ts(when)})"


def _decision_sentence(cur: Any, record: dict[str, Any], subject: str) -> str:
    """What the gate did and why, from its decision record. `subject` starts the sentence."""
    model = record.get("embedding_model", "unknown embedder")
    threshold = record.get("threshold")
    action = record.get("action")
    cands = record.get("candidates") or []
    vetoed = [c for c in cands if c.get("vetoes")]

    def veto_text(c: dict[str, Any]) -> str:
        objections = "; ".join(f"guard {v['guard']} objected ({v['detail']})" for v in c["vetoes"])
        return (
            f"{_label(cur, c['memory_id'])} was close (cosine distance {c['distance']:.3f} < "
            f"threshold {threshold:.3f}) but {objections}, so it was kept as a separate memory"
        )

    judged: dict[str, Any] = next(
        (c for c in cands if c.get("memory_id") == record.get("target")), {}
    )
    if action == "supersede" and record.get("reason") == "update":
        target = _label(cur, record.get("target"))
        if record.get("explicit_target") and record.get("explicit_target") == record.get("target"):
            why = "the correction named it, and it was in an open conflict, which this settles"
        elif record.get("on_conflict") == "newest":
            why = "its namespace lets the newest update win (MEMSIEVE_ON_CONFLICT=newest)"
        else:
            why = "a correction judged an update of exactly this one live memory replaces it"
        s = f"{subject} replaced {target} as an update ({why})"
        if judged.get("judge"):
            s += f"; judge {judged['judge']}: {judged.get('judge_detail')}"
        return s + "."
    if action == "supersede":
        target = _label(cur, record.get("target"))
        if record.get("explicit_target") and record.get("explicit_target") == record.get("target"):
            s = (
                f"{subject} replaced {target}: the correction named that memory as the one it "
                f"corrects, so distance and guards were not consulted"
            )
        else:
            s = (
                f"{subject} superseded {target}: cosine distance {record['distance']:.3f} < "
                f"threshold {threshold:.3f} ({model}), "
                + ("no guard objected" if record.get("guards") else "no guards were configured")
            )
        if vetoed:
            s += ". Before that, " + "; ".join(veto_text(c) for c in vetoed)
        return s + "."
    if action == "insert" and record.get("conflicts"):
        updated = [c for c in cands if c.get("memory_id") in record["conflicts"]]
        return (
            f"{subject} was stored as a new memory beside "
            + "; ".join(
                f"{_label(cur, c['memory_id'])}, which it updates (judge {c.get('judge')}: "
                f"{c.get('judge_detail')})"
                for c in updated
            )
            + ": both stay live, linked as a conflict, until one is chosen "
            "(`memsieve conflicts`, `memsieve resolve`)."
        )
    if action == "insert":
        s = f"{subject} was stored as a new memory"
        if not cands:
            return s + f": there was no live memory in the namespace to compare it with ({model})."
        if vetoed:
            return s + ": " + "; ".join(veto_text(c) for c in vetoed) + f" ({model})."
        c = cands[0]
        return s + (
            f": the closest live memory, {_label(cur, c['memory_id'])}, was at cosine distance "
            f"{c['distance']:.3f}, not under the threshold {threshold:.3f} ({model})"
            + (
                f"; {len(cands) - 1} other candidate(s) were further away."
                if len(cands) > 1
                else "."
            )
        )
    if action == "merge":
        dropped = str(record.get("reason") or "").partition("; the correction's target ")[2]
        return (
            f"{subject} was merged into {_label(cur, record.get('target'))}: its heading and "
            f"content are byte-identical to that memory, which was live in the namespace, so no "
            f"new row was written and no text was lost (found by content hash before any vector "
            f"search; embedder {model})."
            + (
                f" The correction named memory {dropped.split()[0]} as the one it replaces; it"
                " was not acted on (a memory replaces at most one other): it stays live, and"
                " `memsieve resolve` or `memsieve revert` settles it."
                if dropped
                else ""
            )
        )
    return f"{subject} was written, but no decision record was kept for it."


def _revision_sentences(cur: Any, memory_id: str, lin: hist.Lineage) -> list[str]:
    out = []
    for s in lin.steps:
        who = f"by {s.actor}" if s.actor else "by an unnamed actor"
        why = f", reason: {s.reason!r}" if s.reason else ""
        if s.kind == "supersede" and s.older_id == memory_id:
            out.append(
                f"On {fmt_ts(s.at)} {_label(cur, s.newer_id)} superseded it "
                + (f"(event {s.event_id}), " if s.event_id else f"(a resolve {who}), ")
                + f"hiding it from recall (rev-{s.revision})."
            )
        elif s.kind == "revert" and memory_id in (s.older_id, s.newer_id):
            out.append(
                f"On {fmt_ts(s.at)} that supersede was reverted {who} (rev-{s.revision}{why}): "
                f"memory {short(s.older_id)} became live again and memory {short(s.newer_id)} "
                f"stayed live."
            )
        elif s.kind == "unrevert" and memory_id in (s.older_id, s.newer_id):
            out.append(
                f"On {fmt_ts(s.at)} the revert rev-{s.undoes} was undone {who} "
                f"(rev-{s.revision}{why}): memory {short(s.older_id)} is hidden behind memory "
                f"{short(s.newer_id)} again."
            )
    return out


def _conflict_sentence(cur: Any, memory_id: str, c: dict[str, Any]) -> str:
    mine_is_newer = c["newer_id"] == memory_id
    other = _label(cur, c["older_id"] if mine_is_newer else c["newer_id"])
    rel = f"it updates {other}" if mine_is_newer else f"{other} updates it"
    s = f"Conflict {c['id']} (opened {fmt_ts(c['opened_at'])}): {rel} ({c['judge']}: {c['detail']})"
    if c["closed_at"] is None:
        return s + f"; open: `memsieve resolve {c['id']} --winner newer|older` settles it."
    lost = "this memory" if c["loser_id"] == memory_id else f"memory {short(c['loser_id'])}"
    return s + f"; closed {fmt_ts(c['closed_at'])} ({c['closed_how']}): {lost} was hidden."


def explain_memory(store: Reads, memory_id: str) -> Explanation | None:
    lin = hist.lineage(store, memory_id)
    if lin is None:
        return None
    v = lin.version(memory_id)
    with store.reading() as cur:
        # Event ids are per namespace: the event of this memory's namespace that wrote it.
        ev = q.one(cur, "event", (v.namespace, v.event_id))
        merged = q.all(cur, "merged_into", (memory_id,))
        head = f"Memory {short(memory_id)} ({quote(v.heading + ': ' + v.content)})"
        subject = f"{head} exists because {_event_phrase(ev, v.event_id, v.created_at)}"
        parts = [
            _decision_sentence(cur, v.decision, subject)
            if v.decision
            else f"{subject} wrote it; no decision record was kept."
        ]
        if merged:
            shown = ", ".join(f"{m['event_id']} ({fmt_ts(m['finished_at'])})" for m in merged[:5])
            more = f" and {len(merged) - 5} more" if len(merged) > 5 else ""
            parts.append(
                f"Since then {len(merged)} later event(s) carried exactly the same text and were "
                f"merged into it without a new row: {shown}{more}."
            )
        parts.extend(_revision_sentences(cur, memory_id, lin))
        mine = [c for c in lin.conflicts if memory_id in (c["older_id"], c["newer_id"])]
        parts.extend(_conflict_sentence(cur, memory_id, c) for c in mine)
    if v.live:
        others = [o for o in lin.live if o.memory_id != memory_id]
        state = "It is live"
        if others:
            state += "; so is " + ", ".join(f"memory {short(o.memory_id)}" for o in others)
        parts.append(state + ".")
    else:
        parts.append(
            f"It is not live (hidden since {fmt_ts(v.deleted_at)}): recall no longer returns it, "
            f"but its text stays readable with `memsieve history {memory_id}`."
        )
        hider = next(
            (lk.newer_id for lk in lin.links if lk.older_id == memory_id and lk.active), None
        )
        if hider:
            parts.append(f"If that supersede was a mistake: `memsieve revert {hider}`.")
    outcome = {"supersede": "superseded", "insert": "inserted"}.get(
        v.decision.get("action", ""), "unknown"
    )
    facts = {
        "memory": {
            k: getattr(v, k)
            for k in (
                "memory_id",
                "namespace",
                "kind",
                "heading",
                "content",
                "created_at",
                "deleted_at",
                "event_id",
                "agent",
                "intervals",
            )
        },
        "decision": v.decision,
        "event": ev,
        "merged_events": merged,
        "revisions": [asdict(s) for s in lin.steps],
        "live_versions": [o.memory_id for o in lin.live],
        "conflicts": mine,
    }
    return Explanation(memory_id, "memory", outcome, v.live, " ".join(parts), facts)


class AmbiguousEvent(errors.PermanentError):
    """An event id that more than one namespace uses, asked for without a namespace."""

    def __init__(self, event_id: str, count: int) -> None:
        self.event_id, self.count = event_id, count
        super().__init__(
            f"event id {event_id} is used in {count} namespaces: say which one "
            f"(--namespace NS); nothing is shown until then"
        )


def event_namespaces(store: Reads, event_id: str) -> list[str]:
    """The namespace keys ('' for rows refused before a namespace was read) using an id."""
    return store.event_namespaces(event_id)


def explain_event(store: Reads, event_id: str, namespace: str | None = None) -> Explanation | None:
    """What became of event `event_id` of `namespace` ('' : rows with no namespace).

    Without a namespace: the id's only event, AmbiguousEvent when namespaces share it.
    """
    if namespace is None:
        keys = event_namespaces(store, event_id)
        if len(keys) > 1:
            raise AmbiguousEvent(event_id, len(keys))
        if not keys:
            return None
        namespace = keys[0]
    with store.reading() as cur:
        ev = q.one(cur, "event", (namespace, event_id))
        if ev is None:
            return None
        status, reason, detail = ev["status"], ev["reason"], ev["detail"]
        plain = REASONS.get(reason or "", f"reason {reason!r}")
        detail_txt = f" Detail: {detail}." if detail else ""
        who = f"{ev['kind'] or 'event'}" + (f" from agent {ev['agent']}" if ev["agent"] else "")
        head = f"Event {event_id} ({who}, received {fmt_ts(ev['received_at'])})"
        live = None
        if status == "pending":
            text = (
                f"{head} is still waiting in the inbox of namespace {ev['namespace']}; "
                f"{ev['attempts']} failed attempt(s) so far.{detail_txt} The next flush of the "
                f"namespace will write it."
            )
            outcome = "pending"
        elif status == "rejected":
            text = (
                f"{head} was rejected at capture on {fmt_ts(ev['finished_at'])} because {plain}. "
                f"Nothing from it was stored as a memory.{detail_txt}"
            )
            outcome = "rejected"
        elif status == "dead":
            text = (
                f"{head} is dead: {plain}, after {ev['attempts']} attempt(s). Nothing from it was "
                f"stored as a memory.{detail_txt} Fix the cause and send it again."
            )
            outcome = "dead"
        else:
            outcome = ev["decision"]
            record = ev.get("decision_record")
            memory_id = str(ev["memory_id"]) if ev["memory_id"] else None
            m = _memory(cur, memory_id) if memory_id else None
            live = m is not None and m["deleted_at"] is None
            if record is None and m is not None and outcome != "merged":
                record = m["decision"]  # written before events kept their record
            if outcome == "merged":
                record = record or {"action": "merge", "target": memory_id}
                text = _decision_sentence(cur, record, head)
            else:
                text = f"{head} was written as {_label(cur, memory_id)}. "
                text += _decision_sentence(cur, record or {}, "It")
            lin = hist.lineage_in(cur, memory_id) if memory_id else None
            if lin is not None:
                sentences = _revision_sentences(cur, memory_id or "", lin)
                if sentences:
                    text += " " + " ".join(sentences)
            text += (
                f" Memory {short(memory_id)} is live."
                if live
                else f" Memory {short(memory_id)} is no longer live (see `memsieve explain {memory_id}`)."
            )
    return Explanation(event_id, "event", outcome or "unknown", live, text, {"event": ev})


def explain(store: Reads, id_: str, namespace: str | None = None) -> Explanation:
    """Explain a memory id, else an event id, within `namespace` when given (a memory of
    another namespace is not found). PermanentError when neither exists; AmbiguousEvent
    (a PermanentError too) for an event id namespaces share, asked without a namespace."""
    id_ = canonical_id(id_)
    found = explain_memory(store, id_) if is_uuid(id_) else None
    if (
        found is not None
        and namespace is not None
        and found.facts["memory"]["namespace"] != (namespace or None)
    ):
        found = None
    found = found or explain_event(store, id_, namespace)
    if found is None:
        where = f" in namespace {namespace!r}" if namespace is not None else ""
        raise errors.PermanentError(f"no memory or event with id {id_}{where}")
    return found
