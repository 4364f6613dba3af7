"""Tests of multicast scheduling (paper 003)."""
