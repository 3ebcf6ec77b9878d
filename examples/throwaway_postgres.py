"""A throwaway PostgreSQL cluster for the tests, the demo and the benchmark.

``with ThrowawayCluster() as cluster:`` runs Debian's ``initdb --no-sync`` and ``pg_ctl`` in a
temporary folder (the server listens on a free port of 127.0.0.1 and on a Unix socket in that
folder), creates a login role ``noteskit_admin`` that may create roles, and a database ``notes``
owned by it, and stops the server and deletes the folder when the block ends, also on failure.
``cluster.uri()`` is the administrator's connection URI; ``cluster.superuser_uri()`` the
bootstrap superuser's. Every connection needs a password (SCRAM), so a wrong one is refused.

``initdb`` refuses to run as root: run as root, the cluster runs as ``nobody`` (through
``setpriv``), in a folder owned by it.

Run it alone to get a cluster for a while: ``python examples/throwaway_postgres.py`` prints the
URI and keeps the server up until Enter is pressed.
"""
from __future__ import annotations

import glob
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Iterator, Optional, Sequence
from urllib.parse import quote

ADMIN = "noteskit_admin"
DATABASE = "notes"


def postgres_bin(name: str) -> str:
    """The path of a PostgreSQL server program (Debian keeps them in /usr/lib/postgresql/<ver>/bin)."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
                        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    if not candidates:
        raise RuntimeError(f"{name} not found: install Debian's postgresql package (make deps does)")
    return candidates[-1]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class ThrowawayCluster:
    """A PostgreSQL server in a temporary folder, for as long as the ``with`` block lasts."""

    def __init__(self) -> None:
        self.folder: Optional[Path] = None
        self.port = 0
        self.superuser = "postgres"
        self.password = secrets.token_hex(12)
        self.admin_password = secrets.token_hex(12)
        self._started = False
        # As root, the server runs as nobody: initdb refuses root, and so does postgres.
        self._as: list[str] = []
        self._uid: Optional[int] = None
        if os.geteuid() == 0:
            import pwd
            nobody = pwd.getpwnam("nobody")
            self._uid, self._gid = nobody.pw_uid, nobody.pw_gid
            self._as = ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups"]

    def _run(self, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8", "TZ": "UTC"}
        return subprocess.run([*self._as, *args], env=env, text=True, capture_output=True, check=False)

    def _check(self, args: Sequence[str], what: str) -> None:
        done = self._run(args)
        if done.returncode != 0:
            raise RuntimeError(f"{what} failed ({done.returncode}): {done.stdout}{done.stderr}")

    def __enter__(self) -> "ThrowawayCluster":
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, kind: Optional[type[BaseException]], error: Optional[BaseException],
                 trace: Optional[TracebackType]) -> None:
        self.stop()

    @property
    def data(self) -> Path:
        assert self.folder is not None
        return self.folder / "data"

    def start(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="nkpg-"))
        pwfile = self.folder / "pw"
        pwfile.write_text(self.password + "\n")
        if self._uid is not None:
            os.chown(self.folder, self._uid, self._gid)
            os.chown(pwfile, self._uid, self._gid)
        os.chmod(pwfile, 0o600)
        self._check([postgres_bin("initdb"), "--no-sync", "-D", str(self.data), "-U", self.superuser,
                     f"--pwfile={pwfile}", "--auth=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8"],
                    "initdb")
        pwfile.unlink()
        for attempt in range(5):
            # Settings go to the configuration file (the last one of a name wins), so a restart
            # keeps them.
            self.port = free_port()
            with open(self.data / "postgresql.conf", "a") as conf:
                conf.write(f"listen_addresses = '127.0.0.1'\nport = {self.port}\n"
                           f"unix_socket_directories = '{self.folder}'\nfsync = off\nfull_page_writes = off\n"
                           "max_connections = 60\nshared_buffers = 32MB\n")
            done = self._run([postgres_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "log"),
                              "-w", "-t", "60", "start"])
            if done.returncode == 0:
                self._started = True
                break
            if attempt == 4:
                log = (self.folder / "log").read_text(errors="replace") if (self.folder / "log").exists() else ""
                raise RuntimeError(f"pg_ctl start failed: {done.stdout}{done.stderr}{log[-2000:]}")
        self.psql(f"CREATE ROLE {ADMIN} LOGIN CREATEROLE PASSWORD '{self.admin_password}'",
                  f"CREATE DATABASE {DATABASE} OWNER {ADMIN}")

    def stop(self) -> None:
        """Stops the server (at once: nothing in it is kept) and deletes its folder."""
        if self.folder is None:
            return
        if self._started:
            self._run([postgres_bin("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"])
            self._started = False
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder = None

    def restart(self, *, down_seconds: float = 0.0) -> None:
        """Stops the server and starts it again on the same port (after ``down_seconds``)."""
        self.halt()
        time.sleep(down_seconds)
        self.resume()

    def halt(self) -> None:
        """Stops the server at once (``-m immediate``), keeping its data for :meth:`resume`."""
        self._check([postgres_bin("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"], "pg_ctl stop")
        self._started = False

    def resume(self) -> None:
        assert self.folder is not None
        self._check([postgres_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "log"),
                     "-w", "-t", "60", "start"], "pg_ctl start")
        self._started = True

    def uri(self, user: str = ADMIN, password: Optional[str] = None, database: str = DATABASE) -> str:
        """A connection URI of ``user`` (the administrator by default) over TCP on 127.0.0.1."""
        if password is None:
            password = self.admin_password if user == ADMIN else self.password if user == self.superuser else ""
        auth = quote(user, safe="") + (":" + quote(password, safe="") if password else "")
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{quote(database, safe='')}"

    @contextmanager
    def new_database(self, prefix: str = "t_") -> Iterator[str]:
        """A new empty database owned by the administrator, for as long as the ``with`` block
        lasts (then dropped, its connections closed): the administrator's URI of it."""
        name = prefix + secrets.token_hex(6)
        self.psql(f"CREATE DATABASE {name} OWNER {ADMIN}")
        try:
            yield self.uri(database=name)
        finally:
            self.psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def superuser_uri(self, database: str = DATABASE) -> str:
        return self.uri(self.superuser, self.password, database)

    def psql(self, *statements: str, database: str = "postgres", user: Optional[str] = None,
             password: Optional[str] = None) -> str:
        """Runs SQL statements with Debian's psql as ``user`` (the superuser by default); their output."""
        user = user or self.superuser
        if password is None:
            password = self.password if user == self.superuser else self.admin_password if user == ADMIN else ""
        args = [shutil.which("psql") or postgres_bin("psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                "-h", "127.0.0.1", "-p", str(self.port), "-U", user, "-d", database]
        for statement in statements:
            args += ["-c", statement]
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PGPASSWORD": password, "LC_ALL": "C.UTF-8"}
        done = subprocess.run(args, env=env, text=True, capture_output=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"psql failed: {done.stderr.strip()}")
        return done.stdout


if __name__ == "__main__":
    with ThrowawayCluster() as cluster:
        print(cluster.uri())
        input("the server runs until Enter is pressed\n")
