"""Command-line entry point: `headwise-train SUBCOMMAND ...` (see trainer/headwise-train).

Each subcommand is defined beside the code it runs (PACKAGE/cli.py, add_<name>); SUBCOMMANDS
lists them in the order `headwise-train --help` shows them. What they share (errors, output
checks, lazy dispatch, common arguments) is in cli_support.py.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

from .analysis import cli as analysis_cli
from .cli_support import CliError
from .data import cli as data_cli
from .evaluation import cli as evaluation_cli
from .pruning import cli as pruning_cli
from .sweep import cli as sweep_cli
from .training import cli as training_cli

SUBCOMMANDS = (
    data_cli.add_data, data_cli.add_data_card, data_cli.add_spm, data_cli.add_shortlist,
    training_cli.add_train, evaluation_cli.add_evaluate, evaluation_cli.add_export,
    evaluation_cli.add_model_card,
    training_cli.add_average, training_cli.add_plot_run,
    pruning_cli.add_prune, pruning_cli.add_prune_eval,
    analysis_cli.add_analyze,
    sweep_cli.add_sweep,
)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="headwise-train",
        description="Corpus, vocabulary, training, evaluation and export of MarianMT models "
                    "for headwise.")
    sub = p.add_subparsers(dest="command", metavar="SUBCOMMAND")
    sub.required = True
    for add in SUBCOMMANDS:
        add(sub)
    return p


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    if getattr(args, "nproc", 1) > 1 and "WORLD_SIZE" not in os.environ:
        from .training.launch import launch, strip_nproc
        return launch(args.nproc, strip_nproc(argv))
    try:
        args.func(args)
    except KeyboardInterrupt:
        print("headwise-train: interrupted", file=sys.stderr)
        return 130
    except (CliError, ValueError, OSError) as e:
        print(f"headwise-train {args.command}: error: {e}", file=sys.stderr)
        return 1
    return 0
