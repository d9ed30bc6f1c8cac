"""Benchmarks: speed and memory as ratios measured in one run, so they compare across machines."""
