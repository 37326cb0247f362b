"""Guards that compare exact values: code quoted in backticks, and the time zone of a time.

Split from `memsieve.gate.guards` (which lists every guard in `default_guards`); same
contract: `(incoming, candidate) -> list[Veto]`, pure, cached per text.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memsieve.gate import text
from memsieve.gate.decide import Candidate, Incoming, Veto
from memsieve.schemas.memory import memory_text


def diff_detail(new: list[str], old: list[str]) -> str:
    parts = []
    if new:
        parts.append("incoming has " + ", ".join(new[:5]))
    if old:
        parts.append("memory has " + ", ".join(old[:5]))
    return "; ".join(parts)


_CODE = re.compile(r"`([^`\n]+)`")


@lru_cache(maxsize=4096)
def _code_spans(joined: str) -> frozenset[str]:
    return frozenset(s.strip().lower() for s in _CODE.findall(joined) if s.strip())


def _mentions(joined: str, span: str) -> bool:
    """`span` occurs in `joined` as a whole term (not inside a longer name)."""
    pattern = r"(?<![\w-])" + re.escape(span) + r"(?![\w-])"
    return re.search(pattern, joined, re.IGNORECASE) is not None


def code_guard(incoming: Incoming, candidate: Candidate) -> list[Veto]:
    """Veto when each text quotes code (`...`) that the other never mentions verbatim.

    A quoted name is exact: `platform-config` and `platform-configs` are two repos, where
    prose plurals and suffixes fold ("PRs" == "PR"). A rewording may drop the quotes or the
    term; only a substitution, a quoted term on each side that the other lacks, vetoes.
    """
    if incoming.target_memory_id is not None and incoming.target_memory_id == candidate.memory_id:
        return []
    ta = memory_text(candidate.heading, candidate.content)
    tb = memory_text(incoming.heading, incoming.content)
    new = sorted(s for s in _code_spans(tb) if not _mentions(ta, s))
    old = sorted(s for s in _code_spans(ta) if not _mentions(tb, s))
    if not new or not old:
        return []
    return [Veto("code", diff_detail(new, old))]


_ZONE = re.compile(
    r"\b(utc|gmt|pst|pdt|est|edt|cst|cdt|mst|mdt|cet|cest|eet|eest|bst|ist|jst|kst|sgt|hkt|"
    r"aest|aedt|awst|nzst|nzdt|local time)\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=4096)
def _zones(joined: str) -> frozenset[str]:
    """Time zones named in a text, where it also names a clock time or a day."""
    found = frozenset(z.lower() for z in _ZONE.findall(joined) if z)
    if not found:
        return found
    a = text.analyse(joined)
    return found if a.dates else frozenset()


def time_zone_guard(incoming: Incoming, candidate: Candidate) -> list[Veto]:
    """Veto (as a changed date) when both texts name the time zone of a time and the zones
    differ: "02:00 UTC" and "02:00 PST" are two moments. A rewording that drops the zone
    passes; the dates guard compares the times themselves."""
    if incoming.target_memory_id is not None and incoming.target_memory_id == candidate.memory_id:
        return []
    za = _zones(memory_text(candidate.heading, candidate.content))
    zb = _zones(memory_text(incoming.heading, incoming.content))
    if not za or not zb or za == zb:
        return []
    return [Veto("dates", diff_detail(sorted(zb - za), sorted(za - zb)))]
