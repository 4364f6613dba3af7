"""Per-link statistics (issue 28 item 7): `simulate --links/--link-plot`, the `--json` links and
`Result.links`.

The expected values are worked out by hand in each test, or summed from the routes the platform
gives (`platform routes`), never read back from the statistics under test.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict

import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import commaware as cw

BW = 1e8  # B/s on every link


def star(count: int) -> dict:
    return {"cluster": {"count": count, "speed": 1e9}, "network": {"bandwidth": BW, "latency": 0.0}}


def fat_tree() -> dict:
    # 2;2,2;1,1: hosts h0, h1 under one edge switch, h2, h3 under the other, one top switch.
    return {"cluster": {"count": 4, "speed": 1e9, "prefix": "h"},
            "network": {"bandwidth": BW, "latency": 1e-6,
                        "topology": {"kind": "fat_tree", "down": [2, 2], "up": [1, 1]}}}


def torus() -> dict:
    return {"cluster": {"count": 12, "speed": 1e9, "prefix": "t"},
            "network": {"bandwidth": BW, "latency": 1e-6, "topology": {"kind": "torus", "dims": [3, 4]}}}


def sends(pairs: list[tuple[int, int, float]], ranks: int) -> dict:
    """Each (src, dst, bytes) as a send, every receiver receiving in the same order; messages
    under the eager threshold (65,536 B) are detached, so all start at once."""
    ops: list[list[dict]] = [[] for _ in range(ranks)]
    for s, d, b in pairs:
        ops[s].append({"op": "send", "dst": d, "bytes": b})
    for s, d, _ in pairs:
        ops[d].append({"op": "recv", "src": s})
    return {"ranks": ops}


def by_name(frame) -> dict[str, dict]:
    return {row["name"]: row for row in frame.to_dict("records")}


def test_two_flows_on_one_link():
    # n0 and n1 each send 60,000 B to n2 at time 0: they share n2's down link at 5e7 B/s each,
    # both end at 1.2 ms; each sender's up link runs at half its bandwidth.
    r = cw.simulate(star(3), sends([(0, 2, 6e4), (1, 2, 6e4)], 3), link_stats=True)
    assert r.makespan == pytest.approx(1.2e-3, rel=1e-12)
    links = by_name(r.links)
    down = links["n2_DOWN"]
    assert down["bytes"] == pytest.approx(1.2e5, rel=1e-12)
    assert down["busy_time"] == pytest.approx(1.2e-3, rel=1e-12)
    assert down["peak_flows"] == 2
    assert down["peak_utilisation"] == pytest.approx(1.0, rel=1e-12)
    assert down["mean_utilisation"] == pytest.approx(1.0, rel=1e-12)
    for up in ("n0_UP", "n1_UP"):
        assert links[up]["bytes"] == pytest.approx(6e4, rel=1e-12)
        assert links[up]["peak_utilisation"] == pytest.approx(0.5, rel=1e-12)
        assert links[up]["peak_flows"] == 1
    assert links["n2_UP"]["bytes"] == 0 and links["n2_UP"]["busy_time"] == 0 and links["n2_UP"]["peak_flows"] == 0
    assert set(links) == {f"n{h}_{d}" for h in range(3) for d in ("UP", "DOWN")}  # unused loopbacks left out
    # The histogram holds the same bytes as the totals.
    width, hist = r.link_utilisation
    row = list(r.links["name"]).index("n2_DOWN")
    assert hist[row].sum() * width * BW == pytest.approx(1.2e5, rel=1e-9)
    assert hist.shape[1] <= 256 and hist.shape[1] * width >= r.makespan


def test_statistics_are_off_unless_asked():
    r = cw.simulate(star(2), sends([(0, 1, 10.0)], 2))
    with pytest.raises(cw.OptionsError, match="link_stats=True"):
        r.links


def test_fat_tree_bottleneck_is_the_upper_link(cli, write_json, tmp_path):
    # h0 -> h2 and h1 -> h3 (1 MB each, rendezvous) both climb to the one top switch: the edge
    # switch's up link and the other edge switch's down link carry both at 5e7 B/s each.
    path = write_json("ft.json", fat_tree())
    pairs = [(0, 2, 1e6), (1, 3, 1e6)]
    trace = write_json("t.json", sends(pairs, 4))
    out = tmp_path / "links.csv"
    proc = cli("simulate", path, trace, "--links", out, "--json", check=True)
    doc = json.loads(proc.stdout)
    table = by_name(pacsv.read_csv(out).to_pandas())
    expected: dict[str, float] = defaultdict(float)
    crossings: dict[str, int] = defaultdict(int)
    for s, d, b in pairs:
        route = json.loads(cli("platform", "routes", path, f"h{s}", f"h{d}", "--json", check=True).stdout)
        for link in route["links"]:
            expected[link["name"]] += b
            crossings[link["name"]] += 1
    upper = [name for name, n in crossings.items() if n == 2]
    assert len(upper) == 2  # the edge switch's up link and the other's down link
    for name, row in table.items():
        assert row["bytes"] == pytest.approx(expected.get(name, 0.0), rel=1e-12), name
    duration = 1e6 / (BW / 2)  # both flows at half the bandwidth all along
    for name in upper:
        assert table[name]["peak_flows"] == 2
        assert table[name]["busy_time"] == pytest.approx(duration, rel=1e-9)
        assert table[name]["peak_utilisation"] == pytest.approx(1.0, rel=1e-9)
    for name in set(expected) - set(upper):
        assert table[name]["peak_flows"] == 1
        assert table[name]["peak_utilisation"] == pytest.approx(0.5, rel=1e-9)
    # --json lists the most utilised first: the two upper links.
    assert [link["name"] for link in doc["links"][:2]] == sorted(upper, key=lambda n: list(table).index(n))
    assert len(doc["links"]) == len(expected)  # only links that carried anything, at most 10
    top = doc["links"][0]
    assert top["bytes"] == pytest.approx(2e6) and top["peak_flows"] == 2
    assert top["mean_utilisation"] == pytest.approx(2e6 / (BW * doc["makespan"]), rel=1e-12)


def test_json_has_no_links_unless_asked(cli, write_json):
    path = write_json("ft.json", fat_tree())
    trace = write_json("t.json", sends([(0, 2, 1e3)], 4))
    doc = json.loads(cli("simulate", path, trace, "--json", check=True).stdout)
    assert "links" not in doc


@pytest.mark.parametrize("seed", [1, 2])
def test_bytes_per_link_are_the_routes_bytes_on_a_torus(seed):
    rng = random.Random(seed)
    pairs = []
    for _ in range(60):
        s, d = rng.randrange(12), rng.randrange(12)
        pairs.append((s, d, float(rng.randrange(1, 60000))))
    platform = cw.load_platform(torus())
    r = cw.simulate(platform, sends(pairs, 12), link_stats=True)
    expected: dict[str, float] = defaultdict(float)
    for s, d, b in pairs:
        if s == d:
            expected[f"t{s}_loopback"] += b  # a host talking to itself uses its memory link
            continue
        for name, *_ in platform.route(f"t{s}", f"t{d}")[1]:
            expected[name] += b
    got = by_name(r.links)
    for name in set(expected) | set(got):
        assert got[name]["bytes"] == pytest.approx(expected.get(name, 0.0), rel=1e-9, abs=1e-6), name
        assert got[name]["busy_time"] <= r.makespan * (1 + 1e-12)
        assert got[name]["peak_utilisation"] <= 1 + 1e-9


def test_plots_are_valid_files(cli, write_json, tmp_path):
    # Few loaded links: lines; the torus with many: a heat map.
    star_path = write_json("star.json", star(3))
    star_trace = write_json("s.json", sends([(0, 2, 6e4), (1, 2, 6e4)], 3))
    svg = tmp_path / "star.svg"
    proc = cli("simulate", star_path, star_trace, "--link-plot", svg, "-q", check=True)
    assert "busiest links: n2_DOWN (mean 100.0%, peak 100.0%, 2 flows), n0_UP (mean 50.0%" in proc.stdout
    text = svg.read_text()
    assert "<svg" in text and "n2_DOWN" in text
    rng = random.Random(5)
    pairs = [(rng.randrange(12), rng.randrange(12), 5e4) for _ in range(40)]
    torus_path = write_json("torus.json", torus())
    torus_trace = write_json("t.json", sends(pairs, 12))
    png = tmp_path / "torus.png"
    cli("simulate", torus_path, torus_trace, "--link-plot", png, "--links", tmp_path / "t.parquet", "-q", check=True)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pq.read_table(tmp_path / "t.parquet").column_names == [
        "name", "bandwidth", "bytes", "busy_time", "mean_utilisation", "peak_utilisation", "peak_flows"]


def test_bad_input_is_one_line_exit_2_and_no_file(cli, write_json, tmp_path):
    path = write_json("star.json", star(2))
    trace = write_json("t.json", sends([(0, 1, 10.0)], 2))
    cases = [
        (["--links", tmp_path / "links.txt"], "links.txt: --links needs a .parquet or .csv file"),
        (["--link-plot", tmp_path / "plot.pdf"], "plot.pdf: --link-plot needs a .svg or .png file"),
        (["--links", tmp_path / "missing" / "links.csv"], "missing/links.csv"),
        (["--link-plot", tmp_path / "missing" / "plot.svg"], "missing/plot.svg"),
    ]
    for args, message in cases:
        proc = cli("simulate", path, trace, *args, "--json")
        assert proc.returncode == 2, proc.stderr
        assert proc.stdout == ""
        assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["star.json", "t.json"]


@pytest.mark.parametrize("model", ["maxmin", "contention_free", "gige", "myrinet", "infiniband", "ib-simgrid"])
def test_every_model_counts_the_bytes_of_each_route(model):
    # On a star with a backbone a message crosses its sender's up link, the backbone and its
    # receiver's down link; a host sending to itself uses its memory link.
    rng = random.Random(3)
    pairs = [(rng.randrange(6), rng.randrange(6), float(rng.randrange(1, 60000))) for _ in range(30)]
    platform = {"cluster": {"count": 6, "speed": 1e9},
                "network": {"bandwidth": BW, "latency": 1e-6, "backbone": 3 * BW}}
    r = cw.simulate(platform, sends(pairs, 6), model=model, link_stats=True)
    expected: dict[str, float] = defaultdict(float)
    for s, d, b in pairs:
        for name in ([f"n{s}_loopback"] if s == d else [f"n{s}_UP", "backbone", f"n{d}_DOWN"]):
            expected[name] += b
    got = dict(zip(r.links["name"], r.links["bytes"]))
    assert set(got) >= set(expected)
    for name in got:
        assert got[name] == pytest.approx(expected.get(name, 0.0), rel=1e-9, abs=1e-6), name
