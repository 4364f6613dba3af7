"""`commaware.sweepable` is `commaware.experiments.sweepable` (the import path docs/sweeps.md shows)."""

import sys

from .experiments import sweepable

sys.modules[__name__] = sweepable
