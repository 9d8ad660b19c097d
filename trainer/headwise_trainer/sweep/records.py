"""The sweep's result records on disk: every point directory's eval.json (point_eval.py writes
them), the rank points' records, and the state of the directories without a result yet."""
from __future__ import annotations

import glob
import json
import os
from typing import Dict, List, Tuple

from .point_eval import run_facts


def load_points(root: str) -> Tuple[List[dict], Dict[str, dict]]:
    """Every result record under ROOT, and name -> state of the directories without one."""
    points, pending = [], {}
    for d in sorted(glob.glob(os.path.join(root, "*", ""))):
        name = os.path.basename(os.path.dirname(d))
        if name == "rank":
            continue
        ev = os.path.join(d, "eval.json")
        if os.path.isfile(ev):
            with open(ev, encoding="utf-8") as f:
                points.append(json.load(f))
        else:
            facts = run_facts(os.path.join(d, "run"))
            status = ("trained, not scored yet" if os.path.isdir(os.path.join(d, "export")) else
                      f"not finished, newest checkpoint step {facts['steps']}" if facts else
                      "no checkpoint yet")
            pending[name] = {"status": status, **facts}
    for p in sorted(glob.glob(os.path.join(root, "rank", "*.json"))):
        with open(p, encoding="utf-8") as f:
            points.append(json.load(f))
    return points, pending
