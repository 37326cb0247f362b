"""Values said as phrases (`memsieve.gate.phrases`): a changed place in a period, counted
span, ratio or region is vetoed by a hard guard; the same value said another way is not.
The sentences are the team's own, not the probe sets' (`test_guards_probes.py` bounds those).
"""

from __future__ import annotations

import pytest
from memsieve.gate import guards, phrases, text
from memsieve.gate.decide import Candidate, Incoming

HARD = (guards.numbers_guard, guards.identifiers_guard, guards.dates_guard)


def _hard(old: str, new: str) -> list[str]:
    inc = Incoming("ns", "pattern", "", new, "h-new")
    cand = Candidate("m1", "pattern", "", old, "h-old", 0.01)
    return sorted({v.guard for g in HARD for v in g(inc, cand)})


@pytest.mark.parametrize(
    ("old", "new", "guard"),
    [
        # where in a period
        ("The audit starts in early March.", "The audit starts in late March.", "dates"),
        ("Budgets are set at the start of Q2.", "Budgets are set at the end of Q2.", "dates"),
        ("Demos happen at the end of each sprint.", "Demos happen mid-sprint.", "dates"),
        ("The migration lands in mid-2026.", "The migration lands in early 2026.", "dates"),
        # which counted span
        ("Interns pair with a mentor in their first week.",
         "Interns pair with a mentor in their second week.", "dates"),
        ("Trials convert after the first month.", "Trials convert after the first year.",
         "dates"),
        ("Payouts run on the first business day of the month.",
         "Payouts run on the last business day of the month.", "dates"),
        # the side of one moment, the counting convention
        ("Tag the release before the standup.", "Tag the release after the standup.", "dates"),
        ("Reindexing runs during business hours.", "Reindexing runs outside business hours.",
         "dates"),
        ("Invoices are due in 30 business days.", "Invoices are due in 30 calendar days.",
         "dates"),
        ("Quotas reset with the fiscal year.", "Quotas reset with the calendar year.", "dates"),
        # a zone said in words, today by a part of it, the minute of every hour, a holiday
        ("Standup is at 10:00 Eastern time.", "Standup is at 10:00 Mountain time.", "dates"),
        ("The demo is tomorrow afternoon.", "The demo is this afternoon.", "dates"),
        ("Probes fire at the top of every hour.", "Probes fire at half past every hour.",
         "dates"),
        ("Support is thin during Lunar New Year.", "Support is thin during Golden Week.",
         "dates"),
        ("The Pune office closes on Diwali.", "The Pune office closes on Holi.", "dates"),
        ("Badges are issued at the end of their first week.",
         "Badges are issued at the start of their first week.", "dates"),
        # a period said with an article
        ("Keep the canary for a fortnight.", "Keep the canary for a week.", "numbers"),
        # ratios said in words
        ("Autoscaling doubles the pods at peak.", "Autoscaling triples the pods at peak.",
         "numbers"),
        ("Traffic tripled after the launch.", "Traffic quadrupled after the launch.", "numbers"),
        ("Staging gets half the memory of prod.", "Staging gets a third of the memory of prod.",
         "numbers"),
        # a cron schedule, an ISO duration, the n-th full week
        ("Backups run on `30 2 * * *`.", "Backups run on `30 2 * * 1`.", "identifiers"),
        ("Tokens live for P7D.", "Tokens live for P1M.", "numbers"),
        ("The offsite is the first full week of May.", "The offsite is the last full week of May.",
         "dates"),
        # the unit a value is kept in; a scale said with a half
        ("Durations are logged in seconds.", "Durations are logged in milliseconds.",
         "numbers"),
        ("The list holds half a million addresses.",
         "The list holds a million and a half addresses.", "numbers"),
        # names
        ("The batch cluster is named orion.", "The batch cluster is named vega.",
         "identifiers"),
        ("The VMs run in eastus2.", "The VMs run in westus2.", "identifiers"),
        ("Backups go to uksouth.", "Backups go to ukwest.", "identifiers"),
        ("Logs ship to the bucket org-audit-logs.", "Logs ship to the bucket org-audit-log.",
         "identifiers"),
        ("Traffic enters through the gateway edge-gw-eu.",
         "Traffic enters through the gateway edge-gw-us.", "identifiers"),
        ("The cron wrapper is named nightly-sync.", "The cron wrapper is named hourly-sync.",
         "identifiers"),
    ],
)  # fmt: skip
def test_a_changed_value_said_as_a_phrase_is_vetoed(old: str, new: str, guard: str) -> None:
    assert guard in _hard(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The office is staffed on weekdays.", "The office is staffed Monday through Friday."),
        ("Batch jobs pause on weekends.", "Batch jobs pause on Saturday and Sunday."),
        ("The licence lapses on 11/30/2026.", "The licence lapses on 30 November 2026."),
        ("The licence lapses on 30/11/2026.", "The licence lapses on November 30, 2026."),
        ("Invoices go out on the 21st.", "Invoices go out on the twenty-first."),
        ("A thirty-second grace period applies.", "A 30 second grace period applies."),
        ("The digest is mailed at 7:00 am.", "The digest is mailed at seven in the morning."),
        ("Reports rebuild every 45 minutes.", "Reports rebuild every three quarters of an hour."),
        ("Health checks run every 15 minutes.", "Health checks run every quarter of an hour."),
        ("Each shift is 24 hours.", "Each shift is one whole day."),
        ("Releases need two approvals.", "Releases need a pair of approvals."),
        ("Three quarters of the spend is compute.", "Compute is 75% of the spend."),
        ("The rewrite ships in H1.", "The rewrite ships in the first half of the year."),
        ("The pilot runs in Q3 2026.", "The pilot runs from July to September 2026."),
        ("Sessions use a 30-minute window.", "Sessions use a half-hour window."),
        ("We double the pool at peak.", "At peak the pool is multiplied by two."),
        ("We halve the batch on errors.", "On errors the batch is cut to 50%."),
        ("The demo is at the end of the sprint.", "The demo closes the sprint."),
        ("Refunds take a fortnight.", "Refunds take 14 days."),
        ("The VMs run in westeurope.", "The VMs run in West Europe."),
        # a converse names another moment; a negation turns the side round; "working" days
        ("Lint runs before the tests.", "The tests run after lint."),
        ("Never reindex during business hours.", "Reindex only outside business hours."),
        ("Reply within 2 business days.", "Reply within two working days."),
        ("Standup is at 9am PST.", "Standup is at 9am Pacific time."),
        ("The demo is this afternoon.", "The demo is today."),
        ("The list holds half a million addresses.", "The list holds 500,000 addresses."),
        ("Caches flush every 5 seconds.", "Caches flush every 5,000 milliseconds."),
        ("Tokens live for P7D.", "Tokens live for seven days."),
        ("The job times out after PT90M.", "The job times out after 90 minutes."),
    ],
)  # fmt: skip
def test_the_same_value_said_another_way_is_not_vetoed(old: str, new: str) -> None:
    assert _hard(old, new) == []


def test_ambiguous_slash_dates_and_adjectives_are_left_as_written() -> None:
    # 03/04/2026 may be either order; "a double album" multiplies nothing.
    assert phrases.rewrite("Due 03/04/2026.") == "Due 03/04/2026."
    assert phrases.soft_values("It was a double album.") == set()
    assert "ratio:2" in text.analyse("Traffic doubled overnight.").soft_numbers


def test_a_plural_slot_noun_before_a_verb_is_no_slot() -> None:
    assert text.analyse("Instances auto-stop at night.").slot_names == frozenset()
    assert text.analyse("The instance db-main-1 stops.").slot_names == {"db-main-1"}


def test_an_address_that_differs_by_a_dash_is_no_restatement() -> None:
    from memsieve.gate import judge_variants

    assert not judge_variants.surface_same(
        "Alerts are sent from no-reply@example.org.", "Alerts are sent from noreply@example.org."
    )
    assert judge_variants.surface_same(
        "Alerts are sent from noreply@example.org.", "Alerts are sent from  noreply@example.org"
    )
