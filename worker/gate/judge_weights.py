"""The pair classifier's trained weights: the models' forward pass (numpy) and their loader.

Written by scripts/train_judge.py into worker/gate/data/judge_classifier.json, checked on load
against the feature list they were trained on (`memsieve.gate.judge_features.FEATURE_NAMES`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np
from memsieve.gate.judge_features import FEATURE_NAMES


@dataclass(frozen=True)
class Model:
    """A logistic model (`hidden` None: p = sigmoid(x @ out_w + out_b) over raw features) or
    a one-hidden-layer perceptron over standardised features (ReLU, then logistic)."""

    out_w: np.ndarray
    out_b: float
    mean: np.ndarray | None = None
    scale: np.ndarray | None = None
    hidden_w: np.ndarray | None = None  # (features, units)
    hidden_b: np.ndarray | None = None

    def p(self, x: np.ndarray) -> float:
        if self.hidden_w is None:
            return _sigmoid(float(x @ self.out_w + self.out_b))
        assert self.mean is not None and self.scale is not None and self.hidden_b is not None
        h = np.maximum(0.0, ((x - self.mean) / self.scale) @ self.hidden_w + self.hidden_b)
        return _sigmoid(float(h @ self.out_w + self.out_b))


class MeanModel:
    """The mean probability of several models (perceptrons that differ in their seeds). When
    they are perceptrons over the same standardisation (as train_judge.py writes them), their
    hidden layers run as one matrix product."""

    def __init__(self, members: tuple[Model, ...]) -> None:
        self.members = members
        first = members[0]
        self._stacked = (
            first.mean is not None
            and first.scale is not None
            and all(
                m.hidden_w is not None
                and m.mean is not None
                and m.scale is not None
                and np.array_equal(m.mean, first.mean)
                and np.array_equal(m.scale, first.scale)
                for m in members
            )
        )
        if self._stacked:
            self._mean, self._scale = first.mean, first.scale
            self._hidden_w = np.concatenate([m.hidden_w for m in members], axis=1)  # type: ignore[misc]
            self._hidden_b = np.concatenate([m.hidden_b for m in members])  # type: ignore[misc]
            self._units = np.cumsum([0] + [len(m.out_w) for m in members])
            self._out_w = np.concatenate([m.out_w for m in members])
            self._out_b = np.array([m.out_b for m in members])

    def p(self, x: np.ndarray) -> float:
        if not self._stacked:
            return float(np.mean([m.p(x) for m in self.members]))
        h = np.maximum(0.0, ((x - self._mean) / self._scale) @ self._hidden_w + self._hidden_b)
        logits = np.add.reduceat(h * self._out_w, self._units[:-1]) + self._out_b
        return float(np.mean(1.0 / (1.0 + np.exp(-logits))))


def model_from_obj(obj: dict[str, Any] | list[float] | None) -> Model | MeanModel | None:
    if obj is None:
        return None
    if isinstance(obj, dict) and obj.get("kind") == "mean":
        members = [model_from_obj(m) for m in obj["members"]]
        return MeanModel(tuple(m for m in members if isinstance(m, Model)))
    if isinstance(obj, list):  # logistic weights, bias first (feature "bias" is 1.0)
        w = np.asarray(obj, dtype=np.float64)
        return Model(w, 0.0)
    arr = {k: np.asarray(v, dtype=np.float64) for k, v in obj.items() if k != "kind"}
    return Model(
        arr["out_w"],
        float(arr["out_b"]),
        arr.get("mean"),
        arr.get("scale"),
        arr.get("hidden_w"),
        arr.get("hidden_b"),
    )


# Where the overlap cut reads a pair's share of common content words.
_JACCARD = FEATURE_NAMES.index("jaccard")


@dataclass(frozen=True)
class Weights:
    same: Model | MeanModel
    same_cut: float
    update: Model | MeanModel | None
    update_cut: float = 0.5
    # Pairs whose content words are nearly one set (Jaccard >= overlap_from: PAWS' shape,
    # the same words reordered, where a swap changes the fact) have their own cut of P(same),
    # never under same_cut; train_judge.py chooses both out of fold. None: one cut for all.
    overlap_from: float | None = None
    overlap_cut: float = 0.0

    def cut_for(self, values: np.ndarray) -> float:
        """The cut of P(same) for a pair with these features."""
        if self.overlap_from is not None and values[_JACCARD] >= self.overlap_from:
            return max(self.same_cut, self.overlap_cut)
        return self.same_cut


@lru_cache(maxsize=1)
def load_weights() -> Weights:
    """The shipped weights (checked against the feature list they were trained on)."""
    raw = (
        resources.files("memsieve.gate")
        .joinpath("data/judge_classifier.json")
        .read_text(encoding="utf-8")
    )
    return weights_from_json(raw)


def weights_from_json(raw: str) -> Weights:
    obj = json.loads(raw)
    if list(obj.get("features", ())) != list(FEATURE_NAMES):
        raise ValueError("judge weights were trained on other features; rerun train_judge.py")
    same = model_from_obj(obj["same"])
    assert same is not None
    overlap = obj.get("overlap_cut")
    return Weights(
        same,
        float(obj["same_cut"]),
        model_from_obj(obj.get("update")),
        float(obj.get("update_cut", 0.5)),
        None if overlap is None else float(overlap["from"]),
        0.0 if overlap is None else float(overlap["cut"]),
    )


def _sigmoid(v: float) -> float:
    return float(1.0 / (1.0 + np.exp(-v)))
