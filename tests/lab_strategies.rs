//! Every lab strategy, with every option it takes, finishes the default
//! comparison with every byte delivered intact: a stall in any mechanism
//! (a request group never closed, a held burst never released) shows up
//! here as an unfinished flow.
#![cfg(feature = "lab")]

use ackwise::lab::{self, RunPlan, Strategy};

#[test]
fn every_strategy_and_option_finishes_the_default_preset() {
    let mut strategies = Vec::new();
    for base in Strategy::ALL {
        for options in [
            "",
            "+pacing",
            "+beta27",
            "+ss-every",
            "+ss-every+pacing+beta27",
        ] {
            if let Ok(s) = format!("{base}{options}").parse::<Strategy>() {
                strategies.push(s);
            }
        }
    }
    assert!(strategies.len() > 30, "{}", strategies.len());
    let plan = RunPlan {
        preset: lab::load("default", None).unwrap(),
        strategies,
        seed: 3,
        jobs: 2,
        shard: None,
        sample_interval: None,
        pcap_dir: None,
    };
    let records = lab::run::run(&plan, false).unwrap();
    for r in &records {
        assert!(
            r.all_finished && r.flows.iter().all(|f| f.finished),
            "{} at {:?} did not finish: {:?}",
            r.strategy,
            r.params,
            r.flows
        );
    }
}
