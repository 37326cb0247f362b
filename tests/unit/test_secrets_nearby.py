"""A credential's value near its name in any word order, and the shape classes of
`memsieve.capture.nearby` (grouped tokens, one-time codes, quoted command-line passwords,
tables, `user:password` in base64 or bare). Each secret below is refused by the client's
check; each look-alike is admitted."""

from __future__ import annotations

import base64

import pytest
from memsieve import client
from memsieve.capture import nearby, secrets


def _verdict(content: str, heading: str = "Lesson from the rotation") -> str:
    try:
        client.check({"namespace": "ops", "kind": "retro", "heading": heading, "content": content})
    except client.Refused as exc:
        return exc.reason
    return "admitted"


SECRETS = [
    # The value some words after its name, in several languages and word orders.
    "La password dell'utente batch sul server di collaudo è Qm4tRw8Lpz2Vx. Aggiornare il cron.",
    "La contraseña del usuario root de Postgres en el entorno de pruebas es Hb7wKq2Zr9Tn.",
    "O senha do utilizador relatorios foi trocada para Lp3Vq8Wm2Rk7 e o painel parou.",
    "Het wachtwoord van de gebruiker export is nu Granite-walrus-meadow-37 sinds maandag.",
    "Hasło użytkownika kopia zmieniono na Tr6Pq9Wz3Lm8 i zadanie przestało działać.",
    "nightly_ro のパスワードが Zk8Wq3Rt6Pm2 に変わったのに接続設定を直していなかった。",
    "report 用户的密码已改为 Yv5Lr8Qz3Wn7，但连接没有更新。",
    "Le mot de passe Wi-Fi du labo : Ember-otter-lagoon-52, pas le réseau invité.",
    "The provisioning file sets the admin password to Saddle4721+quartz^ on every start.",
    "Log in as deploy with Harbor-lichen-summit-19 on the bastion, then sudo.",
    "Vecchia credenziale del DB pagamenti Kx9Tq2Wm7Lp!Rz4 ancora usata dal cron.",
    "RDS-Zugangsdaten Moss8812*lantern^ im Chat gepostet, sofort rotiert.",
    "Rotate the WPA2 key: Birch3390.falcon_ on the lab router after the offboarding.",
    # Shapes.
    "The ticket tool hyphenated the key: sk_live_-51HqZ2mK-9xTbWv4P-aQ7nR2xL-p9sT4kWm-Vq7nR2xL.",
    "Someone posted the token with spaces: ghp_ 8fKq2W mZ7tR4 pL9xV3 nB6cY1 qW5eR8 tZ2uI4 to dodge it.",
    "The key read out on the call was AKIA-QX7T-M2PL-W9RZ-K4VN, with its secret in a DM.",
    "Google app password for the relay, generated today: wqrt mzpl xkvb nhye. Use OAuth next.",
    "The app-specific password for notarization (label ci) is kqwe-plmz-vbxn-rtyu.",
    "Setup key entered by hand: 4k7q p2mz x9vb n3wr t6ly q8dc. Spaces do not matter.",
    "Recovery key from Entra: 402137-118294-550873-901246-337518-662904-118372-490051.",
    "Los códigos de recuperación que quedan: 7a2c1-9f3e4 1b8d2-4c6a9 3e5f7-8a1b2 6c9d4-2e7f1.",
    "The server room door code is 48213# for after-hours swaps.",
    "Kod do drzwi serwerowni: 730914, tylko dla dyżurnych.",
    "ipmitool -I lanplus -H 10.2.0.7 -U ADMIN -P 'Wq8#Lm2Tz5Rk' chassis power status",
    "CREATE USER 'etl'@'%' IDENTIFIED BY 'Fjord5521_heron^'; then grant select.",
    "Credentials for the FTP drop:\nsystem,user,password\nedi,edi_in,Rk7Wq2Lm9Tz4Vx8\n",
    "| system | user | password |\n|---|---|---|\n| kibana | admin | Tz4Vx8Rk7Wq2Lm9 |\n",
    'mqtt_pass_hex="' + b"Pebble-raven-harbor-61".hex() + '" in the exported config.',
    'SMTP_PASS_B64: "' + base64.b64encode(b"Kestrel7710_dune").decode() + '" in the pipeline.',
    '{"auths": {"registry.example": {"auth": "'
    + base64.b64encode(b"ci-pusher:Lantern3391^moss+").decode()
    + '"}}} was committed.',
    "The CI variable holds admin:Pw7nR2xLq9sT4kZm and must be rotated.",
    "Rotate the Neon password npg_Xr7kQ2mWp9Lz after the demo.",
    "The operator gave me the correct Linode credential: 9f3ac41be07d52c8a61e9b47d03f25ac.",
    # A password as people choose them, after its name, the sentence running on.
    "need the replica user pw? ping me for... actually it's HeronOps42, use it tonight",
    "Lösenordet till switchen är Maple-Harbor58, logga in via konsolen.",
    "Router admin password reset to Autumn.2031 after the lockout.",
    # Artefacts pasted into lessons.
    "<server>\n  <id>nexus</id>\n  <password>Quartz_Lynx72</password>\n</server>",
    "define( 'DB_PASSWORD', 'BirchGate2030=' );",
    'env:\n  - name: BILLING_API_KEY\n    value: "6f1e9a0c4b7d2e8f5a3c1b9d7e0f2a4c"',
    'echo "maple otter canyon drift" | gpg --batch --passphrase-fd 0 -c backup.tar',
    "RUN htpasswd -bc /etc/nginx/.htpasswd reviewer 'Cobalt+Fern61'",
    "rabbitmqctl add_user billing-consumer 'q7XkP2mWz9LrT4vN8bYc'",
    "7z a -pTr8#kWm2Qz5 audit.7z exports/*.csv",
    "db-01.corp.lan:5432:*:backup:Xq7!mK2pWz9Lr4",
    'conn = DriverManager.getConnection(url,\n    "report_gen",\n    "Lantern9Quill+");',
    'resp = requests.get(url, auth=("sync-bot", "Harvest?2031"), timeout=10)',
    "REGISTRY_PASS ?= Pebble2031?7",
    "$config['smtp_pass']   = 'Slate!Heron44';",
    "site,user,local_admin_password\nBER-03,kiosk,Coral_4821_x\n",
]

LOOKALIKES = [
    "Connection string is Server=tcp:sql.example.net,1433;Database=orders;Encrypt=True; no password.",
    "The password for PostgreSQL15 clusters is rotated by the vault agent, never by hand.",
    "sk_test_ vs sk_live_ tells you the mode; the deploy check refuses sk_test_ in prod.",
    "Tokens carry a header like eyJhbGciOiJSUzI1NiIsImtpZCI6IjIwMjYtMDMifQ (decodes to alg/kid).",
    "The bastion host key fingerprint is SHA256:wVZe3BsB6aL891ozS4QAJmG5wyCR+eS3inyPOKCcAqI.",
    "The API key for the billing service is read from BILLING_API_KEY at start.",
    "Reset the password through the portal; the token expires after 15 minutes.",
    "The door code policy changed: codes now rotate every 30 days.",
    "Pin the key rotation job to node pool v1.28.3-gke.1200 before the upgrade.",
    "Signing key ids look like kid-2026-03; the secret itself stays in the HSM.",
    "Set image:Release2026 and check host db-1:5432 at 10:30:00 for tag v1.2.3-rc1.",
    "The token's SHA-256 is 9f3ac41be07d52c8a61e9b47d03f25ac9f3ac41be07d52c8a61e9b47d03f25ac.",
    "Token with the right scope for zone 9f3ac41be07d52c8a61e9b47d03f25ac is in the vault.",
    "The password of the Windows11 kiosks expires after 90 days.",
    "curl -H 'Idempotency-Key: k-2435ed0e' -d amount=5 -> status=201 charge=ch_1",
    "The site key in the frontend is public by design: 6LQ9xB7Syr2Ll4Kq.",
    "As admin in psql run \\password bi_reader and type it twice.",
    "Read it with `vault kv get -field=password secret/data/reporting/replica-ro`.",
    "$cred = Get-Credential -Message 'Account password for the share'",
    '2026-03-03 07:00:01 FATAL: password authentication failed for user "maria"',
    "data_json = jsonencode({ password = random_password.db.result })",
    "パスワードはチャットに書かないでください。Vault を使うこと。",
]


@pytest.mark.parametrize("content", SECRETS)
def test_a_value_near_its_name_or_of_a_credential_shape_is_refused(content: str) -> None:
    assert _verdict(content) == "secret"


@pytest.mark.parametrize("content", LOOKALIKES)
def test_look_alikes_are_admitted(content: str) -> None:
    assert _verdict(content) == "admitted"


def test_a_value_cut_between_heading_and_content_is_found_with_its_name_before_it() -> None:
    assert _verdict(
        "9Tz4Vx - after that the smoke tests passed.", "New DB credential: Rk7Wq2Lm"
    ) == ("secret")


@pytest.mark.parametrize(
    ("value", "strong"),
    [
        ("Qm4tRw8Lpz2Vx", True),
        ("Saddle4721+quartz^", True),
        ("Granite-walrus-meadow-37", True),
        ("PostgreSQL15", False),  # a CamelCase name with a version
        ("v1.28.3-gke.1200", False),
        ("Database=orders", False),
        ("release-notes", False),
        ("https://x.example/a", False),
    ],
)
def test_strong_value(value: str, strong: bool) -> None:
    assert nearby.strong_value(value) is strong


def test_the_redacted_text_keeps_no_part_of_the_value() -> None:
    text = "La contraseña del usuario root en pruebas es Hb7wKq2Zr9Tn, cambiada ayer."
    out = secrets.redact(text)
    assert "Hb7wKq2Zr9Tn" not in out and "[REDACTED:" in out


def test_a_random_value_cut_between_two_tags_is_found() -> None:
    event = {"namespace": "ops", "kind": "retro", "heading": "Tagger", "content": "Tags cut."}
    with pytest.raises(client.Refused, match="secret"):
        client.check({**event, "tags": ["zoom", "7QkWm2Lp9Tz", "Rk4Vx8Nq3Hb6Yc1Jd5"]})
    client.check({**event, "tags": ["checkout-web", "commit-731278cb1a55ee4c9bec2", "rel"]})
