"""Experiments at scale: parameter sweeps (`sweep`) over the commands of `sweepable`, their rows
kept in a results store (`results`) queried with DuckDB."""
