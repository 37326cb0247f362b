"""Classes of secrets the scanner reads since stop 39 (built on tests/data/secrets_train5.jsonl)."""

from __future__ import annotations

import pytest
from memsieve.capture import secrets


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # Passwords named in more languages, and "new password: …" with a word between.
        ("Contraseña nueva: pixel_1372pelikan. Lección: leerla del gestor.", "pixel_1372pelikan"),
        ("משתמש: svc-crm, סיסמה: 5iYTB+%E+7&.xx. לקח: לעדכן את הכספת.", "5iYTB+%E+7&.xx"),
        ("اسم المستخدم: app_rw كلمة المرور: wmm9.UbZsep5OX-MjVgORW الدرس: تحديث", "wmm9.UbZsep5OX-MjVgORW"),
        ("Pengguna: svc_report, kata sandi: orca@6935harbor%. Pelajaran: simpan.", "orca@6935harbor%"),
        # Vendor formats.
        ('"api_key": "mlsn.' + "b8686b2b" * 8 + '"', "mlsn." + "b8686b2b" * 8),
        ("value was pat-na1-337a4dff-08e2-4e78-abbb-be1ab9281eac", "pat-na1-337a4dff-08e2-4e78-abbb-be1ab9281eac"),
        ("SONAR_TOKEN=sqp_55ff550fba7be4b98ab9202a3555cd925033edbe", "sqp_55ff550fba7be4b98ab9202a3555cd925033edbe"),
        ("curl -d @p.json https://chat.acme.io/hooks/oz1ea6bewnrf8q6ydc2klp6kdm", "oz1ea6bewnrf8q6ydc2klp6kdm"),
        ("TWITCH_OAUTH=oauth:quq49luelasd8mkeok2p5iujxmnpz0", "oauth:quq49luelasd8mkeok2p5iujxmnpz0"),
    ],
)  # fmt: skip
def test_the_value_is_found(text: str, value: str) -> None:
    found = [text[f.start : f.end] for f in secrets.find_secrets(text)]
    assert any(value in f for f in found), found


def test_a_value_the_terminal_wrapped_is_joined_again() -> None:
    text = (
        "The worker had loaded:\n\n```\nDOPPLER_TOKEN=dp.pt.EKm70caTbGhdEwX0twBYUM\n"
        "r3NRrShzr7OxBuAPdcTmM\n```\n(copied from a narrow tmux pane, line wrapped)"
    )
    found = secrets.find_secrets(text)
    assert [f.kind for f in found] == ["doppler_token"]
    assert text[found[0].start : found[0].end].replace("\n", "") == (
        "dp.pt.EKm70caTbGhdEwX0twBYUMr3NRrShzr7OxBuAPdcTmM"
    )
    # Lines of a list are not one value: nothing to join.
    assert secrets.find_secrets("Steps:\nrebuild-the-index\nrestart-workers\n") == []


def test_a_tag_that_is_half_a_token_is_refused() -> None:
    fields = [("tags[0]", "hugging-face"), ("tags[1]", "hf_Ohtd018N9s2uTbsy"), ("tags[2]", "ci")]
    assert list(secrets.scan_fields(fields)) == ["tags[1]"]
    assert secrets.scan_fields([("tags[0]", "release-2026-12"), ("tags[1]", "flaky-test")]) == {}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The key it was using was 'c2cafc11-c44a-4b08-8ff3-8e7300a833e9'. Rotate it.",
         "c2cafc11-c44a-4b08-8ff3-8e7300a833e9"),
        ("For reference, the value in the old .env was '18e07c327ace8314b259e33ec669f7c4'.",
         "18e07c327ace8314b259e33ec669f7c4"),
        ("The key it was using was `a9d4d1ecde112c1190860639a8742fe5-7c2da3af-1e7db50d`.",
         "a9d4d1ecde112c1190860639a8742fe5-7c2da3af-1e7db50d"),
        ("| Integration | Name | Current value |\n|---|---|---|\n"
         "| Jenkins | `JENKINS_API_TOKEN` | 11be5116ed74812f40c24ac51824274229 |",
         "11be5116ed74812f40c24ac51824274229"),
    ],
)  # fmt: skip
def test_a_hex_or_uuid_key_named_by_its_sentence_or_row_is_found(text: str, value: str) -> None:
    found = [text[f.start : f.end] for f in secrets.find_secrets(text)]
    assert value in found, found


@pytest.mark.parametrize(
    "text",
    [
        "The commit that broke it was 'e0a55108bcdf2f229714d321e05fa9c0a61df159'; the token is fine.",
        "The request id was '9d387381-8cd1-495e-9f71-b33aba1a4c14' in the auth service logs.",
        "The idempotency key was '6f1c2a9e-3b7d-4c5e-8f9a-0b1c2d3e4f5a' on both retries.",
        "We rotated the token; see run '5d7c2705403633a8ffe6efd7ee90821a' for the log.",
        "| Job | Commit |\n|---|---|\n| deploy | 5d7c2705403633a8ffe6efd7ee90821a5d7c2705 |",
    ],
)
def test_an_id_or_digest_its_sentence_names_is_kept(text: str) -> None:
    assert secrets.find_secrets(text) == []


def test_a_random_id_in_an_id_field_is_no_token_but_a_mixed_case_one_is() -> None:
    """secrets_train6: 59 of 66 benign lessons were refused for their event ids alone."""
    for eid in ("ce-wkt9l5ygcmwet9evk6c4", "cap_01jwqqg661scahq6ayy78ntjr6"):
        assert secrets.scan_fields([("heading", "Pin images"), ("event_id", eid)]) == {}
    token = "Dw2eSCf4pvZe_TSYwM08awS7E14PVkwu_IUjlHrIUI4TXuhc"
    assert list(secrets.scan_fields([("source.session", token)])) == ["source.session"]


@pytest.mark.parametrize(
    "text",
    [
        'TOKEN="$(vault kv get -field=token secret/ci/registry)" in the deploy script',
        "We log reset requests as /reset?token=[FILTERED]&uid=8812 in nginx.",
        "api_key: ******** and client_secret: [REDACTED].",
        "Incident notes refer to the token as ghp_****MNm3 only.",
        "Documented STRIPE_SECRET_KEY=sk_live_... in the README.",
        "OPENAI_API_KEY=replace-me\nGITHUB_TOKEN=replace-me\nLOG_LEVEL=info",
        ".sops.yaml recipients: age19nymktkdam4nr5qpjx538ujff7773f8auz8mt3jdx7yfnzuvdqfdyukf9h",
        "Faucet sends test BTC to bc1qwcujx9kyyz6m3u9lgcjpex6z7ndcxz3hawkgr4 on signet.",
    ],
)
def test_masks_references_and_public_addresses_are_kept(text: str) -> None:
    assert secrets.find_secrets(text) == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("DOPPLER_TOKEN = 'dp.st.prd.gCN6MDnkgMZVEqBv0ZKjsEBQQWt8XOyNqTSWiYVJoKc'.", "dp.st.prd.gCN6MDnkgMZVEqBv0ZKjsEBQQWt8XOyNqTSWiYVJoKc"),
        ('variable "gitea_token" {\n  type = string\n  default = "27f474b0adc333bdb0aeb6dfd94ca984d37a7fb3"\n}', "27f474b0adc333bdb0aeb6dfd94ca984d37a7fb3"),
        ("keypair: [" + ",".join(str((n * 37) % 256) for n in range(64)) + "]", None),
        ("Cookie: .AspNetCore.Cookies=CfDJ8ePBML9FgJ6PZ_ocEb5hqTyoiKBlc-s0Sq7YQyyC8KS6-gzeZwqvDkWT0DrfZEVV", None),
    ],
)  # fmt: skip
def test_quoted_literals_terraform_defaults_and_key_files_are_found(
    text: str, value: str | None
) -> None:
    found = [text[f.start : f.end] for f in secrets.find_secrets(text)]
    assert found and (value is None or value in found), found
