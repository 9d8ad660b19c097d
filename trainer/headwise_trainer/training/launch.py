"""`headwise-train train --nproc N`: starts N local DDP worker processes (gloo) itself.

torchrun sets the same environment (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT)
and works too where it runs; Debian 12's torchrun (torch 1.13 on Python 3.11) fails before
starting any worker (AttributeError in torch.distributed.elastic's to_map), hence this launcher.

A worker that has finished can still hang in torch's teardown: ProcessGroupGloo's destructor
joins its worker threads while holding the GIL, and a gloo thread that is freeing a tensor with
a Python object waits for the GIL (seen with torch 1.13: the process never exits and its store
thread spins a core). So each worker marks itself done (mark_done) once its last collective has
returned and everything it writes is written, and the launcher stops the workers that are still
alive GRACE_SECONDS after every rank marked itself done, saying so on stderr (a worker that
crashes after marking itself done is reported, not counted as a failure). On Linux the
workers also die with the launcher (PR_SET_PDEATHSIG), so a launcher killed from outside (a
test's timeout, a job scheduler) leaves no worker behind.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from typing import List, Optional, Sequence

from ..paths import ENTRY

DONE_ENV = "HEADWISE_DDP_DONE_DIR"
GRACE_SECONDS = 30.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def strip_nproc(argv: List[str]) -> List[str]:
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--nproc":
            skip = True
        elif not a.startswith("--nproc="):
            out.append(a)
    return out


def _die_with_parent() -> None:
    """preexec_fn of a worker: SIGKILL when the launcher's thread that started it exits (Linux;
    elsewhere nothing)."""
    try:
        import ctypes
        import signal
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _done_file(done_dir: str, rank: int) -> str:
    return os.path.join(done_dir, f"rank-{rank}")


def mark_done(rank: int) -> None:
    """Tells the launcher (when this process has one) that rank `rank` has nothing left to do
    but exit: called after the last collective, before the process group's teardown."""
    d = os.environ.get(DONE_ENV)
    if not d:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    with open(_done_file(d, rank), "w", encoding="utf-8"):
        pass


def launch(nproc: int, argv: List[str], command: Optional[Sequence[str]] = None,
           grace: float = GRACE_SECONDS) -> int:
    """Runs `headwise-train <argv>` (or `command + argv`) in nproc processes; returns the first
    non-zero exit code (the other workers are then stopped) or 0. Workers still alive `grace`
    seconds after every rank called mark_done are stopped, and do not count as failures, nor
    does a worker that fails after its mark_done (a crash in torch's teardown)."""
    command = list(command) if command is not None else [sys.executable, ENTRY]
    port = _free_port()
    done_dir = tempfile.mkdtemp(prefix="headwise-ddp-")
    procs = {}
    try:
        for rank in range(nproc):
            env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(nproc),
                       LOCAL_WORLD_SIZE=str(nproc), MASTER_ADDR="127.0.0.1",
                       MASTER_PORT=str(port), **{DONE_ENV: done_dir})
            procs[rank] = subprocess.Popen([*command, *argv], env=env,
                                           preexec_fn=_die_with_parent if
                                           sys.platform.startswith("linux") else None)
        rc, all_done_at = 0, None
        while procs:
            for rank, p in list(procs.items()):
                code = p.poll()
                if code is None:
                    continue
                del procs[rank]
                if code != 0 and os.path.exists(_done_file(done_dir, rank)):
                    print(f"headwise-train: worker {rank} exited with code {code} after it had "
                          f"finished (in torch's process-group teardown); its work is complete",
                          file=sys.stderr)
                elif code != 0 and rc == 0:
                    rc = code
                    print(f"headwise-train: a worker exited with code {code}; stopping the "
                          f"others", file=sys.stderr)
                    for q in procs.values():
                        q.terminate()
            if all_done_at is None and len(os.listdir(done_dir)) == nproc:
                all_done_at = time.monotonic()
            if procs and all_done_at is not None and time.monotonic() - all_done_at > grace:
                print(f"headwise-train: worker(s) {', '.join(map(str, sorted(procs)))} finished "
                      f"but did not exit {grace:.0f} s later (a known hang of torch's gloo "
                      f"process-group teardown); stopping them", file=sys.stderr)
                for p in procs.values():
                    p.kill()
                    p.wait()
                procs.clear()
            time.sleep(0.2)
        return rc
    finally:
        for p in procs.values():
            p.kill()
        shutil.rmtree(done_dir, ignore_errors=True)
