"""What a regex's parse tree tells (`re._parser`): the literals every match holds, and
whether the regex has a case-sensitive twin for lower-cased ASCII text. Pure; used by
`memsieve.capture.fastre`, which explains both.

Both read CPython's private parser and compiler (stable since 3.11, where they were
renamed); a tree they do not know gives no literals and no twin, never a wrong one.
"""

from __future__ import annotations

import re
from functools import cache
from re import _compiler as sre_compile  # type: ignore[attr-defined]
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

# A set of literals of which a text must hold one: (literals, on the lower-cased text).
Need = tuple[frozenset[str], bool]
_ASCII = [chr(i) for i in range(128)]
_ONE_CHAR = (C.LITERAL, C.NOT_LITERAL, C.IN, C.ANY, C.CATEGORY)
_REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT)


@cache
def _ascii_twins(code: int) -> bool:
    """Whether a non-ASCII character matches some ASCII character case-insensitively."""
    rx = re.compile(re.escape(chr(code)), re.IGNORECASE)
    return any(rx.fullmatch(a) for a in _ASCII)


def score(need: Need) -> tuple[int, int]:
    """How selective a need is: its shortest literal's length, then fewer literals."""
    words, _ = need
    return (min((len(w) for w in words), default=99), -len(words))


def _union(needs: list[Need]) -> Need:
    if all(not low for _, low in needs):
        return frozenset().union(*(w for w, _ in needs)), False
    # Mixed: a case-sensitive literal in the text is its lower case in the lowered
    # (ASCII) text; a non-ASCII one cannot be in an ASCII text at all.
    words: set[str] = set()
    for ws, low in needs:
        words.update(w if low else w.lower() for w in ws if low or w.isascii())
    return frozenset(words), True


_MAX_STRINGS = 32


def _exact(op: Any, av: Any, ci: bool) -> set[str] | None:
    """Every string one item can match, if they are few and known (lower case if `ci`;
    a case-insensitive character that no ASCII character matches contributes nothing:
    it never matches ASCII text); None otherwise."""
    if op is C.LITERAL:
        ch = chr(av)
        if not ci:
            return {ch}
        if ch.isascii():
            return {ch.lower()}
        return None if _ascii_twins(av) else set()
    if op is C.IN:
        out: set[str] = set()
        for kind, value in av:
            if kind is not C.LITERAL:
                return None
            got = _exact(kind, value, ci)
            if got is None:
                return None
            out |= got
        return out if len(out) <= 8 else None
    if op is C.SUBPATTERN:
        _, add, sub, body = av
        return _exact_seq(body, (ci or bool(add & re.IGNORECASE)) and not sub & re.IGNORECASE)
    if op is C.BRANCH:
        out = set()
        for alt in av[1]:
            got = _exact_seq(alt, ci)
            if got is None:
                return None
            out |= got
        return out if len(out) <= _MAX_STRINGS else None
    return None


def _exact_seq(items: Any, ci: bool) -> set[str] | None:
    run = {""}
    for op, av in items:
        got = _exact(op, av, ci)
        if got is None:
            return None
        run = {a + b for a in run for b in got}
        if len(run) > _MAX_STRINGS:
            return None
    return run


def _reads_ci(op: Any, av: Any, ci: bool) -> bool:
    """Whether any character of an `_exact` item is read case-insensitively (then its
    strings, partly lower-cased, can only be looked for in the lowered text)."""
    if op is C.SUBPATTERN:
        inner = (ci or bool(av[1] & re.IGNORECASE)) and not av[2] & re.IGNORECASE
        return any(_reads_ci(o, a, inner) for o, a in av[3])
    if op is C.BRANCH:
        return any(_reads_ci(o, a, ci) for alt in av[1] for o, a in alt)
    return ci


def _seq_needs(items: Any, ci: bool) -> list[Need]:
    """Every need of a sequence (each must hold), best first."""
    found: list[Need] = []
    run: set[str] = {""}
    run_ci = False

    def close() -> None:
        nonlocal run, run_ci
        if run != {""}:
            # A case-sensitive part of a run that also reads case-insensitively is read
            # on the lowered text too (ASCII only: there, "X" in text means "x" in low).
            found.append((frozenset(w.lower() for w in run) if run_ci else frozenset(run), run_ci))
        run, run_ci = {""}, False

    for op, av in items:
        got = _exact(op, av, ci)
        if got is not None:
            longer = {a + b for a in run for b in got}
            if len(longer) > _MAX_STRINGS:
                close()
                longer = got
            run, run_ci = longer, run_ci or _reads_ci(op, av, ci)
            continue
        close()
        if op is C.SUBPATTERN:
            found += _seq_needs(
                av[3], (ci or bool(av[1] & re.IGNORECASE)) and not av[2] & re.IGNORECASE
            )
        elif op is C.ATOMIC_GROUP:
            found += _seq_needs(av, ci)
        elif op in _REPEATS and av[0] >= 1:
            found += _seq_needs(av[2], ci)
        elif op is C.BRANCH:
            alts = [_seq_needs(alt, ci) for alt in av[1]]
            if alts and all(alts):
                found.append(_union([alt[0] for alt in alts]))
    close()
    return sorted(found, key=score, reverse=True)


def needs_of(rx: re.Pattern[str], most: int = 2) -> tuple[Need, ...]:
    """Up to `most` sets of literals, each of which every match of `rx` holds one of."""
    try:
        tree = sre_parse.parse(rx.pattern, rx.flags)
    except Exception:  # noqa: BLE001 - an unknown parse tree: no shortcut
        return ()
    ci = bool(tree.state.flags & re.IGNORECASE)
    return tuple(_seq_needs(tree.data, ci)[:most])


def _same_on_ascii(node: tuple[Any, Any], flags: int, ci: bool) -> bool:
    """Whether a one-character matcher (case-insensitive if `ci`) gives on each ASCII
    character the answer it gives without IGNORECASE on that character's lower case."""
    op, av = node
    if op in (C.ANY, C.CATEGORY):
        return True
    if op in (C.LITERAL, C.NOT_LITERAL):
        ch = chr(av)
        if not ch.isascii():
            return not _ascii_twins(av)
        return not ch.isupper() if ci else ch.lower() == ch.upper()
    key = (repr(av), flags, ci)
    if key not in _SETS:
        state = sre_parse.State()
        state.flags = flags | re.IGNORECASE if ci else flags
        before = sre_compile.compile(sre_parse.SubPattern(state, [node]), state.flags)
        state.flags = flags
        after = sre_compile.compile(sre_parse.SubPattern(state, [node]), flags)
        _SETS[key] = all(
            bool(before.fullmatch(a)) == bool(after.fullmatch(a.lower())) for a in _ASCII
        )
    return _SETS[key]


_SETS: dict[tuple[str, int, bool], bool] = {}  # a set's repr, flags, ci -> _same_on_ascii


def _strip_ci(items: Any, ci: bool, flags: int) -> bool:
    """Drop IGNORECASE from the tree in place; False if a part would then differ."""
    for i, (op, av) in enumerate(items):
        if op in _ONE_CHAR:
            if not _same_on_ascii((op, av), flags, ci):
                return False
        elif op is C.SUBPATTERN:
            group, add, sub, body = av
            inner = (ci or bool(add & re.IGNORECASE)) and not sub & re.IGNORECASE
            if not _strip_ci(body, inner, flags):
                return False
            items[i] = (op, (group, add & ~re.IGNORECASE, sub, body))
        elif op in (C.ASSERT, C.ASSERT_NOT):
            if not _strip_ci(av[1], ci, flags):
                return False
        elif op is C.ATOMIC_GROUP:
            if not _strip_ci(av, ci, flags):
                return False
        elif op in _REPEATS:
            if not _strip_ci(av[2], ci, flags):
                return False
        elif op is C.BRANCH:
            if not all(_strip_ci(alt, ci, flags) for alt in av[1]):
                return False
        elif op is not C.AT:
            return False  # back-references, conditionals: keep the original
    return True


def twin_of(rx: re.Pattern[str]) -> re.Pattern[str] | None:
    """`rx` without IGNORECASE, for lower-cased ASCII text; None where it would differ."""
    try:
        tree = sre_parse.parse(rx.pattern, rx.flags)
        ci = bool(tree.state.flags & re.IGNORECASE)
        flags = tree.state.flags & ~re.IGNORECASE
        if not _strip_ci(tree.data, ci, flags):
            return None
        tree.state.flags &= ~re.IGNORECASE
        return sre_compile.compile(tree, rx.flags & ~re.IGNORECASE)  # type: ignore[no-any-return]
    except Exception:  # noqa: BLE001 - an unknown parse tree: no twin
        return None
