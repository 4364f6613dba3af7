"""Tests of interference (paper 000): fits and models, throughput bounds on trees, task farming."""
