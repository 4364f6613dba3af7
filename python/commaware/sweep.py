"""`commaware.sweep` is `commaware.experiments.sweep` (the import path docs/sweeps.md shows)."""

import sys

from .experiments import sweep

sys.modules[__name__] = sweep
