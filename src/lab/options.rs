//! Strategy options, appended to a strategy name with `+` (for example
//! `dal2+pacing+beta27`). Each option changes one sender setting on top of
//! what the strategy chose; strategy parsing hands every `+` part to
//! [`apply_option`].

use crate::connection::{Config, Decrease, PacingConfig};
use crate::lab::UnknownStrategy;

/// Every option: its stable lab name and a line for `ackwise lab list`.
pub const OPTIONS: [(&str, &str); 8] = [
    (
        "pacing",
        "pace one window over 0.9 SRTT (paper 004 sec. 4.1)",
    ),
    (
        "beta27",
        "decrease by beta = 2/7 after the initial slow start (paper 003 sec. 4.4)",
    ),
    (
        "nosack",
        "both ends without SACK, so the sender runs NewReno (RFC 6582), the baseline of papers 000, 002 and 004",
    ),
    (
        "impatient",
        "NewReno's Impatient timer (RFC 6582 sec. 4, as ns-2's NewReno): only the first partial ACK restarts the timeout",
    ),
    (
        "hystart",
        "HyStart++ (RFC 9406): the initial slow start ends when the RTT climbs",
    ),
    (
        "tlp",
        "tail loss probes (RFC 8985 sec. 7): one segment after ~2 RTTs without an ACK, instead of waiting for the timeout (4w-adaptive has them)",
    ),
    (
        "notlp",
        "no tail loss probes (to measure what they do for 4w-adaptive)",
    ),
    (
        "cubic",
        "CUBIC (RFC 9438) congestion avoidance, beta 0.7 after the initial slow start, instead of Reno's (slow start and loss recovery unchanged)",
    ),
];

/// Applies the option named `option` (case and surrounding spaces
/// ignored) to `config`:
///
/// * `pacing`: [`Config::pacing`] with the paper 004 section 4.1 fraction,
///   0.9 SRTT per window.
/// * `beta27`: [`Decrease::TwoSevenths`] for the congestion controller
///   (paper 003 section 4.4).
/// * `nosack`: [`Config::sack`] off. The lab gives both ends the same
///   configuration, so neither offers SACK-permitted on its SYN and the
///   connection negotiates no SACK (RFC 2018 sec. 2): the sender recovers
///   with NewReno's partial ACKs (RFC 6582), as the senders of papers
///   000, 002 and 004 did.
/// * `impatient`: [`Config::impatient`], RFC 6582 section 4's Impatient
///   variant of NewReno's retransmission timer. It only acts without
///   SACK, so it goes with `nosack`.
/// * `hystart`: [`Config::hystart`], HyStart++ (RFC 9406) in the initial
///   slow start.
/// * `tlp` / `notlp`: [`Config::tail_loss_probe`] on / off, RFC 8985's
///   tail loss probe.
/// * `cubic`: [`CongestionConfig::cubic`](crate::connection::CongestionConfig::cubic),
///   CUBIC's congestion avoidance (RFC 9438) over the same slow start.
///
/// Applying an option twice is the same as once. An unknown name is an
/// error that lists the known ones, and `config` is left untouched.
pub fn apply_option(option: &str, config: &mut Config) -> Result<(), UnknownStrategy> {
    match option.trim().to_ascii_lowercase().as_str() {
        "pacing" => config.pacing = Some(PacingConfig::PAPER_004),
        "beta27" => config.congestion.decrease = Decrease::TwoSevenths,
        "nosack" => config.sack = false,
        "impatient" => config.impatient = true,
        "hystart" => config.hystart = true,
        "tlp" => config.tail_loss_probe = true,
        "notlp" => config.tail_loss_probe = false,
        "cubic" => config.congestion.cubic = true,
        _ => {
            return Err(UnknownStrategy {
                name: option.to_string(),
                known: OPTIONS.map(|(name, _)| name).join(", "),
            })
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_set_pacing_and_decrease_and_unknown_ones_fail() {
        let mut c = Config::default();
        assert_eq!(c.pacing, None);
        assert_eq!(c.congestion.decrease, Decrease::Half);
        apply_option("pacing", &mut c).unwrap();
        assert_eq!(c.pacing.map(|p| p.fraction_per_mille), Some(900));
        apply_option(" BETA27 ", &mut c).unwrap();
        assert_eq!(c.congestion.decrease, Decrease::TwoSevenths);
        assert!(c.sack);
        apply_option("nosack", &mut c).unwrap();
        assert!(!c.sack);
        c.validate().unwrap();
        // Idempotent.
        let before = c.clone();
        apply_option("pacing", &mut c).unwrap();
        apply_option("beta27", &mut c).unwrap();
        apply_option("nosack", &mut c).unwrap();
        assert_eq!(c, before);
        // Unknown: an error naming it and the known options, config kept.
        for bad in ["pace", "", "beta2/7", "pacing+beta27"] {
            let err = apply_option(bad, &mut c).unwrap_err();
            assert_eq!(err.name, bad);
            assert!(err.to_string().contains("pacing, beta27, nosack"), "{err}");
            assert_eq!(c, before);
        }
        // Every listed option is accepted.
        for (name, description) in OPTIONS {
            assert!(!description.is_empty());
            apply_option(name, &mut Config::default()).unwrap();
        }
    }
}
