"""`commaware interference fit` and `commaware interference model` (paper 000); see
`commaware.interference`. Bad input prints one line on stderr and exits 2 (`commaware.cli`
adds `throughput` to the group).
"""

from __future__ import annotations

import json
import math

import click

from .common import Table, fail, failing, out


def parse_sends(ctx: click.Context | None, param: click.Parameter | None, values: tuple[str, ...]) -> dict[str, float]:
    """`--send ID=R` (repeatable) as {id: rate}; a malformed, negative or repeated one is exit 2."""
    rates: dict[str, float] = {}
    for text in values:
        cid, sep, value = text.partition("=")
        cid = cid.strip()
        try:
            rate = float(value)
        except ValueError:
            rate = math.nan
        if not sep or not cid or not math.isfinite(rate):
            fail(f"--send: expected ID=RATE with a finite rate in MB/s, got {text!r}")
        if rate < 0:
            fail(f"--send: {cid}: a transfer rate must be >= 0 (MB/s), got {rate:g}")
        if cid in rates:
            fail(f"--send: child {cid!r} given twice")
        rates[cid] = rate
    return rates


@click.group("interference", context_settings={"help_option_names": ["-h", "--help"]})
def interference() -> None:
    """Interference of communication on computation (paper 000): fits and the three-point model.

    Rates are in MB/s (MB = 2^20 bytes); interference rates are fractions of the compute
    rate lost per MB/s (0.052 = 5.2 % per MB/s).
    """


@interference.command("fit")
@click.argument("samples", metavar="SAMPLES.csv", type=click.Path(dir_okay=False))
@click.option("--interval", type=float, default=None, metavar="S",
              help="Average the rates over regular intervals of S seconds of the `time` column first (§2.2).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: columns (linear and quadratic fits), "
              "planar, prediction, notes.")
def fit_cmd(samples: str, interval: float | None, as_json: bool) -> None:
    """Fit interference rates to measured samples (paper 000 §2).

    SAMPLES.csv has a header line with `compute_rate`, one or more transfer rates
    `recv:<peer>` / `send:<peer>` (MB/s, 0 when idle) and optionally `time` (s); blank lines
    and lines starting with # are skipped. The compute rate is normalised to its maximum.
    Each transfer column gets a linear fit (IR = -slope) and a quadratic fit on the samples
    where it transfers alone; one recv with one send column measured together gets the
    planar fit const - a*recv - b*send beside 1 - IR_r*recv - IR_s*send (synergy, §2.5);
    several peers at once get the prediction 1 - sum IR(i)*TR(i) and its error.

    \b
    Examples:
      commaware interference fit examples/interference/samples_recv.csv
      commaware interference fit examples/interference/samples_synergy.csv --json
    """
    from ..interference import fit

    with failing():
        report = fit(samples, interval=interval)
    if as_json:
        click.echo(json.dumps(report.to_dict()))
        return
    averaged = f", averaged over {interval:g} s intervals" if interval is not None else ""
    out.print(f"{report.source}: {report.samples} samples{averaged} ({report.raw_samples} raw); compute rate "
              f"normalised to its maximum {report.max_compute_rate:.6g}", highlight=False, soft_wrap=True)
    if report.columns:
        table = Table(title="separate fits: linear const - IR*TR, quadratic for comparison", title_justify="left",
                      header_style="bold")
        for col in ("column", "samples", "IR", "const", "stdev", "max err", "quad stdev", "quad max err"):
            table.add_column(col, justify="left" if col == "column" else "right")
        for f in report.columns.values():
            q = f.quadratic
            table.add_row(f.column, str(f.samples), f"{f.linear.ir:.4f}", f"{f.linear.const:.4f}",
                          f"{f.linear.errors.stdev:.4f}", f"{f.linear.errors.max_error:.4f}",
                          "-" if q is None else f"{q.errors.stdev:.4f}", "-" if q is None else f"{q.errors.max_error:.4f}")
        out.print(table)
    p = report.planar
    if p is not None:
        out.print(f"planar fit on {p.samples} samples that both receive and send (§2.5): {p.const:.4f} - "
                  f"{p.ir_r:.4f}*{p.recv} - {p.ir_s:.4f}*{p.send}; mean error {p.errors.mean_error:.4f}, "
                  f"max {p.errors.max_error:.4f}", highlight=False, soft_wrap=True)
        if p.separate is not None:
            out.print(f"separate rates on the same samples: mean error {p.separate.mean_error:.4f}, "
                      f"max {p.separate.max_error:.4f}", highlight=False, soft_wrap=True)
    pr = report.prediction
    if pr is not None:
        out.print(f"prediction 1 - sum IR(i)*TR(i) on {pr.samples} concurrent samples: mean error "
                  f"{pr.errors.mean_error:.4f}, max {pr.errors.max_error:.4f}, stdev {pr.errors.stdev:.4f}",
                  highlight=False, soft_wrap=True)
    for note in report.notes:
        out.print(f"note: {note}", highlight=False, soft_wrap=True)


@interference.command("model")
@click.argument("node", metavar="NODE.json", type=click.Path(dir_okay=False))
@click.option("--recv", "recv_rate", type=float, default=None, metavar="R",
              help="Receive rate from the parent in MB/s (also prints the model's normalised compute rate).")
@click.option("--send", "send_rates", multiple=True, metavar="ID=R", callback=parse_sends,
              help="Send rate to child ID in MB/s (repeatable).")
@click.option("--json", "as_json", is_flag=True, help='Print {"ir_r", "ir_s": {id: ...}} (and "rate" with rates).')
def model_cmd(node: str, recv_rate: float | None, send_rates: dict[str, float], as_json: bool) -> None:
    """The three-point interference model of a node (paper 000 §3.1).

    NODE.json is {"C": ..., "MR": ..., "C_r": ..., "children": [{"id": "a", "SR": ...,
    "RR": ..., "C_sr": ...}, ...]}: the compute rate alone (C), while receiving at MR MB/s
    (C_r), and while receiving at RR and sending to child id at SR (C_sr). Prints IR_r, each
    child's IR_s (the corrected formula: the printed one has a units slip), and with --recv/--send the normalised
    compute rate 1 - IR_r*recv - sum IR_s(i)*send(i).

    \b
    Examples:
      commaware interference model examples/interference/node.json
      commaware interference model examples/interference/node.json --recv 5 --send a=10 --json
    """
    from ..interference import normalised_rate, three_point

    if recv_rate is not None and not (0 <= recv_rate < math.inf):
        fail(f"--recv: a transfer rate must be a finite number >= 0 (MB/s), got {recv_rate:g}")
    with failing():
        model = three_point(node)
    rate = None
    if recv_rate is not None or send_rates:
        unknown = [cid for cid in send_rates if cid not in model["ir_s"]]
        if unknown:
            fail(f"--send: unknown child {unknown[0]!r} (children of {node}: {', '.join(model['ir_s']) or 'none'})")
        rate = normalised_rate(model, recv_rate or 0.0, send_rates)
    if as_json:
        doc = dict(model)
        if rate is not None:
            doc["rate"] = rate
        click.echo(json.dumps(doc))
        return
    out.print(f"{node}: three-point model (paper 000 §3.1), interference rates per MB/s", highlight=False,
              soft_wrap=True)
    table = Table(header_style="bold")
    table.add_column("rate")
    table.add_column("value", justify="right")
    table.add_row("IR_r (receiving from the parent)", f"{model['ir_r']:.6g}")
    for cid, value in model["ir_s"].items():
        table.add_row(f"IR_s({cid}) (sending to {cid})", f"{value:.6g}")
    out.print(table)
    if rate is not None:
        sends = ", ".join(f"{cid} at {r:g}" for cid, r in send_rates.items()) or "none"
        out.print(f"normalised compute rate receiving at {recv_rate or 0.0:g} MB/s, sending to {sends}: {rate:.6g}",
                  highlight=False, soft_wrap=True)
