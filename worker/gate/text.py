"""Text analysis for the dedupe guards: the salient terms an embedding barely sees.

Pure and cached: `analyse(text)` tokenises once and returns frozen sets of the terms each
guard compares (numbers, identifiers, dates, named entities, contrast terms, negation,
content-word order). Nothing here decides anything; `memsieve.gate.guards` does.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from memsieve.gate import phrases, shorthand

# A token: a URL, or a run of non-space characters (trimmed of surrounding punctuation later).
_TOKEN = re.compile(r"https?://\S+|\S+")
# A blank line ends a sentence, as a full stop does: memory_text() puts one between a
# memory's heading and its content.
_PARAGRAPH = re.compile(r"\n\s*\n")
_TRIM = "()[]{}<>,;:!?\"'`*“”‘’«»"
_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")
# A number: not glued to a preceding letter, except a version's "v" (v1.2 == 1.2).
# A digit glued to letters, or joined to them by one hyphen ("SEV-1", "PAY-123"), is part of
# an identifier (compared whole by the identifiers guard, "SEV-1" == "SEV1"), not a number.
# No number starts inside a word: not after a letter ("ec2"), nor after a digit that follows
# one ("p99" holds no 9, "h264" no 64), nor after a letter and a hyphen ("SEV-1"); "v1.2" is one.
_NUMBER = re.compile(r"(?:(?<=\bv)|(?<![A-Za-z\d])(?<![A-Za-z]-))\d+(?:[.,]\d+)*")
# "~" before a number means "about": the number is said either way ("~/x" is a path).
_APPROX = re.compile(r"(?<![\w~/])~(?=\d)")
# A percentile spelt out ("99th percentile", "99th-percentile", after `spell_out_numbers`:
# "99 percentile") is the identifier its short form is ("p99").
_PERCENTILE = re.compile(r"\b(\d{1,2}(?:\.\d+)?)[\s-]+percentiles?\b", re.IGNORECASE)
_PLAIN_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)*%?")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2,}[a-z]{2,}")
_HEXISH = re.compile(r"^[0-9a-f]{7,40}$")
_SENTENCE_END = re.compile(r"[.!?:]$")
# A numeronym: a word shortened to its first letter, the count of letters left out and its
# last letter(s) (k8s, i18n, a11y, o11y, e2e).
_NUMERONYM = re.compile(r"[a-z]\d{1,2}[a-z]{1,2}")
# Unicode hyphens read as "-" (a non-breaking hyphen in "Sev\u20112" is the same id as "Sev-2").
_DASHES = str.maketrans({"\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2212": "-"})
# A number joined to the noun it counts ("a 2,000-article set", "a 3-node cluster").
_COUNTED_NOUN = re.compile(r"\d[\d,.]*-[A-Za-z]+(?:-[A-Za-z]+)*")
# A possessive on a token, and the sentence's punctuation after it ("foo.lock's" ==
# "foo.lock"; "PR's" == "PR"; "than the API's." == "API").
_POSSESSIVE = re.compile(r"['’]s[.,;:!?…]*$")
# What closes a token: a closing quote, backtick, bracket or emphasis, then anything of a
# possessive and sentence punctuation ("`foo.lock`.", "(`make test`),", "`foo.lock`'s.").
# The wrapper ends the token, so everything from it on is cut, whatever the order.
_CLOSING_TAIL = re.compile(r"[`\"'”’»)\]}>*]+(?:['’]s)?[.,;:!?…`\"'”’»)\]}>*]*$")

NUMBER_WORDS = {
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "twenty": "20",
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "hundred": "100",
    "thousand": "1000",
    "twice": "2",
    "thrice": "3",
    # Ordinals read as their number, as "3rd" is ("the third business day" == "3rd"); not
    # "first" (prose: "first run the tests") nor "second" (a unit).
    "third": "3",
    "fourth": "4",
    "fifth": "5",
    "sixth": "6",
    "seventh": "7",
    "eighth": "8",
    "ninth": "9",
    "tenth": "10",
    "eleventh": "11",
    "twelfth": "12",
    "fifteenth": "15",
    "twentieth": "20",
    "thirtieth": "30",
}

# "first" and "second" are prose as often as ordinals ("first run the tests"): a soft number
# that matches the other text's "1st" / "2nd" and never vetoes on its own.
_SOFT_ORDINALS = {"first": "1", "second": "2"}

_MONTHS = (
    "january february march april june july august september october november december"
).split()
_MONTH_ABBR = {m[:3]: m for m in _MONTHS} | {"sept": "september"}
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
# "may" is a modal verb: only a capitalised, non-initial "May" counts as the month.
# Which weekday of the month: "the second Saturday" != "the last Saturday", "the third
# Tuesday" == "the 3rd Tuesday" (spell_out_numbers has made "3rd" "3" by then).
_NTH_WEEKDAY = re.compile(
    r"\b(first|second|third|fourth|fifth|last|penultimate|\d+)\s+("
    + "|".join(_WEEKDAYS)
    + r")s?\b",
    re.IGNORECASE,
)


def _nth(ordinal: str) -> str:
    low = ordinal.lower()
    return {"first": "1", "second": "2", "third": "3", "fourth": "4", "fifth": "5"}.get(low, low)


# Days said from today and deadlines said as an end ("EOD", "end of the week"): dates like
# a weekday, so "today" / "tomorrow" or "EOD" / "EOW" is a changed date. A day said from
# today or a time of day may be said on one side only ("Today deploys use Argo", "the 3am UTC
# job" / "the 3am job"): `DROPPABLE_DATES`; replaced by another, it is a change.
_DAY_PARTS = {"morning", "afternoon", "evening", "night"}
DROPPABLE_DATES = frozenset({"today", "tonight", "tomorrow", "yesterday", *_DAY_PARTS})
DATE_WORDS = set(_MONTHS) | set(_WEEKDAYS) | {"weekend", "weekday", *DROPPABLE_DATES}
DATE_WORDS |= {"eod", "eow", "eom", "eoq", "eoy", "christmas", "thanksgiving", "easter"}
DATE_WORDS |= phrases.HOLIDAY_WORDS
# "end of (the) (business) day" / "close of business" == "EOD", and so on for week to year.
_END_OF = re.compile(
    r"\b(?:(?:end|close) of (?:the )?(?:business |working )?(day|week|month|quarter|year)"
    r"|close of business|cob)\b",
    re.IGNORECASE,
)
# Weekdays shortened ("Wed", "Thurs"); "Sat" and "Sun" only capitalised (else "sat", "sun").
_WEEKDAY_ABBR = {a: d for d in _WEEKDAYS for a in (d[:3], d[:4], d[:5]) if a != d}
_WEEKDAY_ABBR |= {"thur": "thursday", "thurs": "thursday", "weds": "wednesday"}
# Time-zone abbreviations, read only in capitals ("IST", not German "ist"): dates, droppable.
_ZONES = frozenset(
    "utc gmt cet cest eet eest wet west bst ist jst kst aest aedt est edt cst cdt mst mdt pst pdt hst akst".split()
)
DROPPABLE_DATES |= _ZONES
_ZONE_FAMILY = {a: f"zone:{z}" for z, abbrs in phrases.ZONE_ABBREVIATIONS.items() for a in abbrs}
_ZONE_NAMES = frozenset(_ZONE_FAMILY.values())
# "the third quarter" == "Q3"; "2024-06-30" == "30 June 2024".
_NTH_QUARTER = re.compile(
    r"\b(first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter\b", re.IGNORECASE
)
_CALENDAR = (*_MONTHS[:4], "May", *_MONTHS[4:])  # "may" is read apart (a modal verb)
_ISO_DATE = re.compile(r"\b(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])\b")
# A season is a date where it is said as one ("in spring", "autumn 2025"), not "Spring Boot"
# or "springs that wear"; "fall" is too often a noun ("the fall of Cherbourg").
_SEASON = re.compile(
    r"\b(?:in|this|next|last|early|late|mid|by|until|before|after|during)[\s-]+(?:the\s+)?"
    r"(spring|summer|autumn|winter)\b|\b(spring|summer|autumn|winter)\s+(?:of\s+)?'?\d{2,4}\b",
    re.IGNORECASE,
)
# A span said from now ("next week", "the same business day", "the week after next") or by
# its place in a month ("the last week of August"): a date term ("span:next-week",
# "span:week-of-last"; the prefix keeps the guards' readings of hyphenated words off it).
# Said on one side only, a span is a rewording's detail ("last year", "the final week");
# replaced by another, a changed date.
_SPAN_UNITS = ("day", "week", "weekend", "month", "quarter", "year", "sprint")
_SPAN_PLACES = ("first", "second", "third", "fourth", "last")
_SPAN_WORD = {"previous": "last", "coming": "next", "following": "next", "final": "last"}
_SPAN_DAY = {"span:this-day": "today", "span:next-day": "tomorrow", "span:last-day": "yesterday"}
_SPAN_OF = re.compile(
    r"\b(" + "|".join((*_SPAN_PLACES, "final")) + r")\s+(?:full\s+|business\s+|working\s+)?"
    r"(day|week|weekend)\s+of\b",
    re.I,
)
_AFTER_NEXT = re.compile(r"\b(day|week|month|year)\s+after\s+next\b", re.I)
_SPAN = re.compile(
    r"\b(this|next|last|previous|coming|following|same)\s+(?:business\s+|working\s+)?"
    r"(" + "|".join(_SPAN_UNITS) + r")\b",
    re.IGNORECASE,
)
DROPPABLE_DATES |= {f"span:{w}-{u}" for w in ("this", "next", "last", "same") for u in _SPAN_UNITS}
DROPPABLE_DATES |= {f"span:{u}-after-next" for u in _SPAN_UNITS}
DROPPABLE_DATES |= {f"span:{u}-of-{o}" for u in ("day", "week", "weekend") for o in _SPAN_PLACES}
DROPPABLE_DATES |= phrases.PHASES | phrases.NTH_SPANS


def droppable_date(term: str) -> bool:
    """A date term a rewording may leave out while adding none (`DROPPABLE_DATES`, a counting
    convention, a zone said in words, the minute of every hour); the sides of one moment are
    compared apart (`changed_moments`)."""
    return term in DROPPABLE_DATES or term.startswith(phrases.PREFIXES)


# A hyphenated name in a named slot ("the S3 bucket acme-logs-prod", "Prometheus job
# billing-api"): an identifier, not a compound ("billing-api" / "billing-worker" is another
# job). Names with "_" or "/" are identifiers already.
_SLOT_NOUNS = (
    "namespace workspace job project service team pool vault bucket schema space channel queue "
    "topic cluster database table repo repository branch host account role group index stream "
    "pipeline environment env region profile tenant org dataset"
).split()
# ... and these in the singular only ("instances auto-stop", "flags client-side": a verb or
# an adverb follows their plural).
_SLOT_NOUNS_ONE = (
    "balancer replica gateway endpoint chart image function container volume subnet vpc "
    "instance server node domain zone secret flag registry runner proxy deployment worker "
    "schedule folder subaccount user label"
).split()
_SLOT = re.compile(
    r"\b(?:(?:(?:" + "|".join(_SLOT_NOUNS) + r")s?|" + "|".join(_SLOT_NOUNS_ONE) + r")\s+"
    r"(?:named\s+|called\s+)?|(?:named|called)\s+)"
    r"([A-Za-z0-9][\w.]*(?:-[\w.]+)+)",
    re.IGNORECASE,
)
_CRON = re.compile(r"(?<![\w*/,-])((?:[\d*/,-]+[ \t]+){4}[\d*/,-]+)(?![\w*/,-])")
# A one-word name said as one ("the cluster named atlas", "code-named Bluebird").
_NAMED = re.compile(r"\b(?:named|called|code-?named)\s+([A-Za-z][\w.]*\w)", re.I)

# Clock times, normalised to 24-hour HH:MM ("5 pm" == "17:00", "midnight" == "00:00"): a time
# is a date-like value for the dates guard, not two numbers and an identifier.
_TIME = re.compile(
    r"\b(?:(\d{1,2}):(\d{2})(?::\d{2})?(?:\s*([ap])\.?m\b\.?)?|(\d{1,2})\s*([ap])\.?m\b\.?"
    r"|(midnight|noon|midday))",
    re.IGNORECASE,
)
# A clock hour said without minutes after "at" ("every morning at 6", "at 8 UTC"): a time
# when the text says it is one (a part of the day, a schedule word, a zone or "o'clock"
# after it); "cap retries at 6" stays a number. Rewritten as "06:00" before `_TIME` reads it.
_BARE_HOUR = re.compile(
    r"\bat\s+(?:around\s+|about\s+)?(\d{1,2})(?![\d.:,]\d|\s*(?:%|[ap]\.?m\b))(?!\w)"
)
# What may follow a bare hour read as a time, when no part of the day is said just before it.
_AFTER_HOUR = re.compile(
    r"\s*(?:$|[.,;!?)]|(?i:every|each|sharp|on|in|local|now|instead|o['’]clock)\b"
    r"|[A-Z]{2,4}\b)"
)
_TIME_OF_DAY = re.compile(
    r"\b(?:mornings?|evenings?|afternoons?|nights?|nightly|daily|every day|each day|"
    r"o['’]clock|UTC|GMT)\b",
    re.IGNORECASE,
)
# A verb of a schedule just before "at N" ("starts at 4", "kicks off at 9").
_SCHEDULED = re.compile(
    r"\b(?:starts?|started|begins?|began|runs?|ran|kicks? off|kicked off|fires?|fired|happens?|"
    r"scheduled|due|held|meets?|opens?|closes?|ends?)\s+$",
    re.IGNORECASE,
)
_LATE_IN_DAY = re.compile(r"\b(?:evenings?|afternoons?|tonight)\b", re.IGNORECASE)
# An hour said by its quarters ("half past 9" == "9:30", "quarter to 10" == "9:45"), after
# spell_out_numbers has made "nine" "9": rewritten as a clock time before `_TIME` reads it.
_QUARTER_HOUR = re.compile(
    r"\b(half|(?:a\s+)?quarter)\s+(past|after|to|before)\s+(\d{1,2})\b(?![:.]\d)", re.IGNORECASE
)
# Every second week on a weekday ("every other Tuesday" == "every second Tuesday" ==
# "alternate Tuesdays"): not the month's second Tuesday, which `_NTH_WEEKDAY` reads.
_DAY = "(" + "|".join(_WEEKDAYS) + ")s?"
_TWO_WEEKS = re.compile(r"every\s+2\s+weeks", re.IGNORECASE)
_EVERY_2_WEEKS = r"(?:bi-?weekly|fortnightly|" + _TWO_WEEKS.pattern + ")"
_ALT_WEEKDAY = re.compile(
    r"\b(?:(?:(?:every|each)\s+(?:other|second|2|alternate)|(?:on\s+)?alternate)\s+"
    + _DAY
    + r"|"
    + _EVERY_2_WEEKS
    + r",?\s+(?:on\s+)?"
    + _DAY
    + r"|(?:on\s+)?"
    + _DAY
    + r",?\s+"
    + _EVERY_2_WEEKS
    + r")\b",
    re.IGNORECASE,
)


def _quarter_hours(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        part, direction, hour = m.group(1).lower(), m.group(2).lower(), int(m.group(3))
        minutes = 30 if part == "half" else 15
        if not 1 <= hour <= 24 or (part == "half" and direction in ("to", "before")):
            return m.group(0)
        if direction in ("to", "before"):
            return f"{(hour - 1) % 24 or 12}:{60 - minutes:02d}"
        return f"{hour}:{minutes:02d}"

    return _QUARTER_HOUR.sub(repl, text)


# A range of clock hours sharing one "am" / "pm" ("2-3 pm" == "14:00 to 15:00"): each end
# is a time; the first takes the other half of the day when it is later ("11-1 pm").
_TIME_RANGE = re.compile(
    r"\b(\d{1,2})(?::(\d{2}))?\s*(?:-|–|to|until|till)\s*(\d{1,2})(?::(\d{2}))?\s*"
    r"([ap])\.?m\b\.?",
    re.IGNORECASE,
)
# Quantities with a unit, normalised to a base unit ("30 minutes" == "half an hour" ==
# "1800s", "10MB" == "10 MB"): the numbers guard compares the values, not the digits.
_UNITS: dict[str, tuple[str, float]] = {}
for _names, _kind, _factor in (
    ("ms msec msecs millisecond milliseconds", "duration", 0.001),
    ("s sec secs second seconds", "duration", 1.0),
    ("min mins minute minutes", "duration", 60.0),
    ("h hr hrs hour hours", "duration", 3600.0),
    ("d day days", "duration", 86400.0),
    ("week weeks wk wks", "duration", 604800.0),
    ("fortnight fortnights", "duration", 1209600.0),
    ("month months", "duration", 31536000.0 / 12),
    ("year years yr yrs", "duration", 31536000.0),
    # Binary, as engineers mostly mean them: "1 GB (1024 MB)", "8 KB" == "8192 bytes".
    ("b byte bytes", "size", 1.0),
    # "Ki", "Mi", "Gi", "Ti": Kubernetes' binary suffixes ("2Gi" == "2 GiB").
    ("kb kib ki kilobyte kilobytes", "size", 1024.0),
    ("mb mib mi megabyte megabytes", "size", 1024.0**2),
    ("gb gib gi gigabyte gigabytes", "size", 1024.0**3),
    ("tb tib ti terabyte terabytes", "size", 1024.0**4),
    ("px pixel pixels", "pixels", 1.0),
    ("k", "count", 1e3),
):
    for _n in _names.split():
        _UNITS[_n] = (_kind, _factor)
_AMOUNT_WORDS = {
    "a": 1.0, "an": 1.0, "one": 1.0, "half a": 0.5, "half an": 0.5, "a half": 0.5,
    "every": 1.0, "per": 1.0, "each": 1.0, "a quarter of a": 0.25, "a quarter of an": 0.25,
    "threequarters of a": 0.75, "threequarters of an": 0.75, "half": 0.5, "quarter": 0.25,
    "quarter of a": 0.25, "quarter of an": 0.25,
}  # fmt: skip
# "a minute and a half" == "90 s", "two hours and a half" == "2.5 hours".
_AND_A_HALF = re.compile(r"\s+and\s+a\s+half\b", re.IGNORECASE)
_QUANTITY = re.compile(
    r"(?<![\w.,])(?<![A-Za-z]-)(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?|half an?|(?:a )?quarter of an?|threequarters of an?"
    r"|half|quarter|an?|one"
    r"|every|per|each"
    r"|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty|thirty|forty"
    r"|fifty|sixty|ninety|hundred)\s*-?\s*(?:(?:full|whole|entire|idle|consecutive|straight"
    r"|successive|additional|extra|more|further|continuous|inactive)\s+)?("
    + "|".join(sorted(_UNITS, key=len, reverse=True))
    + r")\b(?![.:]\w)",
    re.IGNORECASE,
)
_GLUED_QUANTITY = re.compile(
    r"^\d+(?:\.\d+)?(?:" + "|".join(sorted(_UNITS, key=len, reverse=True)) + r")$",
    re.IGNORECASE,
)
# The duration units, longest first, as one alternation.
_DURATION_UNITS = "|".join(
    sorted((u for u, (k, _) in _UNITS.items() if k == "duration"), key=len, reverse=True)
)
# A rate said as a count per unit ("twice a minute" == "every 30 seconds", "3 times an
# hour" == "every 20 minutes"): the interval it means, compared like any duration.
_TIMES_PER = re.compile(
    r"\b(once|twice|thrice|(\d+(?:\.\d+)?)\s+times)\s+(?:a|an|per|each|every)\s+("
    + _DURATION_UNITS
    + r")\b",
    re.IGNORECASE,
)
_COUNT_WORDS = {"once": "1", "twice": "2", "thrice": "3"}
# A number glued to "m" or "M": minutes in a duration ("--timeout 10m"), a million in a
# count ("100M rows"); both case-sensitive, neither an identifier.
_GLUED_MAGNITUDE = re.compile(r"^(\d+(?:\.\d+)?)([mM])$")
_MORE_NUMBER_WORDS = {"fifteen": "15", "sixty": "60", "ninety": "90"}
_MONTH = 31536000.0 / 12
_DAYS_30 = 30 * 86400.0
# Schedules said with an adverb ("fortnightly" == "every two weeks", "daily" == "every 24
# hours"): a soft quantity, like "an hour", that matches the other text's number and vetoes
# only against another period said softly that differs (`changed_periods`).
_FREQUENCY_WORDS = {
    "half-hourly": 1800.0,
    "hourly": 3600.0,
    "daily": 86400.0,
    "nightly": 86400.0,
    "weekly": 604800.0,
    "fortnightly": 1209600.0,
    "biweekly": 1209600.0,
    "monthly": _MONTH,
    "quarterly": 3 * _MONTH,
    "yearly": 31536000.0,
    "annually": 31536000.0,
    "annual": 31536000.0,
}
_FREQUENCY = re.compile(r"(?<![\w-])(" + "|".join(_FREQUENCY_WORDS) + r")\b", re.IGNORECASE)
# "every other week" == "every two weeks"; "every quarter" == "quarterly" (not "a quarter of").
_EVERY_OTHER = re.compile(
    r"\b(?:every|each)\s+(?:other|second)\s+(" + _DURATION_UNITS + r")\b",
    re.IGNORECASE,
)
_EVERY_QUARTER = re.compile(
    r"\b(?:every|each|per|a)\s+quarter\b(?!\s*(?:of|past|to|after|before|hour|-))", re.I
)

# Spelled-out numbers, read as digits before anything else ("five hundred" == "500",
# "twenty-five" == "25", "2 million" == "2000000", "a dozen" == "12"): a rewording may spell
# a number out; the numbers guard compares values.
_SMALL = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen".split()
    )
}
_TENS = {
    w: 10 * i
    for i, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split())
    if w != "_"
}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
_NUMWORD = "|".join(sorted([*_SMALL, *_TENS, *_SCALES, "dozen"], key=len, reverse=True))
_NUMBER_PHRASE = re.compile(
    r"(?<![\w.,-])(?:(?:a\s+)?dozen|(?:\d+(?:\.\d+)?|" + _NUMWORD + r")"
    r"(?:(?:\s+|-|\s+and\s+)(?:" + _NUMWORD + r"))*)(?![\w-])",
    re.IGNORECASE,
)
# A lone "one" is a pronoun unless a percentage or a unit follows.
_ONE_COUNTS = re.compile(
    r"\s*(?:%|percent\b|per cent\b|(?:"
    + "|".join(sorted(_UNITS, key=len, reverse=True))
    + r"|hundred|thousand|million|billion)\b)",
    re.IGNORECASE,
)
_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b", re.IGNORECASE)
_MULTIPLIER = re.compile(r"\b(\d+)x\b")
_CURRENCY = re.compile(r"[$€£](\d[\d,]*(?:\.\d+)?)")
# A ratio said as a multiple or as a percentage ("1.2x the budget" == "120% of the budget"):
# each reads softly as the other, so it matches the other text's number and never vetoes.
_MULTIPLE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?[x×](?!\w)")
_PERCENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?(?:%|percent\b|per cent\b)", re.IGNORECASE)


def _ratio_readings(multiples: list[str], text: str) -> set[str]:
    out = {f"{float(x) * 100:.12g}" for x in multiples}
    return out | {f"{float(p) / 100:.12g}" for p in _PERCENT.findall(text)}


def _phrase_value(words: list[str]) -> float | None:
    total, current, seen = 0.0, 0.0, False
    for w in words:
        if w == "dozen":
            current = (current or 1) * 12
        elif w in _SMALL:
            current += _SMALL[w]
        elif w in _TENS:
            current += _TENS[w]
        elif w == "hundred":
            current = (current or 1) * 100
        elif w in _SCALES:
            total += (current or 1) * _SCALES[w]
            current = 0.0
        else:
            try:
                current += float(w)
            except ValueError:
                return None
        seen = True
    return total + current if seen else None


def spell_out_numbers(text: str) -> str:
    """Spelled-out numbers, ordinals (3rd), multipliers (3x) and currency ($50,000) as plain
    digits; everything else untouched."""
    text = _CURRENCY.sub(lambda m: m.group(1), text)
    text = _ORDINAL.sub(lambda m: m.group(1), text)
    text = _MULTIPLIER.sub(lambda m: m.group(1), text)

    def repl(m: re.Match[str]) -> str:
        raw = m.group(0)
        words = [w for w in re.split(r"[\s-]+", raw.lower().replace(",", "")) if w and w != "a"]
        words = [w for w in words if w != "and"]
        if not words or (len(words) == 1 and words[0].replace(".", "").isdigit()):
            return raw
        if words == ["one"] and not _ONE_COUNTS.match(text, m.end()):
            return raw
        value = _phrase_value(words)
        if value is None:
            return raw
        return f"{value:.12g}"

    return _NUMBER_PHRASE.sub(repl, text)


# Phrases that negate what follows as "not" does ("use X, not Y" == "use X rather than Y").
_CONTRASTIVE = re.compile(r"\b(?:rather than|instead of|in place of|as opposed to)\b", re.I)
# Verbs that negate the verb after them ("fails to pick up" == "does not pick up", "refuses
# to provision", "is unable to reach").
_FAILS_TO = re.compile(r"\b(?:fail(?:s|ed)?|refus(?:e|es|ed)|unable)\s+to\s+[a-z]", re.I)

NEGATORS = {
    "not",
    "no",
    "never",
    "cannot",
    "nor",
    "none",
    "nothing",
    "neither",
    "nobody",
    "without",
    "nowhere",
}

# Groups of mutually exclusive values: two texts naming different members of one group
# state different facts, however close their vectors are.
CONTRAST_GROUPS: tuple[frozenset[str], ...] = tuple(
    frozenset(g.split())
    for g in (
        "kebabcase snakecase camelcase pascalcase screamingsnakecase",
        "tabs spaces",
        "true false",
        "enabled disabled enable disable on off",
        "before after",
        "always never sometimes",
        "sync async synchronous asynchronous synchronously asynchronously",
        "ascending descending asc desc",
        "staging production prod dev development qa preview",
        "debug info warning warn error critical",
        "get post put patch delete head",
        "left right",
        "upper lower uppercase lowercase",
        "min max minimum maximum",
        "first last",
        "increase decrease raise lower increased decreased",
        "allow deny allowed denied allowlist denylist",
        "include exclude included excluded",
        "single double",
        "ssh https http",
        "read write readonly",
        "client server",
        "public private internal",
        "major minor",
        "inner outer",
        "local remote",
        "merge rebase squash",
        "main master develop trunk",
        "npm yarn pnpm bun",
        "pip poetry uv pipenv conda",
        "postgres postgresql mysql sqlite mariadb mongodb oracle",
        "redis memcached rabbitmq kafka",
        "docker podman",
        "jest vitest mocha pytest unittest",
        "linux macos windows",
        "aws gcp azure",
        "seconds minutes hours days weeks months",
        "ms milliseconds s sec secs",
        "kb mb gb tb",
        "utc local",
        "json yaml toml xml csv",
        "python javascript typescript go rust java ruby",
        "morning afternoon evening night",
        "daily weekly monthly hourly nightly",
        "required optional",
        "older newer",
        "higher lower",
        "more less fewer",
        "faster slower",
        "succeeds fails passes",
        "inside outside",
        "start end finish",
        "north south east west",
        "northern southern eastern western northeast northwest southeast southwest",
        "maternal paternal",
        "father mother",
        "brother sister",
        "son daughter",
        "husband wife",
        "older younger elder",
        "male female men women",
        "born died",
        "won lost win lose",
        "home away",
        "open closed",
        "import export",
        "input output",
        "upstream downstream",
        "source target destination",
        "parent child",
        "new old",
        "previous next current",
        "early late earlier later",
        "add remove",
        "create delete",
        "install uninstall",
        "push pull",
        "request response",
        "primary replica secondary",
        "senior junior",
        "top bottom",
        "above below",
        "high low",
        "small large big",
        "long short",
        "wide narrow",
        "full empty partial",
        "same different",
        "internal external",
        "vertical horizontal",
        "odd even",
        "positive negative",
        "success failure",
        "valid invalid",
        "online offline",
        "ingress egress",
        "inbound outbound",
        "encrypt decrypt",
        "serialize deserialize",
        "lazy eager",
        "global local",
        "blocking nonblocking",
        "mutable immutable",
        "advance arrears",
        "prepaid postpaid",
        "opening creation closure",
    )
)
# Generic nouns a rewording swaps freely: words for the place, the artefact or the process a
# lesson is about, never a name. Two words of one group align as one word in the judge's token
# alignment ("In this repo ..." == "... in this project."). Only common nouns belong here: a
# named service, library, team or person is never a synonym of another, so a renamed entity
# still does not align.
SYNONYM_GROUPS: tuple[frozenset[str], ...] = tuple(
    frozenset(g.split())
    for g in (
        "repo repos repository repositories project projects codebase codebases",
        "dir dirs directory directories folder folders",
        "doc docs documentation",
        "config configs configuration configurations",
        "db dbs database databases",
        "env envs environment environments",
        "dep deps dependency dependencies",
        "app apps application applications",
        "filename filenames",
        "func funcs function functions",
        "param params parameter parameters",
        "arg args argument arguments",
        "spec specs specification specifications",
        "auth authentication",
        "info information",
        "msg msgs message messages",
        "req reqs request requests",
        "lib libs library libraries",
        "pkg pkgs package packages",
        # short forms of common nouns: never names, so a renamed thing still does not align
        "cert certs certificate certificates",
        "cred creds credential credentials",
        "perm perms permission permissions",
        "pref prefs preference preferences",
        "var vars variable variables",
        "attr attrs attribute attributes",
        "impl impls implementation implementations",
        "infra infrastructure",
        "admin admins administrator administrators",
        "org orgs organization organizations organisation organisations",
        "txn txns transaction transactions",
        "stat stats statistic statistics",
        "perf performance",
        "prod production",
    )
)
_SYNONYM_INDEX: dict[str, str] = {term: min(group) for group in SYNONYM_GROUPS for term in group}


def antonym_pairs(words_a: tuple[str, ...], words_b: tuple[str, ...]) -> list[tuple[str, str]]:
    """(member only in a, member only in b) of one `ANTONYM_FORMS` group."""
    in_a = {_CONTRAST_FORMS[w] for w in words_a if w in _CONTRAST_FORMS}
    in_b = {_CONTRAST_FORMS[w] for w in words_b if w in _CONTRAST_FORMS}
    only_a, only_b = in_a - in_b, in_b - in_a
    return [(x, y) for g, x in sorted(only_a) for h, y in sorted(only_b) if g == h]


# Members of one `CONTRAST_GROUPS` group that name the same value (a short form, an
# inflection): they never contrast with each other ("prod" == "production", "enabled" ==
# "enable", "ms" == "milliseconds").
CONTRAST_ALIASES: dict[str, str] = {
    "prod": "production",
    "dev": "development",
    "asc": "ascending",
    "desc": "descending",
    "sync": "synchronous",
    "synchronously": "synchronous",
    "async": "asynchronous",
    "asynchronously": "asynchronous",
    "min": "minimum",
    "max": "maximum",
    "postgres": "postgresql",
    "uppercase": "upper",
    "lowercase": "lower",
    "enabled": "enable",
    "disabled": "disable",
    "on": "enable",  # "turned off" == "disabled"
    "off": "disable",
    "increased": "increase",
    "decreased": "decrease",
    "allowed": "allow",
    "denied": "deny",
    "included": "include",
    "excluded": "exclude",
    "milliseconds": "ms",
    "sec": "s",
    "secs": "s",
    "warn": "warning",
    # Members of one group that say the same value ("big" == "large", "finish" == "end").
    "big": "large",
    "finish": "end",
    "fewer": "less",
    "earlier": "early",
    "later": "late",
    "passes": "succeeds",
    "destination": "target",
}


def synonym_key(word: str) -> str:
    """One key for the words of a synonym group (`SYNONYM_GROUPS`); the word otherwise."""
    return _SYNONYM_INDEX.get(word, word)


_CONTRAST_INDEX: dict[str, int] = {}
for _i, _group in enumerate(CONTRAST_GROUPS):
    for _term in _group:
        _CONTRAST_INDEX.setdefault(_term, _i)
# Antonyms the pair classifier weighs (a feature, not a guard's veto: "rejects cards that
# are not test cards" == "accepts only test cards"). Each member lists its forms, and a form
# counts as its first one, so inflections never contrast with each other.
ANTONYM_FORMS: tuple[str, ...] = (
    "accept/accepts/accepted/accepting reject/rejects/rejected/rejecting",
    "strict/stricter/strictly lenient/leniently/loose/loosely/relaxed",
    "optimistic/optimistically pessimistic/pessimistically",
    "manual/manually automatic/automatically/automated",
    "approve/approves/approved disapprove/disapproves/disapproved",
    "explicit/explicitly implicit/implicitly",
    "stateful stateless",
    "inclusive/inclusively exclusive/exclusively",
    "shallow deep",
    "cheap/cheaper expensive/costly",
    "stable unstable/flaky",
    "hot cold/warm",
    "grant/grants/granted revoke/revokes/revoked",
    "lock/locks/locked unlock/unlocks/unlocked",
    "pin/pins/pinned unpin/unpins/unpinned/float/floating",
    "ignore/ignores/ignored respect/respects/respected/honour/honours/honoured/"
    "honor/honors/honored/obey/obeys/obeyed/follow/follows/followed",
    "throw/throws/threw/thrown swallow/swallows/swallowed",
    "compress/compresses/compressed/compressing/compression "
    "uncompressed/decompress/decompresses/decompressed/decompression",
    "extend/extends/extended/lengthen/lengthens/lengthened "
    "shorten/shortens/shortened/truncate/truncates/truncated",
    "converge/converges/converged diverge/diverges/diverged",
    "improve/improves/improved/improvement degrade/degrades/degraded/degradation/"
    "regress/regresses/regressed/regression/worsen/worsens/worsened",
    "escalate/escalates/escalated suppress/suppresses/suppressed/silence/silences/silenced/"
    "mute/mutes/muted",
    "single multiple/many",
    "short/shorter/shortest long/longer/longest",
    "keep/keeps/kept/keeping/retain/retains/retained/preserve/preserves/preserved "
    "delete/deletes/deleted/deleting/purge/purges/purged/discard/discards/discarded",
    "dark light",
)

# Opposite members of one polar pair (a rule and its reverse, a side and the other side),
# read by `judge_shapes.polar_pairs` over every word of the texts (particles such as "up" and
# "down" included). A rewording keeps a statement's polarity: it never trades one member for
# the other unless it also adds or drops a negation ("rejects test cards" == "accepts no test
# cards"). Each member lists its forms; a form counts as its first one (the first line that
# names a form wins), so inflections never oppose each other. Antonyms by prefix (safe /
# unsafe, mutable / immutable) need no line: `judge_shapes.polar_pairs` derives them.
POLAR_FORMS: tuple[str, ...] = (
    *ANTONYM_FORMS,
    "allow/allows/allowed/allowing/permit/permits/permitted/permitting "
    "forbid/forbids/forbidden/forbidding/prohibit/prohibits/prohibited/prohibiting/deny/denies/"
    "denied/denying/disallow/disallows/disallowed/ban/bans/banned/block/blocks/blocked/blocking",
    "include/includes/included/including exclude/excludes/excluded/excluding/omit/omits/omitted",
    "enable/enables/enabled/enabling disable/disables/disabled/disabling",
    "high/higher/highest low/lower/lowest",
    "increase/increases/increased/increasing/raise/raises/raised/raising/grow/grows/grew "
    "decrease/decreases/decreased/decreasing/lowers/lowered/reduce/reduces/reduced/reducing/"
    "shrink/shrinks/shrank",
    "before/prior after/afterwards",
    "succeed/succeeds/succeeded/success/successful/successfully/passes/passed "
    "fail/fails/failed/failure/failures/failing",
    "up down",
    "on off",
    "start/starts/started/starting stop/stops/stopped/stopping",
    "open/opens/opened close/closes/closed",
    "add/adds/added/adding remove/removes/removed/removing",
    "safe/safely dangerous/risky",
    "required/mandatory/compulsory optional/optionally",
    "sync/synchronous/synchronously async/asynchronous/asynchronously",
    "public private",
    "internal/internally external/externally",
    "inbound/ingress outbound/egress",
    "upload/uploads/uploaded download/downloads/downloaded",
    "import/imports/imported export/exports/exported",
    "encrypt/encrypts/encrypted/encryption decrypt/decrypts/decrypted/decryption",
    "encode/encodes/encoded decode/decodes/decoded",
    "ascending/asc descending/desc",
    "min/minimum/minimal max/maximum/maximal",
    "oldest/earliest newest/latest",
    "uppercase lowercase",
    "above below",
    "fast/faster/fastest/quick/quicker/quickly slow/slower/slowest/slowly",
    "large/larger/largest/big/bigger small/smaller/smallest",
    "online offline",
    "visible/show/shows/shown hidden/hide/hides",
    "lazy/lazily eager/eagerly",
    "sequential/sequentially/serial/serially parallel/concurrent/concurrently",
    "isolated/isolate/separate/separately shared/share",
    "horizontal/horizontally vertical/vertically",
    "ahead behind",
    "frontend backend",
    "client/clients server/servers",
    "producer/producers consumer/consumers",
    "sender/senders receiver/receivers/recipient/recipients",
    "primary/leader/master replica/replicas/follower/followers/secondary/standby",
    "read/reads/reading write/writes/writing/written",
    "ordered unordered",
    "current outdated/stale",
)
_CONTRAST_FORMS: dict[str, tuple[int, str]] = {}
for _k, _line in enumerate(ANTONYM_FORMS):
    for _member in _line.split():
        _forms = _member.split("/")
        for _form in _forms:
            _CONTRAST_FORMS.setdefault(_form, (len(CONTRAST_GROUPS) + _k, _forms[0]))
# form -> (line of POLAR_FORMS, the member's first form)
POLAR_INDEX: dict[str, tuple[int, str]] = {}
for _k, _line in enumerate(POLAR_FORMS):
    for _member in _line.split():
        _forms = _member.split("/")
        for _form in _forms:
            POLAR_INDEX.setdefault(_form, (_k, _forms[0]))

# Function words: ignored by the order check and never taken for named entities.
STOPWORDS = frozenset(
    """a an the and or but if then else when while of in on at to for from by with as is are
    was were be been being it its this that these those there here we our you your they their
    he his she her him them i me my do does did done has have had having will would shall should
    can could may might must so than too very also just only not no into onto over under up down
    out about after before again all any both each few more most other some such own same which
    who whom whose what where why how one ones s t re ve ll d""".split()
)


@dataclass(frozen=True)
class Analysis:
    """The salient terms of one text, normalised for comparison."""

    numbers: frozenset[str]
    identifiers: frozenset[str]
    compounds: frozenset[str]
    dates: frozenset[str]
    entities: frozenset[str]
    contrasts: frozenset[tuple[int, str]]
    negated: bool
    # Everything a term from the other text may match: words, joined 2-3 word runs,
    # identifiers, numbers (all normalised).
    vocabulary: frozenset[str]
    # Lower-cased content words in order, for the swapped-roles check.
    content_words: tuple[str, ...]
    # Names, numbers and identifiers in order of appearance (the roles a swap exchanges).
    anchors: tuple[str, ...] = ()
    # Content words and role words ("from", "to", "before") in order.
    words: tuple[str, ...] = ()
    # Quantities stated without a digit ("an hour", "every minute"): they match a number of
    # the other text but are not numbers the other must have.
    soft_numbers: frozenset[str] = frozenset()
    # Names in a named slot or said as names, exactly as written ("bucket acme-data-exports",
    # "the cluster named atlas").
    slot_names: frozenset[str] = frozenset()
    # (side, first word) of each moment named: ("before", "deploy").
    moments: frozenset[tuple[str, str]] = frozenset()


def norm_word(word: str) -> str:
    """Lower-case, drop a possessive 's and '-', '_', apostrophes: kebab-case == kebab case."""
    return re.sub(r"[-_'’]", "", re.sub(r"['’]s$", "", word.lower()))


# Cloud regions named in one word (Azure's "westeurope", "eastus2", "japaneast").
_REGION = re.compile(
    r"(?:north|south|east|west|central|northcentral|southcentral|westcentral|southeast|northeast)"
    r"(?:us|europe|asia|india)\d?|(?:uk|japan|australia|canada|korea|france|germany|brazil|uae"
    r"|switzerland|norway|sweden|poland|italy|qatar|israel|mexico|spain|newzealand|southafrica"
    r"|chile|indonesia|malaysia|taiwan)(?:north|south|east|west|central|southeast|westcentral)\d?"
)


def _is_identifier(tok: str) -> bool:
    """Code-like: digits with letters, paths, dotted names, #refs, snake/kebab/camel, ALLCAPS."""
    if len(tok) < 2:
        return False
    if _PLAIN_NUMBER.fullmatch(tok):
        return False  # "99.95%", "-0.5": a number, compared by the numbers guard
    if tok.lower() in _UNITS:
        return False  # "GiB", "MiB": a unit, read with its number
    if _GLUED_QUANTITY.match(tok) or _GLUED_MAGNITUDE.match(tok) or _TIME.fullmatch(tok):
        return False
    if _NUMERONYM.fullmatch(tok.lower()):
        return False  # k8s, i18n, a11y: words for the model to align, not ids
    if _COUNTED_NOUN.fullmatch(tok):
        return False  # "2,000-article", "3-node": a number (compared) and a word
    if _REGION.fullmatch(tok.lower()):
        return True  # "westeurope", "uksouth": a cloud region's name
    if any(c.isdigit() for c in tok) and any(c.isalpha() for c in tok):
        return True
    if any(c in tok for c in "/\\#@=$~") or "::" in tok:
        return True
    if "." in tok.strip("."):
        left, _, right = tok.strip(".").rpartition(".")
        # "e.g", "U.S" are abbreviations; "app.py", "os.path", "v1.2" are identifiers.
        return len(left) > 1 and len(right) >= 1 and not (len(left) == 1 and len(right) == 1)
    if re.search(r"\w:\w", tok):
        return True  # app:stable, host:port
    # snake_case and camelCase are code; ALLCAPS words ("DB", "CI") are abbreviations and
    # kebab-case words ("web-frontend", "hand-edit") compounds: other guards see those.
    return "_" in tok or bool(_CAMEL.search(tok))


def _is_compound(tok: str) -> bool:
    """A hyphenated word: an id like web-frontend, or prose like hand-edit."""
    return "-" in tok.strip("-") and any(c.isalpha() for c in tok) and not _is_identifier(tok)


@lru_cache(maxsize=131072)
def stem(word: str) -> str:
    """A crude suffix fold (loads, loading, loaded -> load) for matching, never for display."""
    for suffix in ("ing", "ed", "es", "s", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


@lru_cache(maxsize=65536)
def word_key(word: str) -> str:
    """What two words must share to count as one word: case, plurals and common suffixes
    folded, and the words of one synonym group of generic nouns (repo / project) made one."""
    return stem(synonym_key(norm_word(word)))


@lru_cache(maxsize=16384)
def word_keys(words: tuple[str, ...]) -> tuple[str, ...]:
    """Each word's `word_key`, once per text (a text meets several candidates)."""
    return tuple(word_key(w) for w in words)


def _norm_identifier(tok: str) -> str:
    """Code-ish tokens keep their separators (user_id.py != user-id.py); compound words lose them."""
    low = tok.lower().rstrip(".")
    if low.startswith("./") and len(low) > 2:
        low = low[2:]  # "./scripts/x.sh" == "scripts/x.sh"
    if any(c in low for c in "./\\#@=:$~") or any(c.isdigit() for c in low):
        return low
    return norm_word(low)


def _norm_number(raw: str) -> str:
    # 1,000 == 1000; 1.2.3 stays a version; a trailing sentence dot is not a decimal point.
    raw = raw.rstrip(".,")
    if re.fullmatch(r"\d{1,3}(,\d{3})+", raw):
        raw = raw.replace(",", "")
    return raw


@dataclass(frozen=True, slots=True)
class _Part:
    """One word of a token, with everything about it that does not depend on its position."""

    part: str
    w: str
    negator: bool
    number: str | None  # NUMBER_WORDS value
    date: str | None  # a date word, or a lower-case month abbreviation's month
    may: bool  # "May": a month only inside a sentence
    contrast: tuple[int, str] | None
    content: bool
    anchor: bool  # capitalised, not a stopword, longer than one letter
    entity: bool  # ... and not a date word: a name unless it starts a sentence


@dataclass(frozen=True, slots=True)
class _Token:
    """One whitespace token's analysis, independent of where the sentence starts."""

    tok: str
    numbers: tuple[str, ...]
    identifier: str | None
    identifier_anchor: bool
    compound: str | None
    negated: bool
    parts: tuple[_Part, ...]


def _word(part: str) -> _Part | None:
    w = norm_word(part)
    if len(part) >= 3 and part[-1] == "s" and part[:-1].isupper():
        w = w[:-1]  # the plural of an acronym: "PRs" == "PR", "APIs" == "API"
    if not w:
        return None
    singular = w[:-1] if w.endswith("s") and w[:-1] in DATE_WORDS else w
    if singular in DATE_WORDS:
        date: str | None = singular
    elif part.lower() in _MONTH_ABBR:
        date = _MONTH_ABBR[part.lower()]  # "Dec 20" == "December 20th"
    elif part.lower() in _WEEKDAY_ABBR and (
        part[0].isupper() or part.lower()[:3] not in ("sat", "sun")
    ):
        date = _WEEKDAY_ABBR[part.lower()]
    elif part.isupper() and part.lower() in _ZONES:
        date = part.lower()
    else:
        date = None
    upper = part[0].isupper() and w not in STOPWORDS and len(w) > 1
    return _Part(
        part=part,
        w=w,
        negator=w in NEGATORS,
        number=NUMBER_WORDS.get(w),
        date=date,
        may=date is None and part == "May",
        # "go through the mirror" is a verb; the language is written "Go".
        contrast=(_CONTRAST_INDEX[w], CONTRAST_ALIASES.get(w, w))
        if w in _CONTRAST_INDEX and part != "go"
        else None,
        content=w not in STOPWORDS and not w.isdigit(),
        anchor=upper,
        entity=upper and singular not in DATE_WORDS and w not in _UNITS,  # "MB" is no name
    )


def _strip_token(raw: str) -> str:
    """The token without what wraps it (quotes, backticks, brackets), its possessive, and a
    sentence's punctuation after a closing wrapper; a bare trailing full stop is left to
    `_token`, which knows identifiers ("foo.py." -> "foo.py")."""
    tok = raw.strip(_TRIM)
    tail = _CLOSING_TAIL.search(tok)
    # Not an apostrophe inside a word ("don't."): the tail starts with a wrapper that is
    # followed by nothing but punctuation or a possessive.
    if tail is not None and tail.start() > 0:
        tok = tok[: tail.start()]
    return _POSSESSIVE.sub("", tok).strip(_TRIM)


@lru_cache(maxsize=65536)
def _token(raw: str) -> tuple[_Token | None, bool]:
    """(the token's analysis or None if nothing is left after trimming, ends a sentence)."""
    tok = _strip_token(raw)
    ends_sentence = bool(_SENTENCE_END.search(raw.rstrip(")\"'”’")))
    if tok.endswith(".") and not _is_identifier(tok.rstrip(".")):
        tok = tok.rstrip(".")
    elif tok.endswith(".") and tok.count(".") == 1:
        tok = tok[:-1]
    tok = tok.strip(_TRIM)  # "(pass -p no:cacheprovider)." -> "no:cacheprovider"
    if not tok:
        return None, ends_sentence
    low = tok.lower()
    numbers = tuple(_norm_number(num) for num in _NUMBER.findall(tok))
    ident: str | None = None
    compound: str | None = None
    if _is_identifier(tok):
        ident = _norm_identifier(tok)
        capitals = "".join(c for c in tok if c.isupper())
        if tok.isalpha() and tok[0].isupper() and len(capitals) >= 2 and _CAMEL.search(tok):
            if len(_CAMEL_INITIALS) < CAMEL_INITIALS_MAX or ident in _CAMEL_INITIALS:
                _CAMEL_INITIALS[ident] = capitals.lower()
    elif _is_compound(tok) and not _QUANTITY.fullmatch(tok):
        compound = norm_word(tok)  # "60-second" is a quantity, compared by its value
    parts = tuple(p for p in map(_word, _WORD.findall(tok)) if p is not None)
    return (
        _Token(
            tok=tok,
            numbers=numbers,
            identifier=ident,
            # An identifier is a role a swap exchanges; one with digits is one when its digits
            # are no number of their own ("us-east-1"; "v1.2" is anchored by its 1.2).
            identifier_anchor=ident is not None
            and (not any(c.isdigit() for c in tok) or not numbers),
            compound=compound,
            negated=low.endswith("n't") or low.endswith("n’t"),
            parts=parts,
        ),
        ends_sentence,
    )


@lru_cache(maxsize=8192)
def analyse(text: str) -> Analysis:
    """Tokenise `text` once and extract every class of salient term (cached, pure).

    Each token's position-independent analysis is cached too (`_token`): texts of one
    namespace share most of their words.
    """
    numbers: set[str] = set()
    identifiers: set[str] = set()
    compounds: set[str] = set()
    dates: set[str] = set()
    entities: set[str] = set()
    contrasts: set[tuple[int, str]] = set()
    vocab: set[str] = set()
    words: list[str] = []
    content: list[str] = []
    anchors: list[str] = []
    negated = bool(_CONTRASTIVE.search(text) or _FAILS_TO.search(text))
    placed_contrasts: list[tuple[int, tuple[int, str]]] = []
    sentence_start = True
    text = _APPROX.sub("", text)  # "~50 builds" == "about 50 builds"
    text = phrases.rewrite(text)  # "Monday to Friday" == "weekdays", "12/31/2025", ...
    text = shorthand.rewrite(text)  # "a 7B model", "three nines", "$2B"
    text = _END_OF.sub(lambda m: "eo" + (m.group(1) or "d")[0].lower(), text)
    text = _NTH_QUARTER.sub(lambda m: f"Q{_nth(m.group(1))[0]}", text)
    slot_names = frozenset(v.rstrip(".").lower() for v in _SLOT.findall(text)) - {""}
    slot_names |= {v.lower() for v in _NAMED.findall(text) if v.lower() not in STOPWORDS}
    # A cron schedule is one identifier ("0 4 * * *" / "0 4 * * 0": daily / on Sundays).
    identifiers |= {"cron:" + "_".join(m.split()) for m in _CRON.findall(text) if "*" in m}
    identifiers |= {norm_word(v) for v in slot_names} - {""}
    text = _ISO_DATE.sub(
        lambda m: f"{_CALENDAR[int(m.group(2)) - 1]} {int(m.group(3))} {m.group(1)}", text
    )
    # Dates said as phrases: spans from now, places in a month, seasons.
    said = _spans(text) | {x.lower() for m in _SEASON.findall(text) for x in m if x}
    said |= phrases.terms(text)  # "early" / "mid-December", "their first week"
    zoned, zone_words = shorthand.zones(text)  # "9:30 AM Pacific" == "9:30 PT"
    said |= zoned
    for z in said & _ZONE_NAMES:  # "Pacific time" == "PST"
        vocab |= set(phrases.ZONE_ABBREVIATIONS[z.removeprefix("zone:")])
    moments = phrases.moments(text)  # "before" / "after the earnings call"
    dates |= said
    vocab |= said
    multiples = _MULTIPLE.findall(text)
    text = _PERCENTILE.sub(r"p\1", spell_out_numbers(text.translate(_DASHES)))
    ratios = _ratio_readings(multiples, text)
    times, text = _times(_clock_words(shorthand.clock_parts(_quarter_hours(text))))
    dates |= times
    vocab |= times
    alternate: set[str] = set()

    def one_alternate(m: re.Match[str]) -> str:
        alternate.add(f"alt-{''.join(d for d in m.groups() if d).lower()}")
        # "on Mondays, every 2 weeks": the 2 is the schedule's, read with it, not a number.
        return _TWO_WEEKS.sub("biweekly", m.group(0))

    text = _ALT_WEEKDAY.sub(one_alternate, text)
    dates |= alternate
    vocab |= alternate
    fractions = phrases.soft_values(text)  # ratios, fractions, "in seconds"
    nth = {f"{_nth(o)}-{d.lower()}" for o, d in _NTH_WEEKDAY.findall(_ALT_WEEKDAY.sub(" ", text))}
    dates |= nth
    vocab |= nth
    quantities, soft_quantities, consumed = _quantities(text)

    for raw in _TOKEN.findall(_PARAGRAPH.sub(" . ", text)):
        t, ends_sentence = _token(raw)
        if t is None:
            sentence_start = sentence_start or ends_sentence
            continue
        for num in t.numbers:
            numbers.add(num)
            anchors.append(num)
        if t.identifier is not None:
            identifiers.add(t.identifier)
            vocab.add(t.identifier)
            if t.identifier in _CAMEL_INITIALS:
                vocab.add(_CAMEL_INITIALS[t.identifier])  # "TypeScript" says "TS"
            if t.identifier_anchor:
                anchors.append(t.identifier)
        elif t.compound is not None:
            compounds.add(t.compound)
        if t.negated:
            negated = True
        for p in t.parts:
            w = p.w
            words.append(w)
            vocab.add(w)
            if p.negator:
                negated = True
            if p.number is not None:
                numbers.add(p.number)
            if p.date is not None:
                dates.add(p.date)
                vocab.add(p.date)  # "Dec" says "december"
                vocab.add(_ZONE_FAMILY.get(p.date, p.date))  # "PST" says "Pacific time"
            elif p.may and not sentence_start:
                dates.add("may")
            if p.contrast is not None:
                placed_contrasts.append((len(words) - 1, p.contrast))
            if p.content:
                content.append(w)
            if p.anchor:
                anchors.append(w)
            # A capitalised word inside a sentence is taken for a name (Missouri, Redis).
            if p.entity and not sentence_start:
                entities.add(w)
        sentence_start = ends_sentence

    # A zone the text names is a date, not a name ("9:30 Pacific", "10:00 PT").
    entities -= zone_words
    for z in said & _ZONE_NAMES:
        entities -= {z.removeprefix("zone:"), *phrases.ZONE_ABBREVIATIONS[z.removeprefix("zone:")]}
    contrasts = {c for i, c in placed_contrasts if _names_a_state(words, i)}
    # Joined runs let "kebab case" match "kebab-case" and "Pull Request" match "pullrequest".
    n = len(words)
    for i in range(n):
        vocab.add(words[i] + words[i + 1] if i + 1 < n else words[i])
        if i + 2 < n:
            vocab.add(words[i] + words[i + 1] + words[i + 2])
        # Naive plural folding: "fridays" ~ "friday", "ports" ~ "port".
        if words[i].endswith("s") and len(words[i]) > 3:
            vocab.add(words[i][:-1])
    vocab |= {stem(w) for w in vocab}
    # A number read as part of a quantity is compared as the quantity's value.
    numbers = (numbers - consumed) | quantities
    vocab |= numbers | soft_quantities
    soft_quantities |= {_SOFT_ORDINALS[w] for w in words if w in _SOFT_ORDINALS}
    soft_quantities |= ratios | fractions
    return Analysis(
        numbers=frozenset(numbers),
        identifiers=frozenset(identifiers),
        compounds=frozenset(compounds),
        dates=frozenset(dates),
        entities=frozenset(entities),
        contrasts=frozenset(contrasts),
        negated=negated,
        vocabulary=frozenset(vocab),
        soft_numbers=frozenset(soft_quantities),
        content_words=tuple(content),
        anchors=tuple(anchors),
        words=tuple(words),
        slot_names=slot_names,
        moments=moments,
    )


# "on" and "off" name a state after these words ("is off", "turned on") or before "by
# default"; elsewhere they are a preposition or a particle ("retries on the dispatcher",
# "back off", "sign off") and contrast with nothing.
_STATE_BEFORE = frozenset(
    "is are was were be been being turned turn turns turning switched switch switches "
    "flip flipped set left stay stays stayed keep keeps kept toggled toggle default".split()
)


def _names_a_state(words: list[str], i: int) -> bool:
    if words[i] not in ("on", "off"):
        return True
    before = words[i - 1] if i > 0 else ""
    after = words[i + 1] if i + 1 < len(words) else ""
    return before in _STATE_BEFORE or after == "by"


def _clock_words(text: str) -> str:
    """Hour ranges with one "am" / "pm" and bare hours after "at" written as clock times, so
    that `_TIME` reads both ends of a range and a time said without minutes."""

    def one_range(m: re.Match[str]) -> str:
        h1, m1, h2, m2, half = int(m.group(1)), m.group(2), int(m.group(3)), m.group(4), m.group(5)
        if not (1 <= h1 <= 12 and 1 <= h2 <= 12):
            return m.group(0)
        other = "p" if half.lower() == "a" else "a"
        first = half if h1 <= h2 or h1 == 12 else other
        return f"{h1}:{m1 or '00'} {first}m - {h2}:{m2 or '00'} {half}m"

    text = _TIME_RANGE.sub(one_range, text)
    if not _BARE_HOUR.search(text):
        return text
    late = bool(_LATE_IN_DAY.search(text))

    def one_hour(m: re.Match[str]) -> str:
        follows = text[m.end() : m.end() + 12].lstrip()
        word = re.match(r"[A-Za-z]*", follows).group(0)  # type: ignore[union-attr]
        if word.lower() in _UNITS:
            return m.group(0)  # "capped at 10 MB": a quantity
        zoned = bool(re.match(r"(?:[A-Z]{2,4}\b|o['’]clock)", follows))
        before = text[max(0, m.start() - 16) : m.start()]
        # "every morning at 8 the bot posts": a part of the day just before says it is a time
        near = bool(_TIME_OF_DAY.search(before))
        hour = int(m.group(1))
        scheduled = bool(_SCHEDULED.search(before))
        timed = (
            zoned
            or near
            or (_AFTER_HOUR.match(text, m.end()) and (scheduled or _TIME_OF_DAY.search(text)))
        )
        if hour > 23 or not timed:
            return m.group(0)
        if late and 1 <= hour < 12:
            hour += 12
        return f"{m.group(0)[: m.start(1) - m.start()]}{hour:02d}:00"

    return _BARE_HOUR.sub(one_hour, text)


def _times(text: str) -> tuple[set[str], str]:
    """Clock times in `text` as "time:HH:MM", and the text without them."""
    found: set[str] = set()

    def repl(m: re.Match[str]) -> str:
        if m.group(6):
            hour, minute = (0, 0) if m.group(6).lower() == "midnight" else (12, 0)
        else:
            hour = int(m.group(1) or m.group(4))
            minute = int(m.group(2) or 0)
            ampm = (m.group(3) or m.group(5) or "").lower()
            if hour > 24 or minute > 59 or (ampm and not 1 <= hour <= 12):
                return m.group(0)
            if ampm == "p" and hour != 12:
                hour += 12
            elif ampm == "a" and hour == 12:
                hour = 0
        found.add(f"time:{hour % 24:02d}:{minute:02d}")
        return " "

    return found, _TIME.sub(repl, text)


def _quantity(kind: str, value: float) -> str:
    # "1k" is the number 1000; a duration or a size keeps its kind ("duration:1800").
    return f"{value:.12g}" if kind == "count" else f"{kind}:{value:.12g}"


UNIT_CONTRASTS = frozenset(
    {"seconds minutes hours days weeks months", "ms milliseconds s sec secs", "kb mb gb tb"}
)


def _spans(text: str) -> set[str]:
    """Spans said from now ("span:next-week", "span:week-after-next") or by their place in a
    month ("span:week-of-last"), as date terms; "last week of" is read once, as the place."""
    found: set[str] = set()
    taken: list[range] = []
    for m in _SPAN_OF.finditer(text):
        place = m.group(1).lower()
        found.add(f"span:{m.group(2).lower()}-of-{_SPAN_WORD.get(place, place)}")
        taken.append(range(m.start(), m.end()))
    found |= {f"span:{m.group(1).lower()}-after-next" for m in _AFTER_NEXT.finditer(text)}
    for m in _SPAN.finditer(text):
        if not any(m.start() in r for r in taken):
            word = m.group(1).lower()
            term = f"span:{_SPAN_WORD.get(word, word)}-{m.group(2).lower()}"
            found.add(_SPAN_DAY.get(term, term))
    return found


def changed_periods(a: Analysis, b: Analysis) -> tuple[list[str], list[str]]:
    """The periods, ratios or units two texts say only softly ("daily" / "weekly", "every hour"
    / "every half hour", "a fortnight" / "a month", "double" / "triple", "half" / "a
    quarter", "in seconds" / "in milliseconds") when both say one of a kind and no reading of
    either is among the other's quantities: a changed schedule, share or unit. Else two
    empty lists."""
    for kind in ("duration:", "ratio:", "unit:"):
        pa, pb = _soft_periods(a, kind), _soft_periods(b, kind)
        if not pa or not pb:
            continue
        if pa & (b.numbers | b.soft_numbers) or pb & (a.numbers | a.soft_numbers):
            continue
        return sorted(pa), sorted(pb)
    return [], []


def _soft_periods(a: Analysis, kind: str) -> frozenset[str]:
    return frozenset(n for n in a.soft_numbers - a.numbers if n.startswith(kind))


def _quantities(text: str) -> tuple[set[str], set[str], set[str]]:
    """(quantities with a digit or a number word, quantities with an article, the numbers
    they consumed), each value normalised to its base unit: "duration:1800"."""
    hard: set[str] = set()
    soft: set[str] = set()
    consumed: set[str] = set()
    for m in _QUANTITY.finditer(text):
        amount, unit = m.group(1).lower(), m.group(2).lower()
        if not amount[0].isdigit() and m.end(1) == m.start(2):
            continue  # a word glued to a unit letter is a word: "tend" is no "ten d"
        kind, factor = _UNITS[unit]
        if amount[0].isdigit():
            value = float(amount.replace(",", "")) * factor  # "10,000 ms"
            consumed.add(_norm_number(amount))
            target = hard
        elif amount in NUMBER_WORDS or amount in _MORE_NUMBER_WORDS:
            num = NUMBER_WORDS.get(amount) or _MORE_NUMBER_WORDS[amount]
            value = float(num) * factor
            consumed.add(num)
            target = hard
        else:
            if unit in ("s", "h", "d", "m", "b", "k", "min"):
                continue  # "a s", "per h": not a quantity in prose
            value = _AMOUNT_WORDS.get(" ".join(amount.split()), 1.0) * factor
            target = soft
        if _AND_A_HALF.match(text, m.end()):
            value += 0.5 * factor
        target.add(_quantity(kind, value))
    for m in _FREQUENCY.finditer(text):
        soft.add(_quantity("duration", _FREQUENCY_WORDS[m.group(1).lower()]))
    for m in _EVERY_OTHER.finditer(text):
        soft.add(_quantity("duration", 2 * _UNITS[m.group(1).lower()][1]))
    if _EVERY_QUARTER.search(text):
        soft.add(_quantity("duration", _FREQUENCY_WORDS["quarterly"]))
    for m in _TIMES_PER.finditer(text):
        count = _COUNT_WORDS.get(m.group(1).lower()) or _norm_number(m.group(2))
        if float(count) > 0:
            hard.add(_quantity("duration", _UNITS[m.group(3).lower()][1] / float(count)))
            consumed.add(count)
    for tok in _TOKEN.findall(text):
        tok = _strip_token(tok).rstrip(".")
        glued = _GLUED_MAGNITUDE.match(tok)
        if glued:
            minutes = glued.group(2) == "m"
            value = float(glued.group(1)) * (60.0 if minutes else 1e6)
            hard.add(_quantity("duration" if minutes else "count", value))
            consumed.add(_norm_number(glued.group(1)))
            continue
        if _GLUED_QUANTITY.match(tok):
            m2 = re.match(r"(\d+(?:\.\d+)?)(.*)", tok)
            if m2:
                kind, factor = _UNITS[m2.group(2).lower()]
                hard.add(_quantity(kind, float(m2.group(1)) * factor))
                consumed.add(_norm_number(m2.group(1)))
    # A month is 30 days as often as it is a twelfth of a year ("a month" == "30 days",
    # "90 days" == "3 months"): each side's month-multiples match either reading, softly.
    for q in list(hard | soft):
        if q.startswith("duration:"):
            soft.update(_month_readings(float(q.split(":", 1)[1])))
    return hard, soft, consumed


def _month_readings(seconds: float) -> set[str]:
    """The other reading of a whole number of months or of 30-day months."""
    out = set()
    for unit, other in ((_MONTH, _DAYS_30), (_DAYS_30, _MONTH)):
        n = seconds / unit
        if n >= 1 and abs(n - round(n)) < 1e-9:
            out.add(_quantity("duration", round(n) * other))
    return out


# Extensions of files a rewording names by their stem ("pyproject.toml" -> "pyproject").
_FILE_EXTENSIONS = frozenset(
    "toml json yaml yml lock cfg ini conf env txt md rst py js ts mjs cjs tsx jsx go rs rb java "
    "kt sh sql xml html css csv proto tf hcl gradle mod sum".split()
)


def _file_named_by_stem(term: str, other: Analysis) -> bool:
    """`term` is a file ("pyproject.toml") the other text names by its stem ("pyproject"),
    and the other names no other file of that stem ("pyproject.cfg" stays a change)."""
    base, dot, ext = term.rpartition(".")
    if not dot or ext not in _FILE_EXTENSIONS or not base or any(c in base for c in "/\\:"):
        return False
    if "." in base or base not in other.vocabulary:
        # "docker-compose.yml" == "the Docker Compose file": each part of its stem said,
        # and "file" with them
        parts = re.split(r"[-_.]", base)
        if len(parts) < 2 or "file" not in other.vocabulary:
            return False
        if not all(len(p) > 1 and p in other.vocabulary for p in parts):
            return False
    return not any(i.startswith(base + ".") for i in other.identifiers)


# A rate written with a slash ("req/s", "MB/s", "msgs/min"): its unit spelt out, and its
# short form's word ("req" -> request, "mb" -> megabyte), as the other text may write them.
_RATE = re.compile(r"([a-z]+)/(s|sec|secs|second|min|mins|minute|h|hr|hrs|hour|d|day|wk|week)")
_RATE_UNITS = {"s": "second", "sec": "second", "secs": "second", "min": "minute",
               "mins": "minute", "h": "hour", "hr": "hour", "hrs": "hour", "d": "day",
               "wk": "week"}  # fmt: skip
_RATE_WORDS = {"kb": "kilobyte", "mb": "megabyte", "gb": "gigabyte", "tb": "terabyte",
               "op": "operation", "ops": "operation"}  # fmt: skip


def _rate_spelt_out(term: str, other: Analysis) -> bool:
    """`term` is a rate ("req/s") the other text spells out ("requests per second"): the
    same unit after "per", and a word the short form begins or stands for. "req/s" /
    "requests per minute" stays a change."""
    m = _RATE.fullmatch(term)
    if m is None or len(m.group(1)) < 2:
        return False
    short, unit = m.group(1), _RATE_UNITS.get(m.group(2), m.group(2))
    if "per" + unit not in other.vocabulary:
        return False
    word = _RATE_WORDS.get(short, short)
    key = synonym_key(short)
    return any(
        w.startswith(word) or (key != short and synonym_key(w) == key)
        for w in other.vocabulary
        if w.isalpha()
    )


# An initialism with a digit read as a word: "2FA" (two-factor authentication), "2PC",
# "P2P" (peer-to-peer), "B2B"; a digit inside may also be "to" / "for".
_DIGIT_INITIALISM = re.compile(r"(?=[a-z0-9]*[a-z])[a-z234]{2,4}")
_ORDINAL_TERM = re.compile(r"\d(?:st|nd|rd|th)")
_DIGIT_READINGS = {"2": ("two",), "3": ("three",), "4": ("four",)}
_DIGIT_READINGS_INSIDE = {"2": ("two", "to"), "3": ("three",), "4": ("four", "for")}


@lru_cache(maxsize=8192)
def once_positions(seq: tuple[str, ...]) -> dict[str, int]:
    """Each term `seq` has exactly once -> its place, in order (once per sequence: a text
    meets several candidates; read only)."""
    count = Counter(seq)
    return {w: i for i, w in enumerate(seq) if count[w] == 1}


@lru_cache(maxsize=65536)
def digit_initialism(term: str) -> str:
    """`term` in lower case without a plural "s", if it is an initialism holding a digit of
    2-4 read as its word ("2FA", "2PCs"); else ""."""
    core = term.lower()
    if core.endswith("s") and len(core) > 3:
        core = core[:-1]  # "2PCs"
    if not any(c in "234" for c in core) or not _DIGIT_INITIALISM.fullmatch(core):
        return ""
    if _ORDINAL_TERM.fullmatch(core):
        return ""  # "2nd", "3rd", "4th": a number
    return core


def digit_initialism_in(term: str, words: Sequence[str]) -> range | None:
    """Where `words` (lower case) spell `term` out, if `term` is an initialism holding a
    digit of 2-4 read as its word; else None."""
    core = digit_initialism(term)
    if not core:
        return None
    at = [i for i, w in enumerate(words) if w.isalnum()]  # a tokeniser's "-" is no word
    n = len(core)
    for j in range(len(at) - n + 1):
        for m, ch in enumerate(core):
            w = words[at[j + m]]
            if ch.isdigit():
                if w not in (_DIGIT_READINGS_INSIDE if m else _DIGIT_READINGS)[ch]:
                    break
            elif len(w) < 2 or not w.isalpha() or w[0] != ch:
                break
        else:
            return range(at[j], at[j + n - 1] + 1)
    return None


def unmatched(terms: frozenset[str], other: Analysis) -> list[str]:
    """Terms of one text that the other text never mentions (sorted, for stable details)."""
    out = []
    for t in terms:
        if t in other.vocabulary or t in other.compounds:
            continue
        if stem(t) in other.vocabulary:
            continue
        # "#260" == "PR 260", "v1.2" == "1.2".
        if t[:1] in "#v" and t[1:] in other.vocabulary:
            continue
        if digit_initialism_in(t, other.words) is not None:
            continue  # "2FA" == "two-factor authentication", "P2P" == "peer-to-peer"
        # "#schema-review" == "the schema-review channel", "@ana-ops" == "ana-ops".
        if t[:1] in "#@" and norm_word(t[1:]) in other.vocabulary:
            continue
        if _file_named_by_stem(t, other):
            continue
        if _rate_spelt_out(t, other):
            continue
        if _same_id_without_hyphens(t, other) or _words_joined(t, other):
            continue
        if _id_written_apart(t, other) or _id_with_words(t, other) or _said_in_words(t, other):
            continue
        if _zone_named_by_city(t, other) or _hyphen_parts_said(t, other) or _short_form(t, other):
            continue
        if _segments_said(t, other) or _port_and_path(t, other) or _compound_variant(t, other):
            continue
        # the plural of an identifier ("versionCodes"), which `stem` folds as "-es"
        if t.endswith("s") and t[:-1] in other.vocabulary:
            continue
        out.append(t)
    return sorted(out)


def changed_slot_names(a: Analysis, b: Analysis) -> tuple[list[str], list[str]]:
    """(slot names only `a` writes, only `b` writes) compared exactly, when each has one;
    else two empty lists (a name dropped on one side is no substitution)."""
    new, old = sorted(a.slot_names - b.slot_names), sorted(b.slot_names - a.slot_names)
    return (new, old) if new and old else ([], [])


def changed_moments(a: Analysis, b: Analysis) -> tuple[list[str], list[str]]:
    """The sides of one moment the two texts take differently ("before the deploy" /
    "after the deploy"), as "before:deploy" terms; else two empty lists. A moment named on
    one side only, or with the same side, is no change; nor where one text is negated
    ("don't run it during business hours" / "only run it outside business hours")."""
    if a.negated != b.negated:
        return [], []
    only_a, only_b = a.moments - b.moments, b.moments - a.moments
    new = sorted(f"{r}:{w}" for r, w in only_a if any(w2 == w for _, w2 in only_b))
    old = sorted(f"{r}:{w}" for r, w in only_b if any(w2 == w for _, w2 in only_a))
    return (new, old) if new and old else ([], [])


def _bare_id(term: str) -> str:
    """Without hyphens and without the plural "s" after a digit ("sev-1s" -> "sev1")."""
    bare = term.replace("-", "")
    return bare[:-1] if len(bare) > 2 and bare[-1] == "s" and bare[-2].isdigit() else bare


def _same_id_without_hyphens(term: str, other: Analysis) -> bool:
    """ "sev-1" == "sev1", "pay-123" == "pay123", "Sev-1s" == "Sev1": an identifier with
    digits written with or without its hyphens, in the singular or the plural."""
    if not any(c.isdigit() for c in term):
        return False
    bare = _bare_id(term)
    return any(_bare_id(v) == bare for v in other.vocabulary if "-" in v + term or v[-1:] == "s")


# IANA time-zone names ("Europe/London", "America/New_York"): the zone of a city.
_IANA_ZONE = re.compile(
    r"(?:africa|america|antarctica|asia|atlantic|australia|europe|indian|pacific)/(?:[a-z_]+/)?"
    r"([a-z_]+)"
)


def _zone_named_by_city(term: str, other: Analysis) -> bool:
    """ "Europe/London" == "London time": a zone name whose city the other text says."""
    m = _IANA_ZONE.fullmatch(term)
    return m is not None and m.group(1).replace("_", "") in other.vocabulary


def _hyphen_parts_said(term: str, other: Analysis) -> bool:
    """ "HMAC-SHA256" == "HMAC with SHA-256": an identifier of hyphen-joined parts, each with
    a letter, each said by the other text (a part of its hyphenated identifiers counts); or
    the identifier is one such part of the other text's ("SHA-256" in "HMAC-SHA256")."""
    if "-" not in term or any(c in term for c in "/\\.#@=:$~_"):
        return False
    bare = term.replace("-", "")
    parts_other = {p for v in other.identifiers for p in v.split("-") if "-" in v}
    if bare in parts_other:
        return True
    parts = term.split("-")
    if len(parts) < 2 or not all(any(c.isalpha() for c in p) and len(p) > 1 for p in parts):
        return False
    bare_ids = {_bare_id(v) for v in other.identifiers}
    return all(p in other.vocabulary or p in parts_other or p in bare_ids for p in parts)


# A camel-case name's capitals, lower-cased ("TypeScript" -> "ts", "GitHub" -> "gh"), filled
# by `_token` as it reads each name: its usual short form. Bounded, so that a worker fed
# endless distinct names keeps its memory: past the bound a new name is read as a plain
# identifier (a veto when dropped, the safe side).
CAMEL_INITIALS_MAX = 100_000
_CAMEL_INITIALS: dict[str, str] = {}
# A product name's technical suffix, dropped in its short form ("PostgreSQL" / "Postgres",
# "MongoDB" / "Mongo").
# suffix -> the shortest stem it follows; "file": a tool and its file ("Dockerfile" ==
# "Docker", "Jenkinsfile" == "Jenkins").
_NAME_SUFFIXES = {"sql": 5, "ql": 6, "db": 5, "file": 3, "files": 3}


def is_product_name(term: str) -> bool:
    """A name in PascalCase of letters only ("ESLint", "HashiCorp", "CircleCI"), as read."""
    return term in _CAMEL_INITIALS


def _short_form(term: str, other: Analysis) -> bool:
    """ "TypeScript" == "TS", "PostgreSQL" == "Postgres": a camel-case name and its capitals,
    or a product name with and without its technical suffix, either way round."""
    if not term.isalpha():
        return False
    initials = _CAMEL_INITIALS.get(term)
    if initials is not None and initials in other.vocabulary:
        return True
    for suffix, shortest in _NAME_SUFFIXES.items():
        if term.endswith(suffix) and len(term) - len(suffix) >= shortest:
            if term[: -len(suffix)] in other.vocabulary:
                return True
        if len(term) >= shortest and term + suffix in other.vocabulary:
            return True
    return False


_JOINED_PART = re.compile(r"[a-z]{2,}")


def _words_joined(term: str, other: Analysis) -> bool:
    """ "ledger/bank-statement", "training/serving": words joined by slashes (no digits, dots
    or path ends), each of which the other text says, and no slash term of the other text
    joins the same words in another order (a swap: "src/api" vs "api/src")."""
    if "/" not in term or term.startswith("/") or term.endswith("/"):
        return False
    parts = re.split(r"[/-]", term)
    if not all(_JOINED_PART.fullmatch(p) for p in parts):
        return False
    if not all(p in other.vocabulary or stem(p) in other.vocabulary for p in parts):
        return False
    return not any(
        "/" in v and sorted(re.split(r"[/-]", v)) == sorted(parts) for v in other.identifiers
    )


# A word and a number glued into one identifier ("soc2", "iso-8601", "rfc7807").
_WORD_NUMBER_ID = re.compile(r"([a-z]{2,})-?(\d+(?:\.\d+)*)")


def _id_written_apart(term: str, other: Analysis) -> bool:
    """ "SOC2" == "SOC 2", "ISO-8601" == "ISO 8601": the identifier's word and its number,
    each said by the other text ("SOC 3" stays a change)."""
    m = _WORD_NUMBER_ID.fullmatch(term)
    return m is not None and m.group(1) in other.vocabulary and m.group(2) in other.numbers


def numbers_glued(x: Analysis, other: Analysis) -> set[str]:
    """The numbers `x` glues to a word in an identifier ("soc2") whose word `other` says: the
    numbers `other` may write apart ("SOC 2") without `x` lacking them."""
    out = set()
    for ident in x.identifiers:
        m = _WORD_NUMBER_ID.fullmatch(ident)
        if m is not None and m.group(1) in other.vocabulary:
            out.add(m.group(2))
    return out


_ID_PART = re.compile(r"[a-z]+\d+[a-z\d]*|\d+[a-z]+[a-z\d]*")


def _id_with_words(term: str, other: Analysis) -> bool:
    """ "ec2-hosted", "rs256-signed", "p99-latency": an identifier joined by hyphens to words,
    where the other text says the identifier ("on EC2"); "ec2" / "ec2-hosted" too."""
    if _ID_PART.fullmatch(term):
        # the other side of it: "RS256" where the other text writes "RS256-signed"
        return any(
            v.startswith(term + "-") and _descriptive(v[len(term) + 1 :]) for v in other.identifiers
        )
    first, _, rest = term.partition("-")
    if not rest or not _ID_PART.fullmatch(first) or first not in other.vocabulary:
        return False
    # The words describe the identifier ("-hosted", "-signed", "-only"); the alignment
    # reads them, as it reads every other word.
    return _descriptive(rest)


def _descriptive(rest: str) -> bool:
    return all(_JOINED_PART.fullmatch(w) for w in rest.split("-"))


def _said_in_words(term: str, other: Analysis) -> bool:
    """ "PYTHONHASHSEED=0" == "PYTHONHASHSEED set to 0": a name and its value, both in the
    other text ("=1" there stays a change)."""
    name, eq, value = term.partition("=")
    if not eq or not name or not value or "=" in value:
        return False
    return name in other.vocabulary and (value in other.vocabulary or value in other.numbers)


@lru_cache(maxsize=16384)
def _segmentations(term: str, words: frozenset[str], names: frozenset[str]) -> bool:
    """`term` (letters) is two or more of `words`, each of three letters or more, written
    together, none of them part of one of `names`."""
    n = len(term)
    ok = [True] + [False] * n
    pieces = [0] * (n + 1)
    for end in range(3, n + 1):
        for start in range(0, end - 2):
            if not ok[start]:
                continue
            piece = term[start:end]
            if any(piece in name for name in names):
                continue
            if piece in words or piece + "s" in words:
                if not ok[end] or pieces[start] + 1 > pieces[end]:
                    ok[end], pieces[end] = True, pieces[start] + 1
    return ok[n] and pieces[n] >= 2


def _segments_said(term: str, other: Analysis) -> bool:
    """ "worker_prefetch_multiplier" == "the workers' prefetch multiplier": a name written
    as one word (snake, kebab or camel case, read as one) whose words the other text says
    as words, each of them, and not inside a name of its own ("new_checkout" / "new_cart
    ... the checkout": "new" is new_cart's)."""
    if len(term) < 8 or not term.isalpha():
        return False
    return _segmentations(term, frozenset(other.words), other.identifiers | other.compounds)


_PORT_PATH = re.compile(r"(\d{2,5})(/[\w./-]*)")


def _port_and_path(term: str, other: Analysis) -> bool:
    """ ":8080/healthz" == "/healthz on port 8080": a port glued to a path, both of which
    the other text says apart; or the path, which the other text glues to a port."""
    m = _PORT_PATH.fullmatch(term)
    if m is None:  # the path alone, the other glues a port to it (its numbers guard reads it)
        return term.startswith("/") and any(
            (p := _PORT_PATH.fullmatch(v)) is not None and p.group(2) == term
            for v in other.identifiers
        )
    return m.group(1) in other.numbers and m.group(2) in other.vocabulary | other.identifiers


_COMPOUND_PREFIXES = ("non", "pre", "post", "re", "un", "multi", "sub", "co", "auto", "self")


def _compound_key(term: str) -> str:
    """A compound with its inflection folded and the words after a prefix made one with
    their synonyms ("re-embedded" == "re-embed", "non-prod" == "non-production")."""
    for prefix in _COMPOUND_PREFIXES:
        if term.startswith(prefix) and len(term) - len(prefix) >= 3:
            return prefix + _fold(synonym_key(term[len(prefix) :]))
    return _fold(term)


def _fold(word: str) -> str:
    word = stem(word)
    if len(word) > 4 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]  # "embedd" (from "embedded") == "embed"
    return word


def _compound_variant(term: str, other: Analysis) -> bool:
    """A compound the other text writes in another inflection or with a synonym after its
    prefix ("re-embedded" / "a full re-embed", "non-prod" / "non-production")."""
    if not term.isalpha() or not other.compounds:
        return False
    key = _compound_key(term)
    return any(_compound_key(c) == key for c in other.compounds if c.isalpha())
