"""MEMSIEVE_HOME as a private place: mode 0700, files 0600, and the install's secrets.

Everything memsieve keeps on disk (embedded PostgreSQL and Redis, their passwords, the
fingerprint key, port and state files, metrics samples, backfill progress) lives under
MEMSIEVE_HOME. No other local user may list, read or write any of it.

When memsieve runs as root, PostgreSQL refuses to: it runs as the system user
`embedded_postgres`, which must traverse MEMSIEVE_HOME to reach its data directory. The
home is then 0710 with that user's group, which grants traversal only, to that user
only; nothing in the home is readable by it except its own data directory.
"""

from __future__ import annotations

import os
import secrets
import stat
from functools import lru_cache
from pathlib import Path

from memsieve.errors import ConfigError

KEY_FILE = "memsieve.key"
PRIVATE_UMASK = 0o077


def ensure_private_dir(path: Path, traverse_gid: int | None = None) -> Path:
    """Create `path` (and parents) if needed; make it 0700 (0710 for `traverse_gid`)."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    st = path.stat()
    mode = 0o710 if traverse_gid is not None else 0o700
    if st.st_uid != os.geteuid():
        raise ConfigError(f"{path} belongs to another user; refusing to keep memory there")
    if traverse_gid is not None and st.st_gid != traverse_gid:
        os.chown(path, -1, traverse_gid)
    if stat.S_IMODE(st.st_mode) != mode:
        os.chmod(path, mode)
    return path


def tighten(root: Path) -> list[Path]:
    """Remove group/other permissions from every file and folder we own under `root`.

    Homes made before this version kept 0644 files (the Redis append-only file with
    every message body among them); this migrates them in place. Returns what changed.
    """
    changed = []
    me = os.geteuid()
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            try:
                st = p.lstat()
            except FileNotFoundError:
                continue
            if stat.S_ISLNK(st.st_mode) or st.st_uid != me:
                continue
            if stat.S_IMODE(st.st_mode) & 0o077:
                os.chmod(p, stat.S_IMODE(st.st_mode) & 0o700)
                changed.append(p)
    return changed


def write_private(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically, mode 0600 from the first byte."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def read_or_create_secret(path: Path, nbytes: int = 32) -> str:
    """The secret in `path`, created (random, hex, mode 0600) at first use.

    Safe when several processes start at once: the file appears whole, by `link`, and a
    loser reads the winner's secret.
    """
    try:
        return _read_secret(path)
    except FileNotFoundError:
        pass
    if not path.parent.exists():
        ensure_private_dir(path.parent)
    value = secrets.token_hex(nbytes)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.new")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, value.encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    return _read_secret(path)


def _read_secret(path: Path) -> str:
    st = path.stat()
    if st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(path, 0o600)
    value = path.read_text().strip()
    if len(value) < 32:
        raise ConfigError(f"{path}: key file is empty or too short (need 32+ characters)")
    return value


@lru_cache(maxsize=8)
def install_key(path: Path) -> bytes:
    """The install's HMAC key (fingerprints, ids of refused events), from `path`."""
    try:
        return read_or_create_secret(path).encode()
    except PermissionError:
        raise ConfigError(f"{path}: cannot read the install key (permission denied)") from None


def key_path(home: Path, configured: str | None = None) -> Path:
    """Where the install key lives: MEMSIEVE_KEY_FILE, else MEMSIEVE_HOME/memsieve.key."""
    return Path(configured).expanduser() if configured else home / KEY_FILE
