#!/usr/bin/python3
"""ctest bench.throughput_smoke: headwise_throughput runs, counts tokens and, with --profile,
the runtime.s operation timers (runtime/src/op_profile.h) account for the run (shares in [0, 1] summing to 1, each
timed category seen on the model that has it), so the profile cannot rot silently.

    throughput_smoke.py HEADWISE_THROUGHPUT MODEL.hwm LINES.txt
"""
import json
import subprocess
import sys


def main() -> int:
    exe, model, lines = sys.argv[1:4]
    r = subprocess.run([exe, "-m", model, "-i", lines, "--batch", "8", "--beam", "2",
                        "--profile", "--output", "/dev/null"], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr)
        return 1
    j = json.loads(r.stdout)
    problems = []
    if not (j["target_tokens"] > 0 and j["tokens_per_s"] > 0 and j["batches"] > 0):
        problems.append("no tokens or batches")
    if j["failed_lines"] != 0:
        problems.append(f"{j['failed_lines']} lines failed")
    shares = j["profile"]["shares"]
    if any(not 0 <= v <= 1 for v in shares.values()):
        problems.append(f"a share outside [0, 1]: {shares}")
    if abs(sum(shares.values()) - 1) > 0.02:
        problems.append(f"shares sum to {sum(shares.values())}")
    for k in ("projections", "attention", "feed_forward", "output_layer", "search"):
        if not j["profile"]["seconds"][k] > 0:
            problems.append(f"{k}: no time recorded (timers not on?)")
    if not (j["profile"]["decoder_steps"] > 0 and j["profile"]["seconds"]["encoder_all"] > 0):
        problems.append("no decoder steps or encoder time recorded")
    print(json.dumps(j["profile"], indent=1))
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
