"""What the headwise-train subcommands share: CliError (reported as `headwise-train CMD: error:
...`, exit status 1), check_outputs (no output replaced without --overwrite, no input ever),
lazy (the one dispatch: a subcommand's module, and torch with it, is imported only when the
subcommand runs) and the arguments several subcommands take with one meaning.

Every subcommand is defined beside the code it runs, in PACKAGE/cli.py, as a function
add_<name>(sub) that adds its parser to `sub` (argparse subparsers); cli.SUBCOMMANDS lists them.
Such a parser sets exactly one default, func (a function of the parsed arguments): the
training commands record vars(args) without func in run.json and their checkpoints.
"""
from __future__ import annotations

import importlib
import os
from typing import Callable, List

from .data.corpus import SPLITS
from .model.beam_stop import BEAM_STOPS, DEFAULT_BEAM_STOP


class CliError(Exception):
    pass


def check_outputs(out_dir: str, names: List[str], overwrite: bool, inputs: List[str]) -> None:
    """Refuses to replace an existing output unless `overwrite`, and an input ever."""
    targets = [os.path.join(out_dir, n) for n in names]
    real = {os.path.realpath(t) for t in targets}
    for p in inputs:
        if os.path.realpath(p) in real:
            raise CliError(f"{p} is an input and an output of this command; choose another --out "
                           "(inputs are never overwritten)")
    existing = [t for t in targets if os.path.exists(t)]
    if existing and not overwrite:
        raise CliError(f"{existing[0]} exists; pass --overwrite to replace the outputs in "
                       f"{out_dir}")


def lazy(target: str) -> Callable:
    """func for set_defaults: target 'PACKAGE.MODULE:FUNCTION' (under headwise_trainer) is
    imported when the subcommand runs and called with the parsed arguments."""
    module, sep, function = target.partition(":")
    if not sep or not module or not function:
        raise ValueError(f"lazy({target!r}): expected 'PACKAGE.MODULE:FUNCTION'")

    def run(args):
        return getattr(importlib.import_module(f"{__package__}.{module}"), function)(args)
    run.target = target
    return run


# ---- arguments with one meaning wherever they appear ------------------------------------

def add_corpus(p, from_data: bool = True) -> None:
    """--data: the corpus directory."""
    p.add_argument("--data", required=True,
                   help="corpus directory from 'data'" if from_data else "corpus directory")


def add_vocab(p, default_from: str) -> None:
    """--vocab, optional: the vocabulary directory, by default `default_from`'s."""
    p.add_argument("--vocab", help=f"vocabulary directory (default: {default_from})")


def add_split(p, default: str) -> None:
    p.add_argument("--split", default=default, choices=list(SPLITS))


def add_resume(p) -> None:
    """--resume [CKPT] of the resumable training commands (train, prune)."""
    p.add_argument("--resume", nargs="?", const="auto", default=None, metavar="CKPT",
                   help="continue from the newest checkpoint in --out, or from CKPT")


def add_search(p) -> None:
    """Decoding of a split in length-sorted chunks: search, chunk size and sentence limit."""
    p.add_argument("--beam", type=int, default=1, help="1 = greedy (default)")
    p.add_argument("--length-penalty", type=float, default=1.0)
    p.add_argument("--beam-stop", choices=BEAM_STOPS, default=DEFAULT_BEAM_STOP,
                   help="when a beam search ends besides --beam finished hypotheses (the rules: "
                        "model/decode.py, include/headwise/headwise.hpp; default "
                        f"{DEFAULT_BEAM_STOP})")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--limit", type=int, default=0, help="first N sentences only")


def add_threads(p, default: int = 2, help: str = None) -> None:
    """--threads: torch's threads and those of the OpenBLAS it calls (threads.set_threads)."""
    p.add_argument("--threads", type=int, default=default,
                   help=help or "threads of torch and of the OpenBLAS it calls for fp32 "
                                "(default %(default)s)")


def add_device(p, help: str) -> None:
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help=help)


def add_overwrite(p, help: str) -> None:
    p.add_argument("--overwrite", action="store_true", help=help)
