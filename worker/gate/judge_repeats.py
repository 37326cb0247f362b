"""An incoming text that restates the live one, decided from the words alone (no model, no
guard): the same text but for case, white space and Unicode forms; the live text whole with
sentences added that neither negate nor announce a change; a misspelt word corrected."""

from __future__ import annotations

import re
import unicodedata

from memsieve.gate import text as gtext
from memsieve.gate.judge_markers import CORRECTION_MARKERS, UPDATE_MARKERS


def _folded(text: str) -> str:
    """Case, white space and Unicode forms folded ("Naïve" composed or decomposed)."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def same_text(live: str, incoming: str) -> bool:
    """The same text but for case, white space and Unicode forms: the same fact."""
    return bool(live.strip()) and _folded(live) == _folded(incoming)


_TYPO_TOKEN = re.compile(r"[A-Za-z0-9_]+(?:[.\-/][A-Za-z0-9_]+)*")
# Letters a misspelt word keeps at least: shorter words differ by one letter as other words.
TYPO_MIN_LETTERS = 6


def _one_letter_inside(x: str, y: str) -> bool:
    """One letter inserted or dropped inside a word of letters only ("aproval" / "approval",
    "travelled" / "traveled"): never at its end (a plural, "encode" / "encoder") and never in
    a name with digits ("billing-v1" / "billing-v2")."""
    if len(x) > len(y):
        x, y = y, x
    if len(y) - len(x) != 1 or len(x) < TYPO_MIN_LETTERS or not (x.isalpha() and y.isalpha()):
        return False
    return any(y[:i] + y[i + 1 :] == x for i in range(1, len(y) - 1))


def typo_fixed(live: str, incoming: str) -> bool:
    """The same words and marks in the same order, but for misspelt words corrected (or
    introduced): one letter inserted or dropped inside a word ("manual aproval" / "manual
    approval", "localStorge" / "localStorage"). The same fact, whatever the guards read."""
    ta, tb = _TYPO_TOKEN.findall(live), _TYPO_TOKEN.findall(incoming)
    if len(ta) != len(tb) or ta == tb:
        return False
    if _TYPO_TOKEN.sub("", live).split() != _TYPO_TOKEN.sub("", incoming).split():
        return False
    return all(
        x == y or _one_letter_inside(x.lower(), y.lower()) for x, y in zip(ta, tb, strict=True)
    )


def restates(live: str, incoming: str) -> str | None:
    """Why the incoming text is the live one restated, from the words alone (no model):
    None when it is not."""
    if same_text(live, incoming):
        return "the incoming text repeats the live one whole"
    if extends(live, incoming):
        return "the incoming text repeats the live one whole and adds to it"
    if typo_fixed(live, incoming):
        return "the incoming text is the live one with a misspelt word corrected"
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
