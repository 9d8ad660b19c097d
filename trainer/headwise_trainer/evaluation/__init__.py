"""Scoring: sacreBLEU-compatible BLEU and chrF, evaluation of a model (PyTorch or the headwise
runtime's Python module) on a corpus split, export of a run."""
