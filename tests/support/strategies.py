"""Hypothesis strategies for raw broker items: event-like dicts, any JSON value, any text."""

from __future__ import annotations

from hypothesis import strategies as st

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"])
    | st.sampled_from(["\x00", "\ufeff", "\u0301"]),
    max_size=80,
)
event_like = st.fixed_dictionaries(
    {
        "namespace": st.sampled_from(
            ["prop", "prop-b", "", "x'; DROP TABLE memories;--", "../../etc", "Prop"]
        )
        | text,
        "kind": st.sampled_from(["retro", "correction", "failure", "pattern", "gossip", ""]),
        "heading": text,
        "content": text | st.sampled_from(["  \n ", "x" * 25_000]),
    },
    optional={
        "event_id": st.sampled_from(["ok-1", "bad id", ""]) | st.uuids().map(str),
        "tags": st.lists(text, max_size=5),
        "occurred_at": st.sampled_from(["2026-01-01T00:00:00Z", "yesterday", 5]),
        "extra": json_values,
    },
)
raw_items = event_like | json_values | text
