"""Issue 14's target, end to end on `memsieve up`: a producer that bypasses the client
puts secrets in every field (and split, encoded, in prose) on the embedded broker with
Celery's task-sent events on. Afterwards no byte of any secret is in a full database
dump, the worker's output, any Flower page or API answer, or any file under
MEMSIEVE_HOME; and another local user can read or write none of it."""

from __future__ import annotations

import base64
import json
import os
import re
import secrets as random
import subprocess
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import psycopg
import pytest
from celery import Celery
from memsieve import constants
from memsieve.ops.services import free_port

from tests.support.http import get as _get
from tests.support.up import Up, up_env
from tests.support.workers import wait_until

pytestmark = pytest.mark.slow
INTRUDER = "memsieve-intruder"


def _tok(alphabet: str, n: int) -> str:
    return "".join(random.choice(alphabet) for _ in range(n))


UP, LOW, DIG = "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz", "0123456789"


def _placements() -> tuple[list[Any], list[str]]:
    """(raw items to send, needles that must appear nowhere)."""
    aws_id = "AKIA" + _tok(UP + DIG, 16)
    aws_secret = _tok(UP + LOW + DIG + "/+", 40)
    ghp = "ghp_" + _tok(UP + LOW + DIG, 36)
    slack = "xoxb-" + _tok(DIG, 11) + "-" + _tok(DIG, 13) + "-" + _tok(LOW + DIG, 24)
    agent_key = "sk-proj-" + _tok(UP + LOW + DIG, 40)
    session_key = "glpat-" + _tok(UP + LOW + DIG, 20)
    id_key = "AKIA" + _tok(UP + DIG, 16)
    bad_id = "ghp_" + _tok(UP + LOW + DIG, 36)
    stripe = "sk_live_" + _tok(UP + LOW + DIG, 24)
    ns_slack = "xoxb-" + _tok(DIG, 11) + "-" + _tok(DIG, 13) + "-" + _tok(LOW + DIG, 24)
    split = "ghp_" + _tok(UP + LOW + DIG, 36)
    b64_pw = "Hx" + _tok(LOW + DIG, 10) + "!"
    url_tok = "ghp_" + _tok(UP + LOW + DIG, 36)
    prose_pw = "hunter" + _tok(DIG, 4) + _tok(LOW, 3)
    field_key = "ghp_" + _tok(UP + LOW + DIG, 36)
    tag_split = "AKIA" + _tok(UP + DIG, 16)
    lesson = "Always rotate leaked credentials the same day; never paste them in chat."

    count = iter(range(100))

    def ev(**kw: Any) -> dict[str, Any]:
        # A distinct content each: identity (the derived event id) ignores tags and source.
        text = f"{lesson} ({next(count)})"
        base = {"namespace": "sec", "kind": "retro", "heading": "Leak", "content": text}
        base.update(kw)
        return base

    items = [
        ev(content=f"{lesson} aws_access_key_id={aws_id} aws_secret_access_key={aws_secret}"),
        ev(heading=f"Token {ghp}"),
        ev(tags=["creds", slack]),
        ev(source={"agent": agent_key, "session": "s1"}),
        ev(source={"agent": "planner", "session": session_key}),
        ev(event_id=id_key),
        ev(event_id=bad_id),
        ev(kind="correction", supersedes=stripe),
        ev(namespace=ns_slack),
        ev(heading=f"Leak {split[:20]}", content=split[20:] + " " + lesson),
        ev(heading="Leak", content=f"{lesson} password: {prose_pw}9"),
        ev(content=lesson + " " + base64.b64encode(f"password={b64_pw}".encode()).decode()),
        ev(content=lesson + " see ?t=" + urllib.parse.quote(f"token={url_tok}", safe="")),
        ev(content=f"{lesson} The password is {prose_pw} for the staging box."),
        ev(tags=[tag_split[:10], tag_split[10:]]),
        {**ev(), field_key: "x"},  # an unknown field named like a token: invalid
    ]
    needles = [aws_id, aws_secret, ghp, slack, agent_key, session_key, id_key, bad_id, stripe]
    needles += [ns_slack, split, split[:20], split[20:], b64_pw, url_tok, prose_pw, field_key]
    needles += [tag_split]
    return items, needles


def _flower_pages(base: str, auth: str) -> dict[str, str]:
    pages: dict[str, str] = {}
    for path in ("/", "/tasks", "/workers", "/broker", "/api/tasks", "/api/workers?refresh=1"):
        code, body = _get(base + path, auth)
        assert code == 200, path
        pages[path] = body
    tasks = json.loads(pages["/api/tasks"])
    for tid in tasks:
        for path in (f"/task/{tid}", f"/api/task/info/{tid}"):
            pages[path] = _get(base + path, auth)[1]
    for name in json.loads(pages["/api/workers?refresh=1"]):
        pages[f"/worker/{name}"] = _get(base + f"/worker/{urllib.parse.quote(name)}", auth)[1]
    return pages


def _files(home: Path) -> dict[Path, bytes]:
    out = {}
    for dirpath, _dirs, files in os.walk(home):
        for name in files:
            p = Path(dirpath) / name
            try:
                out[p] = p.read_bytes()
            except OSError:
                pass  # a socket, or a file gone while we walk
    return out


def _as_intruder(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """INTRUDER_CODE run by a second local user (created here: the tests run as root)."""
    import pwd

    try:
        pw = pwd.getpwnam(INTRUDER)
    except KeyError:
        subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", INTRUDER], check=True)
        pw = pwd.getpwnam(INTRUDER)
    # The system Python with this venv's packages: the venv's interpreter lives under
    # root's home, which the intruder cannot enter.
    site = next(Path(sys.prefix).glob("lib/python3*/site-packages"))
    return subprocess.run(
        ["/usr/bin/python3", "-c", INTRUDER_CODE, *argv],
        user=pw.pw_uid,
        group=pw.pw_gid,
        extra_groups=[],
        cwd="/",
        env={"PATH": "/usr/bin:/bin", "HOME": "/", "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        timeout=60,
    )


INTRUDER_CODE = r"""
import json, os, socket, sys
import psycopg
home, pg_port, redis_port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
out = {}
for what, fn in [
    ("list home", lambda: os.listdir(home)),
    ("read state", lambda: open(os.path.join(home, "services.json")).read()),
    ("read aof", lambda: open(os.path.join(home, "redis", "appendonly.aof")).read()),
    ("write home", lambda: open(os.path.join(home, "x"), "w").write("x")),
]:
    try:
        fn(); out[what] = "ALLOWED"
    except OSError as exc:
        out[what] = type(exc).__name__
for user in ("postgres", "memsieve", "embedded_postgres"):
    for db in ("memsieve", "postgres"):
        try:
            psycopg.connect(host="127.0.0.1", port=pg_port, user=user, dbname=db,
                            password="", connect_timeout=5).close()
            out[f"pg {user}/{db}"] = "ALLOWED"
        except psycopg.OperationalError as exc:
            out[f"pg {user}/{db}"] = "refused" if "password" in str(exc) else str(exc)[:80]
def resp(*args):  # raw RESP: the system Python has no redis-py of its own
    with socket.create_connection(("127.0.0.1", redis_port), timeout=5) as s:
        s.sendall(b"*%d\r\n" % len(args) + b"".join(
            b"$%d\r\n%s\r\n" % (len(a.encode()), a.encode()) for a in args))
        return s.recv(200).decode(errors="replace")
for cmd in (("KEYS", "*"), ("LPUSH", "memsieve", "x"), ("CONFIG", "SET", "dir", "/tmp"),
            ("AUTH", "default", ""), ("AUTH", "memsieve", "memsieve")):
    reply = resp(*cmd)
    out["redis " + " ".join(cmd[:2])] = "ALLOWED" if not reply.startswith("-") else reply.split()[0][1:]
print(json.dumps(out))
"""


def test_no_secret_in_dump_logs_flower_or_home_and_no_door_for_other_users(
    tmp_path: Path, services_home: Path
) -> None:
    home = services_home
    fport, auth = free_port(), "ops:" + random.token_urlsafe(12)
    env = up_env(
        home,
        MEMSIEVE_EMBEDDER="hashing",
        MEMSIEVE_FLOWER_PORT=str(fport),
        MEMSIEVE_FLOWER_BASIC_AUTH=auth,
        MEMSIEVE_SWEEP_INTERVAL="1",
    )
    log_path = tmp_path / "up.log"
    with Up(env, log_path):
        base = f"http://127.0.0.1:{fport}"
        assert wait_until(lambda: _get(f"{base}/healthcheck")[0] == 200, timeout=60)
        state = json.loads((home / "services.json").read_text())
        db_url, broker_url = state["database_url"], state["redis_url"]
        assert wait_until(
            lambda: bool(json.loads(_get(f"{base}/api/workers?refresh=1", auth)[1] or "{}")),
            timeout=60,
        )

        # The producer turns on task-sent events: Flower receives Celery's repr of the args.
        producer = Celery("producer", broker=broker_url)
        producer.conf.update(task_send_sent_event=True, task_serializer="json")
        items, needles = _placements()
        for item in items:
            producer.send_task(constants.TASK_CAPTURE, args=[item], queue=constants.QUEUE)
        producer.send_task(constants.TASK_CAPTURE, args=[items[:3]], queue=constants.QUEUE)
        expected = len(items)

        def ledger() -> tuple[int, int]:
            with psycopg.connect(db_url) as conn:
                row = conn.execute(
                    "SELECT count(*), count(*) FILTER (WHERE status = 'pending') FROM events"
                ).fetchone()
            return (int(row[0]), int(row[1])) if row else (0, 0)

        assert wait_until(lambda: ledger() == (expected, 0), timeout=90), ledger()
        with psycopg.connect(db_url) as conn:
            rows = conn.execute("SELECT status, reason FROM events").fetchall()
        assert all(status == "rejected" for status, _ in rows), rows
        # 2 are invalid: the made-up field, and the supersedes that is no memory id (a UUID)
        assert sorted(r for _, r in rows).count("secret") == expected - 2

        # Flower: every page and API answer, after it has seen the sent events.
        pages = _flower_pages(base, auth)
        tasks = json.loads(pages["/api/tasks"])
        assert len([t for t in tasks.values() if t["name"] == constants.TASK_CAPTURE]) >= expected
        # Flower shows no argument: "[hidden]" where the producer's sent event carried
        # them, a summary of ids and a well-formed namespace where the worker received them.
        shown = {str(t.get("args")) for t in tasks.values() if t.get("args") is not None}
        assert shown and all(
            a == "[hidden]" or re.fullmatch(r"\[\d+ event\(s\) ns=[a-z0-9._-]* first=[\w-]+.*\]", a)
            for a in shown
        ), sorted(shown)[:5]
        for needle in needles:
            code, body = _get(f"{base}/api/tasks?search={urllib.parse.quote(needle)}", auth)
            assert code == 200 and json.loads(body) == {}, "Flower's search finds a secret"
        passwords = [urllib.parse.urlparse(u).password or "" for u in (db_url, broker_url)] + [
            auth.split(":", 1)[1]
        ]
        for path, body in pages.items():
            for needle in needles + passwords:
                assert needle not in body, f"a secret or password is on Flower's {path}"

        # Flower's command line (every local user reads it) holds no credential.
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if str(home) in cmdline or "memsieve" in cmdline:
                for secret in passwords:
                    assert secret not in cmdline, cmdline.replace("\0", " ")

        # The broker's append-only file is scrubbed once the messages are consumed.
        def home_clean() -> bool:
            blob = _files(home)
            return not any(n.encode() in data for data in blob.values() for n in needles)

        assert wait_until(home_clean, timeout=60), [
            str(p) for p, d in _files(home).items() if any(n.encode() in d for n in needles)
        ]
        pg_dump = next(Path(sys.prefix).glob("lib/python*/site-packages/embedded_postgres"))
        dumped = subprocess.run(
            [str(pg_dump / "pginstall" / "bin" / "pg_dump"), db_url],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        assert "REDACTED" in dumped and "CREATE TABLE" in dumped
        for needle in needles:
            assert needle not in dumped, "a secret is in the database dump"

        # MEMSIEVE_HOME is private: 0700 (0710 for the postgres user's group when root),
        # every file the owner's alone.
        mode = home.stat().st_mode & 0o777
        assert mode in (0o700, 0o710), oct(mode)
        for p in _files(home):
            st = p.stat()
            assert st.st_mode & 0o077 == 0, f"{p} is {oct(st.st_mode & 0o777)}"

        # Another local user gets nothing: no file, no database, no Redis.
        pg_port = (home / "pg" / "memsieve.port").read_text().strip()
        redis_port = (home / "redis" / "memsieve.port").read_text().strip()
        probe = _as_intruder([str(home), pg_port, redis_port])
        assert probe.returncode == 0, probe.stderr[-2000:]
        verdicts = json.loads(probe.stdout.strip().splitlines()[-1])
        allowed = [what for what, v in verdicts.items() if v == "ALLOWED"]
        assert not allowed, verdicts
        assert verdicts["redis CONFIG SET"] == "NOAUTH" and verdicts["redis AUTH default"]
        assert set(verdicts.values()) <= {"PermissionError", "refused", "NOAUTH", "WRONGPASS"}, (
            verdicts
        )
    output = log_path.read_text(errors="replace")
    for needle in needles:
        assert needle not in output, "a secret is in the worker's output"
