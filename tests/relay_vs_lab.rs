//! The same path through `ackwise relay` on real UDP sockets and in the
//! lab's emulator: an ACK policy must mean the same on both. On sockets
//! the receiver gets segments in receive-offload batches; answered as a
//! whole, a batch drew one ACK whatever the policy, so AE sent about a
//! third of its ACKs through the relay. `scripts/relay-vs-lab.sh` prints
//! the full comparison (completion time too, which a loaded test machine
//! would make flaky here).
#![cfg(feature = "cli")]

mod common;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

fn ackwise() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ackwise"))
}

/// Kills the children when the test ends, however it ends.
struct Children(Vec<Child>);

impl Drop for Children {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

const PATH: &str = r#"
[bottleneck]
rate = "50mbit"
delay = "25ms"
buffer_packets = 210
[reverse]
rate = "50mbit"
delay = "25ms"
buffer_packets = 210
"#;

/// Receiver ACKs of one transfer of `bytes` with `strategy` in the lab.
fn lab_acks(dir: &std::path::Path, strategy: &str, bytes: usize) -> u64 {
    let toml = dir.join(format!("{strategy}.toml"));
    std::fs::write(
        &toml,
        format!(
            "name = \"relay-path\"\nseed = 1\nstrategies = [\"{strategy}\"]\n\
             segment_bytes = 1400\n{PATH}[[flows]]\nbytes = {bytes}\n"
        ),
    )
    .unwrap();
    let csv = dir.join(format!("{strategy}.csv"));
    let out = ackwise()
        .arg("lab")
        .arg(&toml)
        .arg("--csv")
        .arg(&csv)
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut rows = text.lines();
    let head: Vec<&str> = rows.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (reverse, acks) = (col("reverse"), col("ack_packets"));
    rows.map(|r| r.split(',').collect::<Vec<_>>())
        .find(|r| r[reverse] == "false")
        .map(|r| r[acks].parse().unwrap())
        .unwrap()
}

#[test]
fn ack_counts_through_the_relay_match_the_lab() {
    let dir = std::env::temp_dir().join(format!("ackwise-relay-vs-lab-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("out")).unwrap();
    let bytes = 8_000_000;
    let file: PathBuf = dir.join("payload.bin");
    std::fs::write(&file, common::payload(bytes, 7)).unwrap();
    let (recv_port, relay_port) = (common::free_udp_port(), common::free_udp_port());
    let mut children = Children(Vec::new());
    let mut recv = ackwise()
        .args(["recv", "--listen", &format!("127.0.0.1:{recv_port}")])
        .args(["--mss", "1400", "--overwrite", "--out"])
        .arg(dir.join("out"))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_for_line(&mut recv, "receiving on");
    children.0.push(recv);
    let mut relay = ackwise()
        .args(["relay", "--listen", &format!("127.0.0.1:{relay_port}")])
        .args(["--to", &format!("127.0.0.1:{recv_port}")])
        .args(["--fwd-rate", "50mbit", "--rev-rate", "50mbit"])
        .args(["--fwd-delay", "25ms", "--rev-delay", "25ms"])
        .args(["--buffer", "210", "--rev-buffer", "210"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_for_line(&mut relay, "ackwise relay:");
    children.0.push(relay);
    for strategy in ["ae", "da"] {
        let sent = ackwise()
            .arg("send")
            .arg(&file)
            .args(["--to", &format!("127.0.0.1:{relay_port}")])
            .args(["--strategy", strategy, "--mss", "1400"])
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&sent.stderr);
        assert!(sent.status.success(), "{said}");
        // "sent 1/1 files, ...; ACKs sent 4, received 5905; ..."
        let summary = said.lines().find(|l| l.contains(" files, ")).unwrap_or("");
        let relay_acks: u64 = summary
            .split("received ")
            .nth(1)
            .and_then(|r| r.split(';').next())
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no ACK count in: {said}"));
        let lab = lab_acks(&dir, strategy, bytes);
        let ratio = relay_acks as f64 / lab as f64;
        eprintln!(
            "{strategy}: {relay_acks} ACKs through the relay, {lab} in the lab ({ratio:.3}x)"
        );
        assert!(
            (0.8..=1.2).contains(&ratio),
            "{strategy}: {relay_acks} ACKs through the relay against {lab} in the lab"
        );
    }
    drop(children);
    std::fs::remove_dir_all(&dir).unwrap();
}
