#!/usr/bin/python3
"""Why int8 uses dynamic per-row activation scales: BLEU of a checkpoint when every nn.Linear
(attention q/k/v/out, fc1, fc2; lm_head stays fp32 in every variant) runs with int8 weights
(one scale per output channel, as --weights int8 stores them) and its input activations
rounded to int8 with
  - dynamic: one scale per row, computed at run time (headwise's int8 kernel);
  - static:  one fixed scale per operator input, calibrated as the max |x| seen on --calib
             sentences (what XNNPACK's qs8 / qc8 operators need: the input scale is fixed when
             the operator is created);
  - none:    int8 weights, fp32 activations (weight-only quantization).
Simulated in PyTorch with fake quantization (round to the int8 grid, compute in fp32). The
static variant is a lower bound on XNNPACK's static path's loss: those operators also round
their outputs to int8 with a fixed output scale, which this does not simulate.

    /usr/bin/python3 bench/int8_scheme.py CHECKPOINT --src test.en --ref test.de \
        --calib dev.en [--limit 300] [--calib-limit 200]
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "trainer"))


def read(path, limit):
    with open(path, encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f]
    return lines[:limit] if limit else lines


def main():
    import torch
    from headwise_trainer.model import decode
    from headwise_trainer.model.import_model import load_checkpoint_dir
    from headwise_trainer.evaluation.metrics import corpus_bleu
    from headwise_trainer.data.spm_vocab import Vocab

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkpoint")
    p.add_argument("--src", required=True)
    p.add_argument("--ref", required=True)
    p.add_argument("--calib", required=True, help="source sentences for the static scales")
    p.add_argument("--limit", type=int, default=300)
    p.add_argument("--calib-limit", type=int, default=200)
    p.add_argument("--max-len", type=int, default=128)
    a = p.parse_args()
    torch.set_num_threads(1)
    vocab = Vocab.load(a.checkpoint)
    src, ref = read(a.src, a.limit), read(a.ref, a.limit)
    calib = read(a.calib, a.calib_limit)

    model = load_checkpoint_dir(a.checkpoint).eval()
    linears = [m for n, m in model.named_modules()
               if isinstance(m, torch.nn.Linear) and not n.endswith("lm_head")]
    with torch.no_grad():
        for m in linears:  # per-output-channel int8 weights, as the converter writes them
            s = m.weight.abs().amax(dim=1, keepdim=True).clamp_min(1e-12) / 127
            m.weight.copy_(torch.round(m.weight / s).clamp(-127, 127) * s)

    mode = {"name": "none"}
    static_max = {}

    def hook(module, inputs):
        x = inputs[0]
        if mode["name"] == "calibrate":
            static_max[module] = max(static_max.get(module, 0.0), float(x.abs().max()))
            return None
        if mode["name"] == "dynamic":
            s = x.abs().amax(dim=-1, keepdim=True).clamp_min(1e-12) / 127
        elif mode["name"] == "static":
            s = torch.tensor(max(static_max.get(module, 0.0), 1e-12) / 127)
        else:
            return None
        return (torch.round(x / s).clamp(-127, 127) * s,) + tuple(inputs[1:])

    for m in linears:
        m.register_forward_pre_hook(hook)

    def translate(lines):
        out = []
        with torch.no_grad():
            for line in lines:
                hyp = decode.greedy(model, [vocab.encode_source(line)], a.max_len)[0]
                out.append(vocab.decode_target(hyp.ids))
        return out

    mode["name"] = "calibrate"
    translate(calib)  # the model's own greedy outputs drive the decoder side
    results = {}
    for name in ("none", "dynamic", "static"):
        mode["name"] = name
        results[name] = corpus_bleu(translate(src), ref).score
    print(f"{len(src)} lines of {a.src}; static scales from {len(calib)} lines of {a.calib}")
    print("| activations (int8 weights in every row) | BLEU |")
    print("|---|---|")
    labels = {"none": "fp32 (weight-only int8)", "dynamic": "int8, dynamic per-row scale",
              "static": "int8, static per-operator scale (calibrated max)"}
    for name, bleu in results.items():
        print(f"| {labels[name]} | {bleu:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
