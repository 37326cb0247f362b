"""The gate's judgment stage: is a close pair the same fact, an update, or a different fact?

The gate (`memsieve.gate.batch`) calls a `Judge` once per batch with every (incoming, candidate)
pair that passed the cheap filters (cosine distance under the kind's threshold, not
byte-identical) that the batch is likely to meet, and again for any pair it did not foresee;
a judge with a class attribute `batched = False` (cheap per pair) is instead asked as the
pairs come up. What the gate does with each verdict:

- `SAME`: the incoming memory supersedes the candidate (a rewording of one fact);
- `UPDATE`: the same subject and slot with a new value (a changed tool, schedule, owner,
  limit, a reversed rule): by default both rows stay live, linked as a conflict; a correction
  judged an update of exactly one live memory, or `MEMSIEVE_ON_CONFLICT=newest`, supersedes
  it with reason `update`;
- `DIFFERENT`: the incoming memory is inserted beside the candidate.

When in doubt a judge answers `DIFFERENT` (keep both rows), never `SAME`. A judge sees texts,
kinds and distances; a candidate from the same batch, not written yet, has a placeholder
memory id (`batch:<event id>`), and the gate matches judgements to pairs by content hashes.

`GuardJudge` is built from the lexical guards (`memsieve.gate.guards`): no veto means `SAME`;
a veto means `DIFFERENT`, or `UPDATE` when the two texts share their subject and differ in
exactly one value. It judges for the test embedder. `default_judge` otherwise returns the
trained pair classifier (`memsieve.gate.judge_classifier`), which needs positive evidence of
one fact to answer `SAME`, and optionally an LLM judge in front of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

# The verdict types live with the gate that reads them (no import circle); named here too.
from memsieve.gate.decide import (
    Candidate,
    Guard,
    Incoming,
    Judge,
    Judgement,
    Verdict,
    Veto,
    VetoJudge,
)

if TYPE_CHECKING:
    from memsieve.settings import Settings


# Guards whose veto names a value that changed (a number, an identifier, a date, a name, one
# of an exclusive group) rather than a changed sentence (negation, swapped roles).
VALUE_GUARDS = frozenset({"numbers", "identifiers", "dates", "entities", "compounds", "contrast"})
# Content words the two texts must share (Jaccard, apart from the changed value) to be
# about the same subject.
SUBJECT_MIN_OVERLAP = 0.5


class GuardJudge(VetoJudge):
    """The lexical guards as a judge (see the module docstring)."""

    def __init__(self, guards: Sequence[Guard] | None = None) -> None:
        if guards is None:
            from memsieve.gate.guards import default_guards

            guards = default_guards()
        super().__init__(guards)

    def judge_one(self, incoming: Incoming, candidate: Candidate) -> Judgement:
        vetoes = self.vetoes(incoming, candidate)
        if vetoes and _one_value_changed(incoming, candidate, vetoes):
            detail = "; ".join(f"{v.guard}: {v.detail}" for v in vetoes)
            return Judgement(Verdict.UPDATE, 0.6, self.name, "one value changed: " + detail, vetoes)
        return self.verdict(candidate, vetoes)


def _one_value_changed(incoming: Incoming, candidate: Candidate, vetoes: Sequence[Veto]) -> bool:
    """One veto from a value guard, one value on each side, and a shared subject."""
    if len(vetoes) != 1 or vetoes[0].guard not in VALUE_GUARDS:
        return False
    new, old = _sides(vetoes[0].detail)
    if len(new) != 1 or len(old) != 1:
        return False
    if incoming.heading and incoming.heading.strip().lower() == candidate.heading.strip().lower():
        return True
    from memsieve.gate import guards, text

    a = text.analyse(guards.memory_text(incoming.heading, incoming.content))
    b = text.analyse(guards.memory_text(candidate.heading, candidate.content))
    changed = {new[0].lower(), old[0].lower()}
    words_a = tuple(w for w in a.content_words if w not in changed)
    words_b = tuple(w for w in b.content_words if w not in changed)
    return guards.overlap(words_a, words_b) >= SUBJECT_MIN_OVERLAP


def _sides(detail: str) -> tuple[list[str], list[str]]:
    """The terms each side has in a guard's detail ("incoming has a, b; memory has c")."""
    new: list[str] = []
    old: list[str] = []
    for part in detail.split("; "):
        if part.startswith("incoming has "):
            new = part.removeprefix("incoming has ").split(", ")
        elif part.startswith("memory has "):
            old = part.removeprefix("memory has ").split(", ")
    return new, old


def guard_judge(guards: Sequence[Guard] | None = None) -> Judge:
    """A judge from the given guards (default: every guard)."""
    return GuardJudge(guards)


def default_judge(settings: Settings | None = None, *, embedder_model: str | None = None) -> Judge:
    """The judge the gate uses unless told otherwise (`MEMSIEVE_JUDGE`).

    - `guards` (the default), and always with the test embedder (hashing-v1): the lexical
      guards alone (`GuardJudge`);
    - `classifier`: the trained pair classifier (`memsieve.gate.judge_classifier`): hard
      guards, token alignment with MiniLM's contextual word vectors, soft guard signals,
      trained weights; without the local model installed, a lexical alignment (stricter).
      Not the default: on the held-out pairs it cuts false supersedes (precision 0.65 ->
      0.94) but catches fewer rewordings (recall 0.83 -> 0.69), misses one of the README's
      five rewordings, and costs ~1.6x the gate's CPU (docs/dedupe-quality.md).

    The service puts the optional LLM judge in front of it (`memsieve.judge_llm.service_judge`:
    this package stays free of network clients).
    """
    if settings is None:
        settings = _settings()
    model = embedder_model or _embedder_model(settings)
    if settings is None or model.startswith("hashing") or settings.judge == "guards":
        return GuardJudge()
    from memsieve.gate import judge_classifier

    return judge_classifier.classifier_judge(
        model, threads=settings.local_threads, model_cache=settings.model_cache
    )


def _settings() -> Settings | None:
    from memsieve import errors
    from memsieve.settings import Settings as _Settings

    try:
        return _Settings.from_env()
    except errors.ConfigError:
        return None


def _embedder_model(settings: Settings | None) -> str:
    """The model name of the configured embedder (as recorded on rows)."""
    if settings is None or settings.embedder == "local":
        return "all-MiniLM-L6-v2"
    if settings.embedder == "hashing":
        return "hashing-v1"
    return settings.openai_model
