"""Values that are no secret by construction (memsieve.capture.benign): each class is kept,
and a real secret beside it, or dressed like it, is still found."""

from __future__ import annotations

import pytest
from memsieve.capture import secrets

GITHUB = "ghp_" + "R8xq2LmZ7VtK4wPbN9cHs3JdF6gYa1QeU5oT"  # 36 characters after the prefix
AWS = "AKIA" + "QX7P4ZN2K9LM3RTB"

BENIGN = {
    "sops": "db_password: ENC[AES256_GCM,data:V7VZ7PknnqkyGp5h5BRKdBqIxdz/Xjlt,"
    "iv:YfKuCsNqL79s1at00Ac/k+EUUnOqqPLNeMemHTDy73I=,tag:sQvaMYrgeyq2ggcvUYC2+g==,type:str]",
    "ansible vault": "vault_db_password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n"
    "  62313365396662343061393464336163383764373764613633653634306231386433626436623361\n"
    "  6134333665353966363534333632666535333761666131620a663537646436643839616531643561",
    "vault transit": "The API stores vault:v1:8SDd3WHDOjf7mq69CyCqYjBXAiQQAVZRkFM13ok481zoCmHnSeDX9vyf7w== "
    "and decrypts it per request.",
    "kms blob": "The encrypted config value AQICAHtW9idOI4G3M28C838G73c+gpSFwZMyblxytPtX4xa+g3YTVniH8Sbc9"
    "NK5trLbIFlzl99L2QzljJ231Qd+J3SswW7fF4nRanaLPTmv5sVofq5Kn/7RGba3sfTd2x40omzzNfMIXLIqU1ycZJ"
    " is decrypted at start-up.",
    "sealed secret": "encryptedData.password: Ag"
    + "O9+msZ1WZ+ZenQNIri/xFtR3saw21kzQN6rCSI+cpVxvnu6kDeBABDAKFop708oLLcel" * 4
    + " was sealed for the old controller key.",
    "arn": '{"name": "DB_PASSWORD", "valueFrom": '
    '"arn:aws:secretsmanager:eu-west-1:379286629873:secret:orders/db-password-AbCdEf"}',
    "parameter expansion": "SESSION_SECRET: ${SESSION_SECRET:?set SESSION_SECRET in .env}",
    "shell check": ': "${SMOKE_TOKEN:?export SMOKE_TOKEN first}"',
    "stand-in": "PARTNER_API_KEY=<ask #team-integrations>\nUsing token: [MASKED]",
    "placeholder url": "Docs show `postgresql://USER:PASSWORD@HOST:5432/DBNAME?sslmode=require`.",
    "angle url": "use `mongodb+srv://<usuario>:<senha>@cluster0.example.net/app`",
    "signature": "X-Signature-256: sha256=a34771e29f90b2e1da605aa3dbc3d6c8a8a3cb59036b272d51a3fc8d99b4727d",
    "ipfs": "Now we store ipfs://bafybei6wtwldwt3p6pswutgykcu3d6ntauvd6h3bmooa2rxnibxstmmd6j",
    "known_hosts": "the bastion entry was hashed: `|1|mkJFTc6grWkIhl+dl538cuqk0No=|"
    "w9Oeu+zzyFEZ1PiOYLPpkm+Yx6Q= ssh-ed25519`",
    "wireguard public": "[Peer]\nPublicKey = T/Ll+UcJu3djLpyNf21aawCH3uVdyd3yJfXg/eokqK8=\n"
    "AllowedIPs = 10.60.3.0/24",
    "jwk": '{"kty": "RSA", "kid": "k1", "alg": "RS256", "n": "lbu5T9r4EaOEbgU-HrlSIJxi3mlbOBqy9ZUB4Gdg'
    'LWBi2wQR-btYIOH358raj5JjdQLP_gup-rYL0Am4uPzxviOTybAi7qsr4TDBcwH79o47AGuznaQZg", "e": "AQAB"}',
    "pin": 'Pin the SPKI hash (pin-sha256="LGThxs9+NgjiBiwpRMSqRVZ8sD9y09FQ/yIB2YB4zMc=").',
    "jwks kid": '{"keys": [{"kty": "RSA", "kid": "Y0ZjzupKqutt9cLWq9djus", "use": "sig", "e": "AQAB"}]}',
    "published samples": "jwt.io's sample eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkw"
    "IiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c "
    "and Stripe's sk_test_4eC39HqLyjWDarjtT1zdp7dc are documentation.",
    "ellipsis placeholders": "Documented as OPENAI_API_KEY=sk-... and GITHUB_TOKEN=ghp_... for the type.",
    "external secret": "  data:\n    - secretKey: password\n      remoteRef:\n        key: prod/db",
    "empty keys in a row": ".env.example:\nSTRIPE_SECRET_KEY=\nSENDGRID_API_KEY=\nSESSION_SECRET=\n",
    "csr": "-----BEGIN CERTIFICATE REQUEST-----\n"
    "MIICpDCCAYwCAQC2GB0uo4M+9VvWTzWRWgE9ne57BMGojCwGPGI4JlFqtQ7k1Zdd\n"
    "-----END CERTIFICATE REQUEST-----",
}


@pytest.mark.parametrize("name", list(BENIGN))
def test_no_secret_by_construction_is_kept(name: str) -> None:
    assert secrets.find_secrets(BENIGN[name]) == []


SECRET = {
    # A default is a value: only `${VAR}`, `:?` and `:+` forms are references.
    "expansion default": ("DB_PASSWORD: ${DB_PASSWORD:-Tr4ctor_99x!Zq}", "Tr4ctor_99x!Zq"),
    "token in angle brackets": (f"the token <{GITHUB}> leaked", GITHUB),
    "real url password": ("postgresql://app:Xq7!mZ2pLw9r@db:5432/app", "Xq7!mZ2pLw9r"),
    "jwk private member": (
        '{"kty": "EC", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", '
        '"d": "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"}',
        "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI",
    ),
    "token beside an arn": (
        f"arn:aws:iam::379286629873:role/deploy uses {AWS} as its key id",
        AWS,
    ),
    "private key named public": ("PublicKey = see below\nPrivateKey = " + "kA9" * 14 + "=", None),
}


@pytest.mark.parametrize("name", list(SECRET))
def test_a_secret_beside_or_dressed_like_them_is_still_found(name: str) -> None:
    text, value = SECRET[name]
    found = secrets.find_secrets(text)
    assert found, text
    if value is not None:
        assert any(value in text[f.start : f.end] for f in found), [
            text[f.start : f.end] for f in found
        ]


def test_a_password_value_with_a_dotted_year_is_no_code_reference() -> None:
    # `December.2019` read as an attribute (`module.attr`) hid a Wi-Fi key.
    text = 'network={\n    ssid="WH-Scanners"\n    psk="December.2019"\n}'
    assert [text[f.start : f.end] for f in secrets.find_secrets(text)] == ["December.2019"]
    assert secrets.find_secrets("token: settings.api_token") == []


def test_an_empty_assignment_does_not_take_the_next_line_as_its_value() -> None:
    assert secrets.find_secrets("SESSION_SECRET=\nPARTNER_ID=acme-west-2\n") == []


def test_a_sample_named_after_a_seam_is_read_whole() -> None:
    """The seam between heading and content took the content's first 96 characters, cutting
    AWS's documented secret before its `EXAMPLEKEY` (a fragment with no name)."""
    from memsieve.capture.policy import event_fields
    from memsieve.schemas.events import CaptureEvent

    event = CaptureEvent.model_validate(
        {
            "namespace": "docs",
            "kind": "retro",
            "heading": "AWS docs example keys in tests",
            "content": "The moto-based tests use AWS's documented example credentials "
            "AKIAIOSFODNN7EXAMPLE / wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY. Not real.",
        }
    )
    assert secrets.scan_fields(event_fields(event)) == {}


def test_a_word_tag_beside_a_digest_tag_is_no_token() -> None:
    fields = [("tags[0]", "git"), ("tags[1]", "e0a55108bcdf2f229714d321e05fa9c0a61df159"),
              ("tags[2]", "config")]  # fmt: skip
    assert secrets.scan_fields(fields) == {}
