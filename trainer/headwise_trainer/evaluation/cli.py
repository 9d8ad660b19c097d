"""The evaluation subcommands of headwise-train: evaluate, export, model-card."""
from __future__ import annotations

from ..cli_support import add_corpus, add_overwrite, add_search, add_split, add_threads, \
    add_vocab, lazy


def add_evaluate(sub) -> None:
    e = sub.add_parser("evaluate", help="BLEU and chrF on a corpus split",
                       description="Translate a split (greedy or beam) and score it with BLEU "
                       "and chrF computed as sacreBLEU 2.x does. Gated models use test-time "
                       "gates (log_alpha > 0) unless --no-gates. --hwm scores a converted "
                       "model with the headwise runtime (its Python module, python/) the same "
                       "way; with --model too, both and their difference.")
    e.add_argument("--model",
                   help="run directory, ckpt-*.pt file, or exported checkpoint directory")
    e.add_argument("--hwm", metavar="MODEL.hwm",
                   help="a converted model, translated by the headwise runtime with the same "
                        "length-sorted chunks (--batch-size) and maximum lengths as PyTorch")
    e.add_argument("--hwm-input", choices=["text", "ids"], default="text",
                   help="--hwm translates the source text with the model's own tokenizer "
                        "(default) or the trainer's source ids (needs --vocab or --model)")
    e.add_argument("--hwm-hyps", help="write the runtime's translations to this file "
                                      "(with --hwm alone, --hyps does)")
    add_corpus(e, from_data=False)
    add_vocab(e, "the run's / checkpoint's")
    add_split(e, "test")
    add_search(e)
    e.add_argument("--no-gates", action="store_true", help="ignore head gates (all heads on)")
    e.add_argument("--mask-heads", action="append", metavar="BLOCK=H,H",
                   help="switch heads off, e.g. model.encoder.layers.0.self_attn=1,5 "
                        "(repeatable)")
    e.add_argument("--shortlist", metavar="FILE",
                   help="PyTorch decodes each sentence over the pieces this vocabulary "
                        "shortlist (`headwise-train shortlist`) allows for it, as the runtime "
                        "does for a model converted with it (an --hwm uses the shortlist its "
                        "file carries, if any)")
    e.add_argument("--hyps", help="write the translations to this file")
    e.add_argument("--json", help="write the scores to this JSON file")
    add_threads(e)
    e.set_defaults(func=lazy("evaluation.evaluate:run_evaluate"))


def add_export(sub) -> None:
    x = sub.add_parser("export", help="training run -> Hugging Face-layout checkpoint dir",
                       description="Write config.json, model.safetensors, source.spm, "
                       "target.spm and vocab.json for the converter.")
    x.add_argument("--run", required=True, help="run directory or ckpt-*.pt file")
    x.add_argument("--out", required=True, help="checkpoint directory to write")
    add_vocab(x, "the one the run used")
    x.add_argument("--dtype", default="f32", choices=["f32", "f16", "bf16"],
                   help="tensor type in model.safetensors (gates stay F32)")
    x.add_argument("--average", type=int, default=1, metavar="N",
                   help="export the mean of the newest N checkpoints of the run (default 1)")
    x.add_argument("--record", metavar="FILE",
                   help="also write what was exported (the checkpoint or the averaged steps) "
                        "as JSON to FILE, for a model card")
    add_overwrite(x, "replace an existing --out")
    x.set_defaults(func=lazy("evaluation.evaluate:run_export"))


def add_model_card(sub) -> None:
    m = sub.add_parser("model-card", help="a model card's tables from its records",
                       description="Write the generated part of MODELS/README.md (between its "
                       "markers) from the records the shipping pipeline leaves there: test "
                       "scores of each base (eval/NAME-test-{greedy,beam4}.json), the pruned "
                       "model's prune-eval records, the base run's dev history and the demo "
                       "sentences. With --demo, first translate the demo sentences with those "
                       ".hwm files of MODELS through the runtime (demo.json).")
    m.add_argument("--models", required=True, help="models directory, e.g. models/en-de")
    m.add_argument("--demo", nargs="+", metavar="FILE.hwm",
                   help="model files (names inside --models) to translate the demo sentences "
                        "with")
    m.add_argument("--sentence", action="append", help="a demo sentence (repeatable)")
    m.add_argument("--sentences-file", help="demo sentences, one per line")
    m.add_argument("--beam", type=int, default=1, help="search of the demo (default greedy)")
    m.add_argument("--build-dir", help="the build whose Python module runs the demo "
                                       "(default: build/default)")
    m.set_defaults(func=lazy("evaluation.model_card:run_model_card"))
