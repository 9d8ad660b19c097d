#!/usr/bin/env python3
"""ctest fixture of the end-to-end tests: writes the random test checkpoints and their PyTorch
reference outputs (trainer/tools/make_test_checkpoints.py) into OUT/ckpt, then converts each
with headwise-convert into OUT/NAME.hwm (and OUT/NAME.fp16.hwm, OUT/NAME.int8.hwm, and
OUT/NAME.shortlist.hwm: fp32 with the checkpoint's random shortlist.tsv). Fails (non-zero) on the
first error, naming it."""

import argparse
import json
import subprocess
import sys
from pathlib import Path


def run(cmd):
    print("+ " + " ".join(str(c) for c in cmd), flush=True)
    result = subprocess.run([str(c) for c in cmd])
    if result.returncode != 0:
        sys.exit(f"e2e prepare: {Path(cmd[0]).name} ... exited with {result.returncode}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generator", required=True, type=Path)
    parser.add_argument("--converter", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()
    ckpt = args.out / "ckpt"
    run([sys.executable, args.generator, ckpt])
    names = json.loads((ckpt / "manifest.json").read_text())["checkpoints"]
    for name in names:
        run([args.converter, ckpt / name, "-o", args.out / f"{name}.hwm", "--force"])
        for weights in ("fp16", "int8"):  # format_e2e_test.cc
            run([args.converter, ckpt / name, "-o", args.out / f"{name}.{weights}.hwm", "--force",
                 "--weights", weights])
        run([args.converter, ckpt / name, "-o", args.out / f"{name}.shortlist.hwm", "--force",
             "--shortlist", ckpt / name / "shortlist.tsv"])  # e2e_test.cc
    return 0


if __name__ == "__main__":
    sys.exit(main())
