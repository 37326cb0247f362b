"""Rewordings the guards no longer veto (stop 42), each class beside the trap it must still
catch: values in shorthand (`memsieve.gate.shorthand`: a billion glued as "B", availability
in nines, a clock time placed by a part of the day), a tool and its file, a file or a config
key said in words, a port glued to a path, a compound inflected or with a synonym after its
prefix, a quantity with an adjective before its unit, a US zone after a clock time, two
members of one contrast group that say the same value, "go" the verb, an acronym's
possessive at a sentence's end; billing in advance / in arrears as a contrast; and the
polarity rule's opposites and restatements. The sentences are the team's own, not the
training sets'."""

from __future__ import annotations

import pytest
from memsieve.gate import guards, judge_shapes, shorthand, text
from memsieve.gate.decide import Candidate, Incoming


def _vetoes(old: str, new: str) -> list[str]:
    inc = Incoming("ns", "pattern", "", new, "h-new")
    cand = Candidate("m1", "pattern", "", old, "h-old", 0.01)
    return sorted({v.guard for g in guards.default_guards() for v in g(inc, cand)})


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Bump the Node version in the Makefile.", "Bump the Node version for Make."),
        ("The Jenkinsfile runs the lint stage first.", "Jenkins runs the lint stage first."),
        ("Keep secrets out of Dockerfiles.", "Keep secrets out of Docker build files."),
        ("`docker-compose.override.yml` is git-ignored.",
         "The Docker Compose override file is git-ignored."),
        ("`pre-commit-config.yaml` pins ruff.", "The pre-commit config file pins ruff."),
        ("Gunicorn's max_requests is 1000.", "Gunicorn restarts a worker after max requests of 1000."),
        ("The importer raises batch_size_limit to 500.",
         "The importer raises the batch size limit to 500."),
        ("The metrics exporter listens on :9100/metrics.",
         "The metrics exporter serves /metrics on port 9100."),
        ("Nightly jobs re-index the catalog.", "The catalog is re-indexed nightly."),
        ("Mock payments in non-prod stacks.", "Mock payments in non-production stacks."),
        ("Sessions expire after 15 inactive minutes.", "Sessions expire after 15 minutes."),
        ("Alert after 3 consecutive days of failures.", "Alert after three days of failures."),
        ("The release train leaves at 11 AM Eastern.", "The release train leaves at 11:00 ET."),
        ("Big migrations need a design review.", "Large migrations need a design review."),
        ("Finish the rollout before Friday.", "End the rollout before Friday."),
        ("All downloads go through the Artifactory proxy.",
         "Use the Artifactory proxy for every Python download."),
        ("The cache is faster than the API's.", "The cache is faster than the APIs."),
        # values in shorthand (`memsieve.gate.shorthand`)
        ("Reviews take 40% of the week.", "Reviews take two fifths of the week."),
        ("We distil the 13B model into a smaller one.",
         "We distil the 13 billion parameter model into a smaller one."),
        ("The embeddings table has 1.2B rows.", "The embeddings table has 1.2 billion rows."),
        ("The corpus is 40B tokens.", "The corpus is forty billion tokens."),
        ("The raise was $1.5B.", "The raise was $1.5 billion."),
        ("Checkout must stay at 99.95% or better; the API at 99.99%.",
         "Checkout must stay at 99.95% or better; the API at four nines."),
        ("Object storage promises 99.999% durability.",
         "Object storage promises five 9s of durability."),
        ("The 7B model needs 16 GB.", "The 7 billion parameter model needs 16 GB."),
        ("The cleanup cron runs at half past ten in the evening.",
         "The cleanup cron runs at 22:30."),
        ("Backups run at quarter to eight at night.", "Backups run at 19:45."),
        ("The digest goes out at half past seven in the morning.",
         "The digest goes out at 07:30."),
        ("The freeze lifts at half past two at night.", "The freeze lifts at 02:30."),
    ],
)  # fmt: skip
def test_the_same_fact_said_another_way_is_not_vetoed(old: str, new: str) -> None:
    assert _vetoes(old, new) == []


@pytest.mark.parametrize(
    ("old", "new", "guard"),
    [
        ("The Makefile builds the docs.", "The Rakefile builds the docs.", "entities"),
        ("Gunicorn's max_requests is 1000.", "Gunicorn's max_requests_jitter is 1000.",
         "identifiers"),
        # a piece of the other's own name does not say the key in words
        ("The flag new_search gates the search page.",
         "The flag new_nav gates the search page.", "identifiers"),
        ("The metrics exporter listens on :9100/metrics.",
         "The metrics exporter serves /metrics on port 9200.", "numbers"),
        ("Mock payments in non-prod stacks.", "Mock payments in pre-prod stacks.", "compounds"),
        ("Sessions expire after 15 inactive minutes.", "Sessions expire after 30 minutes.",
         "numbers"),
        ("The release train leaves at 11 AM Eastern.", "The release train leaves at 11:00 PT.",
         "dates"),
        ("Standup is at 10:00 Central European Time.", "Standup is at 10:00 CT.", "dates"),
        ("Big migrations need a design review.", "Small migrations need a design review.",
         "contrast"),
        ("Write the service in Go.", "Write the service in Python.", "contrast"),
        # values in shorthand
        ("Reviews take 40% of the week.", "Reviews take one fifth of the week.", "numbers"),
        ("Serve the 7B model on one GPU.", "Serve the 70B model on one GPU.", "numbers"),
        ("The SLO is three nines.", "The SLO is four nines.", "numbers"),
        ("The SLO is 99.9%.", "The SLO is five nines.", "numbers"),
        ("The cleanup cron runs at half past ten in the evening.",
         "The cleanup cron runs at 10:30.", "dates"),
        ("Reports go out at six thirty in the evening.", "Reports go out at 6:30 am.", "dates"),
        ("Support plans are billed in advance.", "Support plans are billed in arrears.",
         "contrast"),
        ("Keys rotate 30 days after account creation.",
         "Keys rotate 30 days after account closure.", "contrast"),
    ],
)  # fmt: skip
def test_a_changed_value_is_still_vetoed(old: str, new: str, guard: str) -> None:
    assert guard in _vetoes(old, new)


def test_an_acronyms_possessive_at_a_sentences_end_is_the_acronym() -> None:
    assert text.analyse("Its latency is lower than the API's.").entities == {"api"}
    assert text.analyse("Its latency is lower than the PR's.").entities == {"pr"}


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The linter follows the repo's editorconfig.", "The linter ignores the repo's editorconfig."),
        ("The client throws on unknown fields.", "The client swallows unknown fields."),
        ("The exporter compresses each batch.", "The exporter sends each batch uncompressed."),
        ("The trial was extended to 30 days.", "The trial was shortened to 30 days."),
        ("With warmup the loss converges.", "With warmup the loss diverges."),
        ("Read latency improved after the index change.",
         "Read latency degraded after the index change."),
        ("The alert escalates after 10 minutes.", "The alert is silenced after 10 minutes."),
        ("The bucket keeps objects for 90 days.", "The bucket purges objects after 90 days."),
        ("Use shorter timeouts for health checks.", "Use longer timeouts for health checks."),
        ("The cluster runs in a single zone.", "The cluster runs in multiple zones."),
        ("The autoscaler reacts quickly to spikes.", "The autoscaler reacts slowly to spikes."),
    ],
)  # fmt: skip
def test_a_word_traded_for_its_opposite_flips_the_polarity(old: str, new: str) -> None:
    assert judge_shapes.polar_flips(old, new) >= 1


def test_an_opposite_under_a_negation_is_no_flip() -> None:
    assert judge_shapes.polar_flips("The loader never deletes rows.", "The loader keeps rows.") == 0


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Celery beat picks up schedule changes.", "Celery beat fails to pick up schedule changes."),
        ("The SSO app provisions users on first login.",
         "The SSO app refuses to provision users on first login."),
        ("The agent reaches the metadata server.", "The agent is unable to reach the metadata server."),
    ],
)  # fmt: skip
def test_a_verb_that_negates_the_next_one_reads_as_a_negation(old: str, new: str) -> None:
    assert text.analyse(new).negated and not text.analyse(old).negated


def test_a_failure_that_is_no_negation_is_not_one() -> None:
    # "fails" alone, or "fails" before a noun, says what happened, not "does not".
    assert not text.analyse("The build fails when the cache is cold.").negated
    assert not text.analyse("Deploys failed today.").negated


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # a comparison from its other end
        ("The Go build is faster than the Java build.", "The Java build is slower than the Go build."),
        ("Staging has fewer nodes than production.", "Production has more nodes than staging."),
        ("Spot runners are cheaper than on-demand ones.",
         "On-demand runners are more expensive than spot ones."),
        # a rule said from its other side
        ("The gateway rejects requests that carry no token.",
         "The gateway accepts only requests that carry a token."),
        ("Never leave the debug port open after a session.",
         "Always close the debug port after a session."),
    ],
)  # fmt: skip
def test_a_statement_from_its_other_side_is_no_flip(old: str, new: str) -> None:
    assert judge_shapes.polar_flips(old, new) == 0


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The Go build is faster than the Java build.", "The Go build is slower than the Java build."),
        ("The gateway rejects requests that carry no token.",
         "The gateway accepts requests that carry no token."),
        ("Only admins can enable the flag.", "Only admins can disable the flag."),
    ],
)  # fmt: skip
def test_the_same_sides_with_the_opposite_word_is_a_flip(old: str, new: str) -> None:
    assert judge_shapes.polar_flips(old, new) >= 1


def test_a_bare_b_after_a_number_stays_bytes() -> None:
    # "512B" with no counted noun after it is a size, and a lower-case "b" is never a billion.
    assert shorthand.rewrite("The header is capped at 512B.") == "The header is capped at 512B."
    assert shorthand.rewrite("a 7b model") == "a 7b model"
    assert shorthand.rewrite("a 7B model") == "a 7 billion model"
    assert _vetoes("The header is capped at 512B.", "The header is capped at 512 bytes.") == []
