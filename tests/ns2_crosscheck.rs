//! The emulator and baseline TCP against ns-2: every cross-check scenario
//! with both receivers must agree on completion time and goodput within
//! the tolerance. Skipped when `ns` is missing, unless
//! `ACKWISE_REQUIRE_NS2=1` (CI sets it, so a broken install cannot pass
//! silently).
#![cfg(feature = "lab")]

use ackwise::lab::crosscheck::{self, Reference};
use ackwise::lab::ns2;

#[test]
fn emulator_agrees_with_ns2() {
    if !ns2::ns2_available() {
        let required = std::env::var("ACKWISE_REQUIRE_NS2").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "ACKWISE_REQUIRE_NS2=1 but ns-2 (`ns`) is not installed"
        );
        eprintln!("skipped: ns-2 is not installed (apt-get install ns2)");
        return;
    }
    let cases = crosscheck::run_all(Reference::ByteCounting, false).expect("cross-check runs");
    assert_eq!(cases.len(), 2 * crosscheck::scenarios().len());
    let table = crosscheck::table(&cases);
    for c in &cases {
        assert_eq!(c.ns2.finished, c.ns2.flows, "{table}");
        assert_eq!(c.ackwise.finished, c.ackwise.flows, "{table}");
    }
    let failed: Vec<String> = cases
        .iter()
        .filter(|c| !c.passed())
        .map(|c| format!("{} {}", c.scenario.name, c.sink.name()))
        .collect();
    assert!(failed.is_empty(), "outside tolerance: {failed:?}\n{table}");
}
