"""`headwise-train train --nproc N`: starts N local DDP worker processes (gloo) itself.

torchrun sets the same environment (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT)
and works too where it runs; Debian 12's torchrun (torch 1.13 on Python 3.11) fails before
starting any worker (AttributeError in torch.distributed.elastic's to_map), hence this launcher.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from typing import List

from ..paths import ENTRY


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


def launch(nproc: int, argv: List[str]) -> int:
    """Runs `headwise-train <argv>` in nproc processes; returns the first non-zero exit code
    (the other workers are then stopped) or 0."""
    port = _free_port()
    procs = []
    for rank in range(nproc):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(nproc),
                   LOCAL_WORLD_SIZE=str(nproc), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        procs.append(subprocess.Popen([sys.executable, ENTRY, *argv], env=env))
    rc = 0
    while procs:
        for p in list(procs):
            code = p.poll()
            if code is None:
                continue
            procs.remove(p)
            if code != 0 and rc == 0:
                rc = code
                print(f"headwise-train: a worker exited with code {code}; stopping the others",
                      file=sys.stderr)
                for q in procs:
                    q.terminate()
        time.sleep(0.2)
    return rc
