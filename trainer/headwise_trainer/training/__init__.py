"""Base training: the training loop (which pruning extends), learning-rate schedules, losses, dev
evaluation and early stopping, progress logs, multi-process launch, run plots."""
