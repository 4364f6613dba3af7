//! Communication schemes under the sharing models (paper 004).

use commaware_core::error::Format;
use commaware_core::{Error, ErrorKind};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::interruptible;

#[pyfunction]
pub(crate) fn sharing_models() -> Vec<&'static str> {
    commaware_core::network::sharing::MODELS.to_vec()
}

/// Analyse a communication scheme (paper 004) under a sharing model: a dict of columns
/// (`ids`, `src`, `dst`, `bytes`, `delta_out`, `delta_in`, `conflicts` as class-name
/// lists, `penalties`), `model`, `parameters` and, for Myrinet, `components` (each with
/// `comms`, `exact`, `sets`, `sets_exact` as a decimal string or None, `ci95`) and
/// `state_set_count`; always `report_json`, the `penalties --json` document. With
/// `json_only`, only `report_json`.
#[pyfunction]
#[pyo3(signature = (text, source, format="json", model="gige", params=Vec::new(), json_only=false))]
pub(crate) fn scheme_penalties<'py>(
    py: Python<'py>,
    text: &str,
    source: &str,
    format: &str,
    model: &str,
    params: Vec<(String, f64)>,
    json_only: bool,
) -> PyResult<Bound<'py, PyDict>> {
    use commaware_core::network::sharing::penalty_report::{report_json, StateSets};
    use commaware_core::network::sharing::penalty::{analyze, class_names, PenaltyModel, Scheme, Side};
    let text = text.to_owned();
    let (scheme, m, a) = interruptible(py, || {
        let scheme = Scheme::from_text(&text, Format::from_name(format)?).map_err(|e| e.in_source(source))?;
        if model == "contention_free" {
            return Err(Error::new(ErrorKind::Options, "model", "contention_free gives every communication penalty 1: choose gige, myrinet, infiniband, ib-simgrid or maxmin"));
        }
        commaware_core::network::sharing::check_model_name(model)?;
        let m = PenaltyModel::from_params(model, &params, "param.")?;
        let a = analyze(&scheme.comms, m.as_ref())?;
        Ok((scheme, m, a))
    })?;
    // The --json document, and the state-set count it gives (the exact one as decimal digits).
    let parameters = m.as_ref().map(|m| m.parameters()).unwrap_or_default();
    let json = py.allow_threads(|| report_json(model, &parameters, &scheme, &a));
    let d = PyDict::new(py);
    d.set_item("report_json", json)?;
    if json_only {
        return Ok(d);
    }
    d.set_item("model", model)?;
    let parameters = PyDict::new(py);
    for (k, v) in m.as_ref().map(|m| m.parameters()).unwrap_or_default() {
        parameters.set_item(k, v)?;
    }
    d.set_item("parameters", parameters)?;
    d.set_item("ids", &scheme.ids)?;
    d.set_item("src", scheme.comms.iter().map(|c| c.0).collect::<Vec<_>>())?;
    d.set_item("dst", scheme.comms.iter().map(|c| c.1).collect::<Vec<_>>())?;
    d.set_item("bytes", &scheme.bytes)?;
    d.set_item("delta_out", &a.delta_out)?;
    d.set_item("delta_in", &a.delta_in)?;
    d.set_item("conflicts", a.conflicts.iter().map(|&b| class_names(b).collect::<Vec<_>>()).collect::<Vec<_>>())?;
    d.set_item("penalties", &a.penalties)?;
    // The §V-A sides, for calibration: (Δ, factor of γ) for emission and reception.
    let side = |f: fn(&(Side, Side)) -> &Side| a.sides.iter().map(|x| (f(x).delta, f(x).gamma_factor())).collect::<Vec<_>>();
    d.set_item("side_out", side(|x| &x.0))?;
    d.set_item("side_in", side(|x| &x.1))?;
    let comps = a
        .components
        .iter()
        .map(|c| {
            let cd = PyDict::new(py);
            cd.set_item("comms", &c.comms)?;
            cd.set_item("exact", c.exact)?;
            cd.set_item("sets", c.sets)?;
            cd.set_item("sets_exact", c.sets_exact.map(|v| v.to_string()))?;
            cd.set_item("ci95", c.ci95)?;
            cd.set_item("log10_sets", c.log10_sets)?;
            cd.set_item("estimator_failed", c.estimator_failed)?;
            cd.set_item("effective_samples", c.effective_samples)?;
            cd.set_item("converged", c.converged)?;
            cd.set_item("penalty_error", c.penalty_error)?;
            Ok(cd)
        })
        .collect::<PyResult<Vec<_>>>()?;
    d.set_item("components", comps)?;
    if model == "myrinet" {
        let sets = StateSets::of(&a);
        let summary = PyDict::new(py);
        summary.set_item("exact", sets.exact)?;
        summary.set_item("value", sets.value)?;
        summary.set_item("log10", sets.log10)?;
        summary.set_item("estimated", sets.estimated)?;
        summary.set_item("estimator_failed", sets.estimator_failed)?;
        d.set_item("state_set_count", summary)?;
    }
    Ok(d)
}

/// The JSON Schema of communication scheme files.
#[pyfunction]
pub(crate) fn scheme_schema() -> String {
    commaware_core::network::sharing::penalty::Scheme::json_schema()
}

/// The parameter names a sharing model takes.
#[pyfunction]
pub(crate) fn model_parameters(model: &str) -> Vec<&'static str> {
    commaware_core::network::sharing::penalty::parameter_names(model).to_vec()
}
