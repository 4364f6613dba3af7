"""A SimGrid platform file's ``<config>`` (issue 39, item 2): each setting commaware models is
applied as the platform field of the same meaning, SimGrid's solver settings are accepted and
change nothing, anything else is refused with its line; a JSON platform over the file, and the
command line, override the file's settings; ``platform show`` lists each one."""

from __future__ import annotations

import json

import pytest

from commaware import load_platform, load_trace, simulate
from conftest import run_cli

CLUSTER = ('<cluster id="ft" prefix="node-" suffix="" radical="0-7" speed="1Gf" bw="125MBps" lat="20us" '
           'topology="FAT_TREE" topo_parameters="2;4,2;1,2;1,2" loopback_bw="5GBps" loopback_lat="1us"/>')


def xml(*props: tuple[str, str], after: bool = False) -> str:
    config = "<config>" + "".join(f'<prop id="{k}" value="{v}"/>' for k, v in props) + "</config>"
    body = f"{CLUSTER}\n{config}" if after else f"{config}\n{CLUSTER}"
    return f'<?xml version="1.0"?>\n<platform version="4.1">\n{body}\n</platform>\n'


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


# Receives posted late: whether a detached transfer waits for its receive shows.
TRACE = {"ranks": [[{"op": "isend", "dst": (r + 1) % 8, "bytes": 3000}, {"op": "compute", "flops": 1e5 * (r + 1)},
                    {"op": "irecv", "src": (r - 1) % 8}, {"op": "waitall"}, {"op": "bcast", "root": 0, "bytes": 100000},
                    {"op": "isend", "dst": (r + 4) % 8, "bytes": 200000}, {"op": "recv", "src": (r + 4) % 8},
                    {"op": "waitall"}, {"op": "allreduce", "bytes": 20000}] for r in range(8)]}


def makespan(platform, **options) -> float:
    return simulate(platform, load_trace(TRACE), **options).makespan


def test_each_modelled_setting_is_the_platform_field_of_the_same_meaning(tmp_path):
    plain = load_platform(write(tmp_path, "plain.xml", xml()))
    configured = load_platform(write(tmp_path, "smpi.xml", xml(
        ("network/model", "SMPI"), ("network/crosstraffic", "no"), ("network/optim", "Full"),
        ("surf/precision", "1e-13"), ("smpi/async-small-thresh", "65536"), ("smpi/bcast", "binomial_tree"),
        ("smpi/coll-selector", "ompi"), ("smpi/test", "2ms"), ("maxmin/precision", "1e-9"))))
    expected = makespan(plain, smpi="simgrid-3.32", params={"crosstraffic": 0}, coll="ompi,bcast=binomial_tree")
    # async-small-thresh 65536 is not the preset's 0: only through the file does it apply.
    as_json = {"simgrid_platform": "plain.xml",
               "network": {"smpi": {"preset": "simgrid-3.32", "async_small_thresh": 65536, "test": 0.002},
                           "parameters": {"crosstraffic": 0}, "collectives": {"preset": "ompi", "bcast": "binomial_tree"}}}
    assert makespan(configured) == makespan(load_platform(write(tmp_path, "p.json", json.dumps(as_json))))
    assert makespan(configured) != pytest.approx(expected, rel=1e-9)
    applied = {c["setting"]: c["applied_as"] for c in configured.summary()["simgrid_config"]}
    assert applied["network/model"] == "network.smpi.preset = simgrid-3.32"
    assert applied["network/crosstraffic"] == "network.parameters.crosstraffic"
    assert applied["smpi/coll-selector"] == "network.collectives.preset = ompi"
    assert applied["smpi/test"] == "network.smpi.test"
    assert applied["network/optim"].startswith("nothing") and applied["maxmin/precision"].startswith("nothing")
    assert plain.summary()["simgrid_config"] == []


def test_json_over_the_file_and_the_command_line_override_its_settings(tmp_path):
    write(tmp_path, "ft.xml", xml(("network/model", "SMPI"), ("smpi/bcast", "binomial_tree"), ("smpi/allreduce", "rdb")))
    over = {"simgrid_platform": "ft.xml", "network": {"collectives": {"bcast": "ompi_pipeline"}}}
    platform = load_platform(write(tmp_path, "over.json", json.dumps(over)))
    plain = load_platform(write(tmp_path, "plain.xml", xml()))
    assert makespan(platform) == makespan(plain, smpi="simgrid-3.32", coll="bcast=ompi_pipeline,allreduce=rdb")
    # The network's names of SMPI's thresholds and test time win over the file's too.
    write(tmp_path, "thresh.xml", xml(("smpi/send-is-detached-thresh", "100"), ("smpi/test", "1ms")))
    both = {"simgrid_platform": "thresh.xml", "network": {"eager_threshold": 65536, "test_seconds": 0}}
    assert makespan(load_platform(write(tmp_path, "both.json", json.dumps(both)))) == makespan(plain)
    assert makespan(load_platform(tmp_path / "thresh.xml")) != makespan(plain)
    # --coll and --smpi win over the file.
    file_only = load_platform(tmp_path / "ft.xml")
    assert makespan(file_only, coll="bcast=ompi_pipeline") == makespan(platform)
    assert makespan(file_only, smpi="none") == makespan(plain, coll="bcast=binomial_tree,allreduce=rdb")


@pytest.mark.parametrize("props, words", [
    ((("network/model", "LV08"),), ["line 3", "network/model", "LV08", "not modelled"]),
    ((("smpi/privatization", "yes"),), ["line 3", "smpi/privatization", "not modelled"]),
    ((("network/crosstraffic", "maybe"),), ["line 3", "network/crosstraffic", "yes or no"]),
    ((("smpi/bw-factor", "65472:x"),), ["line 3", "smpi/bw-factor", "not a number"]),
    ((("smpi/bcast", "nope"),), ["line 3", "smpi/bcast", "nope"]),
    ((("smpi/coll-selector", "mvapich2"),), ["line 3", "mvapich2", "not modelled"]),
    ((("smpi/async-small-thresh", "-1"),), ["line 3", "async-small-thresh", "whole number"]),
    ((("smpi/test", "5parsecs"),), ["line 3", "smpi/test", "unit"]),
])
def test_a_setting_commaware_does_not_model_is_refused_with_its_line(tmp_path, props, words):
    path = write(tmp_path, "bad.xml", xml(*props))
    proc = run_cli("platform", "show", path, "--json")
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert "bad.xml" in proc.stderr and "Traceback" not in proc.stderr
    for w in words:
        assert w in proc.stderr, (w, proc.stderr)


def test_config_comes_first_as_simgrids_dtd_says(tmp_path):
    proc = run_cli("platform", "show", write(tmp_path, "late.xml", xml(("network/model", "SMPI"), after=True)))
    assert proc.returncode == 2 and "<config> comes before" in proc.stderr, proc.stderr


def test_platform_show_lists_the_settings(tmp_path):
    path = write(tmp_path, "smpi.xml", xml(("network/model", "SMPI"), ("surf/precision", "1e-13")))
    proc = run_cli("platform", "show", path)
    assert proc.returncode == 0, proc.stderr
    assert "network/model" in proc.stdout and "simgrid-3.32" in proc.stdout and "surf/precision" in proc.stdout


def test_platform_show_lists_what_is_accepted_but_not_modelled(tmp_path, cli):
    """Energy and user props and power states after the first change no time here: accepted,
    and named by `platform show` with their count and first place, unlike an ordinary file."""
    text = (
        '<?xml version="1.0"?>\n<platform version="4.1">\n<zone id="z" routing="Full">\n'
        '<host id="a" speed="1Gf,500Mf,0f"><prop id="wattage_per_state" value="90:100:120"/>'
        '<prop id="wattage_off" value="10"/></host>\n'
        '<host id="b" speed="2Gf"><prop id="wattage_per_state" value="90:150"/></host>\n'
        '<link id="l" bandwidth="1GBps" latency="1us"/>\n'
        '<route src="a" dst="b"><link_ctn id="l"/></route>\n</zone>\n</platform>\n')
    path = write(tmp_path, "energy.xml", text)
    summary = load_platform(path).summary()
    assert summary["simgrid_unmodelled"] == [
        {"what": '<prop id="wattage_per_state"> (SimGrid times nothing by it)', "count": 2, "first_at": "line 4, column 35"},
        {"what": '<prop id="wattage_off"> (SimGrid times nothing by it)', "count": 1, "first_at": "line 4, column 84"},
        {"what": "power states after the first (`speed` lists; a host runs in its first)", "count": 1,
         "first_at": "line 4, column 1"},
    ]
    shown = cli("platform", "show", path, check=True).stdout
    assert "not modelled" in shown and "wattage_per_state" in shown
    assert load_platform(write(tmp_path, "plain.xml", xml())).summary()["simgrid_unmodelled"] == []
