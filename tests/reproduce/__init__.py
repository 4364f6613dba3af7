"""Tests of `commaware reproduce`: the papers' reproductions and the report."""
