"""Where the trainer lives in the checkout: its directory (trainer/), the repository root, the
`headwise-train` entry script and the committed corpus locks (trainer/data/)."""
from __future__ import annotations

import os

TRAINER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_DIR = os.path.dirname(TRAINER_DIR)
ENTRY = os.path.join(TRAINER_DIR, "headwise-train")
LOCK_DIR = os.path.join(TRAINER_DIR, "data")
