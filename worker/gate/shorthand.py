"""Values said in engineers' shorthand, rewritten by `rewrite` in the form the guards' text
analysis (`memsieve.gate.text`) already compares; pure, each regex gated by a trigger word:

- a billion glued as "B" before what it counts or after a currency sign ("a 7B model",
  "1.3B parameters", "2.5B rows", "$2B") == "7 billion ...": "B" alone after a number is
  bytes ("a 512B header"), so the reading needs the counted noun or the sign;
- availability in nines ("three nines" == "99.9%", "five 9s" == "99.999%"), and fifths of
  something as a percentage ("one fifth of the sprint" == "20% of the sprint");
- `zones`: a US zone named right after a clock time, in a word or its short form ("9:30 AM
  Pacific" == "9:30 PT" == "9:30 Pacific time"), and a European zone in words ("Central
  European Time" == "CET");
- `clock_parts`: a clock time said with a part of the day ("half past six in the evening" ==
  "18:30", "quarter to eight at night" == "19:45"), once `text` has read the quarter hour.
"""

from __future__ import annotations

import re
from typing import Any

# What a count in billions counts in an engineer's note: model sizes, rows, requests ...
_COUNTED = (
    r"param(?:eter)?s?|model|models|llm|checkpoint|rows?|records?|tokens?|events?|requests?"
    r"|calls?|queries|messages?|users?|objects?|items?|documents?|docs|vectors?|embeddings?"
    r"|samples?|examples?|lines?|transactions?|keys?|files?|pages?|images?|downloads?|views?"
)
_BILLIONS = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)B(?=(?:[\s-]+|-?\s*)(?:" + _COUNTED + r")\b)", re.IGNORECASE
)
# A currency sign says the glued letter is a scale: "$2B" == "$2 billion".
_MONEY_SCALE = re.compile(r"([$€£])(\d+(?:\.\d+)?)\s?([bB])\b")
# Fifths of something as the percentage they are ("one fifth of the capacity" == "20% of
# the capacity"): "fifth" alone is an ordinal ("a fifth attempt"), so "of" must follow.
_FIFTHS = re.compile(r"\b(a|one|two|three|four)[ -]fifths?(?=\s+of\b)", re.IGNORECASE)
_FIFTHS_COUNT = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4}
_NINES = re.compile(r"\b(two|three|four|five|six|2|3|4|5|6)\s+(?:nines|9s)\b", re.IGNORECASE)
_NINES_COUNT = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
# A clock time `text` has written as "H:MM", then the part of the day that places it.
_CLOCK_PART = re.compile(
    r"\b(\d{1,2}):(\d{2})\s+(?:in\s+the\s+(morning|afternoon|evening)|at\s+(night))\b",
    re.IGNORECASE,
)


def rewrite(text: str) -> str:
    """`text` with each shorthand above said in the analysis' own form."""
    for triggers, pattern, repl in _REWRITES:
        if any(t in text for t in triggers):
            text = pattern.sub(repl, text)
    return text


def _billions(m: re.Match[str]) -> str:
    if m.group(0)[-1] == "b":  # "7b model" is as often bytes as a billion; only "B"
        return m.group(0)
    return f"{m.group(1)} billion"


def _nines(m: re.Match[str]) -> str:
    raw = m.group(1).lower()
    count = int(raw) if raw.isdigit() else _NINES_COUNT[raw]
    return "99%" if count == 2 else "99." + "9" * (count - 2) + "%"


def _clock_part(m: re.Match[str]) -> str:
    hour, minute = int(m.group(1)), m.group(2)
    part = (m.group(3) or m.group(4)).lower()
    if not 1 <= hour <= 12:
        return m.group(0)
    if part == "morning":
        return f"{hour % 12:02d}:{minute}"
    if part == "night" and hour < 5:  # "two at night" is early morning
        return f"{hour:02d}:{minute}"
    return f"{hour % 12 + 12:02d}:{minute}"


_REWRITES: tuple[tuple[tuple[str, ...], re.Pattern[str], Any], ...] = (
    (("B",), _BILLIONS, _billions),
    (("$", "€", "£"), _MONEY_SCALE, lambda m: f"{m.group(1)}{m.group(2)} billion"),
    (("nines", "9s"), _NINES, _nines),
    (("fifth",), _FIFTHS, lambda m: f"{_FIFTHS_COUNT[m.group(1).lower()] * 20}%"),
)


# A US zone right after a clock time: "10 AM Pacific", "9:30 PT", "16:00 Eastern".
_ZONE_AFTER_TIME = re.compile(
    r"\b\d{1,2}(?::\d{2})?\s*(?:[AaPp]\.?[Mm]\.?\s*)?(Pacific|Mountain|Central|Eastern|PT|MT|CT|ET)\b"
    r"(?!\s+(?:European|Europe|Africa|African|Asia|Asian|Australia|Australian|Indonesia))"
)
_ZONE_OF = {"pt": "pacific", "mt": "mountain", "ct": "central", "et": "eastern"}
# A European zone in words ("Central European Time" == "CET"), read as its abbreviation.
_EUROPEAN = re.compile(r"\b(Central|Eastern|Western)\s+European\s+(Summer\s+)?Time\b")


def zones(text: str) -> tuple[set[str], set[str]]:
    """The zones `text` names in words or after a clock time ("zone:pacific", "cet"), and
    the words that named them (no names of things)."""
    found: set[str] = set()
    words: set[str] = set()
    for m in _ZONE_AFTER_TIME.finditer(text):
        z = m.group(1).lower()
        found.add(f"zone:{_ZONE_OF.get(z, z)}")
        words.add(z)
    for m in _EUROPEAN.finditer(text):
        found.add(m.group(1)[0].lower() + "e" + ("s" if m.group(2) else "") + "t")
        words |= {w.lower() for w in m.group(0).split()}
    return found, words


def clock_parts(text: str) -> str:
    """`text` with each "H:MM" placed by a part of the day written as 24-hour time."""
    if " in the " not in text and " at night" not in text:
        return text
    return _CLOCK_PART.sub(_clock_part, text)
