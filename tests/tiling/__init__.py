"""Tests of tiling (paper 001)."""
