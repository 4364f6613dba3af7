"""Traces of real runs: recording MPI programs (`record`, with the PMPI library in
``recorder/``) and exporting traces to SimGrid's time-independent format (`export`)."""
