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
from collections.abc import Iterator

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


# Characters from the rarest in lessons to the most common: a literal is filed under its
# rarest character (`ghp_` under `_`), and a text without that character skips it.
_RARE_FIRST = (
    "$~^|\\{}[]<>@#%&*+!?;`'\"_=/:-()0123456789QZXJKVBPYGFWMUCLDRHSNIOATE"
    "zqxjkvbpygfwmucldrhsnioate.,"
)
_RANK = {c: i for i, c in enumerate(_RARE_FIRST)}


class Prefilter:
    """Which of many `Scan`s a text can match, in their order, without testing each
    scan's literals one by one. Each scan is indexed under the literals of its most
    selective need, and each literal under its rarest character: a text looks up the
    literals filed under its own characters, tests those with `in`, and only the scans
    of the literals it holds (and those with no need) are tested further. `extra[i]`, if
    given, is one more set of case-sensitive literals scan i needs."""

    def __init__(self, scans: list[Scan], extra: list[tuple[str, ...]] | None = None) -> None:
        self.scans = scans
        self.extra = extra or [() for _ in scans]
        self._ready = False
        self._always: list[int] = []
        self._never_ascii: list[int] = []  # a need no ASCII text meets: run on others only
        # case-sensitive (on text) and lower-case (on text.lower()) literals:
        # character -> literals filed under it; literal -> scans gated by it
        self._chars: tuple[dict[str, list[str]], dict[str, list[str]]] = ({}, {})
        self._gated: tuple[dict[str, list[int]], dict[str, list[int]]] = ({}, {})
        self._rest: list[tuple[tuple[tuple[str, ...], bool], ...]] = []

    def _prepare(self) -> None:
        for i, scan in enumerate(self.scans):
            needs = list(scan.needs)
            if self.extra[i]:
                needs.append((frozenset(self.extra[i]), False))
            gate = max(needs, key=score) if needs else None
            # What is left to test once the gate's literal was found (in order of selectivity).
            rest = tuple((tuple(w), low) for w, low in needs if (w, low) != gate)
            self._rest.append(rest)
            if gate is None:
                self._always.append(i)
                continue
            words, on_low = gate
            if not words:
                self._never_ascii.append(i)
                continue
            for w in words:
                self._gated[on_low].setdefault(w, []).append(i)
                if len(self._gated[on_low][w]) == 1:
                    key = min(w, key=lambda c: _RANK.get(c, -1))
                    self._chars[on_low].setdefault(key, []).append(w)
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
        for on_low, hay in ((False, text), (True, low)):
            if hay is None:
                continue
            by_char, gated = self._chars[on_low], self._gated[on_low]
            for c in by_char.keys() & set(hay):
                for w in filter(hay.__contains__, by_char[c]):
                    picked.update(gated[w])
        out = []
        for i in sorted(picked):
            for words, on_low in self._rest[i]:
                hay = low if on_low else text
                if hay is not None and not any(map(hay.__contains__, words)):
                    break
            else:
                out.append(i)
        return out
