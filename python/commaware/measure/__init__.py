"""Measurements on real hardware (`commaware measure ...`): bandwidth-sharing penalties with MPI
(`penalties`, paper 004), the interference of communication on computation (`interference`,
paper 000), the tiled kernel with MPI (`tiling`, paper 001) and HYBRID coscheduling of MPI
jobs (`cosched`, paper 002). `mpi` holds what they share: finding and starting mpirun, the
worker side of a launch, message sizes, and the note of a run on one host.

The names below are those `commaware.measure` had when it was the penalties module alone.
"""

from .mpi import (MAX_MESSAGE_BYTES, MeasureError, check_bytes, find_mpirun, idle_barrier, launcher, mpi_env_rank,
                  mpi_env_size, mpi_library, parse_size)
from .penalties import (DEFAULT_BYTES, FORMAT, MAX_COMMS, MAX_ITERATIONS, VERSION, load_schemes,
                        measure_penalties)

__all__ = ["DEFAULT_BYTES", "FORMAT", "MAX_COMMS", "MAX_ITERATIONS", "MAX_MESSAGE_BYTES", "VERSION", "MeasureError",
           "check_bytes", "find_mpirun", "idle_barrier", "launcher", "load_schemes", "measure_penalties",
           "mpi_env_rank", "mpi_env_size", "mpi_library", "parse_size"]
