"""Tests of cluster job scheduling (paper 002)."""
