"""commaware: predict and schedule communicating work on clusters where communication is not free.

Quick use::

    import commaware
    result = commaware.simulate("examples/cluster16.json", "examples/ring.json")
    print(result.makespan)
    result.messages  # pandas DataFrame, one row per message
"""

from ._core import (
    CommawareError,
    DeadlockError,
    InputError,
    InternalError,
    MulticastError,
    OptionsError,
    OutputError,
    PlacementError,
    PlatformError,
    TraceError,
    __version__,
)
from .api import Platform, Result, Trace, load_platform, load_trace, simulate

__all__ = [
    "CommawareError",
    "DeadlockError",
    "InputError",
    "InternalError",
    "MulticastError",
    "OptionsError",
    "OutputError",
    "PlacementError",
    "Platform",
    "PlatformError",
    "Result",
    "Trace",
    "TraceError",
    "__version__",
    "load_platform",
    "load_trace",
    "simulate",
]
