//! `lab gauntlet` sharded the way a batch engine runs it: GNU parallel
//! starts one built `ackwise` per shard, `lab merge` joins the parts, and
//! the merged file must equal a single unsharded run's byte for byte.
//! Skipped when `parallel` is missing, unless `ACKWISE_REQUIRE_PARALLEL=1`
//! (CI sets it, so a broken install cannot pass silently).
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const ACKWISE: &str = env!("CARGO_BIN_EXE_ackwise");

/// Six cases of seed 1 under two strategies: a dozen runs that simulate
/// in about a second in all, yet cover several flows, RED, random loss
/// draws and asymmetry.
const RUN: [&str; 10] = [
    "lab",
    "gauntlet",
    "--cases",
    "6",
    "--seed",
    "1",
    "--strategies",
    "ae,4w",
    "--jobs",
    "1",
];

fn parallel_available() -> bool {
    Command::new("parallel")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A directory of this test process's own, per test (tests run in
/// parallel and each removes its directory at the end).
fn scratch_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackwise-gauntlet-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

fn ok(what: &str, out: Output) -> Output {
    assert!(
        out.status.success(),
        "{what} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn shards_run_by_gnu_parallel_merge_into_the_unsharded_file() {
    if !parallel_available() {
        let required = std::env::var("ACKWISE_REQUIRE_PARALLEL").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "ACKWISE_REQUIRE_PARALLEL=1 but GNU parallel (`parallel`) is not installed"
        );
        println!("skipped: GNU parallel is not installed (apt-get install parallel)");
        return;
    }
    let dir = scratch_dir("shards");
    let single = dir.join("single.json");
    ok(
        "single run",
        Command::new(ACKWISE)
            .args(RUN)
            .args(["--quiet", "--json"])
            .arg(&single)
            .output()
            .expect("run ackwise"),
    );

    // What a README user types, with the shard index from parallel's
    // argument list; `--halt now,fail=1` makes a failing shard fail all.
    let part = dir.join("part{}.json");
    ok(
        "parallel",
        Command::new("parallel")
            .args(["--will-cite", "--halt", "now,fail=1", ACKWISE])
            .args(RUN)
            .args(["--quiet", "--shard", "{}/3", "--json"])
            .arg(&part)
            .args([":::", "1", "2", "3"])
            .output()
            .expect("run parallel"),
    );
    let parts: Vec<PathBuf> = (1..=3).map(|i| dir.join(format!("part{i}.json"))).collect();
    let merged = dir.join("merged.json");
    ok(
        "merge",
        Command::new(ACKWISE)
            .args(["lab", "merge", "--quiet"])
            .args(parts.iter().rev())
            .arg("--json")
            .arg(&merged)
            .output()
            .expect("run merge"),
    );
    assert!(
        read(&merged) == read(&single),
        "merged shards differ from the unsharded run: compare {} and {}",
        merged.display(),
        single.display()
    );

    // A part given twice is refused with one line and exit status 2.
    let dup = Command::new(ACKWISE)
        .args(["lab", "merge"])
        .args(&parts)
        .arg(&parts[0])
        .arg("--json")
        .arg(dir.join("dup.json"))
        .output()
        .expect("run merge");
    let stderr = String::from_utf8_lossy(&dup.stderr);
    assert_eq!(dup.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("appears twice"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_flags_and_files_are_one_line_and_status_2() {
    let dir = scratch_dir("bad");
    let not_gauntlet = dir.join("other.json");
    std::fs::write(&not_gauntlet, "[]").expect("write");
    let cases: [(Vec<&str>, &str); 5] = [
        (vec!["lab", "gauntlet", "--shard", "4/3"], "bad shard"),
        (vec!["lab", "gauntlet", "--cases", "0"], "--cases"),
        (vec!["lab", "gauntlet", "--strategies", "ae,9w"], "9w"),
        (vec!["lab", "merge", "x.json"], "needs --json"),
        (
            vec![
                "lab",
                "merge",
                not_gauntlet.to_str().unwrap(),
                "--json",
                "o.json",
            ],
            "not a gauntlet file",
        ),
    ];
    for (args, expect) in cases {
        let out = Command::new(ACKWISE)
            .args(&args)
            .output()
            .expect("run ackwise");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(expect), "{args:?}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `ackwise` with `args`, expecting success.
fn ackwise(what: &str, args: &[&str]) -> Output {
    ok(
        what,
        Command::new(ACKWISE)
            .args(args)
            .output()
            .expect("run ackwise"),
    )
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&read(path)).expect("a JSON file")
}

#[test]
fn replicates_extend_the_single_draw_and_shard_like_it() {
    let dir = scratch_dir("replicates");
    let path = |name: &str| dir.join(name).display().to_string();
    let base = ["lab", "gauntlet", "--cases", "4", "--seed", "1"];
    let base = [
        &base[..],
        &["--strategies", "ae,4w", "--jobs", "1", "--quiet"],
    ]
    .concat();
    let table1 = ackwise(
        "one replicate",
        &[&base[..], &["--json", &path("r1.json")]].concat(),
    )
    .stdout;
    let table2 = ackwise(
        "two replicates",
        &[
            &base[..],
            &["--replicates", "2", "--json", &path("r2.json")],
        ]
        .concat(),
    )
    .stdout;
    // The noise floor, AE against itself, needs a second draw.
    let (table1, table2) = (
        String::from_utf8_lossy(&table1),
        String::from_utf8_lossy(&table2),
    );
    assert!(!table1.contains("ae (replicate 1 / 0)"), "{table1}");
    assert!(
        table2.contains("\nae (replicate 1 / 0)     4 |"),
        "{table2}"
    );
    let (r1, r2) = (json(&dir.join("r1.json")), json(&dir.join("r2.json")));
    // One replicate writes no trace of replicates at all.
    assert!(r1.get("replicates").is_none());
    assert_eq!(r2["replicates"], 2);
    let records = |v: &serde_json::Value| v["records"].as_array().unwrap().clone();
    let (one, two) = (records(&r1), records(&r2));
    assert_eq!(two.len(), 2 * one.len());
    // Replicate 0 of each (case, strategy) is the single-draw run, byte
    // for byte, and comes right before its replicate 1; replicate 1 drew
    // differently somewhere.
    let replicate = |r: &serde_json::Value| r.get("replicate").and_then(|v| v.as_u64());
    let first: Vec<_> = two.iter().step_by(2).cloned().collect();
    assert_eq!(first, one);
    assert!(two
        .iter()
        .skip(1)
        .step_by(2)
        .all(|r| replicate(r) == Some(1)));
    let outcomes = |rep: usize| -> Vec<serde_json::Value> {
        two.iter()
            .skip(rep)
            .step_by(2)
            .map(|r| r["outcome"].clone())
            .collect()
    };
    assert_ne!(outcomes(1), outcomes(0), "replicate 1 drew nothing new");

    // Shards of a replicated run merge into the unsharded file.
    for i in 1..=2 {
        let shard = format!("{i}/2");
        ackwise(
            "shard",
            &[
                &base[..],
                &["--replicates", "2", "--shard", &shard, "--json"],
                &[path(&format!("p{i}.json")).as_str()],
            ]
            .concat(),
        );
    }
    ackwise(
        "merge",
        &[
            "lab",
            "merge",
            "--quiet",
            &path("p2.json"),
            &path("p1.json"),
            "--json",
            &path("m.json"),
        ],
    );
    assert!(read(&dir.join("m.json")) == read(&dir.join("r2.json")));

    // A part of another replicate count is refused, naming the flag.
    let out = Command::new(ACKWISE)
        .args([
            "lab",
            "merge",
            "--quiet",
            &path("p1.json"),
            &path("r1.json"),
        ])
        .args(["--json", &path("bad.json")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--replicates"), "{err}");
    assert!(!dir.join("bad.json").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_replayed_case_prints_its_path_and_each_strategy_against_ae() {
    let out = ackwise(
        "one case",
        &[
            "lab",
            "gauntlet",
            "--seed",
            "1",
            "--case",
            "3",
            "--strategies",
            "4w",
            "--jobs",
            "1",
            "--quiet",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("case 3: "))
        .unwrap_or_else(|| panic!("no detail for case 3:\n{text}"));
    assert!(lines[at].contains("Mbit/s"), "{text}");
    assert!(lines[at + 1].starts_with("  ae: completion "), "{text}");
    assert!(
        lines[at + 2].starts_with("  4w: completion ") && lines[at + 2].contains(" of ae's"),
        "{text}"
    );
    // Without --case the table stands alone.
    let out = ackwise(
        "two cases",
        &[&RUN[..6], &["--strategies", "4w", "--quiet"]].concat(),
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("  ae: completion "));
}

#[test]
fn a_summary_pools_seeds_and_equals_one_file_holding_them_all() {
    let dir = scratch_dir("summary");
    let path = |name: &str| dir.join(name).display().to_string();
    for seed in ["1", "2"] {
        ackwise(
            "a seed",
            &[
                "lab",
                "gauntlet",
                "--cases",
                "3",
                "--seed",
                seed,
                "--strategies",
                "4w",
                "--replicates",
                "2",
                "--jobs",
                "1",
                "--quiet",
                "--json",
                &path(&format!("s{seed}.json")),
            ],
        );
    }
    let pooled = ackwise(
        "summary",
        &["lab", "summary", &path("s1.json"), &path("s2.json")],
    );
    let text = String::from_utf8_lossy(&pooled.stdout).to_string();
    let row = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no row {name}:\n{text}"))
            .split_whitespace()
            .nth(1)
            .map(str::to_string)
    };
    assert_eq!(row("4w").as_deref(), Some("6"), "{text}");
    assert!(text.contains("seeds 1, 2, 6 cases"), "{text}");
    // One seed alone judges as `lab gauntlet` printed it.
    let one = ackwise("summary of one", &["lab", "summary", &path("s1.json")]);
    let one = String::from_utf8_lossy(&one.stdout).to_string();
    let gauntlet_row = one.lines().find(|l| l.starts_with("4w ")).unwrap();
    assert!(gauntlet_row.split_whitespace().nth(1) == Some("3"), "{one}");
    // The same seed twice would count its cases twice.
    let twice = Command::new(ACKWISE)
        .args(["lab", "summary", &path("s1.json"), &path("s1.json")])
        .output()
        .expect("run ackwise");
    let stderr = String::from_utf8_lossy(&twice.stderr);
    assert_eq!(twice.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("seed 1 again"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
