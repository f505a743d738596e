//! Lab strategy names and the connection configurations behind them.
//!
//! The names are the papers' (paper 003 section 3, paper 004 section 4.1)
//! in lower case; scripts rely on them, so they never change meaning. Later
//! mechanisms add names; options will append with `+`.

use crate::connection::{AckPolicyConfig, Config};
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// A named end-host configuration compared in the lab.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// `ae`: the receiver acknowledges every segment (paper 003 "AE",
    /// paper 004 "AckEvery").
    Ae,
    /// `da`: delayed ACK with byte counting limit L = 1, which is what
    /// paper 004 calls NewReno.
    Da,
    /// `dal2`: delayed ACK with byte counting limit L = 2 (paper 003
    /// "DAL2", RFC 3465's recommended limit).
    Dal2,
}

/// A strategy name the lab does not know.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown strategy `{name}` (known: {known})")]
pub struct UnknownStrategy {
    /// What was asked for.
    pub name: String,
    /// The names that exist, comma separated.
    pub known: String,
}

impl Strategy {
    /// Every strategy, in the order tables list them.
    pub const ALL: [Strategy; 3] = [Strategy::Ae, Strategy::Da, Strategy::Dal2];

    /// The stable lab name.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Ae => "ae",
            Strategy::Da => "da",
            Strategy::Dal2 => "dal2",
        }
    }

    /// One line for `ackwise lab list`.
    pub fn description(self) -> &'static str {
        match self {
            Strategy::Ae => "ACK every segment (AE)",
            Strategy::Da => "delayed ACK, byte counting L=1 (paper 004 NewReno)",
            Strategy::Dal2 => "delayed ACK, byte counting L=2 (paper 003 DAL2)",
        }
    }

    /// Parses a comma-separated list such as `ae,dal2`.
    pub fn parse_list(list: &str) -> Result<Vec<Strategy>, UnknownStrategy> {
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::parse)
            .collect()
    }

    /// `base` with this strategy's ACK policy and byte-counting limit.
    /// Both ends of a flow use the result: the receiver reads the policy,
    /// the sender the limit.
    pub fn apply(self, base: &Config) -> Config {
        let mut config = base.clone();
        let (policy, limit) = match self {
            Strategy::Ae => (AckPolicyConfig::Every, 1),
            Strategy::Da => (AckPolicyConfig::DELAYED, 1),
            Strategy::Dal2 => (AckPolicyConfig::DELAYED, 2),
        };
        config.ack_policy = policy;
        config.congestion.byte_counting_limit = limit;
        config
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Strategy {
    type Err = UnknownStrategy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase();
        Strategy::ALL
            .into_iter()
            .find(|st| st.name() == wanted)
            .ok_or_else(|| UnknownStrategy {
                name: s.to_string(),
                known: Strategy::ALL.map(Strategy::name).join(", "),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_known_ones() {
        for s in Strategy::ALL {
            assert_eq!(s.name().parse::<Strategy>().unwrap(), s);
        }
        assert_eq!(
            Strategy::parse_list(" AE, dal2 ,").unwrap(),
            vec![Strategy::Ae, Strategy::Dal2]
        );
        let err = Strategy::parse_list("ae,4w").unwrap_err();
        assert_eq!(err.name, "4w");
        assert!(err.to_string().contains("ae, da, dal2"), "{err}");
    }

    #[test]
    fn strategies_set_policy_and_limit() {
        let base = Config::default();
        assert_eq!(Strategy::Ae.apply(&base).ack_policy, AckPolicyConfig::Every);
        assert_eq!(Strategy::Da.apply(&base).congestion.byte_counting_limit, 1);
        let dal2 = Strategy::Dal2.apply(&base);
        assert_eq!(dal2.ack_policy, AckPolicyConfig::DELAYED);
        assert_eq!(dal2.congestion.byte_counting_limit, 2);
    }
}
