//! Loading a platform file: the network layer's checks ([`Platform::from_spec`]), then
//! the fields that the upper layers interpret, each checked by the module that owns it
//! (the collective algorithms, the sharing model and its parameters), so that a bad entry
//! names the file's field rather than a run option. The platform itself never imports
//! those layers.

use crate::error::{cut_value, parse_input, Error, ErrorKind, Format, Result};
use crate::mpi::collectives::{self, Collectives};
use crate::network::platform::{HostSpec, Platform, PlatformSpec, SimgridSetting};
use crate::network::smpi;
use crate::network::sharing::{self, PenaltyModel};
use crate::network::simgrid_xml;
use crate::network::topology::Topology;
use std::sync::Arc;

/// Parse and validate a platform file's JSON or TOML text. Errors carry the field path;
/// the caller adds the file.
pub fn load(text: &str, format: Format) -> Result<Platform> {
    from_spec(parse_input(ErrorKind::Platform, text, format)?)
}

/// [`load`] for JSON text.
pub fn load_json(text: &str) -> Result<Platform> {
    load(text, Format::Json)
}

/// [`load`] for a platform file whose `simgrid_platform` names a SimGrid XML file, given
/// here as `xml_text` (named `xml_file` in its errors): the file's hosts (in its order) and
/// links, with the MPI side of the platform's `network`. `cluster`, `hosts`, `overrides`,
/// `network.topology`, `network.backbone` and a non-zero `network.latency` are refused: the
/// SimGrid file gives them. `network.bandwidth` and `network.memory_bandwidth` default to
/// SimGrid's loopback rate, as for a bare XML file.
pub fn load_over_simgrid(text: &str, format: Format, xml_text: &str, xml_file: &str) -> Result<Platform> {
    let doc: serde_json::Value = parse_input(ErrorKind::Platform, text, format)?;
    over_simgrid(doc, xml_text, xml_file)
}

/// A SimGrid platform file alone (XML 4.1, named `file` in errors): its hosts and links, the
/// settings of its `<config>` ([`apply_simgrid_config`]), and otherwise the MPI defaults of a
/// JSON platform that leaves them out; `network.bandwidth` and `memory_bandwidth` are
/// SimGrid's loopback rate ([`simgrid_xml::LOOPBACK_BANDWIDTH`], a host's messages to itself).
pub fn load_simgrid_xml(text: &str, file: &str) -> Result<Platform> {
    over_simgrid(serde_json::json!({"simgrid_platform": file}), text, file)
}

fn over_simgrid(mut doc: serde_json::Value, xml_text: &str, xml_file: &str) -> Result<Platform> {
    let Some(obj) = doc.as_object_mut() else {
        return Err(Error::platform("", "expected a JSON object"));
    };
    if obj.remove("simgrid_platform").is_none() {
        return Err(Error::platform("simgrid_platform", "missing"));
    }
    for key in ["cluster", "hosts", "overrides"] {
        if obj.contains_key(key) {
            return Err(Error::platform(key, "a platform whose hosts come from a SimGrid file (`simgrid_platform`) cannot also give them here"));
        }
    }
    let net = obj.entry("network").or_insert_with(|| serde_json::json!({}));
    let Some(net) = net.as_object_mut() else {
        return Err(Error::platform("network", "expected an object"));
    };
    for key in ["topology", "backbone"] {
        if net.get(key).is_some_and(|v| !v.is_null()) {
            return Err(Error::platform(format!("network.{key}"), "the SimGrid file (`simgrid_platform`) gives the network's links"));
        }
    }
    if net.get("latency").and_then(|v| v.as_f64()).is_some_and(|v| v != 0.0) {
        return Err(Error::platform("network.latency", "the SimGrid file's links carry the latencies (`simgrid_platform`)"));
    }
    for key in ["bandwidth", "memory_bandwidth"] {
        net.entry(key).or_insert(serde_json::json!(simgrid_xml::LOOPBACK_BANDWIDTH));
    }
    let mut xml = simgrid_xml::read(xml_text).map_err(|e| e.in_source(xml_file))?;
    let unmodelled = std::mem::take(&mut xml.unmodelled);
    let settings = apply_simgrid_config(&xml.config, net).map_err(|e| e.in_source(xml_file))?;
    let mut spec: PlatformSpec = parse_input(ErrorKind::Platform, &doc.to_string(), Format::Dict)?;
    // The hosts typed, not through JSON: a file may hold millions.
    spec.hosts = Some(
        xml.hosts
            .into_iter()
            .map(|h| HostSpec {
                name: h.name,
                speed: h.speed,
                cores: h.cores,
                memory: 0.0,
                bandwidth_up: None,
                bandwidth_down: None,
                overhead: Default::default(),
                interference: None,
            })
            .collect(),
    );
    let mut platform = with_topology(spec, Some(xml.topology))?;
    platform.simgrid_config = settings;
    platform.simgrid_unmodelled = unmodelled;
    Ok(platform)
}

/// The object `name` of `map`, made empty if missing.
fn section<'m>(map: &'m mut serde_json::Map<String, serde_json::Value>, name: &str) -> &'m mut serde_json::Map<String, serde_json::Value> {
    map.entry(name.to_string()).or_insert_with(|| serde_json::json!({})).as_object_mut().expect("an object")
}

/// SimGrid's settings of a solver that is exact in commaware: accepted, they change nothing.
const SOLVER_SETTINGS: &[&str] = &["surf/precision", "network/optim", "network/maxmin-selective-update"];
/// SimGrid 3.32's selectable collectives (`smpi/<collective>`, `smpi_coll.cpp`).
const SIMGRID_COLLECTIVES: &[&str] =
    &["barrier", "bcast", "reduce", "allreduce", "alltoall", "alltoallv", "gather", "allgather", "allgatherv", "scatter", "reduce_scatter"];

/// Apply a SimGrid file's `<config>` settings to the platform's `network` object `net`, where
/// it does not give the field itself (its own fields win, as the command line's win over both):
/// each setting commaware models becomes its field, SimGrid's solver settings are accepted and
/// change nothing, anything else is refused naming its line and setting. Returns what each
/// setting became (`platform show` lists them).
pub fn apply_simgrid_config(config: &[simgrid_xml::ConfigProp], net: &mut serde_json::Map<String, serde_json::Value>) -> Result<Vec<SimgridSetting>> {
    use serde_json::{json, Value};
    let mut from_file = serde_json::Map::new();
    let mut out = Vec::with_capacity(config.len());
    for p in config {
        let err = |reason: String| Error::platform(&p.at, format!("<prop id=\"{}\" value=\"{}\">: {reason}", p.key, cut_value(&p.value)));
        let flag = || match p.value.as_str() {
            "yes" | "on" | "true" | "1" => Ok(1.0),
            "no" | "off" | "false" | "0" => Ok(0.0),
            _ => Err(err("expected yes or no (on/off, true/false, 1/0)".into())),
        };
        let number = || match p.value.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
            _ => Err(err("expected a number, 0 or more".into())),
        };
        let seconds = || simgrid_xml::parse_quantity(simgrid_xml::Quantity::Time, &p.value).map_err(err);
        let whole = || match p.value.parse::<u64>() {
            Ok(v) if v <= i32::MAX as u64 => Ok(v as f64),
            _ => Err(err("expected a whole number of bytes, 0 or more (SimGrid reads an int)".into())),
        };
        let applied_as = match p.key.as_str() {
            "network/model" => match p.value.as_str() {
                "SMPI" => {
                    section(&mut from_file, "smpi").insert("preset".into(), json!(smpi::PRESET_SIMGRID_3_32));
                    format!("network.smpi.preset = {}", smpi::PRESET_SIMGRID_3_32)
                }
                "CM02" => "network.model maxmin (SimGrid's CM02; the default)".to_string(),
                other => return Err(err(format!("network model `{other}` is not modelled: commaware models CM02 and SMPI (CM02 with SMPI's factors)"))),
            },
            "network/crosstraffic" => {
                section(&mut from_file, "parameters").insert("crosstraffic".into(), json!(flag()?));
                "network.parameters.crosstraffic".into()
            }
            "network/weight-S" => {
                section(&mut from_file, "parameters").insert("weight_s".into(), json!(number()?));
                "network.parameters.weight_s".into()
            }
            "network/TCP-gamma" => {
                section(&mut from_file, "parameters").insert("tcp_gamma".into(), json!(number()?));
                "network.parameters.tcp_gamma".into()
            }
            key @ ("smpi/bw-factor" | "smpi/lat-factor" | "smpi/os" | "smpi/or" | "smpi/ois") => {
                let field = key.trim_start_matches("smpi/").replace('-', "_");
                let mut fields = smpi::SmpiFields::default();
                let text = Some(p.value.clone());
                match field.as_str() {
                    "bw_factor" => fields.bw_factor = text,
                    "lat_factor" => fields.lat_factor = text,
                    "os" => fields.os = text,
                    "or" => fields.or = text,
                    _ => fields.ois = text,
                }
                smpi::SmpiTiming::from_spec(&smpi::SmpiSpec::Fields(fields)).map_err(|e| err(e.reason))?;
                section(&mut from_file, "smpi").insert(field.clone(), json!(p.value));
                format!("network.smpi.{field}")
            }
            key @ ("smpi/async-small-thresh" | "smpi/send-is-detached-thresh") => {
                let field = key.trim_start_matches("smpi/").replace('-', "_");
                section(&mut from_file, "smpi").insert(field.clone(), json!(whole()?));
                format!("network.smpi.{field}")
            }
            "smpi/test" => {
                section(&mut from_file, "smpi").insert("test".into(), json!(seconds()?));
                "network.smpi.test".into()
            }
            "smpi/grow-injected-times" => {
                section(&mut from_file, "smpi").insert("grow_injected_times".into(), json!(flag()? == 1.0));
                "network.smpi.grow_injected_times".into()
            }
            "smpi/iprobe" => {
                seconds()?;
                "nothing: traces hold no MPI_Iprobe".into()
            }
            "smpi/coll-selector" => {
                let preset = match p.value.as_str() {
                    "default" => "smpi",
                    "ompi" => "ompi",
                    "mpich" => "mpich",
                    other => return Err(err(format!("selector `{other}` is not modelled (commaware has default, ompi and mpich)"))),
                };
                section(&mut from_file, "collectives").insert("preset".into(), json!(preset));
                format!("network.collectives.preset = {preset}")
            }
            key if key.strip_prefix("smpi/").is_some_and(|c| SIMGRID_COLLECTIVES.contains(&c)) => {
                let collective = &key["smpi/".len()..];
                Collectives::default().apply([(collective.to_string(), p.value.clone())]).map_err(|e| err(e.reason))?;
                section(&mut from_file, "collectives").insert(collective.into(), json!(p.value));
                format!("network.collectives.{collective}")
            }
            key if SOLVER_SETTINGS.contains(&key) || key.starts_with("maxmin/") => {
                "nothing: a setting of SimGrid's solver (commaware's is exact)".into()
            }
            other => return Err(err(format!("SimGrid setting `{other}` is not modelled by commaware"))),
        };
        out.push(SimgridSetting { setting: p.key.clone(), value: p.value.clone(), applied_as });
    }
    // The network's own fields win: merge the file's in where it says nothing, the network's
    // names of SMPI's thresholds and test time included.
    if let Some(smpi) = from_file.get_mut("smpi").and_then(|s| s.as_object_mut()) {
        for (own, theirs) in [("eager_threshold", "send_is_detached_thresh"), ("test_seconds", "test")] {
            if net.get(own).is_some_and(|v| !v.is_null()) {
                smpi.remove(theirs);
            }
        }
    }
    for (key, value) in from_file {
        match (net.get_mut(&key), value) {
            (None, value) => {
                net.insert(key, value);
            }
            (Some(own), Value::Object(file)) => {
                if let Value::String(preset) = own {
                    *own = json!({"preset": preset.clone()});
                }
                if let Some(own) = own.as_object_mut() {
                    for (k, v) in file {
                        own.entry(k).or_insert(v);
                    }
                }
            }
            (Some(_), _) => {}
        }
    }
    Ok(out)
}

/// Validate a platform specification with every layer's checks.
pub fn from_spec(spec: PlatformSpec) -> Result<Platform> {
    with_topology(spec, None)
}

/// [`from_spec`], the network's links given by `topology` when it is `Some` (a SimGrid file).
fn with_topology(spec: PlatformSpec, topology: Option<Arc<dyn Topology>>) -> Result<Platform> {
    let net = &spec.network;
    net.check()?;
    Collectives::default()
        .apply(net.collectives.iter().map(|(k, v)| (k.clone(), v.clone())))
        .map_err(|e| Error::platform("network.collectives", e.reason))?;
    sharing::check_model_name(&net.model).map_err(|e| Error { field: "network.model".into(), ..e })?;
    let params: Vec<(String, f64)> = net.parameters.iter().map(|(k, v)| (k.clone(), *v)).collect();
    let mut platform = Platform::from_spec(spec)?;
    if topology.is_some() {
        platform.topology = topology;
    }
    platform.check_routing()?;
    if platform.network.model != "maxmin" {
        // A penalty model on a topology also takes CM02's parameters, for the fabric.
        let as_platform = |e: Error| Error { kind: ErrorKind::Platform, ..e };
        let model = &platform.network.model;
        if sharing::penalty_on_topology(&platform, model, &params, "network.parameters.").map_err(as_platform)?.is_none() {
            PenaltyModel::from_params(model, &params, "network.parameters.").map_err(as_platform)?;
        }
    }
    if platform.network.model == "maxmin" {
        // Its parameters depend on the topology (CM02's on one, none on the star).
        sharing::maxmin_params(&platform, &params, "network.parameters.").map_err(|e| Error { kind: ErrorKind::Platform, ..e })?;
    }
    sharing::check_model(&platform, &platform.network.model)
        .map_err(|e| Error { kind: ErrorKind::Platform, field: "network.model".into(), ..e })?;
    Ok(platform)
}

/// The JSON Schema of platform files: the network layer's, with the known sharing models
/// and the collective algorithms of every collective.
pub fn json_schema() -> String {
    let mut schema = Platform::json_schema();
    if let Some(props) = schema.pointer_mut("/definitions/NetworkSpec/properties") {
        props["model"]["enum"] = serde_json::json!(sharing::MODELS);
        props["collectives"] = collectives::json_schema();
        props["routing"]["enum"] = serde_json::json!(crate::network::topology::routing::Routing::NAMES);
    }
    serde_json::to_string_pretty(&schema).expect("schema serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plat(cluster: &str, network: &str) -> Result<Platform> {
        load_json(&format!(r#"{{"cluster": {{{cluster}}}, "network": {{"bandwidth": 1{network}}}}}"#))
    }

    #[test]
    fn upper_layer_fields_are_checked_as_the_file_names_them() {
        let e = plat(r#""count": 2, "speed": 1"#, r#", "model": "nope""#).unwrap_err();
        assert_eq!(e.field, "network.model", "{e}");
        assert!(e.reason.starts_with("unknown sharing model `nope`"), "{e}");
        let e = plat(r#""count": 2, "speed": 1"#, r#", "model": "gige", "parameters": {"beta": -1}"#).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Platform, "{e}");
        assert!(e.field.starts_with("network.parameters."), "{e}");
        let e = plat(r#""count": 2, "speed": 1"#, r#", "collectives": {"bcast": "nope"}"#).unwrap_err();
        assert_eq!((e.kind, e.field.as_str()), (ErrorKind::Platform, "network.collectives"), "{e}");
    }

    #[test]
    fn schema_lists_models_and_collectives() {
        let s: serde_json::Value = serde_json::from_str(&json_schema()).unwrap();
        let net = &s["definitions"]["NetworkSpec"]["properties"];
        assert_eq!(net["model"]["enum"], serde_json::json!(sharing::MODELS));
        assert_eq!(net["collectives"], collectives::json_schema());
    }
}
