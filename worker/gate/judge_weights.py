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


def model_from_obj(obj: dict[str, Any] | list[float] | None) -> Model | None:
    if obj is None:
        return None
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


@dataclass(frozen=True)
class Weights:
    same: Model
    same_cut: float
    update: Model | None
    update_cut: float = 0.5


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
    return Weights(
        same,
        float(obj["same_cut"]),
        model_from_obj(obj.get("update")),
        float(obj.get("update_cut", 0.5)),
    )


def _sigmoid(v: float) -> float:
    return float(1.0 / (1.0 + np.exp(-v)))
