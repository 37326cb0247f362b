"""Words by which a text announces a new value, a correction or a reversed rule, read once
per text (a text meets several candidates) by the pair classifier's features
(`memsieve.gate.judge_features`) and the restatement rules (`memsieve.gate.judge_repeats`)."""

from __future__ import annotations

import re
from functools import lru_cache

# Words that announce a new value for an old slot ("now", "moved to", "no longer").
UPDATE_MARKERS = re.compile(
    r"\b(now|moved|moves|switched|switch(?:ed)? to|changed|renamed|upgraded|downgraded|"
    r"migrated|replaced|raised|lowered|increased|decreased|reduced|bumped|no longer|"
    r"instead|anymore|any more|from now on|has become|became|is being replaced|"
    r"starting|from \w+ on|was|were|has been|have been|handed over|took over|takes over|"
    r"handed|reassigned|transferred|"
    r"stopped|dropped|deprecated|retired|removed|sunset|as of|going forward|"
    r"used to|these days|nowadays)\b",
    re.IGNORECASE,
)

# Words by which a text says outright that a value changed ("has taken over", "moved to",
# "is now", "changed their mind"): narrower than `UPDATE_MARKERS` ("was", "now" alone),
# because said by the incoming text alone they overrule the model (`judge_rules`).
CHANGE_ANNOUNCED = re.compile(
    r"\b(?:has|have|had)\s+(?:passed|moved|switched|changed|migrated|been\s+(?:replaced|moved|"
    r"switched|turned\s+(?:on|off)|enabled|disabled|raised|lowered|increased|decreased|reduced|"
    r"changed|renamed|migrated|handed\s+over|dropped|lifted|removed|retired|deprecated|"
    r"reverted|rolled\s+back|cancell?ed|discontinued|abandoned|scrapped|superseded|revoked|"
    r"reversed))\b|\bno\s+more\b(?!\s+than)|, replacing\b|\bcut\s*over\s+to\b|\bin\s+favou?r\s+of\b|"
    r"\b(?:took|taken|takes)\s+over\b|"
    r"\bhanded\s+over\b|\b(?:handed|passed)\s+(?:[\w'’-]+\s+){1,5}?over\s+to\b|"
    r"\b(?:reassigned|transferred)\s+(?:[\w'’-]+\s+){0,5}?to\b|\bchanged\s+(?:their|its|his|her|our|my)\s+minds?\b|\bno\s+longer\b|"
    r"\bfrom\s+now\s+on\b|\bgoing\s+forward\b|\b(?:moved|switched|migrated)\s+(?:to|from|over)\b|"
    r"\b(?:is|are)\s+now\b|\bnow\s+(?:uses?|runs?|goes|go|lives?|belongs?|owns?|happens?)\b",
    re.IGNORECASE,
)


# Words that announce a rule reversed ("no longer", "stopped"): narrower than the update
# markers, because with a flipped negation they overrule the model (`reverses_rule`).
REVERSAL_MARKERS = re.compile(
    r"\b(no longer|any ?more|stopped|dropped|now|deprecated|removed|retired|used to)\b",
    re.IGNORECASE,
)

# "Correction:", "actually", "not X" at the end: the producer says the old statement was wrong.
CORRECTION_MARKERS = re.compile(
    r"^\s*(?:correction|update|fix|actually|in fact)\b|\bnot\s+\w+\s*[.!]?\s*$|"
    r"\b(?:turned out|it was actually|was wrong|is wrong|no longer)\b",
    re.IGNORECASE,
)


# Words that forbid what they name without a negator ("X is off limits", "avoid X"): the
# same polarity as "never X" (`prohibits`, the feature `polarity_mismatch`).
PROHIBITIVE = re.compile(
    r"\b(forbid|forbids|forbidden|prohibit|prohibits|prohibited|ban|bans|banned|disallow|"
    r"disallows|disallowed|off[ -]limits?|avoid|avoids|avoided|must be avoided|verboten|"
    r"not permitted|taboo)\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=4096)
def prohibits(text: str) -> bool:
    """Whether `text` forbids something by a word of prohibition, not a negator."""
    return bool(PROHIBITIVE.search(text))


@lru_cache(maxsize=4096)
def markers(text: str) -> tuple[bool, bool, bool, bool]:
    """Whether `text` announces an update, a correction, a reversed rule, and whether it says
    outright that a value changed (`CHANGE_ANNOUNCED`)."""
    return (
        bool(UPDATE_MARKERS.search(text)),
        bool(CORRECTION_MARKERS.search(text)),
        bool(REVERSAL_MARKERS.search(text)),
        bool(CHANGE_ANNOUNCED.search(text)),
    )
