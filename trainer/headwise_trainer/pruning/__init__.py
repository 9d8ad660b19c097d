"""L0 head pruning: fine-tuning with Hard Concrete gates (training's loop with gate hooks), its
log, and scoring of head layouts."""
