"""Tests of the engine: simulate, streamed outputs, collectives, and agreement with SimGrid (flows, IB, SMPI replay)."""
