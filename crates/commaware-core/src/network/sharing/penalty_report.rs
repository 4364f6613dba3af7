//! The document `commaware penalties --json` prints, and the API's `PenaltyReport.to_dict`
//! parses: written here once, straight from the analysis, in the scheme's order. A scheme of
//! 10^5 communications gives about 12 MB of JSON, which Python's `json` takes most of a
//! second to write (issue 30, item 4).

use std::fmt::Write;

use super::penalty::{class_names, Scheme, SchemeAnalysis};

/// log10 of the largest finite f64: beyond it a count is given by its log only.
const FLOAT_LOG10: f64 = 308.254_715_559_916_7;

/// The number of state sets of a Myrinet analysis (paper 004 §V-B), the product over the
/// connected components.
#[derive(Debug, Clone, PartialEq)]
pub struct StateSets {
    /// The exact count in decimal, when every component was counted exactly and the product
    /// is within a float's range.
    pub exact: Option<String>,
    /// The count as a float (the estimate when some component was estimated); `None` beyond
    /// a float's range or when the estimator failed.
    pub value: Option<f64>,
    /// log10 of the count, `None` when not finite.
    pub log10: Option<f64>,
    pub estimated: bool,
    pub estimator_failed: bool,
}

impl StateSets {
    pub fn of(a: &SchemeAnalysis) -> StateSets {
        let comps = &a.components;
        let estimated = comps.iter().any(|c| !c.exact);
        let estimator_failed = comps.iter().any(|c| c.estimator_failed);
        let log10: f64 = comps.iter().map(|c| c.log10_sets).sum();
        let log10 = log10.is_finite().then_some(log10);
        let (exact, value) = if estimated {
            let v: f64 = comps.iter().map(|c| c.sets).product();
            (None, v.is_finite().then_some(v))
        } else if log10.map_or(true, |l| l > FLOAT_LOG10) {
            (None, None)
        } else {
            let digits = decimal_product(comps.iter().map(|c| c.sets_exact.unwrap_or(0)));
            let v = digits.parse::<f64>().ok();
            (Some(digits), v)
        };
        StateSets { exact, value, log10, estimated, estimator_failed }
    }
}

/// The decimal digits of a product of integers (schoolbook, base 10^9 limbs): the exact
/// count of state sets has up to 309 digits.
pub fn decimal_product(factors: impl Iterator<Item = u128>) -> String {
    const BASE: u128 = 1_000_000_000;
    let mut limbs: Vec<u128> = vec![1]; // little-endian, each < BASE
    for f in factors {
        let mut digits = Vec::new();
        let mut g = f;
        while g > 0 {
            digits.push(g % BASE);
            g /= BASE;
        }
        let mut out = vec![0u128; limbs.len() + digits.len() + 1];
        for (i, &a) in limbs.iter().enumerate() {
            let mut carry = 0u128;
            for (j, &b) in digits.iter().enumerate() {
                let t = out[i + j] + a * b + carry;
                out[i + j] = t % BASE;
                carry = t / BASE;
            }
            let mut k = i + digits.len();
            while carry > 0 {
                let t = out[k] + carry;
                out[k] = t % BASE;
                carry = t / BASE;
                k += 1;
            }
        }
        while out.len() > 1 && out.last() == Some(&0) {
            out.pop();
        }
        limbs = out;
    }
    let mut s = limbs.last().unwrap().to_string();
    for l in limbs.iter().rev().skip(1) {
        let _ = write!(s, "{l:09}");
    }
    s
}

fn number(out: &mut String, x: f64) {
    if x.is_finite() {
        out.push_str(&serde_json::to_string(&x).expect("a finite float serialises"));
    } else {
        out.push_str("null");
    }
}

fn string(out: &mut String, s: &str) {
    out.push_str(&serde_json::to_string(s).expect("a string serialises"));
}

/// The `--json` document of a penalty analysis: model, parameters, then per communication
/// (keyed by id, in the scheme's order) its penalty, conflict classes and degrees; for
/// Myrinet the state sets and each component.
pub fn report_json(model: &str, parameters: &[(&str, f64)], scheme: &Scheme, a: &SchemeAnalysis) -> String {
    let myrinet = model == "myrinet";
    let mut out = String::with_capacity(128 * scheme.ids.len() + 256);
    out.push_str("{\"model\": ");
    string(&mut out, model);
    out.push_str(", \"parameters\": {");
    for (k, (name, v)) in parameters.iter().enumerate() {
        out.push_str(if k == 0 { "" } else { ", " });
        string(&mut out, name);
        out.push_str(": ");
        // Myrinet's parameters are integers (exact_limit, samples, seed).
        if myrinet {
            let _ = write!(out, "{}", *v as i64);
        } else {
            number(&mut out, *v);
        }
    }
    let keyed = |out: &mut String, field: &str, each: &dyn Fn(&mut String, usize)| {
        let _ = write!(out, "}}, \"{field}\": {{");
        for (k, id) in scheme.ids.iter().enumerate() {
            out.push_str(if k == 0 { "" } else { ", " });
            string(out, id);
            out.push_str(": ");
            each(out, k);
        }
    };
    keyed(&mut out, "penalties", &|out, k| number(out, a.penalties[k]));
    keyed(&mut out, "conflicts", &|out, k| {
        out.push('[');
        for (j, name) in class_names(a.conflicts[k]).enumerate() {
            out.push_str(if j == 0 { "\"" } else { ", \"" });
            out.push_str(name);
            out.push('"');
        }
        out.push(']');
    });
    keyed(&mut out, "degrees", &|out, k| {
        let _ = write!(out, "{{\"delta_out\": {}, \"delta_in\": {}}}", a.delta_out[k], a.delta_in[k]);
    });
    out.push('}');
    if myrinet {
        let sets = StateSets::of(a);
        out.push_str(", \"state_sets\": ");
        match (&sets.exact, sets.value) {
            (Some(digits), _) => out.push_str(digits),
            (None, Some(v)) => number(&mut out, v),
            (None, None) => out.push_str("null"),
        }
        let _ = write!(out, ", \"state_sets_estimated\": {}, \"state_sets_log10\": ", sets.estimated);
        number(&mut out, sets.log10.unwrap_or(f64::NAN));
        let _ = write!(out, ", \"estimator_failed\": {}, \"components\": [", sets.estimator_failed);
        for (j, c) in a.components.iter().enumerate() {
            out.push_str(if j == 0 { "{\"comms\": [" } else { ", {\"comms\": [" });
            for (i, &k) in c.comms.iter().enumerate() {
                out.push_str(if i == 0 { "" } else { ", " });
                string(&mut out, &scheme.ids[k]);
            }
            out.push_str("], \"state_sets\": ");
            match c.sets_exact {
                Some(v) if c.exact => {
                    let _ = write!(out, "{v}");
                }
                _ => number(&mut out, c.sets),
            }
            out.push_str(", \"state_sets_log10\": ");
            number(&mut out, c.log10_sets);
            let _ = write!(out, ", \"estimated\": {}, \"estimator_failed\": {}, \"effective_samples\": ", !c.exact, c.estimator_failed);
            number(&mut out, c.effective_samples);
            let _ = write!(out, ", \"converged\": {}, \"penalty_error\": ", c.converged);
            number(&mut out, c.penalty_error);
            out.push_str(", \"ci95\": [");
            number(&mut out, c.ci95.0);
            out.push_str(", ");
            number(&mut out, c.ci95.1);
            out.push_str("]}");
        }
        out.push(']');
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_products() {
        assert_eq!(decimal_product([].into_iter()), "1");
        assert_eq!(decimal_product([0].into_iter()), "0");
        assert_eq!(decimal_product([999_999_999, 1_000_000_001].into_iter()), "999999999999999999");
        // 2^127 squared, checked digit for digit: 2^254.
        let two127 = 1u128 << 127;
        assert_eq!(
            decimal_product([two127, two127].into_iter()),
            "28948022309329048855892746252171976963317496166410141009864396001978282409984"
        );
        // 30 factors of 10^10: a 1 and 300 zeros.
        let s = decimal_product(std::iter::repeat(10_000_000_000u128).take(30));
        assert_eq!(s.len(), 301);
        assert!(s.starts_with('1') && s[1..].bytes().all(|b| b == b'0'));
    }
}
