"""Head analysis of a (gated or ungated) MarianMT model: which heads matter and what they do.

    forward.py   one teacher-forced pass that records every head's output and attention, with
                 the propagation rules of LRP built into its backward (rules.py)
    lrp.py       head relevance by layer-wise relevance propagation (AttnLRP or the z-rule)
    michel.py    Michel et al.'s gradient importance (|d loss / d head mask|)
    stats.py     confidence, positional and rare-word statistics of the attention weights
    conllu.py    CoNLL-U parses -> dependency arcs over subword positions; syntactic accuracy
    report.py    analysis.json (format "headwise-head-analysis", version 1)
    plots.py     PNG heatmaps, layers x heads, like Figure 1 of Voita et al. (2019)
    compare.py   Spearman correlation and top-K overlap of two head rankings
    stabiliser.py  how the z-rule's ranking depends on its stabiliser (rules.Z_EPSILON)
The `analyze` subcommand (cli.py) runs them all.
"""
