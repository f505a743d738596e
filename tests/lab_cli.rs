//! The `ackwise lab` command as a user meets it: a table from the default
//! run, identical JSON for identical seeds, and one clear line with exit
//! status 2 for every kind of bad input.
#![cfg(feature = "cli")]

use std::path::PathBuf;
use std::process::{Command, Output};

fn ackwise(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ackwise"))
        .args(args)
        .output()
        .expect("run ackwise")
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackwise-lab-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn scenario(name: &str, text: &str) -> String {
    let path = temp(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

const GOOD: &str = r#"
name = "t"
strategies = ["ae", "dal2"]
[bottleneck]
rate = "1.5mbit"
delay = "50ms"
buffer_packets = 19
[[flows]]
bytes = 200000
"#;

#[test]
fn default_run_prints_a_table_with_every_baseline() {
    let out = ackwise(&["lab", "--quiet"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.lines().next().unwrap().contains("strategy"));
    for s in ["ae", "da", "dal2"] {
        assert!(
            table
                .lines()
                .any(|l| l.split_whitespace().nth(1) == Some(s)),
            "{table}"
        );
    }
    // Every flow of the default comparison finishes.
    assert!(table.lines().skip(1).all(|l| l.contains("1/1")), "{table}");
}

#[test]
fn same_seed_same_json_byte_for_byte() {
    let file = scenario("det.toml", GOOD);
    let (a, b, c) = (temp("a.json"), temp("b.json"), temp("c.json"));
    for (path, seed, jobs) in [(&a, "5", "1"), (&b, "5", "2"), (&c, "6", "2")] {
        let out = ackwise(&[
            "lab",
            &file,
            "--seed",
            seed,
            "--jobs",
            jobs,
            "--quiet",
            "--json",
            path.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (a, b, c) = (
        std::fs::read(a).unwrap(),
        std::fs::read(b).unwrap(),
        std::fs::read(c).unwrap(),
    );
    assert_eq!(a, b, "same seed, different job count, different JSON");
    let json: serde_json::Value = serde_json::from_slice(&a).unwrap();
    let runs = json.as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        for key in [
            "preset",
            "strategy",
            "seed",
            "params",
            "flows",
            "links",
            "jain_index",
        ] {
            assert!(r.get(key).is_some(), "missing {key}");
        }
        let f = &r["flows"][0];
        for key in [
            "completion_time_s",
            "goodput_bps",
            "data_packets",
            "ack_packets",
            "ack_bytes",
            "retransmissions",
            "timeouts",
        ] {
            assert!(f.get(key).is_some(), "missing flows[].{key}");
        }
    }
    assert_ne!(a, c, "the seed is recorded, so another seed differs");
}

#[test]
fn shards_partition_the_sweep() {
    let all = ackwise(&["lab", "p003-fig8", "--strategies", "ae", "--quiet"]);
    let one = ackwise(&[
        "lab",
        "p003-fig8",
        "--strategies",
        "ae",
        "--quiet",
        "--shard",
        "1/2",
    ]);
    let two = ackwise(&[
        "lab",
        "p003-fig8",
        "--strategies",
        "ae",
        "--quiet",
        "--shard",
        "2/2",
    ]);
    let rows = |o: &Output| String::from_utf8_lossy(&o.stdout).lines().count() - 1;
    assert_eq!(rows(&one) + rows(&two), rows(&all));
    assert!(rows(&one) > 0 && rows(&two) > 0);
}

fn assert_one_line_error(args: &[&str], needle: &str) {
    let out = ackwise(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    assert_one_line_error(&["lab", "p999"], "unknown preset `p999`");
    assert_one_line_error(
        &["lab", "--strategies", "ae,bogus"],
        "unknown strategy `bogus`",
    );
    assert_one_line_error(&["lab", "--shard", "3/2"], "bad shard");
    assert_one_line_error(&["lab", "/nonexistent/x.toml"], "/nonexistent/x.toml");
    let broken = scenario("broken.toml", "[bottleneck\nrate = 1");
    assert_one_line_error(&["lab", &broken], "scenario file");
    let unknown_key = scenario(
        "typo.toml",
        &GOOD.replace("buffer_packets", "bufer_packets"),
    );
    assert_one_line_error(&["lab", &unknown_key], "bufer_packets");
    let zero_rate = scenario("zero.toml", &GOOD.replace("1.5mbit", "0mbit"));
    assert_one_line_error(&["lab", &zero_rate], "bottleneck.rate");
    let negative = scenario("neg.toml", &GOOD.replace("1.5mbit", "-3mbit"));
    assert_one_line_error(&["lab", &negative], "bottleneck.rate");
    let no_buffer = scenario("nobuf.toml", &GOOD.replace("= 19", "= 0"));
    assert_one_line_error(&["lab", &no_buffer], "bottleneck.buffer_packets");
    let too_long = scenario("long.toml", &format!("horizon = \"1s\"\n{GOOD}"));
    assert_one_line_error(&["lab", &too_long], "cannot finish within the horizon");
}

#[test]
fn plots_and_series_files_are_written() {
    let dir = temp("plots");
    let _ = std::fs::remove_dir_all(&dir);
    let json = temp("series.json");
    let csv = temp("series.csv");
    let out = ackwise(&[
        "lab",
        "default",
        "--plot",
        dir.to_str().unwrap(),
        "--series",
        "100ms",
        "--series-csv",
        csv.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for metric in ["completion", "utilization", "acks"] {
        let svg = std::fs::read_to_string(dir.join(format!("default-{metric}-vs-rate_mbps.svg")))
            .unwrap_or_else(|e| panic!("{metric}: {e}"));
        assert!(svg.contains("<svg") && svg.contains("dal2"), "{metric}");
    }
    for rate in ["1.5", "10"] {
        for s in ["ae", "da", "dal2"] {
            let path = dir.join(format!("default-rate_mbps-{rate}-{s}-cwnd.svg"));
            assert!(path.is_file(), "{}", path.display());
        }
    }
    let runs: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for r in runs.as_array().unwrap() {
        let series = &r["series"];
        let n = series["times_s"].as_array().unwrap().len();
        assert!(n > 10);
        assert_eq!(series["queue_packets"].as_array().unwrap().len(), n);
        assert_eq!(
            series["flows"][0]["cwnd_bytes"].as_array().unwrap().len(),
            n
        );
    }
    let csv = std::fs::read_to_string(csv).unwrap();
    assert!(csv.starts_with("preset,strategy,seed,rate_mbps,flow,time_s,cwnd_bytes"));
    assert!(csv.lines().count() > 6 * 10);
}

#[test]
fn series_json_is_identical_for_any_job_count() {
    let (a, b) = (temp("series-j1.json"), temp("series-j2.json"));
    for (path, jobs) in [(&a, "1"), (&b, "2")] {
        let out = ackwise(&[
            "lab",
            "default",
            "--series",
            "100ms",
            "--jobs",
            jobs,
            "--quiet",
            "--json",
            path.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (a, b) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    assert!(String::from_utf8_lossy(&a).contains("\"series\""));
    assert_eq!(a, b, "series JSON differs between --jobs 1 and --jobs 2");
}

#[test]
fn progress_goes_to_stderr_as_plain_lines_off_a_terminal() {
    let out = ackwise(&["lab", "default", "--strategies", "ae"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.lines().any(|l| l == "2/2 runs"), "{err}");
    let quiet = ackwise(&["lab", "default", "--strategies", "ae", "--quiet"]);
    assert!(quiet.stderr.is_empty());
}

#[test]
fn bad_series_and_plot_flags_are_one_line_errors() {
    assert_one_line_error(&["lab", "--series", "0ms"], "--series");
    assert_one_line_error(&["lab", "--series", "100"], "needs a unit");
    assert_one_line_error(&["lab", "--series", "1us"], "at most");
    let file = temp("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    let below = file.join("plots");
    assert_one_line_error(
        &["lab", "--plot", below.to_str().unwrap()],
        below.to_str().unwrap(),
    );
    let csv = temp("orphan.csv");
    assert_one_line_error(
        &["lab", "--series-csv", csv.to_str().unwrap()],
        "needs --series",
    );
}

/// Runs `ackwise lab ARGS --jobs JOBS --quiet --json <temp file>`, checks
/// that it succeeded and returns the JSON.
fn lab_json(args: &[&str], jobs: &str, out_name: &str) -> String {
    let json = temp(out_name);
    let mut all = vec!["lab"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--jobs", jobs, "--quiet", "--json", json.to_str().unwrap()]);
    let out = ackwise(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(&json).unwrap()
}

#[test]
fn random_loss_from_a_scenario_file() {
    let lossy = GOOD.replace(
        "buffer_packets = 19",
        "buffer_packets = 19\nloss = { gilbert_elliott = { mean = \"10%\", burst = 3 } }",
    );
    let file = scenario("loss.toml", &lossy);
    let text = lab_json(&[&file], "1", "loss.json");
    assert!(text.contains("\"lost\":"), "{text}");
    // Without a loss model the key is absent: old records read as before.
    let plain = scenario("noloss.toml", GOOD);
    assert!(!lab_json(&[&plain], "1", "noloss.json").contains("\"lost\""));

    for (value, needle) in [
        ("\"150%\"", "bottleneck.loss"),
        ("{ bernouli = 0.1 }", "unknown loss model `bernouli`"),
        ("{ gilbert_elliott = { mean = 0.01 } }", "needs `burst`"),
    ] {
        let bad = scenario(
            "badloss.toml",
            &GOOD.replace(
                "buffer_packets = 19",
                &format!("buffer_packets = 19\nloss = {value}"),
            ),
        );
        assert_one_line_error(&["lab", &bad], needle);
    }
}

#[test]
fn nosack_option_runs_and_is_listed() {
    let list = ackwise(&["lab", "list"]);
    assert!(String::from_utf8_lossy(&list.stdout).contains("+nosack"));
    let file = scenario("nosack.toml", GOOD);
    let out = ackwise(&[
        "lab",
        &file,
        "--strategies",
        "da,da+nosack",
        "--jobs",
        "1",
        "--quiet",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    // Both finish; the drop-tail losses are recovered without SACK.
    let row = table
        .lines()
        .find(|l| l.split_whitespace().next() == Some("da+nosack"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(row.contains("1/1"), "{table}");
}

#[test]
fn shared_medium_preset_rewards_fewer_acks() {
    let text = lab_json(
        &["shared-medium", "--strategies", "ae,da,4w-adaptive"],
        "1",
        "shared.json",
    );
    let records: serde_json::Value = serde_json::from_str(&text).unwrap();
    let records = records.as_array().unwrap();
    // Aggregate goodput: both flows' bytes over the later completion.
    let agg = |strategy: &str, phy: f64, us: f64| {
        let r = records
            .iter()
            .find(|r| {
                r["strategy"] == strategy
                    && r["params"]["phy_mbps"] == phy
                    && r["params"]["per_frame_us"] == us
            })
            .unwrap();
        let flows = r["flows"].as_array().unwrap();
        assert!(flows.iter().all(|f| f["finished"] == true), "{r}");
        let last = flows
            .iter()
            .map(|f| f["completion_time_s"].as_f64().unwrap())
            .fold(0.0, f64::max);
        40e6 * 8.0 / last
    };
    for phy in [54.0, 300.0] {
        for us in [100.0, 150.0] {
            let (ae, da, w4a) = (
                agg("ae", phy, us),
                agg("da", phy, us),
                agg("4w-adaptive", phy, us),
            );
            assert!(
                da > 1.1 * ae && w4a > 1.1 * da,
                "{phy} Mbit/s, {us} us: {ae} {da} {w4a}"
            );
        }
    }
}

#[test]
fn path_models_keep_the_json_identical_for_any_job_count() {
    let text = r#"
name = "paths"
strategies = ["ae", "dal2", "4w-adaptive"]
[bottleneck]
rate = "20mbit"
delay = "5ms"
buffer_packets = 40
loss = { gilbert_elliott = { mean = "1%", burst = 3 } }
jitter = "1ms"
reorder = { probability = "1%", extra = "3ms" }
[medium]
per_frame = "100us"
[[flows]]
count = 3
bytes = 500000
access_delay = "1ms"
access_delay_spread = "2ms"
"#;
    let file = scenario("paths.toml", text);
    let a = lab_json(&[&file], "1", "paths-a.json");
    let b = lab_json(&[&file], "2", "paths-b.json");
    assert_eq!(a, b);
    assert!(a.contains("\"lost\":"));
    assert!(!a.contains("\"finished\": false"), "{a}");
}

#[test]
fn compare_reads_two_gauntlet_runs_and_refuses_anything_else() {
    let file = |name: &str, seed: &str| {
        let path = temp(name);
        let out = ackwise(&[
            "lab",
            "gauntlet",
            "--cases",
            "3",
            "--seed",
            seed,
            "--strategies",
            "dal2",
            "--json",
            path.to_str().unwrap(),
            "--quiet",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        path.to_string_lossy().into_owned()
    };
    let (a, b) = (file("cmp-a.json", "1"), file("cmp-b.json", "2"));
    // The first columns of dal2's line over all paths: name, "all
    // paths", cases, change.
    let all_paths = |files: &[&str]| -> Vec<String> {
        let out = ackwise(&[&["lab", "compare"], files].concat());
        assert!(out.status.success());
        let table = String::from_utf8_lossy(&out.stdout).into_owned();
        let line = table
            .lines()
            .find(|l| l.starts_with("dal2"))
            .unwrap_or_else(|| panic!("{table}"));
        line.split_whitespace().take(5).map(String::from).collect()
    };
    assert_eq!(
        all_paths(&[&a, &a]),
        ["dal2", "all", "paths", "3", "+0.00%"]
    );
    assert_one_line_error(&["lab", "compare", &a], "needs pairs of gauntlet files");
    assert_one_line_error(
        &["lab", "compare", &a, &a, &a],
        "needs pairs of gauntlet files",
    );
    assert_one_line_error(&["lab", "compare", &a, &b], "same draw");
    assert_one_line_error(&["lab", "compare", &a, &a, &a, &b], "same draw");
    // Two pairs pool their cases: twice as many, no change.
    assert_eq!(
        all_paths(&[&a, &a, &b, &b]),
        ["dal2", "all", "paths", "6", "+0.00%"]
    );
    let toml = scenario("not-gauntlet.json", "{}");
    assert_one_line_error(&["lab", "compare", &a, &toml], "not a gauntlet file");
}
