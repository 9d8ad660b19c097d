"""scripts/device-shapes.sh, the prepared job for a lent GPU machine (issue 12 items 4 and 5),
run on the CPU with a tiny shape and a few steps: it trains, averages, scores and writes
shapes.json with the precision it trained in, so that the job cannot rot between the sessions
that are lent a GPU. Also: it refuses bf16 on a CPU without native bf16."""
import json
import os
import subprocess
import sys

import pytest

from test_train import corpus  # noqa: F401  (a fixture)
from headwise_trainer.training.train import cpu_has_bf16

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(REPO, "scripts", "device-shapes.sh")


def job(tmp_path, corpus, **env):  # noqa: F811
    e = dict(os.environ, DEVICE="cpu", PY=sys.executable, STEPS="3", EVAL_LIMIT="5",
             SHAPES="32:1", THREADS="1", TRAIN_SECONDS="0", DATA=str(corpus / "data"),
             RUNS=str(tmp_path / "runs"), OUT=str(tmp_path / "out"), **env)
    return subprocess.run(["bash", SCRIPT, "run"], cwd=REPO, env=e, capture_output=True,
                          text=True, timeout=900)


def test_the_gpu_job_runs_on_the_cpu(corpus, tmp_path):  # noqa: F811
    r = job(tmp_path, corpus, PRECISION="fp32")
    log = (tmp_path / "out" / "shapes.log")
    assert r.returncode == 0, r.stderr[-2000:] + (log.read_text()[-3000:] if log.exists() else "")
    doc = json.loads((tmp_path / "out" / "shapes.json").read_text())
    shape = doc["shapes"]["d32-dec1"]
    assert shape["steps_reached"] == 3 and doc["steps_asked"] == 3
    assert shape["run"]["train_args"]["precision"] == "fp32"
    assert shape["test"]["sentences"] == 5 and 0 <= shape["test"]["bleu"] <= 100


def test_bf16_is_refused_where_the_cpu_lacks_it(corpus, tmp_path):  # noqa: F811
    if cpu_has_bf16():
        pytest.skip("this CPU computes bf16 natively: the job may use it")
    r = job(tmp_path, corpus, PRECISION="bf16")
    assert r.returncode == 2 and "PRECISION=fp32" in r.stderr
