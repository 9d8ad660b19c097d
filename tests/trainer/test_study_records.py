"""scripts/pruning-study.sh's records in git: `archive` copies each finished point's result files
from the cache ROOT into RECORDS (nothing of an unfinished point, no checkpoint), `restore` puts
them back into an empty ROOT (a new machine) without overwriting what ROOT has, and the settle
stage refuses a ROOT whose points settle in their own runs."""
import json
import os
import subprocess

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(REPO, "scripts", "pruning-study.sh")


def study(mode, **env):
    e = dict(os.environ, **{k: str(v) for k, v in env.items()})
    return subprocess.run(["bash", SCRIPT, mode], cwd=REPO, env=e, capture_output=True,
                          text=True, timeout=60)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def test_archive_then_restore_round_trip(tmp_path):
    root, records = tmp_path / "cache" / "de-x", tmp_path / "records" / "de-x"
    write(root / "enc-0" / "eval.json", json.dumps({"name": "enc-0", "bleu": 40.0}))
    write(root / "enc-0" / "run" / "run.json", '{"steps": 1250}')
    write(root / "enc-0" / "run" / "prune_log.jsonl", '{"step": 1}\n')
    write(root / "enc-0" / "run" / "ckpt-1250.pt", "not a record")
    write(root / "enc-0.005" / "run" / "ckpt-250.pt", "unfinished")  # no eval.json yet
    write(root / "rank" / "random1-enc-10.json", '{"name": "random1-enc-10"}')
    r = study("archive", ROOT=root, RECORDS=records)
    assert r.returncode == 0, r.stderr
    got = sorted(str(p.relative_to(records)) for p in records.rglob("*") if p.is_file())
    assert got == ["enc-0/eval.json", "enc-0/run/prune_log.jsonl", "enc-0/run/run.json",
                   "rank/random1-enc-10.json"]

    fresh = tmp_path / "new-machine" / "de-x"
    write(fresh / "rank" / "random1-enc-10.json", '{"name": "kept"}')  # what ROOT has stays
    r = study("restore", ROOT=fresh, RECORDS=records)
    assert r.returncode == 0, r.stderr
    assert json.loads((fresh / "enc-0" / "eval.json").read_text())["bleu"] == 40.0
    assert (fresh / "enc-0" / "run" / "run.json").read_text() == '{"steps": 1250}'
    assert json.loads((fresh / "rank" / "random1-enc-10.json").read_text())["name"] == "kept"
    assert not (fresh / "enc-0.005").exists()


def test_restore_without_records_and_archive_without_root_do_nothing(tmp_path):
    r = study("restore", ROOT=tmp_path / "root", RECORDS=tmp_path / "none")
    assert r.returncode == 0, r.stderr
    r = study("archive", ROOT=tmp_path / "absent", RECORDS=tmp_path / "rec")
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "rec").exists()


def test_settle_stage_refuses_points_that_settle_in_their_own_runs(tmp_path):
    r = study("settle", ROOT=tmp_path / "root", RECORDS=tmp_path / "rec")
    assert r.returncode == 2 and "SETTLE_INLINE" in r.stderr


def test_restores_started_together_all_succeed(tmp_path):
    # The `enc` and `all` streams start together on a new machine and restore the same records:
    # a copy that loses the race to the other process's ("File exists") must not end the stream.
    records = tmp_path / "records" / "de-x"
    for p in range(100):
        write(records / f"enc-{p}" / "eval.json", json.dumps({"name": f"enc-{p}"}))
        write(records / f"enc-{p}" / "run" / "run.json", '{"steps": 1250}')
    root = tmp_path / "cache" / "de-x"
    e = dict(os.environ, ROOT=str(root), RECORDS=str(records))
    procs = [subprocess.Popen(["bash", SCRIPT, "restore"], cwd=REPO, env=e,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(8)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    for p in range(100):
        assert json.loads((root / f"enc-{p}" / "eval.json").read_text())["name"] == f"enc-{p}"
