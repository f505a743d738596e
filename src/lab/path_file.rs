//! The TOML forms of the path models the emulator offers beyond rate,
//! delay and queue (random loss, for now), read by hand from raw TOML
//! values so that every bad value is one line naming what was wrong
//! (serde's untagged enums only say "did not match any variant").

use crate::emu::LossModel;
use toml::Value;

/// A probability: a number in [0, 1] (`0.01`), or a string holding one
/// or a percentage (`"0.01"`, `"1%"`).
pub(crate) fn parse_probability(v: &Value) -> Result<f64, String> {
    let p = match v {
        Value::Float(f) => *f,
        Value::Integer(i) => *i as f64,
        Value::String(s) => {
            let t = s.trim();
            let (num, scale) = match t.strip_suffix('%') {
                Some(n) => (n.trim(), 0.01),
                None => (t, 1.0),
            };
            num.parse::<f64>()
                .map_err(|_| format!("`{s}` is not a probability (e.g. 0.01 or \"1%\")"))?
                * scale
        }
        other => {
            return Err(format!(
                "`{other}` is not a probability (e.g. 0.01 or \"1%\")"
            ))
        }
    };
    if p.is_finite() && (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(format!(
            "probability `{v}` must be within [0, 1] (0% to 100%)"
        ))
    }
}

fn number(v: &Value, what: &str) -> Result<f64, String> {
    match v {
        Value::Float(f) if f.is_finite() => Ok(*f),
        Value::Integer(i) => Ok(*i as f64),
        other => Err(format!("{what} must be a number, not `{other}`")),
    }
}

/// A link's `loss` key:
///
/// - `"none"`: no random loss;
/// - `"1%"`, `0.01`, or `{ bernoulli = "1%" }`: independent loss;
/// - `{ gilbert_elliott = { mean = "1%", burst = 4 } }`: bursty loss with
///   that long-run rate and mean burst length in packets
///   ([`LossModel::gilbert_elliott_bursty`]);
/// - `{ gilbert_elliott = { p_good_to_bad = 0.001, p_bad_to_good = 0.25,
///   loss_good = 0, loss_bad = 1 } }`: the chain itself (`loss_good`
///   defaults to 0, `loss_bad` to 1).
pub(crate) fn parse_loss(v: &Value) -> Result<LossModel, String> {
    let model = match v {
        Value::String(s) if s.trim() == "none" => LossModel::None,
        Value::String(_) | Value::Float(_) | Value::Integer(_) => LossModel::Bernoulli {
            p: parse_probability(v)?,
        },
        Value::Table(t) => {
            let mut keys = t.iter();
            let (Some((kind, body)), None) = (keys.next(), keys.next()) else {
                return Err(
                    "a loss table has exactly one key: bernoulli or gilbert_elliott".to_string(),
                );
            };
            match kind.as_str() {
                "bernoulli" => LossModel::Bernoulli {
                    p: parse_probability(body)?,
                },
                "gilbert_elliott" => parse_gilbert_elliott(body)?,
                other => {
                    return Err(format!(
                        "unknown loss model `{other}` (bernoulli, gilbert_elliott)"
                    ))
                }
            }
        }
        other => {
            return Err(format!(
                "`{other}` is not a loss model (e.g. \"1%\" or {{ gilbert_elliott = {{ mean = \"1%\", burst = 4 }} }})"
            ))
        }
    };
    model.validate().map_err(str::to_string)?;
    Ok(model)
}

fn parse_gilbert_elliott(body: &Value) -> Result<LossModel, String> {
    let Value::Table(t) = body else {
        return Err("gilbert_elliott takes a table: { mean = \"1%\", burst = 4 }".to_string());
    };
    const SHORT: [&str; 2] = ["mean", "burst"];
    const CHAIN: [&str; 4] = ["p_good_to_bad", "p_bad_to_good", "loss_good", "loss_bad"];
    if let Some(k) = t
        .keys()
        .find(|k| !SHORT.contains(&k.as_str()) && !CHAIN.contains(&k.as_str()))
    {
        return Err(format!(
            "unknown gilbert_elliott key `{k}` (mean and burst, or p_good_to_bad, p_bad_to_good, loss_good, loss_bad)"
        ));
    }
    let short = SHORT.iter().any(|k| t.contains_key(*k));
    let chain = CHAIN.iter().any(|k| t.contains_key(*k));
    if short == chain {
        return Err(
            "gilbert_elliott needs either mean and burst, or p_good_to_bad and p_bad_to_good"
                .to_string(),
        );
    }
    let get = |k: &str| {
        t.get(k)
            .ok_or_else(|| format!("gilbert_elliott needs `{k}`"))
    };
    if short {
        let mean = parse_probability(get("mean")?)?;
        let burst = number(get("burst")?, "burst")?;
        if burst < 1.0 {
            return Err("burst is a mean number of packets, at least 1".to_string());
        }
        if mean >= 1.0 {
            return Err("mean loss must be below 100%".to_string());
        }
        return Ok(LossModel::gilbert_elliott_bursty(mean, burst));
    }
    let opt = |k: &str, default: f64| t.get(k).map_or(Ok(default), parse_probability);
    Ok(LossModel::GilbertElliott {
        p_good_to_bad: parse_probability(get("p_good_to_bad")?)?,
        p_bad_to_good: parse_probability(get("p_bad_to_good")?)?,
        loss_good: opt("loss_good", 0.0)?,
        loss_bad: opt("loss_bad", 1.0)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loss(text: &str) -> Result<LossModel, String> {
        let t: toml::Table = toml::from_str(&format!("loss = {text}")).unwrap();
        parse_loss(&t["loss"])
    }

    #[test]
    fn loss_forms() {
        let one = LossModel::Bernoulli { p: 0.01 };
        assert_eq!(loss("\"1%\""), Ok(one));
        assert_eq!(loss("0.01"), Ok(one));
        assert_eq!(loss("\"0.01\""), Ok(one));
        assert_eq!(loss("{ bernoulli = \"1%\" }"), Ok(one));
        assert_eq!(loss("{ bernoulli = 0.01 }"), Ok(one));
        assert_eq!(loss("\"none\""), Ok(LossModel::None));
        assert_eq!(loss("0"), Ok(LossModel::Bernoulli { p: 0.0 }));
        assert_eq!(
            loss("{ gilbert_elliott = { mean = \"1%\", burst = 4 } }"),
            Ok(LossModel::gilbert_elliott_bursty(0.01, 4.0))
        );
        assert_eq!(
            loss("{ gilbert_elliott = { p_good_to_bad = 0.01, p_bad_to_good = 0.5 } }"),
            Ok(LossModel::GilbertElliott {
                p_good_to_bad: 0.01,
                p_bad_to_good: 0.5,
                loss_good: 0.0,
                loss_bad: 1.0
            })
        );
    }

    #[test]
    fn bad_loss_values_say_why() {
        let cases = [
            ("\"150%\"", "within [0, 1]"),
            ("-0.5", "within [0, 1]"),
            ("\"often\"", "not a probability"),
            ("true", "not a loss model"),
            ("{ uniform = 0.1 }", "unknown loss model"),
            (
                "{ bernoulli = 0.1, gilbert_elliott = {} }",
                "exactly one key",
            ),
            ("{ gilbert_elliott = 0.1 }", "takes a table"),
            ("{ gilbert_elliott = { mean = 0.01 } }", "needs `burst`"),
            (
                "{ gilbert_elliott = { mean = 0.01, burst = 0.5 } }",
                "at least 1",
            ),
            (
                "{ gilbert_elliott = { mean = \"100%\", burst = 2 } }",
                "below 100%",
            ),
            ("{ gilbert_elliott = { mean = 0.6, burst = 1 } }", "[0, 1]"),
            (
                "{ gilbert_elliott = { mean = 0.01, burst = 4, loss_bad = 1 } }",
                "either",
            ),
            (
                "{ gilbert_elliott = { mean = 0.01, burst = \"x\" } }",
                "a number",
            ),
            (
                "{ gilbert_elliott = { avg = 0.01 } }",
                "unknown gilbert_elliott key",
            ),
            (
                "{ gilbert_elliott = { p_good_to_bad = 0.1, p_bad_to_good = 0 } }",
                "must be left",
            ),
        ];
        for (text, expect) in cases {
            let err = loss(text).unwrap_err();
            assert!(err.contains(expect), "{text}: {err}");
            assert!(!err.contains('\n'), "{text}: one line");
        }
    }
}
