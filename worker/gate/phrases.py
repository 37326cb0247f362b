"""Values said as phrases, for the guards' text analysis (`memsieve.gate.text`); all pure:

- `rewrite` turns a phrase into the form the analysis already compares, so that a value said
  two ways reads as one ("Monday to Friday" == "weekdays", "12/31/2025" == "December 31
  2025", "the twenty-fifth" == "the 25th", "six in the morning" == "6:00 am", "the second
  half of the year" == "H2", "January to March" == "Q1", "half a million" == "0.5 million");
- `terms` reads dates no number or date word carries: where in a period something falls
  ("early" / "mid-December", "the start" / "the end of the sprint"), which span is counted
  ("their first week" / "their first month"), a counting convention ("business" /
  "calendar days"), a US zone said in words, today said by a part of it, the minute of
  every hour, a holiday of more than one word;
- `moments` reads the side of a moment a text takes ("before" / "after the earnings call");
- `soft_values` reads a ratio said as a verb or a fraction ("double" / "triple", "half" /
  "a quarter") and the unit a value is kept in ("as epoch seconds" / "milliseconds").

The terms are dates a rewording may leave out but not replace; a soft value matches the
other's number and vetoes only against another of its kind (`text.changed_periods`).
"""

from __future__ import annotations

import re
from typing import Any

_MONTHS = (
    "January February March April May June July August September October November December"
).split()

_WEEKDAYS = re.compile(
    r"\b(?:from\s+)?(?:mondays?|mon)\s*(?:to|through|thru|until|till|-|–)\s*(?:fridays?|fri)\b",
    re.IGNORECASE,
)
_WEEKEND = re.compile(
    r"\b(?:saturdays?|sat)\s*(?:and|&|\+|/|or)\s*(?:sundays?|sun)\b(?!\s*(?:and|&|,))",
    re.IGNORECASE,
)
# A date with slashes whose day is over 12 says which order it is written in.
_SLASH_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")
# Only after "the": "a thirty-second delay" is 30 seconds, "the twenty-fifth" a day.
_TENS_ORDINAL = re.compile(
    r"\b(the\s+)(twenty|thirty)[- ](first|second|third|fourth|fifth|sixth|seventh|eighth|ninth)\b",
    re.IGNORECASE,
)
_ORDINALS = "first second third fourth fifth sixth seventh eighth ninth"
_UNITS_ORDINAL = {w: n for n, w in enumerate(_ORDINALS.split(), 1)}
_HOUR_OF_DAY = re.compile(  # not "half past nine in the morning": `text` reads that
    r"(?<!past )(?<!after )(?<!to )(?<!before )\b(\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
    r"(?:\s+o['’]clock)?\s+in\s+the\s+(morning|afternoon|evening)\b",
    re.IGNORECASE,
)
_HOURS = "one two three four five six seven eight nine ten eleven twelve"
_HOUR_WORDS = {w: n for n, w in enumerate(_HOURS.split(), 1)}
_HALF_YEAR = re.compile(
    r"\b(?:the\s+)?(first|second|1st|2nd)\s+half\s+of\s+(?:the\s+year|(\d{4}))\b", re.IGNORECASE
)
_MONTH = "(" + "|".join(_MONTHS) + ")"
_MONTH_RANGE = re.compile(
    rf"\b(?:between\s+)?{_MONTH}\s*(?:to|through|thru|and|until|-|–)\s*{_MONTH}\b"
)
# "half a million" == "500,000", "a million and a half" == "1.5 million".
_HALF_SCALE = re.compile(r"\bhalf\s+an?\s+(thousand|million|billion)\b", re.IGNORECASE)
_SCALE_AND_HALF = re.compile(
    r"\b(?:a|one)\s+(thousand|million|billion)\s+and\s+a\s+half\b", re.IGNORECASE
)
# ISO 8601 durations of one unit ("P14D" == "14 days", "PT30M" == "30 minutes").
_ISO_DURATION = re.compile(r"\bP(T?)(\d+)([YMWDHS])\b")
_ISO_UNITS = {"Y": "years", "M": "months", "W": "weeks", "D": "days", "H": "hours", "S": "seconds"}
# "three quarters of an hour", "3 quarters of the budget": one fraction, not a number 3.
_THREE_QUARTERS = re.compile(r"\b(?:three|3)[ -]quarters\b", re.IGNORECASE)


def rewrite(text: str) -> str:
    """`text` with each value phrase above said in the analysis' own form."""
    low = text.lower()
    for triggers, pattern, repl in _REWRITES:
        if any(t in low for t in triggers):  # most texts say none: skip the regex
            text = pattern.sub(repl, text)
    return text


def _tens_ordinal(tens: str, unit: str) -> int:
    return (20 if tens.lower() == "twenty" else 30) + _UNITS_ORDINAL[unit.lower()]


def _tens_ordinal_sub(m: re.Match[str]) -> str:
    return f"{m.group(1)}{_tens_ordinal(m.group(2), m.group(3))}th"


def _half_year(m: re.Match[str]) -> str:
    half = 1 if m.group(1).lower()[0] in "1f" else 2
    return f"H{half}" + (f" {m.group(2)}" if m.group(2) else "")


def _slash_date(m: re.Match[str]) -> str:
    first, second, year = int(m.group(1)), int(m.group(2)), m.group(3)
    if 1 <= first <= 12 < second <= 31:
        month, day = first, second
    elif 1 <= second <= 12 < first <= 31:
        month, day = second, first
    else:
        return m.group(0)  # 03/04/2025: March 4 or 3 April; left as written
    return f"{_MONTHS[month - 1]} {day} {year}"


def _hour_of_day(m: re.Match[str]) -> str:
    raw = m.group(1).lower()
    hour = int(raw) if raw.isdigit() else _HOUR_WORDS[raw]
    if not 1 <= hour <= 12:
        return m.group(0)
    half = "am" if m.group(2).lower() == "morning" else "pm"
    return f"{hour}:00 {half}"


_QUARTERS = {("January", "March"): 1, ("April", "June"): 2, ("July", "September"): 3}
_QUARTERS[("October", "December")] = 4


def _quarter_of_months(m: re.Match[str]) -> str:
    q = _QUARTERS.get((m.group(1), m.group(2)))
    return f"Q{q}" if q else m.group(0)


# (words one of which the text must hold, pattern, replacement), in the order applied.
_REWRITES: tuple[tuple[tuple[str, ...], re.Pattern[str], Any], ...] = (
    (("mon",), _WEEKDAYS, "weekdays"),
    (("sat",), _WEEKEND, "weekends"),
    (("/",), _SLASH_DATE, _slash_date),
    (("twenty", "thirty"), _TENS_ORDINAL, _tens_ordinal_sub),
    ((" in the ",), _HOUR_OF_DAY, _hour_of_day),
    (("half",), _HALF_YEAR, _half_year),
    (("january", "april", "july", "october"), _MONTH_RANGE, _quarter_of_months),
    (("half",), _HALF_SCALE, lambda m: f"0.5 {m.group(1)}"),
    (("half",), _SCALE_AND_HALF, lambda m: f"1.5 {m.group(1)}"),
    (("quarters",), _THREE_QUARTERS, "threequarters"),
    (("p",), _ISO_DURATION, lambda m: f"{m.group(2)} {_iso_unit(m.group(1), m.group(3))}"),
)


def _iso_unit(time: str, unit: str) -> str:
    return "minutes" if time and unit == "M" else _ISO_UNITS[unit]


_PERIODS = (
    r"(?:" + "|".join(_MONTHS) + r"|sprint|quarter|year|month|week|cycle|release|season"
    r"|spring|summer|autumn|winter|decade|century|Q[1-4]|FY\s?\d{2,4}|H[12]|\d{4}s?"
    r"|\d{1,2}(?:st|nd|rd|th)\s+century)"
)
_PHASE = re.compile(
    r"\b(?:(beginning|start|outset|middle|end|close)\s+of\s+"
    r"(?:(?:the|each|every|a|their|its|our|your|his|her)\s+)?"
    r"(?:(?:first|second|third|fourth|last|next|final|full)\s+)?"
    r"|(early|mid|late)(?:\s+|-|\s+in\s+the\s+|\s+in\s+))(" + _PERIODS + r")\b",
    re.IGNORECASE,
)
_PHASE_OF = {"beginning": "start", "start": "start", "outset": "start", "early": "start"}
_PHASE_OF |= {"middle": "mid", "mid": "mid", "end": "end", "close": "end", "late": "end"}
# The n-th span of something counted ("after their first week", "in the second month"); the
# n-th week of a month is read by `memsieve.gate.text` ("the first week of August").
_NTH_SPAN = re.compile(
    r"\b(first|second|third|fourth)\s+(day|week|month|quarter|year|sprint|shift)s?\b(?!\s+of\b)",
    re.I,
)
# Which side of a moment ("before" / "after the earnings call"), with the moment's first word:
# a converse names another moment ("A before B" / "B after A") and is left alone.
_RELATION = re.compile(
    r"\b(before|prior to|ahead of|after|following|outside(?: of)?|during|within|inside)\s+"
    r"(?:the\s+|a\s+|an\s+|our\s+|each\s+|every\s+)?([A-Za-z0-9:]+)",
    re.IGNORECASE,
)
_RELATION_WORDS = "before prior ahead after following outside during within inside".split()
_RELATION_OF = {"prior to": "before", "ahead of": "before", "following": "after"}
_RELATION_OF |= {"outside of": "outside", "during": "in", "within": "in", "inside": "in"}
# What a count of days or years counts ("2 business days" / "2 calendar days", "the fiscal
# year" / "the calendar year").
_BASIS = re.compile(
    r"\b(business|working|calendar|fiscal)\s+(day|week|month|quarter|year)s?\b", re.IGNORECASE
)
# US zones said in words ("9:00 Pacific time" / "9:00 Central time"); their abbreviations
# read as the same zone (`ZONE_ABBREVIATIONS`).
_ZONE_WORD = re.compile(
    r"\b(Pacific|Mountain|Central|Eastern|Atlantic)(?:\s+(?:Standard|Daylight))?\s+[Tt]ime\b"
)
_ZONES = (
    "pacific:pst,pdt,pt mountain:mst,mdt,mt central:cst,cdt,ct eastern:est,edt,et atlantic:ast,adt"
)
ZONE_ABBREVIATIONS = {z: tuple(a.split(",")) for z, a in (p.split(":") for p in _ZONES.split())}
# Today said by a part of it ("this morning" / "tomorrow morning").
_THIS_PART = re.compile(r"\bthis\s+(?:morning|afternoon|evening)\b", re.IGNORECASE)
# The minute of every hour ("at the top of every hour" / "at a quarter past every hour").
_MINUTE_OF_HOUR = re.compile(
    r"\b(top|(?:a\s+)?quarter\s+past|half\s+past|(?:a\s+)?quarter\s+to|bottom)\s+"
    r"(?:of\s+)?(?:the|every|each)\s+hour\b",
    re.IGNORECASE,
)
_MINUTE_OF = {"top": "00", "quarter past": "15", "half past": "30", "bottom": "30"}
_MINUTE_OF["quarter to"] = "45"
# Holidays named in more than one word (one-word holidays are date words of `text`).
_HOLIDAY = re.compile(
    r"\b(golden week|lunar new year|chinese new year|new year's (?:day|eve)|boxing day"
    r"|labou?r day|memorial day|independence day|good friday|easter monday|black friday"
    r"|cyber monday|veterans day|presidents'? day|yom kippur|rosh hashanah|day of the dead)\b",
    re.IGNORECASE,
)
HOLIDAY_WORDS = frozenset(
    "diwali holi eid hanukkah ramadan passover obon songkran carnival halloween juneteenth".split()
)
PREFIXES = ("basis:", "zone:", "minute:")  # droppable, like the sets below
PHASES = frozenset(f"phase:{p}" for p in ("start", "mid", "end"))
NTH_SPANS = frozenset(
    f"span:{n}-{u}"
    for n in ("first", "second", "third", "fourth")
    for u in ("day", "week", "month", "quarter", "year", "sprint", "shift")
)
# A ratio said as a verb ("we double the pool", "traffic tripled"); "double" / "triple"
# only before what they multiply ("a double album" says no ratio).
_MULTIPLY = re.compile(
    r"\b(?:(doubl|tripl|quadrupl|halv)(?:ed|es|ing)|(double|triple|quadruple|halve)"
    r"(?=\s+(?:the|its|their|our|your|his|her|this|that|these|those|it|them|every|each|in|to)\b))",
    re.IGNORECASE,
)
_RATIO_OF = {"doubl": 2.0, "tripl": 3.0, "quadrupl": 4.0, "halv": 0.5}
# Fractions in words, with their readings as a number: they match the other text's number
# softly ("sampled at 25%" == "a quarter of the events"); "a pair of" reads as 2 the same way.
_FRACTION: tuple[tuple[re.Pattern[str], float | None, tuple[str, ...]], ...] = (
    (re.compile(r"\bthreequarters\b", re.I), 0.75, ("75", "0.75")),  # `rewrite`'s
    (re.compile(r"\ba pair of\b", re.I), None, ("2",)),
    (re.compile(r"\b(?:a|one)[ -]quarter\b", re.I), 0.25, ("25", "0.25")),
    (re.compile(r"\b(?:a|one)[ -]third\b", re.I), 1 / 3, ("33", "0.33", "33.3")),
    (re.compile(r"\b(?:a|one)[ -]tenth\b", re.I), 0.1, ("10", "0.1")),
    (re.compile(r"\bhalf\b(?!\s+(?:past|after|to|before)\s+\d)", re.I), 0.5, ("50", "0.5")),
)


def terms(text: str) -> set[str]:
    """The places in a period ("phase:end"), counted spans ("span:first-week") and counting
    conventions ("basis:calendar-day") `text` says: date terms."""
    low = text.lower()
    found: set[str] = set()
    if any(w in low for w in ("begin", "start", "outset", "mid", "end", "close", "early", "late")):
        found |= {
            f"phase:{_PHASE_OF[(m.group(1) or m.group(2)).lower()]}" for m in _PHASE.finditer(text)
        }
    if " time" in low:
        found |= {f"zone:{m.group(1).lower()}" for m in _ZONE_WORD.finditer(text)}
    if "this " in low:
        found |= {"today" for _ in _THIS_PART.finditer(text)}
    if "hour" in low:
        for m in _MINUTE_OF_HOUR.finditer(text):
            part = " ".join(m.group(1).lower().split()).removeprefix("a ")
            found.add(f"minute:{_MINUTE_OF[part]}")
    found |= {"holiday:" + "-".join(m.group(1).lower().split()) for m in _HOLIDAY.finditer(text)}
    if any(w in low for w in ("business", "working", "calendar", "fiscal")):
        for m in _BASIS.finditer(text):
            basis = m.group(1).lower()
            found.add(f"basis:{'business' if basis == 'working' else basis}-{m.group(2).lower()}")
    if any(w in low for w in ("first", "second", "third", "fourth")):
        found |= {
            f"span:{m.group(1).lower()}-{m.group(2).lower()}" for m in _NTH_SPAN.finditer(text)
        }
    return found


def moments(text: str) -> frozenset[tuple[str, str]]:
    """(side, the moment's first word) for each side of a moment `text` names: ("after",
    "lunch"). Compared by `memsieve.gate.text.changed_moments`."""
    low = text.lower()
    if not any(w in low for w in _RELATION_WORDS):
        return frozenset()
    out = set()
    for m in _RELATION.finditer(text):
        rel = " ".join(m.group(1).lower().split())
        out.add((_RELATION_OF.get(rel, rel), m.group(2).lower()))
    return frozenset(out)


# The unit a value is kept or shown in ("stored as epoch seconds" / "... milliseconds",
# "measured in minutes"): compared like a ratio.
_IN_UNIT = re.compile(
    r"\b(?:in|as|epoch|unix)\s+(nanoseconds|microseconds|milliseconds|seconds|minutes|hours"
    r"|days|weeks|bytes|kilobytes|megabytes|gigabytes|cents|dollars|euros|pixels|points)\b",
    re.IGNORECASE,
)


def soft_values(text: str) -> set[str]:
    """Soft numbers: each ratio said in words as "ratio:2", with its readings as a number ("2",
    "200" for a percentage), and each unit a value is said to be in ("unit:seconds")."""
    low = text.lower()
    out = {f"unit:{m.group(1).lower()}" for m in _IN_UNIT.finditer(text)}
    if any(w in low for w in ("doubl", "tripl", "quadrupl", "halv")):
        for m in _MULTIPLY.finditer(text):
            v = _RATIO_OF[(m.group(1) or m.group(2)[:-1]).lower()]
            out |= {f"ratio:{v:.4g}", f"{v:.12g}", f"{v * 100:.12g}"}
    if any(w in low for w in ("quarter", "third", "tenth", "half", "pair")):
        for pattern, share, readings in _FRACTION:
            if pattern.search(text):
                out.update(readings)
                if share is not None:
                    out.add(f"ratio:{share:.4g}")
    return out
