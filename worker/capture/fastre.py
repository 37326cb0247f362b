"""Regexes that skip the texts they cannot match, with the same matches. Pure.

Most lessons hold no secret, and `re` tries a case-insensitive alternation of keywords
behind a look-behind at every position of the text. `Scan` wraps one compiled regex
with two shortcuts that change no result:

- **needs**: literals read from the regex's parse tree, of which every match holds at
  least one (`ghp_`, `password`, `://`; several sets when a match needs one of each).
  A text that holds none of one set is not searched. Literals of a case-insensitive part
  are lower-case and read on `text.lower()`, for ASCII text only: under `re.IGNORECASE`
  some non-ASCII characters match ASCII letters (`ſ` matches `s`, the Kelvin sign `k`),
  which no `in` test would see.
- **twin**: the same regex without IGNORECASE, run on `text.lower()` of an ASCII text,
  where `re` can skip ahead on literal first characters. It is built only when every
  one-character matcher of the regex gives, on each of the 128 ASCII characters, the
  same answer case-insensitively as the twin gives on its lower case (so `[A-Z]` alone
  or an upper-case literal keep the original); a match of the twin is matched again by
  the original at the same position, and any difference in span falls back to the
  original over the whole text.

Non-ASCII text runs the original regex, with only the case-sensitive needs.
`Prefilter` holds many scans (the ~120 secret formats) and finds the few a text can
match without testing each one's literals (`memsieve.capture.retree` reads the trees).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import Any

import ahocorasick
from memsieve.capture.retree import Need, needs_of, score, twin_of


class Scan:
    """One regex, its needs and its twin (both worked out at first use: importing the
    policy stays cheap). `low` is `text.lower()` for an ASCII text, else None (`lowered`)."""

    def __init__(
        self, rx: re.Pattern[str] | str, flags: int = 0, twin: bool = True, literals: bool = True
    ) -> None:
        self.rx = re.compile(rx, flags) if isinstance(rx, str) else rx
        self._want_twin = twin
        # Off for a regex of common words ("because", "is"): testing its literals costs
        # more than the twin's search they would spare.
        self._want_literals = literals
        self._ready = False
        self._needs: tuple[Need, ...] = ()
        self._twin: re.Pattern[str] | None = None

    def _prepare(self) -> None:
        ci = bool(self.rx.flags & re.IGNORECASE) or "(?i" in self.rx.pattern
        self._twin = twin_of(self.rx) if self._want_twin and ci else None
        self._needs = needs_of(self.rx) if self._want_literals else ()
        self._ready = True

    @property
    def needs(self) -> tuple[Need, ...]:
        if not self._ready:
            self._prepare()
        return self._needs

    @property
    def twin(self) -> re.Pattern[str] | None:
        if not self._ready:
            self._prepare()
        return self._twin

    def possible(self, text: str, low: str | None) -> bool:
        """False only if no match of the regex can be in `text`."""
        for words, on_low in self.needs:
            hay = low if on_low else text
            # map/any run the `in` tests in C: a few per literal set, not a bytecode loop.
            if hay is not None and not any(map(hay.__contains__, words)):
                return False
        return True

    def finditer(
        self, text: str, low: str | None, checked: bool = False
    ) -> Iterator[re.Match[str]]:
        """`rx.finditer(text)`; `checked`: `possible` already said yes."""
        if not checked and not self.possible(text, low):
            return iter(())
        if self._twin is None or low is None:
            return self.rx.finditer(text)
        out = []
        for lm in self._twin.finditer(low):
            m = self.rx.match(text, lm.start())
            if m is None or m.span() != lm.span():
                return self.rx.finditer(text)
            out.append(m)
        return iter(out)

    def search(self, text: str, low: str | None) -> bool:
        """`rx.search(text) is not None`."""
        if not self.possible(text, low):
            return False
        if self._twin is None or low is None:
            return self.rx.search(text) is not None
        return self._twin.search(low) is not None

    def match(self, text: str, low: str | None) -> bool:
        """`rx.match(text) is not None`."""
        if not self.possible(text, low):
            return False
        if self._twin is None or low is None:
            return self.rx.match(text) is not None
        return self._twin.match(low) is not None


def lowered(text: str) -> str | None:
    """What `Scan` reads as `low`: the lower case of an ASCII text, else None."""
    return text.lower() if text.isascii() else None


class Prefilter:
    """Which of many `Scan`s a text can match, in their order, without testing each
    scan's literals one by one. Each scan is gated by the literals of its most selective
    need; one Aho-Corasick pass (pyahocorasick, in C) per text finds every gate literal
    the text holds, and only the scans of those literals (and those with no need) are
    tested further. `extra[i]`, if given, is one more set of case-sensitive literals scan
    i needs."""

    def __init__(self, scans: list[Scan], extra: list[tuple[str, ...]] | None = None) -> None:
        self.scans = scans
        self.extra = extra or [() for _ in scans]
        self._ready = False
        self._always: list[int] = []
        self._never_ascii: list[int] = []  # a need no ASCII text meets: run on others only
        # case-sensitive (on text) and lower-case (on text.lower()) gate literals -> the
        # scans each one gates, and an automaton over them (None: no literal)
        self._gated: tuple[dict[str, list[int]], dict[str, list[int]]] = ({}, {})
        self._found: tuple[Any, Any] = (None, None)
        self._rest: list[tuple[tuple[tuple[str, ...], bool], ...]] = []
        # Built at first use, once, whichever thread (an MCP tool thread) comes first.
        self._lock = threading.Lock()

    def _prepare(self) -> None:
        with self._lock:
            if not self._ready:
                self._build()

    def _build(self) -> None:
        for i, scan in enumerate(self.scans):
            needs = list(scan.needs)
            if self.extra[i]:
                needs.append((frozenset(self.extra[i]), False))
            gate = max(needs, key=score) if needs else None
            # What is left to test once the gate's literal was found (in order of selectivity).
            rest = tuple((tuple(w), low) for w, low in needs if (w, low) != gate)
            self._rest.append(rest)
            if gate is None or "" in gate[0]:  # no need, or one every text meets
                self._always.append(i)
                continue
            words, on_low = gate
            if not words:
                self._never_ascii.append(i)
                continue
            for w in words:
                self._gated[on_low].setdefault(w, []).append(i)
        found = []
        for gated in self._gated:
            automaton = ahocorasick.Automaton()
            for w, scans in gated.items():
                automaton.add_word(w, tuple(scans))
            automaton.make_automaton()
            found.append(automaton if gated else None)
        self._found = (found[0], found[1])
        self._ready = True

    def candidates(self, text: str, low: str | None) -> list[int]:
        """The indices of the scans that may match `text`, in order."""
        if not self._ready:
            self._prepare()
        picked = set(self._always)
        if low is None:
            picked.update(self._never_ascii)
            for scans in self._gated[True].values():
                picked.update(scans)
        for automaton, hay in zip(self._found, (text, low), strict=True):
            if hay is not None and automaton is not None:
                for _end, scans in automaton.iter(hay):
                    picked.update(scans)
        out = []
        for i in sorted(picked):
            for words, on_low in self._rest[i]:
                hay = low if on_low else text
                if hay is not None and not any(map(hay.__contains__, words)):
                    break
            else:
                out.append(i)
        return out
