//! SMPI's timing model (SimGrid 3.32): piecewise factors on each message's bandwidth and
//! latency, and piecewise per-message overheads on the sender and the receiver, in
//! SimGrid's own string syntax (docs/formats.md, "SMPI's timing model").
//!
//! * A factor string is `threshold:value;threshold:value;...` (SimGrid's `smpi/bw-factor`,
//!   `smpi/lat-factor`). The chunks are sorted by threshold; a message of `size` bytes takes
//!   the value of the largest threshold strictly below `size`, and 1 when `size` is at or
//!   below every threshold (SimGrid's `NetworkSmpiModel::get_bandwidth_factor`).
//! * An overhead string is `threshold:a:b;...` (`smpi/os`, `smpi/or`, `smpi/ois`): the
//!   overhead of `size` bytes is `a + b * size` of the largest threshold strictly below
//!   `size`, and that of the smallest threshold when `size` is at or below every threshold
//!   (`smpi::Host::osend`, `orecv`, `oisend` in `smpi_host.cpp`).
//!
//! Chunks are separated by `;` and fields by `:`; empty chunks and fields are skipped, as
//! SimGrid's tokenizer does. Thresholds are non-negative integers (bytes); values are
//! numbers, optionally with a time unit (`s`, `ms`, `us`, `ns`, `ps`), as SimGrid reads
//! them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The name of the preset that equals SimGrid 3.32's defaults.
pub const PRESET_SIMGRID_3_32: &str = "simgrid-3.32";
/// Every preset name.
pub const PRESETS: &[&str] = &[PRESET_SIMGRID_3_32];

/// SimGrid 3.32's default `smpi/bw-factor` (`src/simgrid/sg_config.cpp`).
pub const SIMGRID_3_32_BW_FACTOR: &str =
    "65472:0.940694;15424:0.697866;9376:0.58729;5776:1.08739;3484:0.77493;1426:0.608902;732:0.341987;257:0.338112;0:0.812084";
/// SimGrid 3.32's default `smpi/lat-factor` (`src/simgrid/sg_config.cpp`).
pub const SIMGRID_3_32_LAT_FACTOR: &str =
    "65472:11.6436;15424:3.48845;9376:2.59299;5776:2.18796;3484:1.88101;1426:1.61075;732:1.9503;257:1.95341;0:2.01467";
/// SimGrid 3.32's default `smpi/os`, `smpi/or` and `smpi/ois` (`src/smpi/internals/smpi_config.cpp`): none.
pub const SIMGRID_3_32_OVERHEAD: &str = "0:0:0:0:0";

/// `network.smpi` as a platform file writes it: a preset name, or the strings themselves
/// (over a preset's when `preset` is given, over the neutral model otherwise: factors 1,
/// overheads 0).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum SmpiSpec {
    /// A preset: `simgrid-3.32`.
    Preset(String),
    Fields(SmpiFields),
}

// By hand rather than untagged, so that a bad object names its bad field.
impl<'de> Deserialize<'de> for SmpiSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = SmpiSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a preset name (\"simgrid-3.32\") or an object with preset, bw_factor, lat_factor, os, or, ois")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<SmpiSpec, E> {
                Ok(SmpiSpec::Preset(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> std::result::Result<SmpiSpec, A::Error> {
                SmpiFields::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(SmpiSpec::Fields)
            }
        }
        d.deserialize_any(V)
    }
}

/// The strings of SMPI's timing model, in SimGrid's syntax.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SmpiFields {
    /// A preset the other fields override: `simgrid-3.32`.
    #[serde(default)]
    pub preset: Option<String>,
    /// Bandwidth factors, `threshold:factor;...` (SimGrid's `smpi/bw-factor`).
    #[serde(default)]
    pub bw_factor: Option<String>,
    /// Latency factors, `threshold:factor;...` (SimGrid's `smpi/lat-factor`).
    #[serde(default)]
    pub lat_factor: Option<String>,
    /// Sender overhead of a blocking or detached send, `threshold:seconds:seconds_per_byte;...` (`smpi/os`).
    #[serde(default)]
    pub os: Option<String>,
    /// Receiver overhead of an eager message, `threshold:seconds:seconds_per_byte;...` (`smpi/or`).
    #[serde(default)]
    pub or: Option<String>,
    /// Sender overhead of an MPI_Isend, `threshold:seconds:seconds_per_byte;...` (`smpi/ois`).
    #[serde(default)]
    pub ois: Option<String>,
    /// Bytes (payload) below which a detached send's transfer starts when the send is posted
    /// (`smpi/async-small-thresh`). A detached send at or above it (below the eager threshold,
    /// SMPI's `smpi/send-is-detached-thresh`) lets the sender go on at once, but its transfer
    /// starts when its receive is posted. The preset's: 0, smpirun's default. Without the
    /// preset and this field: the eager threshold (every detached transfer starts when posted).
    #[serde(default)]
    pub async_small_thresh: Option<f64>,
    /// Bytes (payload) from which a send is a rendezvous (`smpi/send-is-detached-thresh`), the
    /// same as `network.eager_threshold`; give one of the two (the preset's: 65,536).
    #[serde(default)]
    pub send_is_detached_thresh: Option<f64>,
    /// Seconds MPI_Test sleeps before it looks (`smpi/test`), the same as
    /// `network.test_seconds`; give one of the two (the preset's: 1e-4).
    #[serde(default)]
    pub test: Option<f64>,
    /// Whether each failed MPI_Test, on any rank, makes the next test's sleep one `test` longer
    /// until a test succeeds (`smpi/grow-injected-times`). Not given: true with the preset
    /// unless `network.test_seconds` is given (a flat cost), false without it.
    #[serde(default)]
    pub grow_injected_times: Option<bool>,
}

/// SMPI's timing model, parsed: each list sorted by threshold.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SmpiTiming {
    /// (threshold, factor) on the bandwidth.
    pub bw_factor: Vec<(f64, f64)>,
    /// (threshold, factor) on the latency.
    pub lat_factor: Vec<(f64, f64)>,
    /// (threshold, seconds, seconds per byte) of `smpi/os`, `smpi/or`, `smpi/ois`.
    pub os: Vec<(f64, f64, f64)>,
    pub or: Vec<(f64, f64, f64)>,
    pub ois: Vec<(f64, f64, f64)>,
    /// `smpi/async-small-thresh` (bytes); `None`: the eager threshold.
    pub async_small_thresh: Option<f64>,
    /// `smpi/send-is-detached-thresh` (bytes), when the object or the preset gives it.
    pub send_is_detached_thresh: Option<f64>,
    /// `smpi/test` (s), when the object or the preset gives it.
    pub test: Option<f64>,
    /// `smpi/grow-injected-times`, when the object gives it (the preset's is true, but a
    /// platform's own `network.test_seconds` is a flat cost: [`crate::network::platform::Platform::protocol`]).
    pub grow_injected_times: Option<bool>,
    /// Whether this is smpirun's whole default configuration (`simgrid-3.32`), which also
    /// gives the 16-byte envelope, crosstraffic, `network/weight-S` and SMPI's default
    /// collective algorithms where the platform does not name its own.
    pub preset: bool,
}

/// SMPI's envelope: the bytes `Request::start` adds to every message (`smpi_request.cpp`).
pub const SMPI_ENVELOPE_BYTES: f64 = 16.0;
/// smpirun's `smpi/send-is-detached-thresh` (`smpi_config.cpp`).
pub const SMPI_DETACHED_THRESH: f64 = 65536.0;
/// smpirun's `smpi/test` (s) (`smpi_request.cpp`).
pub const SMPI_TEST_SECONDS: f64 = 1e-4;
/// `network/weight-S` under `network/model:SMPI` (`network_smpi.cpp`).
pub const SMPI_WEIGHT_S: f64 = 8775.0;

impl SmpiTiming {
    /// Parse `network.smpi`; errors name the field (`network.smpi.bw_factor`) and the chunk.
    pub fn from_spec(spec: &SmpiSpec) -> Result<SmpiTiming> {
        let fields = match spec {
            SmpiSpec::Preset(name) => SmpiFields { preset: Some(name.clone()), ..SmpiFields::default() },
            SmpiSpec::Fields(f) => f.clone(),
        };
        let preset = match fields.preset.as_deref() {
            None => None,
            Some(PRESET_SIMGRID_3_32) => Some(()),
            Some(other) => {
                let field = if matches!(spec, SmpiSpec::Preset(_)) { "network.smpi" } else { "network.smpi.preset" };
                return Err(Error::platform(field, format!("unknown preset `{other}` (known: {})", PRESETS.join(", "))));
            }
        };
        let pick = |own: &Option<String>, default: &'static str| -> String {
            own.clone().unwrap_or_else(|| if preset.is_some() { default.to_string() } else { String::new() })
        };
        Ok(SmpiTiming {
            bw_factor: parse_factors("network.smpi.bw_factor", &pick(&fields.bw_factor, SIMGRID_3_32_BW_FACTOR), true)?,
            lat_factor: parse_factors("network.smpi.lat_factor", &pick(&fields.lat_factor, SIMGRID_3_32_LAT_FACTOR), false)?,
            os: parse_overheads("network.smpi.os", &pick(&fields.os, SIMGRID_3_32_OVERHEAD))?,
            or: parse_overheads("network.smpi.or", &pick(&fields.or, SIMGRID_3_32_OVERHEAD))?,
            ois: parse_overheads("network.smpi.ois", &pick(&fields.ois, SIMGRID_3_32_OVERHEAD))?,
            async_small_thresh: match fields.async_small_thresh {
                // smpirun's default is 0 (src/smpi/internals/smpi_config.cpp).
                None if preset.is_some() => Some(0.0),
                t => t.map(|t| whole_bytes("network.smpi.async_small_thresh", t)).transpose()?,
            },
            send_is_detached_thresh: match fields.send_is_detached_thresh {
                None if preset.is_some() => Some(SMPI_DETACHED_THRESH),
                t => t.map(|t| whole_bytes("network.smpi.send_is_detached_thresh", t)).transpose()?,
            },
            test: match fields.test {
                None if preset.is_some() => Some(SMPI_TEST_SECONDS),
                t => t.map(|t| crate::error::check_seconds(crate::error::ErrorKind::Platform, "network.smpi.test", t).map(|()| t)).transpose()?,
            },
            grow_injected_times: fields.grow_injected_times,
            preset: preset.is_some(),
        })
    }

    /// The bandwidth factor of a message of `size` bytes (its envelope included).
    pub fn bw_factor(&self, size: f64) -> f64 {
        factor(&self.bw_factor, size)
    }
    /// The latency factor of a message of `size` bytes (its envelope included).
    pub fn lat_factor(&self, size: f64) -> f64 {
        factor(&self.lat_factor, size)
    }
    /// `smpi/os` of a payload of `size` bytes (s).
    pub fn send_overhead(&self, size: f64) -> f64 {
        overhead(&self.os, size)
    }
    /// `smpi/ois` of a payload of `size` bytes (s).
    pub fn isend_overhead(&self, size: f64) -> f64 {
        overhead(&self.ois, size)
    }
    /// `smpi/or` of a payload of `size` bytes (s).
    pub fn recv_overhead(&self, size: f64) -> f64 {
        overhead(&self.or, size)
    }
    /// Whether any receive overhead can be non-zero.
    pub fn has_recv_overhead(&self) -> bool {
        self.or.iter().any(|&(_, a, b)| a != 0.0 || b != 0.0)
    }
}

/// A threshold in whole bytes, 0 or more, or an error naming `field`.
fn whole_bytes(field: &str, t: f64) -> Result<f64> {
    if t.is_finite() && t >= 0.0 && t.fract() == 0.0 {
        Ok(t)
    } else {
        Err(Error::platform(field, format!("must be a whole number of bytes, 0 or more (got {t})")))
    }
}

fn factor(list: &[(f64, f64)], size: f64) -> f64 {
    let mut current = 1.0;
    for &(threshold, value) in list {
        if size <= threshold {
            return current;
        }
        current = value;
    }
    current
}

fn overhead(list: &[(f64, f64, f64)], size: f64) -> f64 {
    let Some(&(_, a0, b0)) = list.first() else { return 0.0 };
    let mut current = a0 + b0 * size;
    for &(threshold, a, b) in list {
        if size <= threshold {
            return current;
        }
        current = a + b * size;
    }
    current
}

/// One chunk's fields: (threshold, values), or an error naming chunk `k` (from 1).
fn parse_chunk(field: &str, k: usize, chunk: &str) -> Result<(f64, Vec<f64>)> {
    let at = |what: String| Error::platform(field, format!("chunk {k} (`{chunk}`): {what}"));
    let mut parts = chunk.split(':').map(str::trim).filter(|p| !p.is_empty());
    let head = parts.next().ok_or_else(|| at("is empty".into()))?;
    if head.is_empty() || !head.bytes().all(|b| b.is_ascii_digit()) || head.len() > 15 {
        return Err(at(format!("threshold `{head}` is not a whole number of bytes")));
    }
    let threshold: f64 = head.parse::<u64>().map_err(|_| at(format!("threshold `{head}` is not a whole number of bytes")))? as f64;
    let mut values = Vec::new();
    for (i, p) in parts.enumerate() {
        let v = parse_value(p).ok_or_else(|| at(format!("value {} `{p}` is not a number", i + 1)))?;
        if !v.is_finite() || v < 0.0 {
            return Err(at(format!("value {} `{p}` must be finite and >= 0", i + 1)));
        }
        values.push(v);
    }
    Ok((threshold, values))
}

/// A number, optionally followed by a time unit (SimGrid's `xbt_parse_get_time`).
fn parse_value(text: &str) -> Option<f64> {
    let units: [(&str, f64); 5] = [("ps", 1e-12), ("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0)];
    for (unit, scale) in units {
        if let Some(number) = text.strip_suffix(unit) {
            if let Ok(v) = number.trim().parse::<f64>() {
                return Some(v * scale);
            }
        }
    }
    text.parse::<f64>().ok()
}

fn chunks(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split(';').map(str::trim).filter(|c| !c.is_empty()).enumerate().map(|(i, c)| (i + 1, c))
}

/// A factor string; `nonzero` refuses a factor 0 (SimGrid asserts a bandwidth factor is not 0).
pub fn parse_factors(field: &str, text: &str, nonzero: bool) -> Result<Vec<(f64, f64)>> {
    let mut out = Vec::new();
    for (k, chunk) in chunks(text) {
        let (threshold, values) = parse_chunk(field, k, chunk)?;
        let Some(&v) = values.first() else {
            return Err(Error::platform(field, format!("chunk {k} (`{chunk}`): no factor after the threshold (`threshold:factor`)")));
        };
        if nonzero && v == 0.0 {
            return Err(Error::platform(field, format!("chunk {k} (`{chunk}`): a bandwidth factor must be > 0")));
        }
        out.push((threshold, v));
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(out)
}

/// An overhead string (`threshold:seconds:seconds_per_byte`; further values are ignored, as
/// SimGrid does).
pub fn parse_overheads(field: &str, text: &str) -> Result<Vec<(f64, f64, f64)>> {
    let mut out = Vec::new();
    for (k, chunk) in chunks(text) {
        let (threshold, values) = parse_chunk(field, k, chunk)?;
        if values.len() < 2 {
            return Err(Error::platform(
                field,
                format!("chunk {k} (`{chunk}`): needs `threshold:seconds:seconds_per_byte`, got {} value(s)", values.len()),
            ));
        }
        out.push((threshold, values[0], values[1]));
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preset() -> SmpiTiming {
        SmpiTiming::from_spec(&SmpiSpec::Preset(PRESET_SIMGRID_3_32.into())).unwrap()
    }

    #[test]
    fn factors_take_the_largest_threshold_strictly_below() {
        let t = preset();
        assert_eq!(t.bw_factor(0.0), 1.0);
        assert_eq!(t.bw_factor(1.0), 0.812084);
        assert_eq!(t.bw_factor(257.0), 0.812084);
        assert_eq!(t.bw_factor(258.0), 0.338112);
        assert_eq!(t.bw_factor(65472.0), 0.697866);
        assert_eq!(t.bw_factor(65473.0), 0.940694);
        assert_eq!(t.lat_factor(16.0), 2.01467);
        assert_eq!(t.lat_factor(1e9), 11.6436);
        assert_eq!(t.send_overhead(100.0), 0.0);
    }

    #[test]
    fn overheads_are_affine_by_section() {
        let os = parse_overheads("f", "0:1e-6:1e-9;1000:2us:0;100000:5e-6:1e-10:7").unwrap();
        let t = SmpiTiming { os, ..SmpiTiming::default() };
        assert_eq!(t.send_overhead(0.0), 1e-6);
        assert!((t.send_overhead(1000.0) - (1e-6 + 1e-9 * 1000.0)).abs() < 1e-18);
        assert!((t.send_overhead(1001.0) - 2e-6).abs() < 1e-18);
        assert!((t.send_overhead(200000.0) - (5e-6 + 1e-10 * 200000.0)).abs() < 1e-18);
        // below the smallest threshold: the first section's formula
        let t = SmpiTiming { os: parse_overheads("f", "10:1:0").unwrap(), ..SmpiTiming::default() };
        assert_eq!(t.send_overhead(5.0), 1.0);
    }

    #[test]
    fn malformed_strings_name_the_field_and_chunk() {
        let e = parse_factors("network.smpi.bw_factor", "65472:0.9;abc:0.5", true).unwrap_err();
        assert_eq!(e.field, "network.smpi.bw_factor");
        assert!(e.reason.contains("chunk 2") && e.reason.contains("abc"), "{e}");
        let e = parse_factors("x", "100:0.5;200", true).unwrap_err();
        assert!(e.reason.contains("chunk 2") && e.reason.contains("no factor"), "{e}");
        let e = parse_factors("x", "100:zz", true).unwrap_err();
        assert!(e.reason.contains("chunk 1") && e.reason.contains("value 1 `zz`"), "{e}");
        let e = parse_factors("x", "100:0", true).unwrap_err();
        assert!(e.reason.contains("> 0"), "{e}");
        let e = parse_overheads("network.smpi.os", "0:1;").unwrap_err();
        assert!(e.reason.contains("chunk 1") && e.reason.contains("1 value"), "{e}");
        let e = parse_factors("x", "-5:1", true).unwrap_err();
        assert!(e.reason.contains("threshold `-5`"), "{e}");
        let e = SmpiTiming::from_spec(&SmpiSpec::Preset("simgrid-9".into())).unwrap_err();
        assert_eq!(e.field, "network.smpi");
    }

    #[test]
    fn fields_override_the_preset_and_default_to_neutral() {
        let spec = SmpiSpec::Fields(SmpiFields { preset: Some(PRESET_SIMGRID_3_32.into()), os: Some("0:1e-6:0".into()), ..SmpiFields::default() });
        let t = SmpiTiming::from_spec(&spec).unwrap();
        assert_eq!(t.bw_factor, preset().bw_factor);
        assert_eq!(t.send_overhead(10.0), 1e-6);
        let t = SmpiTiming::from_spec(&SmpiSpec::Fields(SmpiFields { ois: Some("0:2e-6:0".into()), ..SmpiFields::default() })).unwrap();
        assert_eq!((t.bw_factor(1e6), t.lat_factor(10.0), t.isend_overhead(5.0)), (1.0, 1.0, 2e-6));
    }
}
