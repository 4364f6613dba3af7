"""commaware: predict and schedule communicating work on clusters where communication is not free.

Quick use::

    import commaware
    result = commaware.simulate("examples/cluster16.json", "examples/ring.json")
    print(result.makespan)
    result.messages  # pandas DataFrame, one row per message

Interconnect penalty models (paper 004): ``commaware.sharing.penalties(scheme, "gige")``,
``commaware.sharing.calibrate_penalty(measured)``, ``commaware.measure.measure_penalties(scheme)``.
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
    SchemeError,
    TraceError,
    WorkloadError,
    __version__,
)
from .api import (CommMatrix, JobTimes, Platform, Result, Trace, load_platform, load_trace, simulate, simulate_jobs,
                  summarize_trace, timeline_extensions)

__all__ = [
    "CommMatrix",
    "CommawareError",
    "DeadlockError",
    "InputError",
    "InternalError",
    "JobTimes",
    "MulticastError",
    "OptionsError",
    "OutputError",
    "PlacementError",
    "Platform",
    "PlatformError",
    "Result",
    "SchemeError",
    "Trace",
    "TraceError",
    "WorkloadError",
    "__version__",
    "load_platform",
    "load_trace",
    "simulate",
    "simulate_jobs",
    "summarize_trace",
    "timeline_extensions",
]
