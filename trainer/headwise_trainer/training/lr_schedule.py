"""Learning-rate schedules of `headwise-train train`: a pure function of the step, so a
resumed run continues the same curve.

Every schedule warms up linearly from peak/warmup at step 1 to `peak` at step `warmup`, then:
  inverse-sqrt  peak * sqrt(warmup / step)  (fairseq / Marian transformer-base practice; no
                end point, the right choice when early stopping decides the length)
  constant      peak
  cosine        half a cosine from peak at `warmup` to `min_lr` at `decay_steps`, then min_lr
  linear        a straight line from peak at `warmup` to `min_lr` at `decay_steps`, then min_lr
"""
from __future__ import annotations

import math

SCHEDULES = ("inverse-sqrt", "constant", "cosine", "linear")


def inverse_sqrt_lr(step: int, peak: float, warmup: int) -> float:
    """Linear warm-up to `peak` over `warmup` steps, then peak * sqrt(warmup / step)."""
    step = max(step, 1)
    return peak * min(step / warmup, math.sqrt(warmup / step))


def learning_rate(step: int, schedule: str, peak: float, warmup: int, decay_steps: int = 0,
                  min_lr: float = 0.0) -> float:
    """The learning rate of optimiser step `step` (1-based)."""
    step = max(step, 1)
    warmup = max(warmup, 1)
    if schedule == "inverse-sqrt":
        return inverse_sqrt_lr(step, peak, warmup)
    if step <= warmup:
        return peak * step / warmup
    if schedule == "constant":
        return peak
    if schedule not in ("cosine", "linear"):
        raise ValueError(f"learning-rate schedule: expected one of {', '.join(SCHEDULES)}, "
                         f"found {schedule!r}")
    if decay_steps <= warmup:
        raise ValueError(f"--lr-schedule {schedule}: the decay ends at step {decay_steps}, "
                         f"expected a step after the warm-up ({warmup})")
    frac = min(1.0, (step - warmup) / (decay_steps - warmup))
    shape = 0.5 * (1.0 + math.cos(math.pi * frac)) if schedule == "cosine" else 1.0 - frac
    return min_lr + (peak - min_lr) * shape
