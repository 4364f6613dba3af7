"""`commaware.results` is `commaware.experiments.results` (the import path docs/sweeps.md shows)."""

import sys

from .experiments import results

sys.modules[__name__] = results
