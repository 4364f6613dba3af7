"""Tests of traces: SimGrid's time-independent format (read, export) and recording real MPI runs."""
