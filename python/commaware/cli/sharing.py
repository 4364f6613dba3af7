"""`commaware penalties` and `commaware calibrate penalty` (paper 004); see `commaware.sharing`."""

from __future__ import annotations

import json

import click

from ..sharing import SCHEME_MODELS
from .common import Progress, Table, fail, failing, out, param_option

#: Communications the terminal table shows unless --limit or --all say otherwise (a table
#: takes about a millisecond a row: 10^5 rows would take minutes).
SHOWN_ROWS = 50


@click.command("penalties")
@click.argument("scheme", metavar="SCHEME.json", type=click.Path(dir_okay=False))
@click.option("--model", type=click.Choice(SCHEME_MODELS), default="gige", show_default=True, help="Sharing model.")
@param_option("Model parameter over its default (repeatable): beta, gamma_o, gamma_i (gige, infiniband); "
              "beta_e, beta_s, gamma_s (ib-simgrid); exact_limit, exact_states, samples, steps, tolerance, seed (myrinet).")
@click.option("--static-times", is_flag=True, help="Also predict each communication's time: latency + penalty x bytes / bandwidth "
              "(the paper's static prediction, Fig. 4).")
@click.option("--bytes", "size", type=float, default=None, help="Message size in bytes for communications without `bytes`.")
@click.option("--bandwidth", type=float, default=None, help="Single-transfer bandwidth in bytes/s (with --static-times).")
@click.option("--latency", type=float, default=0.0, show_default=True, help="Latency in s (with --static-times).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: model, parameters, penalties, conflicts, "
              "degrees (and state_sets for myrinet, static_times_s).")
@click.option("--limit", type=click.IntRange(min=1), default=None, metavar="N",
              help=f"Table: show the first N communications (default {SHOWN_ROWS}); --json gives them all.")
@click.option("--all", "all_rows", is_flag=True, help="Table: show every communication (slow beyond thousands).")
def penalties_cmd(scheme: str, model: str, params: list[tuple[str, float]], static_times: bool, size: float | None,
                  bandwidth: float | None, latency: float, as_json: bool, limit: int | None, all_rows: bool) -> None:
    """Penalty of each communication of SCHEME.json under an interconnect model (paper 004).

    A penalty p means the communication takes p times as long as alone. SCHEME.json is
    {"comms": [{"id": "a", "src": 0, "dst": 1, "bytes": 4194304}, ...]} (see
    `commaware schema scheme`).

    \b
    Examples:
      commaware penalties examples/schemes/fig4.json
      commaware penalties examples/schemes/fig6.json --model myrinet --json
      commaware penalties examples/schemes/fig4.json --static-times --bandwidth 8.8e7
    """
    from ..sharing import penalties, penalties_json

    if limit is not None and all_rows:
        fail("--limit and --all: give one")
    if static_times:
        if bandwidth is None or not bandwidth > 0 or bandwidth == float("inf"):
            fail("--static-times needs --bandwidth B (bytes/s, > 0)")
        if size is not None and not (0 < size < float("inf")):
            fail(f"--bytes: must be > 0, got {size}")
        if not (0 <= latency < float("inf")):
            fail(f"--latency: must be >= 0, got {latency}")
    with failing(), Progress("penalties", plain=as_json, delay=1.0) as progress:
        progress.stage(f"{model} penalties of {scheme}")
        if as_json and not static_times:
            # The core's document as it wrote it (10^5 communications: 12 MB).
            doc = penalties_json(scheme, model, params)
        else:
            report = penalties(scheme, model, params)
            times = report.static_times(size, bandwidth, latency) if static_times and bandwidth else None
    if as_json and not static_times:
        click.echo(doc)
        return
    if as_json:
        click.echo(json.dumps({**report.to_dict(), "static_times_s": times}))
        return
    table = Table(title=f"{scheme} under {model}", title_justify="left", header_style="bold")
    for col in ("comm", "src→dst", "Δo", "Δi", "conflicts", "penalty", *(["time (s)"] if times else [])):
        table.add_column(col, justify="right" if col in ("Δo", "Δi", "penalty", "time (s)") else "left")
    shown = len(report.ids) if all_rows else min(len(report.ids), limit or SHOWN_ROWS)
    for k, cid in enumerate(report.ids[:shown]):
        table.add_row(cid, f"{report.src[k]}→{report.dst[k]}", str(report.delta_out[k]), str(report.delta_in[k]),
                      ", ".join(report.conflicts[k]) or "-", f"{report.penalties[k]:.4g}",
                      *([f"{times[cid]:.6g}"] if times else []))
    out.print(table)
    if shown < len(report.ids):
        out.print(f"first {shown:,} of {len(report.ids):,} communications shown; --limit N or --all for more, "
                  "--json for all of them", highlight=False)
    out.print("parameters: " + (", ".join(f"{k}={v:g}" for k, v in report.parameters.items()) or "none"), highlight=False)
    if model == "myrinet":
        how = "estimated (sequential Monte Carlo; 95% CI per component in --json)" if report.state_sets_estimated else "exact"
        sets, log10 = report.state_sets, report.state_sets_log10
        count = sets if sets is not None else f"about 10^{log10:.2f}" if log10 is not None else "unknown (estimator failed)"
        out.print(f"state sets: {count} ({how})", highlight=False)


@click.group("calibrate", context_settings={"help_option_names": ["-h", "--help"]})
def calibrate() -> None:
    """Fit model parameters to measurements."""


@calibrate.command("penalty")
@click.argument("measured", metavar="MEASURED.json", type=click.Path(dir_okay=False))
@click.option("--family", type=click.Choice(["gige", "infiniband"]), default="gige", show_default=True,
              help="Model family to fit (the §V-A formula; infiniband starts from its own defaults).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: parameters, undetermined, fit errors.")
def calibrate_penalty_cmd(measured: str, family: str, as_json: bool) -> None:
    """Fit β, γ_o and γ_i of the GigE penalty model to measured penalties (paper 004 §V-A).

    MEASURED.json is what `commaware measure penalties` writes: schemes whose
    communications carry a measured `penalty` (or `time_s` with `t_ref_s`). β comes from
    the star rows (P = Δ·β), each γ from the communications in conflict on that side
    only; a parameter the data cannot identify is listed as undetermined.

    \b
    Example:
      commaware calibrate penalty examples/measured/paper004_gige.json
    """
    from ..sharing import calibrate_penalty

    with failing():
        doc = calibrate_penalty(measured, family)
    if as_json:
        click.echo(json.dumps(doc))
        return
    out.print(f"[bold]{family}[/] fitted on {measured}: " + ", ".join(
        f"{k}={v:.4g}" + (" (undetermined: default kept)" if k in doc["undetermined"] else "")
        for k, v in doc["parameters"].items()), highlight=False, soft_wrap=True)
    for g in doc["out_of_range"]:
        out.print(f"[bold yellow]warning:[/] the fit puts {g}={doc['unclamped'][g]:.4g} outside [0, 1); "
                  f"clamped to {doc['parameters'][g]:.4g}", highlight=False)
    table = Table(title="fit per communication", title_justify="left", header_style="bold")
    for col in ("scheme", "comm", "measured", "predicted", "E_rel (%)"):
        table.add_column(col, justify="left" if col in ("scheme", "comm") else "right")
    for e in doc["fit"]:
        table.add_row(e["scheme"], e["id"], f"{e['measured']:.4g}", f"{e['predicted']:.4g}", f"{e['error_rel_pct']:+.2f}")
    out.print(table)
    out.print(f"E_abs = {doc['e_abs_pct']:.2f} %", highlight=False)
    out.print("use it: commaware simulate PLATFORM TRACE --calibration FIT.json (this command's --json output), or "
              + " ".join(f"--param {k}={v:.6g}" for k, v in doc["parameters"].items()), highlight=False, soft_wrap=True)
