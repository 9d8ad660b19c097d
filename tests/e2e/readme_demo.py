#!/usr/bin/python3
"""The README's first command (scripts/demo.sh) ends by printing the shipped model's
translations of a few sentences, and the README shows them. This runs headwise-translate on the
sentences demo.sh translates, with the model it uses, and compares the output line for line
with the README's block, so that a re-shipped model cannot leave the README showing another
model's output (7d12cfb did: 'konnte' where the shipped model says 'kann').

    readme_demo.py TRANSLATE_BIN REPO_DIR
"""
import re
import subprocess
import sys
from pathlib import Path


def demo_call(demo_sh: str):
    """(sentences, model path) of demo.sh's `printf '%s\\n' "..." ... | headwise-translate -m M`."""
    m = re.search(r"printf '%s\\n' (.*?)\|\s*\n\s*\S*headwise-translate\" -m (\S+)", demo_sh,
                  re.S)
    if not m:
        raise SystemExit("readme_demo: scripts/demo.sh has no printf ... | headwise-translate -m")
    return re.findall(r'"([^"]*)"', m.group(1)), m.group(2)


def readme_block(readme: str):
    lines = readme.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith("The last lines it prints")]
    if len(starts) != 1:
        raise SystemExit("readme_demo: README.md needs one paragraph 'The last lines it prints'")
    j = starts[0] + 1
    while j < len(lines) and not lines[j].startswith("    "):
        j += 1
    block = []
    while j < len(lines) and lines[j].startswith("    "):
        block.append(lines[j][4:])
        j += 1
    return block


def main() -> int:
    translate, repo = sys.argv[1], Path(sys.argv[2])
    sentences, model = demo_call((repo / "scripts" / "demo.sh").read_text(encoding="utf-8"))
    shown = readme_block((repo / "README.md").read_text(encoding="utf-8"))
    out = subprocess.run([translate, "-m", str(repo / model)], input="\n".join(sentences) + "\n",
                         capture_output=True, text=True, check=True, timeout=300).stdout
    got = out.rstrip("\n").split("\n")
    if got != shown:
        print("README.md shows:", *shown, sep="\n  ")
        print(f"{model} translates {len(sentences)} demo sentences as:", *got, sep="\n  ")
        return 1
    print(f"README's demo block = {model}'s output ({len(got)} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
