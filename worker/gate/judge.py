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

from memsieve.gate import value_change

# The verdict types live with the gate that reads them (no import circle); named here too.
from memsieve.gate.decide import (
    Candidate,
    Guard,
    Incoming,
    Judge,
    Judgement,
    Verdict,
    VetoJudge,
)

if TYPE_CHECKING:
    from memsieve.settings import Settings


class GuardJudge(VetoJudge):
    """The lexical guards as a judge (see the module docstring)."""

    def __init__(self, guards: Sequence[Guard] | None = None) -> None:
        if guards is None:
            from memsieve.gate.guards import default_guards

            guards = default_guards()
        super().__init__(guards)

    def judge_one(self, incoming: Incoming, candidate: Candidate) -> Judgement:
        vetoes = self.vetoes(incoming, candidate)
        if vetoes and value_change.one_value_changed(incoming, candidate, vetoes):
            detail = "; ".join(f"{v.guard}: {v.detail}" for v in vetoes)
            return Judgement(Verdict.UPDATE, 0.6, self.name, "one value changed: " + detail, vetoes)
        return self.verdict(candidate, vetoes)


def guard_judge(guards: Sequence[Guard] | None = None) -> Judge:
    """A judge from the given guards (default: every guard)."""
    return GuardJudge(guards)


def default_judge(settings: Settings | None = None, *, embedder_model: str | None = None) -> Judge:
    """The judge the gate uses unless told otherwise (`MEMSIEVE_JUDGE`).

    - `classifier` (the default): the trained pair classifier
      (`memsieve.gate.judge_classifier`): hard guards, token alignment with MiniLM's
      contextual word vectors (from the local embedder's own ONNX pass, no torch), soft
      guard signals, trained weights; without the local model installed, a lexical
      alignment (stricter). Chosen on cross-validated figures (docs/dedupe-quality.md):
      far fewer false supersedes than the guards alone at about their recall;
    - `guards`, and always with the test embedder (hashing-v1): the lexical guards alone
      (`GuardJudge`).

    The service puts the optional LLM judge in front of it (`memsieve.judge_llm.service_judge`:
    this package stays free of network clients).
    """
    if settings is None:
        settings = env_settings()
    model = embedder_model or _embedder_model(settings)
    if settings is None or model.startswith("hashing") or settings.judge == "guards":
        return GuardJudge()
    from memsieve.gate import judge_classifier

    return judge_classifier.classifier_judge(
        model,
        threads=settings.local_threads,
        model_cache=settings.model_cache,
        update_band=settings.update_band,
    )


def env_settings() -> Settings | None:
    """The settings of the environment, or None where they do not parse."""
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
