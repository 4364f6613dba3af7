"""``python -m commaware.measure --worker PLAN --out FILE``: the penalties worker, in every rank
of the mpirun that `commaware.measure.penalties` starts."""

import sys

from .penalties import _worker_main

sys.exit(_worker_main(sys.argv[1:]))
