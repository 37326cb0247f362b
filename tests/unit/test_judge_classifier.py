"""The trained pair classifier's plumbing, without the model: features, weights, verdicts.

The lexical encoder stands in for MiniLM (a word aligns only with itself); the behaviour
with the real model and the shipped weights is in tests/integration/test_judge_quality.py.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest
from memsieve.gate import judge_features, judge_repeats, judge_rules
from memsieve.gate.decide import Candidate, Incoming, Veto
from memsieve.gate.judge import Verdict
from memsieve.gate.judge_align import LexicalTokenEncoder, WordVectors, align
from memsieve.gate.judge_classifier import (
    ClassifierJudge,
    Model,
    Weights,
    load_weights,
    weights_from_json,
)
from memsieve.gate.judge_features import FEATURE_NAMES


def _pair(old: str, new: str, distance: float = 0.2) -> tuple[Incoming, Candidate]:
    return (
        Incoming("ns", "pattern", "", new, "h-new"),
        Candidate("m1", "pattern", "", old, "h-old", distance),
    )


def _weights(**named: float) -> Weights:
    """P(same) = sigmoid(sum of the named features' weights)."""
    w = np.zeros(len(FEATURE_NAMES))
    for name, value in named.items():
        w[FEATURE_NAMES.index(name)] = value
    return Weights(Model(w, 0.0), 0.5, None)


# Same fact when every content word aligns (align_min 1.0), else not.
ALIGNED = _weights(bias=-5.0, align_min=10.0)


def test_shipped_weights_match_the_feature_list() -> None:
    w = load_weights()
    x = np.ones(len(FEATURE_NAMES))
    assert 0.0 <= w.same.p(x) <= 1.0
    assert 0.0 < w.same_cut < 1.0
    assert w.update is None or 0.0 <= w.update.p(x) <= 1.0


def test_pairs_of_nearly_the_same_words_need_the_higher_overlap_cut() -> None:
    """P(same) 0.73 passes the general cut 0.5; a pair whose content words are one set
    (Jaccard 1.0 >= 0.8: PAWS' shape, where a swap can change the fact) needs the overlap
    cut 0.9."""
    same = Model(np.eye(len(FEATURE_NAMES))[FEATURE_NAMES.index("bias")], 0.0)  # p = 0.73
    pair = _pair("Run the migrations before deploys", "Before deploys, run the migrations")
    reworded = _pair("Deploys run from the release branch", "Deploys start off the release branch")
    one_cut = ClassifierJudge(LexicalTokenEncoder(), Weights(same, 0.5, None))
    two_cuts = ClassifierJudge(LexicalTokenEncoder(), Weights(same, 0.5, None, 0.5, 0.8, 0.9))
    assert [j.verdict for j in one_cut([pair, reworded])] == [Verdict.SAME, Verdict.SAME]
    got = two_cuts([pair, reworded])
    assert got[0].verdict is not Verdict.SAME and "p(same) 0.73 < 0.90" in got[0].detail
    assert got[1].verdict is Verdict.SAME and "p(same) 0.73 >= 0.50" in got[1].detail
    shipped = load_weights()
    assert shipped.overlap_from is not None and shipped.overlap_cut >= shipped.same_cut


def test_weights_trained_on_other_features_are_refused() -> None:
    raw = json.dumps({"features": ["bias"], "same": [0.0], "same_cut": 0.5})
    with pytest.raises(ValueError, match="other features"):
        weights_from_json(raw)


def test_lexical_alignment_per_content_word() -> None:
    a, b = LexicalTokenEncoder().encode(
        ["The billing service retries twice.", "The search service retries twice."]
    )
    al = align(a, b)
    assert dict(zip(al.a_words, al.a_best.tolist(), strict=True)) == {
        "billing": 0.0,
        "service": 1.0,
        "retries": 1.0,
        "twice": 1.0,
    }


def test_mlp_weights_forward_pass() -> None:
    n = len(FEATURE_NAMES)
    hidden_w = np.zeros((n, 2))
    hidden_w[FEATURE_NAMES.index("distance"), 0] = 1.0
    hidden_w[FEATURE_NAMES.index("distance"), 1] = -1.0
    raw = json.dumps(
        {
            "features": list(FEATURE_NAMES),
            "same": {
                "kind": "mlp",
                "mean": [0.0] * n,
                "scale": [2.0] * n,
                "hidden_w": hidden_w.tolist(),
                "hidden_b": [0.0, 0.0],
                "out_w": [-4.0, 4.0],
                "out_b": 0.0,
            },
            "same_cut": 0.5,
        }
    )
    w = weights_from_json(raw)
    x = np.zeros(n)
    x[FEATURE_NAMES.index("distance")] = 1.0  # hidden (0.5, 0) -> sigmoid(-2)
    assert w.same.p(x) == pytest.approx(1 / (1 + np.exp(2.0)))
    x[FEATURE_NAMES.index("distance")] = -1.0  # hidden (0, 0.5) -> sigmoid(2)
    assert w.same.p(x) == pytest.approx(1 / (1 + np.exp(-2.0)))


def test_verdicts_follow_the_weights() -> None:
    judge = ClassifierJudge(LexicalTokenEncoder(), ALIGNED)
    out = judge(
        [
            _pair("Run the linter before you push.", "Before you push, run the linter."),
            _pair("The billing service retries twice.", "The search service retries twice."),
        ]
    )
    assert out[0].verdict is Verdict.SAME and out[0].judge == "classifier"
    assert out[1].verdict is not Verdict.SAME
    assert "billing" in out[1].detail and "search" in out[1].detail


def test_hard_guard_veto_is_never_same_whatever_the_weights() -> None:
    always_same = _weights(bias=50.0)
    judge = ClassifierJudge(LexicalTokenEncoder(), always_same)
    (j,) = judge([_pair("Postgres listens on port 5432.", "Postgres listens on port 5433.")])
    assert j.verdict is not Verdict.SAME
    assert [v.guard for v in j.vetoes] == ["numbers"]
    assert j.detail.startswith("numbers: ")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # values trade the things they belong to
        (
            "Staging runs 2 replicas of the API and production runs 6.",
            "Staging runs 6 replicas of the API and production runs 2.",
        ),
        # every word twice: the word-order guard sees no word used once
        (
            "The web tier may call the API tier, but the API tier must not call the web tier.",
            "The API tier may call the web tier, but the web tier must not call the API tier.",
        ),
        ("Copy the dump from staging to prod.", "Copy the dump from prod to staging."),
    ],
)
def test_two_words_trading_places_is_never_the_same_fact(old: str, new: str) -> None:
    from memsieve.gate import judge_exchange

    assert judge_exchange.exchanged(old, new) is not None
    (j,) = ClassifierJudge(LexicalTokenEncoder(), _weights(bias=50.0))([_pair(old, new)])
    assert j.verdict is not Verdict.SAME
    assert "change places" in j.detail


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Redis and Postgres run on the db host.", "Postgres and Redis run on the db host."),
        ("Ship on Monday, Tuesday or Friday.", "Ship on Friday, Tuesday or Monday."),
        ("Keep the 14th, 16th and 117th runs.", "Keep the 117th, 16th and 14th runs."),
        ("Run the linter before the tests.", "Before the tests, run the linter."),
        ("Run the linter before the tests.", "Run the linter before the tests."),
    ],
)
def test_a_list_reordered_or_a_clause_moved_is_not_an_exchange(old: str, new: str) -> None:
    from memsieve.gate import judge_exchange

    assert judge_exchange.exchanged(old, new) is None


def test_one_value_swapped_is_an_update_without_an_update_model() -> None:
    judge = ClassifierJudge(LexicalTokenEncoder(), ALIGNED)
    (j,) = judge([_pair("The data warehouse is Redshift.", "The data warehouse is Snowflake.")])
    assert j.verdict is Verdict.UPDATE


def test_update_model_decides_update_or_different() -> None:
    w = _weights(bias=-5.0, align_min=10.0)
    never_update = Weights(w.same, 0.5, Model(np.zeros(len(FEATURE_NAMES)), -1.0))
    always_update = Weights(w.same, 0.5, Model(np.zeros(len(FEATURE_NAMES)), 1.0))
    pair = _pair("Deploys go out on Fridays after lunch.", "Deploys need two approvals first.")
    (j,) = ClassifierJudge(LexicalTokenEncoder(), never_update)([pair])
    assert j.verdict is Verdict.DIFFERENT
    (j,) = ClassifierJudge(LexicalTokenEncoder(), always_update)([pair])
    assert j.verdict is Verdict.UPDATE


def test_one_value_changed_on_a_shared_subject_is_an_update_whatever_the_model() -> None:
    w = _weights(bias=-5.0, align_min=10.0)
    never_update = Weights(w.same, 0.5, Model(np.zeros(len(FEATURE_NAMES)), -1.0))
    judge = ClassifierJudge(LexicalTokenEncoder(), never_update)
    (j,) = judge([_pair("The data warehouse is Redshift.", "The data warehouse is Snowflake.")])
    assert j.verdict is Verdict.UPDATE
    (j,) = judge([_pair("Retry webhooks 3 times.", "Retry webhooks 5 times.")])
    assert j.verdict is Verdict.UPDATE


def test_distance_is_rescaled_for_another_embedder() -> None:
    by_distance = _weights(bias=2.0, distance=-10.0)  # same when distance < 0.2
    pair = _pair("Run the linter before you push.", "Before you push, run the linter.", 0.05)
    assert ClassifierJudge(LexicalTokenEncoder(), by_distance)([pair])[0].verdict is Verdict.SAME
    scaled = ClassifierJudge(LexicalTokenEncoder(), by_distance, distance_scale=5.0)
    assert scaled([pair])[0].verdict is not Verdict.SAME


class _PooledEncoder(LexicalTokenEncoder):
    """Lexical words plus a sentence vector per text, as the MiniLM encoder pools them:
    here two directions that make the pair's model distance exactly `distance`."""

    def __init__(self, distance: float) -> None:
        self.distance = distance

    def encode(self, texts: Sequence[str]) -> list[WordVectors]:
        angle = np.arccos(1.0 - self.distance)
        out = []
        for n, wv in enumerate(super().encode(texts)):
            vec = np.array([np.cos(angle * n), np.sin(angle * n)], dtype=np.float32)
            out.append(replace(wv, sentence=vec))
        return out


def test_another_embedders_pairs_are_judged_on_the_encoders_own_distance() -> None:
    by_distance = _weights(bias=2.0, distance=-10.0)  # same when distance < 0.2
    pair = _pair("Run the linter before you push.", "Before you push, run the linter.", 0.07)
    # Rescaled, the other embedder's 0.07 reads as 0.35: not the same fact.
    rescaled = ClassifierJudge(_PooledEncoder(0.05), by_distance, distance_scale=5.0)
    assert rescaled([pair])[0].verdict is not Verdict.SAME
    # With the encoder's own distance (0.05) the weights see what they were trained on.
    own = ClassifierJudge(
        _PooledEncoder(0.05), by_distance, distance_scale=5.0, model_distances=True
    )
    assert own([pair])[0].verdict is Verdict.SAME
    far = ClassifierJudge(
        _PooledEncoder(0.5), by_distance, distance_scale=1.0, model_distances=True
    )
    assert far([pair])[0].verdict is not Verdict.SAME


def test_empty_batch_and_order() -> None:
    judge = ClassifierJudge(LexicalTokenEncoder(), ALIGNED)
    assert judge([]) == []
    pairs = [
        _pair("Postgres listens on port 5432.", "Postgres listens on port 5433."),
        _pair("Run the linter before you push.", "Before you push, run the linter."),
    ]
    assert [j.verdict for j in judge(pairs)][1] is Verdict.SAME


def test_generic_nouns_of_one_synonym_group_align_and_names_do_not() -> None:
    enc = LexicalTokenEncoder()
    a, b = enc.encode(
        ["Name files with kebab-case in this project.", "In this repo, files are named kebab-case."]
    )
    al = align(a, b)
    assert dict(zip(al.a_words, al.a_best, strict=True))["project"] == 1.0
    a, b = enc.encode(["The billing service retries twice.", "The search service retries twice."])
    al = align(a, b)
    assert dict(zip(al.a_words, al.a_best, strict=True))["billing"] == 0.0


def test_pair_shapes() -> None:
    from memsieve.gate import judge_shapes, text
    from memsieve.gate.judge_align import word_key

    def bag(a: str, b: str) -> bool:
        return judge_shapes.swapped_in_same_bag(
            text.analyse(a).content_words, text.analyse(b).content_words
        )

    assert bag(
        "Rebase feature branches onto main, not main onto feature branches.",
        "Rebase main onto feature branches, not feature branches onto main.",
    )
    assert not bag("Run make lint before opening a PR.", "Before opening a PR, run make lint.")
    assert judge_shapes.sibling_names("Use web-frontend.", "Use web-backend.")
    assert not judge_shapes.sibling_names("Never hand-edit it.", "Do not edit-by-hand it.")
    a, b = text.analyse("the billing service retries"), text.analyse("the search service retries")
    content = frozenset(word_key(w) for w in a.content_words + b.content_words)
    assert judge_shapes.substitutions(a.words, b.words, content) == [
        (word_key("billing"), word_key("search"))
    ]
    assert text.antonym_pairs(("reviewers", "accept"), ("reviewers", "rejected")) == [
        ("accept", "reject")
    ]
    assert text.antonym_pairs(("accepts",), ("accepted",)) == []


def test_word_pieces_become_one_unit_vector_per_word() -> None:
    """The local embedder's token vectors grouped by word id: special tokens dropped, a
    word's pieces averaged (then unit length), its text the span of its pieces."""
    from memsieve.embedders.local import TokenVectors
    from memsieve.gate.judge_align import word_vectors

    text = "Unclosed the db"
    #             [CLS]   un      ##closed  the     db      [SEP]
    vecs = np.array([[9, 9], [3, 0], [1, 0], [0, 2], [1, 1], [9, 9]], dtype=np.float32)
    tv = TokenVectors(
        text,
        vecs,
        (None, 0, 0, 1, 2, None),
        ((0, 0), (0, 2), (2, 8), (9, 12), (13, 15), (0, 0)),
    )
    wv = word_vectors(tv)
    assert wv.words == ("unclosed", "the", "db")
    assert wv.content == (True, False, True)
    want = np.array([[1, 0], [0, 1], [0.70710677, 0.70710677]], dtype=np.float32)
    np.testing.assert_allclose(wv.vectors, want, atol=1e-6)
    empty = word_vectors(TokenVectors("", vecs[:2], (None, None), ((0, 0), (0, 0))))
    assert empty.words == () and empty.vectors.shape == (0, 2)


@pytest.mark.parametrize(
    ("added", "extended"),
    [
        (" Confirmed again.", True),
        (" Confirmed again in the March retro.", True),
        (" Not any more.", False),  # negates
        (" We don't do this.", False),
        (" This no longer applies.", False),  # announces a change: an update, not a repeat
        (" From now on, use 6 pm.", False),
    ],
)
def test_a_live_text_repeated_whole_with_a_sentence_added_is_the_same_fact(
    added: str, extended: bool
) -> None:
    live = "Deploys run after the nightly backup; pin the proxy version first."
    assert judge_repeats.extends(live, live + added) is extended
    # Never the other way round (the live memory says more), nor a prefix that negates.
    assert not judge_repeats.extends(live + added, live)
    assert not judge_repeats.extends(live, "Never " + live[0].lower() + live[1:])
    # Whatever the model's p(same), the judge does not keep the repeat as a second row.
    never_same = _weights(bias=-5.0)
    (j,) = ClassifierJudge(LexicalTokenEncoder(), never_same)([_pair(live, live + added)])
    assert (j.verdict is Verdict.SAME) is extended


class _NoEncoder(LexicalTokenEncoder):
    def encode(self, texts: Sequence[str]) -> list[WordVectors]:
        assert not texts, f"encoded {texts!r}"
        return []


def test_a_repeat_with_a_sentence_added_needs_no_forward_pass() -> None:
    live = "Pin the proxy version before the rollout."
    (j,) = ClassifierJudge(_NoEncoder(), ALIGNED)([_pair(live, live + " Confirmed again.")])
    assert j.verdict is Verdict.SAME


@pytest.mark.parametrize(
    ("old", "new", "pairs"),
    [
        (
            "Mutable tags are allowed here.",
            "Mutable tags are prohibited here.",
            [("allowed", "prohibited")],
        ),
        ("Scale up the workers at nine.", "Scale down the workers at nine.", [("up", "down")]),
        ("Messages arrive in order.", "Messages arrive out of order.", [("ordered", "unordered")]),
        ("Retries are safe here.", "Retries are unsafe here.", [("safe", "unsafe")]),
        ("Strict mode is off.", "We turned strict mode on.", [("off", "on")]),
        # inflections of one member never oppose each other; a prefix needs 4 letters left
        ("The cache is enabled.", "Enable the cache.", []),
        ("Play A-level games.", "Play level games.", []),
    ],
)
def test_polar_pairs(old: str, new: str, pairs: list[tuple[str, str]]) -> None:
    from memsieve.gate import judge_shapes

    assert judge_shapes.polar_pairs(old, new) == pairs


def test_polar_flips_skip_a_member_under_a_negation() -> None:
    from memsieve.gate import judge_shapes

    assert judge_shapes.polar_flips("Retries are safe here.", "Retries are unsafe here.") == 1
    # "never closed" == "unclosed": the negation moved into the word
    assert (
        judge_shapes.polar_flips("Connections were never closed.", "It left connections unclosed.")
        == 0
    )


def test_negated_asserted() -> None:
    from memsieve.gate import judge_shapes

    assert (
        judge_shapes.negated_asserted(
            "The tool runs in a single transaction.",
            "The tool does not run in a single transaction.",
        )
        == 1
    )
    assert (
        judge_shapes.negated_asserted("The handler is idempotent.", "The handler isn’t idempotent.")
        == 1
    )
    # a word set against another ("instead of a tag") is not asserted
    assert (
        judge_shapes.negated_asserted(
            "Pin the base image by digest, not by tag.",
            "Pin the image by its digest instead of a tag.",
        )
        == 0
    )


def test_a_flipped_polarity_is_never_the_same_fact_and_reads_as_an_update() -> None:
    always_same = _weights(bias=50.0)
    never_update = Weights(always_same.same, 0.5, Model(np.zeros(len(FEATURE_NAMES)), -5.0))
    judge = ClassifierJudge(LexicalTokenEncoder(), never_update)
    flipped, compensated = judge(
        [
            _pair(
                "Mutable tags are allowed in the dev registry.",
                "Mutable tags are prohibited in the dev registry.",
            ),
            # an antonym with a negation added: the polarity is kept
            _pair(
                "The sandbox rejects cards that are not test cards.",
                "The sandbox accepts test cards.",
            ),
        ]
    )
    assert flipped.verdict is Verdict.UPDATE
    assert compensated.verdict is Verdict.SAME


def test_the_same_text_in_another_unicode_form_is_the_same_fact() -> None:
    composed, decomposed = "Naïve datetimes are banned.", "Nai\u0308ve datetimes are banned."
    assert composed != decomposed
    assert judge_repeats.same_text(composed, decomposed)
    assert not judge_repeats.same_text("", "")
    (j,) = ClassifierJudge(_NoEncoder(), _weights(bias=-5.0))([_pair(composed, decomposed)])
    assert j.verdict is Verdict.SAME and "adds to it" not in j.detail


def test_a_clause_moved_to_the_front_is_not_a_swap() -> None:
    from memsieve.gate import judge_shapes, text

    def moved(a: str, b: str) -> bool:
        return judge_shapes.clause_moved(text.analyse(a).words, text.analyse(b).words)

    assert moved("Run make lint before opening a PR.", "Before opening PRs, run make lint.")
    assert moved(
        "The index is rebuilt every Sunday night.", "Every Sunday night, the index gets rebuilt."
    )
    assert not moved(
        "The billing service depends on the auth service.",
        "The auth service depends on the billing service.",
    )
    assert not moved(
        "Validate the JWT signature before reading any claims.",
        "Read the claims before validating the JWT signature.",
    )


def test_diff_positions() -> None:
    from memsieve.gate import judge_shapes

    first, _ = judge_shapes.diff_positions(
        "Shard 3 of the users database is old.", "Shard 7 of the users database is old."
    )
    assert first < 0.3
    assert judge_shapes.diff_positions("It listens on port 9100.", "It listens on port 9464.") == (
        1.0,
        1.0,
    )
    assert judge_shapes.diff_positions("Same words.", "Same words.") == (1.0, 1.0)


def test_averaged_perceptrons() -> None:
    n = len(FEATURE_NAMES)
    member = {"kind": "mlp", "mean": [0.0] * n, "scale": [1.0] * n, "hidden_w": [[0.0]] * n,
              "hidden_b": [0.0], "out_w": [0.0]}  # fmt: skip
    raw = json.dumps(
        {
            "features": list(FEATURE_NAMES),
            "same": {
                "kind": "mean",
                "members": [member | {"out_b": 2.0}, member | {"out_b": -2.0}],
            },
            "same_cut": 0.5,
        }
    )
    w = weights_from_json(raw)
    assert w.same.p(np.ones(n)) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("live", "incoming", "fixed"),
    [
        ("The pipeline requires manual aproval.", "The pipeline requires manual approval.", True),
        ("Do not store tokens in localStorge.", "Do not store tokens in localStorage.", True),
        ("Rob travelled to Norway.", "Rob traveled to Norway.", True),
        # a letter at the end (a plural, another word), a digit, a short word, a reorder
        ("Run the encode step.", "Run the encoder step.", False),
        ("Consume group billing-v1.", "Consume group billing-v2.", False),
        ("Use the main bucket.", "Use the man bucket.", False),
        ("Rob travelled with Ana to Oslo.", "Ana traveled with Rob to Oslo.", False),
        ("The pipeline requires manual aproval.", "The pipeline requires manual approval!", False),
    ],
)
def test_a_misspelt_word_corrected_is_the_same_fact(live: str, incoming: str, fixed: bool) -> None:
    assert judge_repeats.typo_fixed(live, incoming) is fixed
    (j,) = ClassifierJudge(LexicalTokenEncoder(), _weights(bias=-5.0))([_pair(live, incoming)])
    assert (j.verdict is Verdict.SAME) is fixed


def test_one_member_of_an_exclusive_group_swapped_for_another_is_never_the_same_fact() -> None:
    always_same = _weights(bias=50.0)
    judge = ClassifierJudge(LexicalTokenEncoder(), always_same)
    (j,) = judge(
        [
            _pair(
                "Python services use pip-tools for dependency locking.",
                "Python services lock dependencies with uv.",
            )
        ]
    )
    assert j.verdict is not Verdict.SAME
    assert "contrast: incoming has uv; memory has pip" in j.detail


def test_member_swapped_needs_two_members_of_one_group_neither_aligned() -> None:
    def feats(detail: str, unaligned_a: tuple[str, ...], unaligned_b: tuple[str, ...]):  # type: ignore[no-untyped-def]
        veto = Veto("contrast", detail)
        values = np.zeros(len(FEATURE_NAMES))
        return judge_features.PairFeatures(values, (), (veto,), unaligned_a, unaligned_b)

    swapped = "incoming has uv; memory has pip"
    assert judge_rules.member_swapped(feats(swapped, ("pip", "tools"), ("uv",)))
    # a member that aligns with the other side's context is the model's to weigh
    assert not judge_rules.member_swapped(feats(swapped, ("tools",), ("uv",)))
    # an antonym by prefix is no member of an exclusive group
    closed = "incoming has unclosed; memory has closed"
    assert not judge_rules.member_swapped(feats(closed, ("closed",), ("unclosed",)))
    # two members on one side
    assert not judge_rules.member_swapped(
        feats("incoming has uv, poetry; memory has pip", ("pip",), ("uv", "poetry"))
    )


def test_a_code_quoted_name_replaced_is_never_the_same_fact() -> None:
    always_same = _weights(bias=50.0)
    judge = ClassifierJudge(LexicalTokenEncoder(), always_same)
    replaced, kept = judge(
        [
            _pair(
                "Use the `requests` library for HTTP calls in Python services.",
                "Python services should use httpx for HTTP calls.",
            ),
            # the name kept, unquoted: the model's to weigh
            _pair(
                "Use the `requests` library for HTTP calls in Python services.",
                "Python services should make HTTP calls with the requests library.",
            ),
        ]
    )
    assert replaced.verdict is not Verdict.SAME
    assert kept.verdict is Verdict.SAME


def test_code_name_replaced_needs_a_dropped_name_and_new_words() -> None:
    from memsieve.gate import text as gtext

    def replaced(a: str, b: str, unaligned_a: set[str]) -> bool:
        an_a, an_b = gtext.analyse(a), gtext.analyse(b)
        return judge_features.code_name_replaced(a, b, an_a, an_b, unaligned_a)

    live = "Run `ruff` on every commit."
    assert replaced(live, "Run black on every commit.", {"ruff"})
    # dropped, but nothing in its place: a shorter statement, for the model
    assert not replaced(live, "Run it on every commit.", {"ruff"})
    # a word of the name aligned with the other side: a rewording, for the model
    assert not replaced(live, "Run black on every commit.", set())
    # joined or unquoted, the name is still there
    unaligned = {"max", "conns"}
    assert not replaced(
        "Set `max_conns` to the pool size.", "Set maxconns to the pool size.", unaligned
    )
    assert not replaced("Set `max_conns` high.", "Set max_conns to the pool size.", unaligned)


@pytest.mark.parametrize(
    ("live", "incoming", "forbidden"),
    [
        (
            "Use moment.js for date handling in the frontend.",
            "Date handling in the frontend uses date-fns; don't add moment.js.",
            True,
        ),
        # the live text negates too: the same prohibition, reworded
        (
            "OpenAPI specs are generated from code annotations, not written by hand.",
            "We don't hand-write the OpenAPI specs; they're generated from annotations.",
            False,
        ),
        # no name of its own: a rule restated with a negation, for the model
        (
            "Use moment.js for date handling in the frontend.",
            "Date handling in the frontend: don't drop moment.js.",
            False,
        ),
        # a capitalised name the live text has at the start of a sentence is not new
        (
            "Grafana dashboards are provisioned from `ops/dashboards`; UI edits are lost.",
            "Don't edit Grafana dashboards in the UI; they come from ops/dashboards.",
            False,
        ),
    ],
)
def test_name_forbidden(live: str, incoming: str, forbidden: bool) -> None:
    from memsieve.gate import text as gtext

    an_a, an_b = gtext.analyse(live), gtext.analyse(incoming)
    assert judge_features.name_forbidden(live, incoming, an_a, an_b) is forbidden
    (j,) = ClassifierJudge(LexicalTokenEncoder(), _weights(bias=50.0))([_pair(live, incoming)])
    assert (j.verdict is Verdict.SAME) is not forbidden


def test_one_value_changed_in_a_reworded_sentence_is_an_update_given_the_alignment() -> None:
    from memsieve.gate import value_change
    from memsieve.gate.guards import default_guards
    from memsieve.gate.judge_align import Alignment

    live = "The on-call rotation hands over every Monday at 10 AM."
    new = "On-call handover happens every Wednesday at 10 AM."
    inc, cand = _pair(live, new)
    (veto,) = [v for g in default_guards() for v in g(inc, cand)]
    assert veto.guard == "dates"
    # the words differ ("rotation hands over" / "handover happens"): no lexical subject
    assert not value_change.one_value_changed(inc, cand, [veto])

    def alignment(a_best: list[float], b_best: list[float]) -> Alignment:
        a_words = ("call", "rotation", "hands", "every", "monday", "10", "am")
        b_words = ("call", "handover", "happens", "every", "wednesday", "10", "am")
        return Alignment(a_words, np.array(a_best), b_words, np.array(b_best))

    # most other words aligned on both sides: the same sentence, one value changed
    reworded = alignment([1, 0.2, 0.6, 1, 0.8, 1, 1], [1, 0.6, 0.6, 1, 0.8, 1, 1])
    assert value_change.one_value_changed(inc, cand, [veto], reworded)
    # half of the live text's other words left unaligned: not shown to share the subject
    apart = alignment([1, 0.2, 0.3, 0.4, 0.8, 1, 1], [1, 0.6, 0.6, 1, 0.8, 1, 1])
    assert not value_change.one_value_changed(inc, cand, [veto], apart)


def test_a_change_the_incoming_text_alone_announces_is_an_update_whatever_the_model() -> None:
    always_same = _weights(bias=50.0)
    never_update = Weights(always_same.same, 0.5, Model(np.zeros(len(FEATURE_NAMES)), -5.0))
    judge = ClassifierJudge(LexicalTokenEncoder(), never_update)
    announced, both_say_it, plain = judge(
        [
            _pair(
                "The release manager for the iOS app is Ana.",
                "Ben has taken over from Ana as iOS release manager.",
            ),
            # both texts say the change: a rewording of one announcement
            _pair(
                "CI moved to GitHub Actions last quarter.",
                "Last quarter CI moved to GitHub Actions.",
            ),
            _pair("Ana signs off iOS releases.", "iOS releases are signed off by Ana."),
        ]
    )
    assert announced.verdict is Verdict.UPDATE
    assert both_say_it.verdict is Verdict.SAME
    assert plain.verdict is Verdict.SAME


@pytest.mark.parametrize(
    ("text", "announces"),
    [
        ("Ownership of the table has passed to the analytics team.", True),
        ("The user changed their mind: only run the affected tests.", True),
        ("Merge queue has been turned on for the monorepo.", True),
        ("Builds now run on GitHub Actions.", True),
        ("The staging DB is now on Postgres 16.", True),
        ("We no longer squash merge.", True),
        # stop 42: a rule or a value ended, a tool replaced in a trailing clause
        ("The Friday deploy freeze has been lifted.", True),
        ("Quarter-end freezes have been dropped.", True),
        ("The v1 endpoints have been deprecated.", True),
        ("The canary step has been rolled back.", True),
        ("No more headers in responses, plain paragraphs only.", True),
        ("Frontend unit tests use Vitest, replacing Jest.", True),
        ("The warehouse cut over to Snowflake last week.", True),
        ("Moment.js is deprecated in favour of date-fns.", True),
        ("No more than three replicas may be drained at once.", False),
        ("The job was slow until we added an index.", False),
        ("Now and then the cache is cold.", False),
        ("Deploys run from the release branch.", False),
    ],
)
def test_which_words_announce_a_change(text: str, announces: bool) -> None:
    from memsieve.gate.judge_markers import markers

    assert markers(text)[3] is announces
