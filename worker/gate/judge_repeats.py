"""An incoming text that restates the live one, decided from the words alone (no model, no
guard): the same text but for case, white space and Unicode forms; the live text whole with
sentences added that neither negate nor announce a change; the exact variants of
`memsieve.gate.judge_variants` (a misspelt word corrected; spacing, quoting, marks without
value or a neutral label changed)."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from memsieve.gate import judge_variants
from memsieve.gate import text as gtext
from memsieve.gate.judge_markers import CORRECTION_MARKERS, UPDATE_MARKERS


@lru_cache(maxsize=4096)
def _folded(text: str) -> str:
    """Case, white space and Unicode forms folded ("Naïve" composed or decomposed); cached
    per text (a text meets several candidates, and each pair folds both texts twice)."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


typo_fixed = judge_variants.typo_fixed


def same_text(live: str, incoming: str) -> bool:
    """The same text but for case, white space and Unicode forms: the same fact."""
    return bool(live.strip()) and _folded(live) == _folded(incoming)


def restates(live: str, incoming: str) -> str | None:
    """Why the incoming text is the live one restated, from the words alone (no model):
    None when it is not."""
    if same_text(live, incoming):
        return "the incoming text repeats the live one whole"
    if extends(live, incoming):
        return "the incoming text repeats the live one whole and adds to it"
    if typo_fixed(live, incoming):
        return "the incoming text is the live one with a misspelt word corrected"
    if judge_variants.surface_same(live, incoming):
        return "the incoming text is the live one but for spacing, quoting, marks or a label"
    return None


def extends(live: str, incoming: str) -> bool:
    """The incoming text is the live one whole (case and white space aside) followed by
    more sentences that neither negate nor announce a change: superseding the live memory
    with it hides nothing ("... first. Confirmed again in the March retro.")."""
    a, b = _folded(live), _folded(incoming)
    if not a or len(b) <= len(a) or not b.startswith(a) or a[-1] not in ".!?":
        return False
    added = b[len(a) :]
    words = set(re.findall(r"[a-z']+", added))
    return not (
        words & gtext.NEGATORS
        or any(w.endswith("n't") for w in words)
        or UPDATE_MARKERS.search(added)
        or CORRECTION_MARKERS.search(added)
    )
