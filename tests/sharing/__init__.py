"""Tests of bandwidth sharing and the penalty models of paper 004."""
