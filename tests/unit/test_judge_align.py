"""`judge_align.align` against the plain per-word definition it computes in numpy."""

# The middle layer's shared-word cosines (`judge_mid`) by the same definition, on its vectors.

from __future__ import annotations

import numpy as np
from memsieve.gate.judge_align import WordVectors, align, is_content, word_key


def _shared(a: WordVectors, b: WordVectors, vecs_a: np.ndarray, vecs_b: np.ndarray, content: bool):
    out = []
    for i, w in enumerate(a.words):
        same = [j for j, u in enumerate(b.words) if word_key(w) and word_key(w) == word_key(u)]
        if same and (a.content[i] or not content):
            out.append(max(float(vecs_a[i] @ vecs_b[j]) for j in same))
    return out


def _reference(a: WordVectors, b: WordVectors) -> tuple[list[float], list[float], list[float]]:
    """Per content word of each side, its best cosine to any word of the other (1.0 for the
    same word after folding); per content word of `a` found in `b`, the best cosine of its
    contextual vectors to that word's."""

    def best(x: WordVectors, y: WordVectors) -> list[float]:
        out = []
        for i, w in enumerate(x.words):
            if not x.content[i]:
                continue
            scores = [
                1.0
                if word_key(w) and word_key(w) == word_key(u)
                else float(x.vectors[i] @ y.vectors[j])
                for j, u in enumerate(y.words)
            ]
            out.append(max(scores))
        return out

    return best(a, b), best(b, a), _shared(a, b, a.vectors, b.vectors, True)


def _words(text: str, rng: np.random.Generator) -> WordVectors:
    words = tuple(text.lower().split())
    mat = rng.normal(size=(len(words), 16)).astype(np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    mid = rng.normal(size=(len(words), 16)).astype(np.float32)
    mid /= np.linalg.norm(mid, axis=1, keepdims=True)
    return WordVectors(words, tuple(is_content(w) for w in words), mat, mid=mid)


def test_align_matches_the_per_word_definition() -> None:
    rng = np.random.default_rng(3)
    texts = [
        "The deploy job retries twice before it pages the on-call engineer",
        "Deploys retry two times and then page on-call",
        "the the cache is warmed before deploys , not after",
        "Billing service retries twice",
        ".",
    ]
    for ta in texts:
        for tb in texts:
            a, b = _words(ta, rng), _words(tb, rng)
            got = align(a, b)
            want_a, want_b, want_shared = _reference(a, b)
            np.testing.assert_allclose(got.a_best, want_a, rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(got.b_best, want_b, rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(got.shared_context, want_shared, rtol=1e-6, atol=1e-6)
            assert a.mid is not None and b.mid is not None
            for content, have in ((True, got.mid_content), (False, got.mid_any)):
                want = _shared(a, b, a.mid, b.mid, content)
                np.testing.assert_allclose(have, want, rtol=1e-6, atol=1e-6)
            assert got.a_words == tuple(w for w, c in zip(a.words, a.content, strict=True) if c)


def test_symbols_are_no_content_words() -> None:
    # An emoji or an arrow decorating a lesson is no fact a rewording must align.
    assert [is_content(w) for w in ("🚀", "⚠", "→", "✓", "…", "deploy", "k8s", "2")] == [
        False, False, False, False, False, True, True, True,
    ]  # fmt: skip


def test_a_digit_in_an_initialism_reads_as_its_word() -> None:
    from memsieve.gate import judge_initials

    long = ("uses", "two", "-", "phase", "commit", "for", "writes")
    assert list(judge_initials.spelled_out(("uses", "2pc"), long)) == [(1, range(1, 5))]
    mesh = ("over", "a", "peer", "-", "to", "-", "peer", "mesh")
    assert list(judge_initials.spelled_out(("a", "p2p", "mesh"), mesh)) == [(1, range(2, 7))]
    # a digit reads as its own number; "to" / "for" only inside ("2fa" is no "to fix auth")
    assert not list(judge_initials.spelled_out(("3pc",), long))
    assert not list(judge_initials.spelled_out(("2fa",), ("to", "fix", "auth")))
    assert list(judge_initials.spelled_out(("2fa",), ("two", "factor", "auth"))) == [
        (0, range(0, 3))
    ]


def test_the_identifiers_guard_reads_a_digit_initialism_spelt_out() -> None:
    from memsieve.gate import text

    old = text.analyse("The ledger service uses two-phase commit for cross-shard writes.")
    assert text.unmatched(frozenset({"2pc"}), old) == []
    assert text.unmatched(frozenset({"3pc"}), old) == ["3pc"]


def test_an_initialism_aligns_with_the_words_it_stands_for() -> None:
    from memsieve.gate import judge_initials

    def words(*ws: str) -> WordVectors:
        # every word its own direction: only identical keys (and initialisms) align
        vecs = np.zeros((len(ws), 64), dtype=np.float32)
        for i, w in enumerate(ws):
            vecs[i, hash(w) % 64] = 1.0
        return WordVectors(ws, tuple(w not in ("every", "the") for w in ws), vecs)

    short = ("every", "prs", "need", "approvals")
    long = ("every", "pull", "requests", "need", "approvals")
    assert list(judge_initials.spelled_out(short, long)) == [(1, range(1, 3))]
    al = align(words(*short), words(*long))
    assert dict(zip(al.a_words, al.a_best.tolist(), strict=True))["prs"] == 1.0
    got = dict(zip(al.b_words, al.b_best.tolist(), strict=True))
    assert got["pull"] == got["requests"] == 1.0
    # not an initialism: too long, digits, a word the other side has, one-letter words
    assert not list(judge_initials.spelled_out(("deploy",), ("do", "everything")))
    assert not list(judge_initials.spelled_out(("k8s",), ("kubernetes", "eight", "s")))
    assert not list(judge_initials.spelled_out(("pr",), ("pr", "pull", "request")))
    assert not list(judge_initials.spelled_out(("ab",), ("a", "b")))
    # words written together align with the two words: "200ms" / "200 ms"
    one, two = ("budget", "200ms"), ("budget", "of", "200", "ms")
    assert list(judge_initials.one_word(one, _keys(one), two, _keys(two))) == [(1, range(2, 4))]
    al = align(words(*one), words(*two))
    got = dict(zip(al.b_words, al.b_best.tolist(), strict=True))
    assert got["200"] == got["ms"] == 1.0
    assert not list(judge_initials.written_together(("ms",), ("200", "ms")))
    assert not list(judge_initials.written_together(("200ms",), ("200ms", "200", "ms")))


def test_a_word_said_as_a_run_of_words_aligns_with_the_run() -> None:
    from memsieve.gate import judge_initials

    one, two = ("disable", "autoscaling"), ("autoscaling", "must", "be", "turned", "off")
    assert list(judge_initials.one_word(one, _keys(one), two, _keys(two))) == [(0, range(3, 5))]
    one, two = ("releases", "fortnightly"), ("releases", "every", "two", "weeks")
    assert list(judge_initials.one_word(one, _keys(one), two, _keys(two))) == [(1, range(1, 4))]
    # "turned on" is not "disable"; "every week" is not "fortnightly"
    assert not list(judge_initials.said_as(_keys(("disable",)), _keys(("turned", "on"))))
    assert not list(judge_initials.said_as(_keys(("fortnightly",)), _keys(("every", "week"))))
    # a comparison said with "than": "over" / "larger than", "under" / "fewer than"
    one, two = ("events", "over", "256"), ("events", "larger", "than", "256")
    assert list(judge_initials.one_word(one, _keys(one), two, _keys(two))) == [(1, range(1, 3))]
    assert list(judge_initials.said_as(_keys(("under",)), _keys(("fewer", "than")))) == [
        (0, range(0, 2))
    ]
    # not the other way, and not a word that merely starts like one
    assert not list(judge_initials.said_as(_keys(("over",)), _keys(("fewer", "than"))))
    assert not list(judge_initials.said_as(_keys(("overwrite",)), _keys(("more", "than"))))


def _keys(words: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(word_key(w) for w in words)
