"""Pruning experiments: L0 curves over lambda, rank pruning, controls, records and the generated
report."""
