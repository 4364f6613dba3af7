"""OTF2 archives for the tests, written with the `otf2` package's writer as Score-P writes
them (one location per rank, MPI regions entered and left around the MPI records, the
communicators in the definitions), each beside the same program as our JSON trace.

`Program(path, ranks)` gives one `Rank` per rank; each call adds the OTF2 records and the
JSON op together. MPI calls take no time in the archive (Enter and Leave at one instant), so
the compute between them is exactly what the JSON trace states.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import otf2
from otf2.enums import CollectiveOp, GroupType, Paradigm, RegionRole

#: Ticks per second of the archives' clock.
RESOLUTION = 1_000_000_000


class Rank:
    def __init__(self, program: Program, r: int, writer: Any) -> None:
        self.program, self.r, self.w = program, r, writer
        self.t = program.start
        self.ops: list[dict[str, Any]] = []
        self.requests = 0

    def compute(self, seconds: float, op: bool = True) -> None:
        self.t += round(seconds * RESOLUTION)
        if op:
            self.ops.append({"op": "compute", "seconds": seconds})

    def call(self, name: str, *records: tuple[str, tuple[Any, ...]]) -> None:
        region = self.program.region(name)
        self.w.enter(self.t, region)
        for kind, args in records:
            getattr(self.w, kind)(self.t, *args)
        self.w.leave(self.t, region)

    def send(self, dst: int, nbytes: int, tag: int = 0, comm: Any = None) -> None:
        self.call("MPI_Send", ("mpi_send", (dst, comm or self.program.world, tag, nbytes)))
        self.ops.append({"op": "send", "dst": dst, "bytes": nbytes, "tag": tag})

    def recv(self, src: int, nbytes: int, tag: int = 0) -> None:
        self.call("MPI_Recv", ("mpi_recv", (src, self.program.world, tag, nbytes)))
        self.ops.append({"op": "recv", "src": src, "tag": tag})

    def isend(self, dst: int, nbytes: int, tag: int = 0) -> int:
        req = 1000 + self.requests
        self.call("MPI_Isend", ("mpi_isend", (dst, self.program.world, tag, nbytes, req)))
        self.ops.append({"op": "isend", "dst": dst, "bytes": nbytes, "tag": tag})
        self.requests += 1
        return req

    def irecv(self, src: int, nbytes: int, tag: int = 0) -> tuple[int, int, int, int]:
        """Posts the request; its source, tag and size go in the completing record."""
        req = 1000 + self.requests
        self.call("MPI_Irecv", ("mpi_irecv_request", (req,)))
        self.ops.append({"op": "irecv", "src": src, "tag": tag})
        self.requests += 1
        return (req, src, tag, nbytes)

    def waitall(self, reqs: list[Any]) -> None:
        records = []
        for req in reqs:
            if isinstance(req, tuple):
                rid, src, tag, nbytes = req
                records.append(("mpi_irecv", (src, self.program.world, tag, nbytes, rid)))
            else:
                records.append(("mpi_isend_complete", (req,)))
        self.call("MPI_Waitall", *records)
        self.ops.append({"op": "waitall"})

    def collective(self, name: str, op: CollectiveOp, root: int, sent: int, received: int,
                   json_op: dict[str, Any], comm: Any = None) -> None:
        self.call(name, ("mpi_collective_begin", ()),
                  ("mpi_collective_end", (op, comm or self.program.world, root, sent, received)))
        self.ops.append(json_op)


class Program:
    """An archive at `path` (its anchor is `path/traces.otf2`) and the JSON trace beside it."""

    def __init__(self, path: Path, n_ranks: int) -> None:
        self.path = path
        self.start = 5 * RESOLUTION  # the clock does not start at 0
        self.archive = otf2.writer.open(str(path), timer_resolution=RESOLUTION)
        self.trace = self.archive.__enter__()
        defs = self.trace.definitions
        node = defs.system_tree_node("node")
        groups = [defs.location_group(f"MPI Rank {r}", system_tree_parent=node) for r in range(n_ranks)]
        self.locations = [defs.location("Master thread", group=g) for g in groups]
        defs.group("", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=self.locations)
        world_group = defs.group("", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
                                 members=list(range(n_ranks)))
        self.world = defs.comm("MPI_COMM_WORLD", group=world_group)
        self._regions: dict[str, Any] = {}
        self.ranks = [Rank(self, r, self.trace.event_writer_from_location(loc)) for r, loc in enumerate(self.locations)]
        for rank in self.ranks:  # MPI_Init at the clock's start
            rank.call("MPI_Init")

    def region(self, name: str) -> Any:
        if name not in self._regions:
            role = RegionRole.POINT2POINT if "send" in name.lower() or "recv" in name.lower() else RegionRole.FUNCTION
            self._regions[name] = self.trace.definitions.region(name, region_role=role, paradigm=Paradigm.MPI)
        return self._regions[name]

    def close(self) -> tuple[Path, Path]:
        """Ends every rank with MPI_Finalize; returns (anchor file, JSON trace file)."""
        for rank in self.ranks:
            rank.call("MPI_Finalize")
        self.archive.__exit__(None, None, None)
        json_path = self.path.with_suffix(".json")
        json_path.write_text(json.dumps({"ranks": [r.ops for r in self.ranks]}))
        return self.path / "traces.otf2", json_path
