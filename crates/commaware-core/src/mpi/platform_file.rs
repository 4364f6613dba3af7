//! Loading a platform file: the network layer's checks ([`Platform::from_spec`]), then
//! the fields that the upper layers interpret, each checked by the module that owns it
//! (the collective algorithms, the sharing model and its parameters), so that a bad entry
//! names the file's field rather than a run option. The platform itself never imports
//! those layers.

use crate::error::{parse_input, Error, ErrorKind, Format, Result};
use crate::mpi::collectives::{self, Collectives};
use crate::network::platform::{Platform, PlatformSpec};
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
    let mut doc: serde_json::Value = parse_input(ErrorKind::Platform, text, format)?;
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
    let xml = simgrid_xml::read(xml_text).map_err(|e| e.in_source(xml_file))?;
    let hosts: Vec<serde_json::Value> =
        xml.hosts.iter().map(|h| serde_json::json!({"name": h.name, "speed": h.speed, "cores": h.cores})).collect();
    obj.insert("hosts".into(), serde_json::Value::Array(hosts));
    let spec: PlatformSpec = parse_input(ErrorKind::Platform, &doc.to_string(), Format::Dict)?;
    with_topology(spec, Some(xml.topology))
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
