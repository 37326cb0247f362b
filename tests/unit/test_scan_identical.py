"""The secret scanner and the capture policy give byte-identical outputs to the
implementation the committed digests were taken from (tests/data/scan_digests.json), on
every corpus of `tests.support.scan_outputs`: findings per text and per field, redacted
text, verdicts. A speed-up must not move one offset; a change meant to change outputs
rewrites the digests (`python -m tests.support.scan_outputs --write`) and says why."""

from __future__ import annotations

import hashlib
import json

import pytest

from tests.support import scan_outputs


@pytest.mark.parametrize("name", list(scan_outputs.corpora()))
def test_outputs_are_identical_to_the_reference(name: str) -> None:
    want = json.loads(scan_outputs.DIGESTS.read_text())[name]
    h = hashlib.sha256()
    n = 0
    for line in scan_outputs.lines(name):
        h.update(line.encode() + b"\n")
        n += 1
    assert n == want["items"]
    assert h.hexdigest() == want["sha256"], (
        f"{name}: outputs differ; diff `python -m tests.support.scan_outputs --dump DIR` "
        "against the same dump of the reference commit"
    )
