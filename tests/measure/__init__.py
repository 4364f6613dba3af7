"""Tests of `commaware measure`: real MPI measurements and their bad options."""
