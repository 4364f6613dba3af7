"""`simulate --timeline FILE.perfetto-trace` (issue 42, item 3): the Perfetto trace, read back with
the message classes Perfetto publishes (PyPI `perfetto`, `perfetto_trace_pb2`, a dev
dependency), must show exactly the run: a process track per host and a thread track per rank
under it, one slice per trace operation with its arguments, one flow per message of the
`--json` document from its send to its receive, and the links' load as counters."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from conftest import EXAMPLES
from traces.test_timeline_paje import ring_trace, sends

BEGIN, END, INSTANT, COUNTER = (pb.TrackEvent.TYPE_SLICE_BEGIN, pb.TrackEvent.TYPE_SLICE_END,
                                pb.TrackEvent.TYPE_INSTANT, pb.TrackEvent.TYPE_COUNTER)


def ns(seconds: float) -> int:
    return round(seconds * 1e9)


class Read:
    """A Perfetto trace as Perfetto's classes parse it: its tracks by uuid and each track's
    events in file order, as (timestamp, event)."""

    def __init__(self, path: Path):
        trace = pb.Trace()
        trace.ParseFromString(path.read_bytes())
        self.tracks: dict[int, pb.TrackDescriptor] = {}
        self.events: dict[int, list[tuple[int, pb.TrackEvent]]] = defaultdict(list)
        self.times: list[int] = []
        for packet in trace.packet:
            assert packet.trusted_packet_sequence_id == 1
            if packet.HasField("track_descriptor"):
                d = packet.track_descriptor
                assert d.uuid not in self.tracks
                self.tracks[d.uuid] = d
            else:
                assert packet.HasField("track_event")
                # Every event is on a track described before it.
                assert packet.track_event.track_uuid in self.tracks
                self.events[packet.track_event.track_uuid].append((packet.timestamp, packet.track_event))
                self.times.append(packet.timestamp)

    def track(self, name: str) -> int:
        (uuid,) = [u for u, d in self.tracks.items() if d.name == name]
        return uuid

    def slices(self, rank: int) -> list[tuple[str, int, int, dict]]:
        """Rank `rank`'s slices: (name, start, end, arguments), the nested instants left out."""
        out, open_ = [], []
        for t, e in self.events[self.track(f"rank {rank}")]:
            if e.type == BEGIN:
                open_.append((e.name, t, args(e)))
            elif e.type == END:
                name, start, a = open_.pop()
                out.append((name, start, t, a))
        assert open_ == []
        return out


def args(e: pb.TrackEvent) -> dict:
    out = {}
    for a in e.debug_annotations:
        which = a.WhichOneof("value")
        out[a.name] = getattr(a, which)
    return out


def simulate(cli, tmp_path: Path, platform: Path, trace: dict, name: str = "run.perfetto-trace") -> tuple[dict, Read]:
    (tmp_path / "trace.json").write_text(json.dumps(trace))
    timeline = tmp_path / name
    doc = json.loads(cli("simulate", platform, tmp_path / "trace.json", "--json", "--timeline", timeline,
                         check=True).stdout)
    return doc, Read(timeline)


def test_a_ring_shows_each_op_as_a_slice_and_each_message_as_a_flow_at_its_json_times(cli, tmp_path):
    trace = ring_trace(4)
    doc, read = simulate(cli, tmp_path, EXAMPLES / "cluster16.json", trace)
    assert read.times == sorted(read.times), "events come in time order"
    for r, ops in enumerate(trace["ranks"]):
        slices = read.slices(r)
        names = {"compute": "compute", "send": "MPI_Send", "recv": "MPI_Recv"}
        assert [s[0] for s in slices] == [names[op["op"]] for op in ops]
        assert slices[-1][2] == ns(doc["ranks"][r]["end"])
        # The rank's thread track is under its host's process track, as the run placed it.
        rank_track = read.tracks[read.track(f"rank {r}")]
        host = read.tracks[rank_track.parent_uuid]
        assert rank_track.thread.pid == host.process.pid and rank_track.thread.tid == r + 1
        assert host.name == host.process.process_name == doc["ranks"][r]["host"]
    # An operation's fields are its slice's arguments.
    send = [s for s in read.slices(0) if s[0] == "MPI_Send"][0]
    assert send[3] == {"dst": 1, "bytes": 1000, "tag": 3}
    assert [s[1:3] for s in read.slices(0) if s[0] == "compute"] == [(0, ns(0.01))]
    # Each message: a flow from a `send` instant on its sender's track to a `receive` on its
    # receiver's, around the --json message's transfer.
    out, into = {}, {}
    for uuid, events in read.events.items():
        if not read.tracks[uuid].HasField("thread"):
            continue  # a link's counter
        rank = read.tracks[uuid].thread.tid - 1
        for t, e in events:
            if e.type == INSTANT and e.name == "send":
                (flow,) = e.flow_ids
                out[flow] = (rank, t, args(e))
            elif e.type == INSTANT and e.name == "receive":
                (flow,) = e.terminating_flow_ids
                into[flow] = (rank, t, args(e))
    assert out.keys() == into.keys() and len(out) == len(doc["messages"]) == 4
    flows = sorted((out[f][0], into[f][0], out[f][2]["bytes"], out[f][1], into[f][1]) for f in out)
    for (src, dst, size, sent, received), m in zip(flows, sorted(doc["messages"], key=lambda m: m["src_rank"])):
        assert (src, dst, size) == (m["src_rank"], m["dst_rank"], m["bytes"])
        assert sent <= ns(m["start"]) <= ns(m["end"]) <= received


def test_the_links_load_is_a_counter_track_per_link(cli, tmp_path):
    # 10^6 B at 1.25e8 B/s after a 1e-4 s latency: the flow runs from 1e-4 to 0.0081 s.
    platform = tmp_path / "p.json"
    platform.write_text(json.dumps({"cluster": {"count": 2, "speed": 1e9, "prefix": "h"},
                                    "network": {"bandwidth": 1.25e8, "latency": 1e-4}}))
    _, read = simulate(cli, tmp_path, platform, sends([(0, 1, 1e6)], 2), name="run.pftrace")
    links = {d.name: u for u, d in read.tracks.items() if d.HasField("counter")}
    assert set(links) == {"h0_UP", "h1_DOWN"}
    for uuid in links.values():
        assert read.tracks[read.tracks[uuid].parent_uuid].name == "links"
        assert read.tracks[uuid].counter.unit_name == "B/s"
        values = [(t, e.double_counter_value) for t, e in read.events[uuid] if e.type == COUNTER]
        assert values == [(ns(1e-4), pytest.approx(1.25e8, rel=1e-12)), (ns(0.0081), 0.0)]


def test_the_api_writes_a_perfetto_trace(tmp_path):
    import commaware

    out = tmp_path / "api.perfetto-trace"
    result = commaware.simulate(EXAMPLES / "cluster16.json", EXAMPLES / "alltoall.json", timeline=out)
    read = Read(out)
    flows = sum(len(e.flow_ids) for events in read.events.values() for _, e in events)
    assert flows == result.message_stats["count"] == len(result.messages) > 0
    ranks = [d for d in read.tracks.values() if d.HasField("thread")]
    assert len(ranks) == len(result.ranks)
