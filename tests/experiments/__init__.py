"""Tests of parameter sweeps and the results store."""
