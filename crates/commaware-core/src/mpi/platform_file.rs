//! Loading a platform file: the network layer's checks ([`Platform::from_spec`]), then
//! the fields that the upper layers interpret, each checked by the module that owns it
//! (the collective algorithms, the sharing model and its parameters), so that a bad entry
//! names the file's field rather than a run option. The platform itself never imports
//! those layers.

use crate::error::{parse_input, Error, ErrorKind, Format, Result};
use crate::mpi::collectives::{self, Collectives};
use crate::network::platform::{Platform, PlatformSpec};
use crate::network::sharing::{self, PenaltyModel};

/// Parse and validate a platform file's JSON or TOML text. Errors carry the field path;
/// the caller adds the file.
pub fn load(text: &str, format: Format) -> Result<Platform> {
    from_spec(parse_input(ErrorKind::Platform, text, format)?)
}

/// [`load`] for JSON text.
pub fn load_json(text: &str) -> Result<Platform> {
    load(text, Format::Json)
}

/// Validate a platform specification with every layer's checks.
pub fn from_spec(spec: PlatformSpec) -> Result<Platform> {
    let net = &spec.network;
    net.check()?;
    Collectives::default()
        .apply(net.collectives.iter().map(|(k, v)| (k.clone(), v.clone())))
        .map_err(|e| Error::platform("network.collectives", e.reason))?;
    sharing::check_model_name(&net.model).map_err(|e| Error { field: "network.model".into(), ..e })?;
    let params: Vec<(String, f64)> = net.parameters.iter().map(|(k, v)| (k.clone(), *v)).collect();
    let platform = Platform::from_spec(spec)?;
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
    use crate::network::sharing::MAX_PAIR_HOSTS;

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
    fn contention_free_is_bounded_by_its_pair_table() {
        let e = plat(&format!(r#""count": {}, "speed": 1"#, MAX_PAIR_HOSTS + 1), r#", "model": "contention_free""#).unwrap_err();
        assert_eq!((e.kind, e.field.as_str()), (ErrorKind::Platform, "network.model"), "{e}");
        assert!(e.reason.contains("at most 4096 hosts"), "{e}");
        let p = plat(&format!(r#""count": {}, "speed": 1"#, MAX_PAIR_HOSTS + 1), "").unwrap();
        let e = sharing::check_model(&p, "contention_free").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Options);
        assert!(sharing::check_model(&p, "maxmin").is_ok());
        assert!(sharing::check_model(&p, "nope").is_err());
        assert!(plat(&format!(r#""count": {MAX_PAIR_HOSTS}, "speed": 1"#), r#", "model": "contention_free""#).is_ok());
    }

    #[test]
    fn schema_lists_models_and_collectives() {
        let s: serde_json::Value = serde_json::from_str(&json_schema()).unwrap();
        let net = &s["definitions"]["NetworkSpec"]["properties"];
        assert_eq!(net["model"]["enum"], serde_json::json!(sharing::MODELS));
        assert_eq!(net["collectives"], collectives::json_schema());
    }
}
