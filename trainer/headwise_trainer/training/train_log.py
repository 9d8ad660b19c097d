"""Progress reporting of `headwise-train train`: one log line every N steps (loss, learning
rate, tokens/s, dev BLEU so far, elapsed time, ETA), also written to RUN/train.log (appended on
resume), and a tqdm bar instead of the lines on a terminal."""
from __future__ import annotations

import os
import sys
import time
from typing import Callable, List, Optional

LOG_FILE = "train.log"


def hms(sec: float) -> str:
    sec = int(sec)
    return f"{sec // 3600}:{sec % 3600 // 60:02d}:{sec % 60:02d}"


class RunLog:
    """Writes messages to `echo` (stdout by default) and appends them to run_dir/train.log.
    Disabled (no output at all) on the non-main ranks of a DDP run."""

    def __init__(self, run_dir: Optional[str], echo: Callable[[str], None] = print,
                 enabled: bool = True):
        self.echo, self.enabled = echo, enabled
        self.file = open(os.path.join(run_dir, LOG_FILE), "a", encoding="utf-8") \
            if enabled and run_dir else None
        self.bar = None

    def __call__(self, msg: str, echo: bool = True) -> None:
        if not self.enabled:
            return
        if self.file is not None:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            self.file.write("".join(f"{stamp} {line}\n" for line in msg.split("\n")))
            self.file.flush()
        if echo:
            if self.bar is not None:
                self.bar.write(msg)
            else:
                self.echo(msg)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


def bleu_summary(history: List[dict], last: int = 4) -> str:
    """'dev BLEU 9.2@800 20.0@1200 (best 20.0@1200)' from the evaluation records."""
    if not history:
        return "dev BLEU -"
    best = max(history, key=lambda r: (r["dev_bleu"], -r["step"]))
    shown = " ".join(f"{r['dev_bleu']:.1f}@{r['step']}" for r in history[-last:])
    return f"dev BLEU {shown} (best {best['dev_bleu']:.1f}@{best['step']})"


class Progress:
    """Log lines every `log_every` steps (and a tqdm bar on a terminal); tokens/s over the steps
    since the previous line, ETA to `total` from this session's mean step time."""

    def __init__(self, log: RunLog, start_step: int, total: int, log_every: int,
                 history: List[dict]):
        self.log, self.total, self.log_every, self.history = log, total, log_every, history
        self.t0 = self.t_last = time.time()
        self.s0, self.tokens = start_step, 0
        if log.enabled and sys.stderr.isatty():
            try:
                from tqdm import tqdm
                log.bar = tqdm(total=total, initial=start_step, unit="step", dynamic_ncols=True)
            except ImportError:
                pass

    def update(self, step: int, tokens: int, loss: float, lr: float, epoch: int) -> None:
        if not self.log.enabled:
            return
        self.tokens += tokens
        bar = self.log.bar
        if bar is not None:
            bar.update(1)
            bar.set_postfix(loss=f"{loss:.3f}", lr=f"{lr:.2e}")
        if step % self.log_every == 0 or step == self.total:
            now = time.time()
            tps = self.tokens / max(now - self.t_last, 1e-9)
            self.tokens, self.t_last = 0, now
            eta = (self.total - step) * (now - self.t0) / max(step - self.s0, 1)
            self.log(f"step {step}/{self.total} | epoch {epoch} | loss {loss:.4f} | lr {lr:.3e} "
                     f"| {tps:.0f} tok/s | {bleu_summary(self.history)} | elapsed "
                     f"{hms(now - self.t0)} | ETA {hms(eta)}", echo=bar is None)

    def close(self) -> None:
        if self.log.bar is not None:
            self.log.bar.close()
            self.log.bar = None
