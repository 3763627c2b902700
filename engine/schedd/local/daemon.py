"""The embedded schedd as a background daemon: ``python -m engine.schedd.local.daemon``.

It listens on a Unix socket in the state directory (mode 0600, never TCP) and serves the
Schedd API to any number of clients; :mod:`engine.schedd.local.client` starts it on demand.
One daemon per state directory, guarded by a lock file.  SIGTERM stops it cleanly, and so does
removing the state directory: nothing could reach the daemon again, so it must not run on alone.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import fcntl
import logging
import os
import signal
import sqlite3
import sys
from typing import Any

from engine.schedd.api import ScheddError, SubmitResult
from engine.schedd.local import protocol
from engine.schedd.local.pool import PoolConfigError, load_pool, pool_file_stamp
from engine.schedd.local.schedd import (
    DEFAULT_NEGOTIATOR_INTERVAL,
    DEFAULT_PERIODIC_INTERVAL,
    DEFAULT_SCHEDD_MIN_INTERVAL,
    DEFAULT_VACATE_TIME,
    LocalSchedd,
)
from engine.state import StateDir, StateDirError, check_state, full_disk, state_dir

log = logging.getLogger("crabtui.schedd")
MAX_REQUEST_BYTES = 1 << 30
STATE_CHECK_INTERVAL = 2.0  # seconds between checks that the state directory is still ours


class AlreadyRunning(Exception):
    pass


class CannotServe(Exception):
    """What keeps the daemon from starting, in one line for the client that started it."""


class Daemon:
    def __init__(self, schedd: LocalSchedd, pool_file: int | None = None):
        self.schedd = schedd
        self.pool_file = pool_file  # the stamp of the pool.toml it read (None: there was none)
        self.stopping = asyncio.Event()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while line := await reader.readline():
                writer.write(protocol.encode(self.reply(protocol.decode(line))))
                await writer.drain()
        except (ConnectionResetError, BrokenPipeError):
            pass
        except asyncio.CancelledError:
            pass  # the daemon stops with clients still connected; they see the connection close
        finally:
            writer.close()

    def reply(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.pop("op", None)
        handler = getattr(self, f"op_{op}", None)
        if handler is None:
            return {"ok": False, "error": f"unknown request {op!r}"}
        try:
            return {"ok": True, "result": handler(**request)}
        except ScheddError as e:
            return {"ok": False, "error": str(e)}
        except Exception as e:  # a bug must not take the daemon and everyone's jobs down
            log.exception("request %s failed", op)
            return {"ok": False, "error": f"internal error in the schedd ({type(e).__name__}: {e}); "
                                          f"see {self.schedd.state.log}"}

    def op_ping(self) -> dict[str, Any]:
        slots = self.schedd.pool.slots
        return {"pid": os.getpid(), "jobs": len(self.schedd.jobs), "running": len(self.schedd.running),
                "slots": len(slots), "busy_slots": sum(1 for s in slots if s.busy),
                "sites": self.site_slots(), "pool_file": self.pool_file,
                "state_dir": self.schedd.state.path}

    def site_slots(self) -> dict[str, dict[str, int]]:
        """Each site (the slots' GLIDEIN_CMSSite) with its largest slot: what a job there may request."""
        sites: dict[str, dict[str, int]] = {}
        for site in self.schedd.pool.sites:
            size = sites.setdefault(site.name, {"cpus": 0, "memory": 0})
            size["cpus"], size["memory"] = max(size["cpus"], site.cpus), max(size["memory"], site.memory)
        return sites

    def op_new_cluster(self) -> int:
        return self.schedd.new_cluster()

    def op_submit_ads(self, cluster: int, ads: list[str]) -> list[int]:
        result: SubmitResult = self.schedd.submit_ads(cluster, protocol.ads_from_wire(ads))
        return [result.cluster, result.first_proc, result.num_procs]

    def op_query(self, constraint: str = "true", projection: list[str] = ()) -> list[str]:
        if not projection:
            return self.schedd.query_texts(constraint)
        return protocol.ads_to_wire(self.schedd.query(constraint, projection))

    def op_factories(self, constraint: str = "true") -> list[str]:
        return protocol.ads_to_wire(self.schedd.factories(constraint))

    def op_query_values(self, constraint: str, projection: list[str]) -> list[list]:
        return self.schedd.query_values(constraint, projection)

    def op_query_columns(self, constraint: str, projection: list[str]) -> list[list]:
        return self.schedd.query_columns(constraint, projection)

    def op_summary(self, constraint: str = "false") -> dict[str, int]:
        return self.schedd.summary(constraint)

    def op_history(self, constraint: str = "true", projection: list[str] = (), match: int = -1) -> list[str]:
        return protocol.ads_to_wire(self.schedd.history(constraint, projection, match))

    def op_act(self, action: str, job_spec, reason: str | None = None) -> dict[str, Any]:
        result = self.schedd.act(action, job_spec, reason)
        return {"changed": result.changed, "refused": list(result.refused), "not_found": result.not_found,
                "bad_status": result.bad_status,
                "already_done": result.already_done, "job_ads": result.job_ads}

    def op_edit(self, job_spec, attrs: dict[str, str]) -> int:
        return self.schedd.edit(job_spec, attrs)

    def op_analyze(self, job: str) -> str:
        return self.schedd.analyze(job)

    def op_shutdown(self) -> None:
        self.stopping.set()


async def serve(state: StateDir, *, ready_fd: int | None = None,
                periodic_interval: float = DEFAULT_PERIODIC_INTERVAL,
                vacate_time: float = DEFAULT_VACATE_TIME, job_umask: int = 0o022,
                schedd_min_interval: float = DEFAULT_SCHEDD_MIN_INTERVAL,
                negotiator_interval: float = DEFAULT_NEGOTIATOR_INTERVAL) -> int:
    lock = open(state.lock, "a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise AlreadyRunning(f"a schedd is already running for {state.path}") from None
    os.makedirs(state.spool, exist_ok=True)
    try:
        check_state(state)
        pool_file = pool_file_stamp(state.pool_config)
        pool = load_pool(state.pool_config if os.path.exists(state.pool_config) else None, state.spool)
    except (StateDirError, PoolConfigError) as e:
        raise CannotServe(str(e)) from None
    loop = asyncio.get_running_loop()
    try:
        schedd = LocalSchedd(state, pool, periodic_interval=periodic_interval, vacate_time=vacate_time,
                             job_umask=job_umask, schedd_min_interval=schedd_min_interval,
                             negotiator_interval=negotiator_interval)
        schedd.attach(loop)
    except sqlite3.DatabaseError as e:
        raise CannotServe(full_disk(state.path) or f"{state.db}: cannot open the job queue ({e}); move it away "
                          "to start with an empty queue") from None
    except OSError as e:
        if e.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise CannotServe(full_disk(state.path) or f"{state.path}: {e.strerror}; free some space there, "
                          "then run the command again: nothing recorded is lost") from None
    daemon = Daemon(schedd, pool_file)
    if os.path.exists(state.socket):
        os.unlink(state.socket)  # left by a daemon that died; we hold the lock
    old_umask = os.umask(0o177)
    try:
        # A submit carries every ad of a cluster in one line: allow far more than asyncio's 64 KiB.
        server = await asyncio.start_unix_server(daemon.handle, path=state.socket, limit=MAX_REQUEST_BYTES)
    finally:
        os.umask(old_umask)
    os.chmod(state.socket, 0o600)
    socket_id = _file_id(state.socket)
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, daemon.stopping.set)
    log.info("schedd %d serving %s with %d slots", os.getpid(), state.socket, len(pool.slots))
    if ready_fd is not None:
        try:
            os.write(ready_fd, b"ready\n")
        except BrokenPipeError:
            pass  # the client that started us is gone; others will find us serving
        os.close(ready_fd)
    from engine.crab.taskworker import worker  # CRAB's task worker runs beside the schedd, as a client of it

    stop_worker = worker.start(state)
    await _watch_state(state, _file_id(lock), daemon.stopping)
    stop_worker.set()
    server.close()
    if _file_id(state.socket) == socket_id:  # not a socket a later daemon bound in a new directory
        os.unlink(state.socket)
    evicted = schedd.shutdown()
    log.info("schedd %d stopped; %d running job(s) evicted", os.getpid(), evicted)
    lock.close()
    return evicted


def _file_id(file) -> tuple[int, int] | None:
    """The (device, inode) of a path or open file; None when the path is gone."""
    try:
        st = os.fstat(file.fileno()) if hasattr(file, "fileno") else os.stat(file)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


async def _watch_state(state: StateDir, lock_id: tuple[int, int] | None, stopping: asyncio.Event) -> None:
    """Wait until asked to stop, or until the lock file we hold is no longer the one at its path:
    the state directory was removed (or replaced), so no client can reach this daemon again and a
    new one may start there.  Its jobs are then evicted as at any shutdown, not left running."""
    while True:
        try:
            await asyncio.wait_for(stopping.wait(), STATE_CHECK_INTERVAL)
            return
        except TimeoutError:
            if _file_id(state.lock) != lock_id:
                log.warning("state directory %s was removed; stopping", state.path)
                return


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.schedd.local.daemon", description=__doc__.splitlines()[0])
    parser.add_argument("--state-dir")
    parser.add_argument("--ready-fd", type=int, help="write 'ready' to this file descriptor once serving")
    parser.add_argument("--periodic-interval", type=float,
                        default=float(os.environ.get("CRABTUI_PERIODIC_EXPR_INTERVAL", DEFAULT_PERIODIC_INTERVAL)),
                        help="seconds between evaluations of periodic policy expressions "
                             "(HTCondor's PERIODIC_EXPR_INTERVAL; env CRABTUI_PERIODIC_EXPR_INTERVAL)")
    parser.add_argument("--vacate-time", type=float,
                        default=float(os.environ.get("CRABTUI_JOB_MAX_VACATE_TIME", DEFAULT_VACATE_TIME)),
                        help="seconds from a job's kill signal to SIGKILL (env CRABTUI_JOB_MAX_VACATE_TIME)")
    parser.add_argument("--schedd-min-interval", type=float,
                        default=float(os.environ.get("CRABTUI_SCHEDD_MIN_INTERVAL", DEFAULT_SCHEDD_MIN_INTERVAL)),
                        help="seconds a scheduler or local universe job (DAGMan) that exited and was requeued "
                             "waits before it starts again (HTCondor's SCHEDD_MIN_INTERVAL; env "
                             "CRABTUI_SCHEDD_MIN_INTERVAL)")
    parser.add_argument("--negotiator-interval", type=float,
                        default=float(os.environ.get("CRABTUI_NEGOTIATOR_INTERVAL", DEFAULT_NEGOTIATOR_INTERVAL)),
                        help="seconds a job needing a slot that exited and was requeued waits for its next match "
                             "(HTCondor's NEGOTIATOR_INTERVAL; env CRABTUI_NEGOTIATOR_INTERVAL)")
    args = parser.parse_args(argv)
    # signals blocked in whatever started us (a `dag run` blocks DAGMan's) would stay blocked in
    # every starter and job: their kill signals would never arrive
    signal.pthread_sigmask(signal.SIG_SETMASK, ())
    job_umask = os.umask(0o077)  # the daemon's files are private; jobs get the submitter's umask back
    try:
        state = state_dir(args.state_dir)
    except StateDirError as e:
        return _refuse(str(e), args.ready_fd)
    logging.basicConfig(filename=state.log, level=logging.INFO,
                        format="%(asctime)s %(process)d %(levelname)s %(message)s")
    try:
        asyncio.run(serve(state, ready_fd=args.ready_fd, periodic_interval=args.periodic_interval,
                          vacate_time=args.vacate_time, job_umask=job_umask,
                          schedd_min_interval=args.schedd_min_interval,
                          negotiator_interval=args.negotiator_interval))
    except AlreadyRunning as e:
        print(e, file=sys.stderr)
        return 3
    except CannotServe as e:
        log.error("cannot start: %s", e)
        return _refuse(str(e), args.ready_fd)
    return 0


def _refuse(message: str, ready_fd: int | None) -> int:
    """Tell why the daemon does not start: to the client that started it, else to stderr."""
    print(message, file=sys.stderr)
    if ready_fd is not None:
        try:
            os.write(ready_fd, b"error " + " ".join(message.split()).encode("utf-8", "replace") + b"\n")
        except OSError:
            pass
    return 2


if __name__ == "__main__":
    sys.exit(main())
