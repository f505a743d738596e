//! Removing partial files that nobody will finish.
//!
//! A receiver removes its own partial file on every failure it lives to
//! see, but a receiver that is killed (SIGKILL, power loss) leaves
//! `.NAME.ackwise-partial-RANDOM` behind. A receiver therefore sweeps its
//! output directory when it starts and then periodically: a partial file
//! that this process is not writing and that nobody has modified for the
//! stale age is removed.
//!
//! A partial file's name carries the receiver's process id. One whose
//! process still runs (a second receiver on the same directory) is left
//! alone; so is one without a readable id where processes cannot be
//! checked. Otherwise the file is no one's once it is old enough: a
//! receiver gives up on a transfer silent for its idle timeout, so a file
//! untouched for twice that has no writer left (the age also protects a
//! file whose process id was reused).
//!
//! Bytes kept for a resumption (`.NAME.ackwise-partial-resume-...`) have
//! no writer by design; they go once untouched for the receiver's keep
//! time.

use super::protocol::PARTIAL_MARKER;
use super::receive::RESUME_MARKER;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, SystemTime};

/// Partial files this process has open, which a sweep never touches
/// however slowly they grow.
fn live() -> MutexGuard<'static, HashSet<PathBuf>> {
    static LIVE: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    LIVE.get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// `path` is a partial file this process writes.
pub(crate) fn register(path: &Path) {
    live().insert(path.to_path_buf());
}

/// `path` is no longer written here (committed or removed).
pub(crate) fn unregister(path: &Path) {
    live().remove(path);
}

/// How long a partial file of a process that no longer runs must go
/// unmodified to count as abandoned: twice the receiver's idle timeout.
pub fn stale_age(idle_timeout: Duration) -> Duration {
    idle_timeout * 2
}

/// The file name suffix after the marker: this process's id, then a
/// random part.
pub(crate) fn partial_suffix(random: u64) -> String {
    format!("{}-{random:016x}", std::process::id())
}

/// Whether the process that wrote a partial file of this name may still
/// run: its id is ours (a file of this process that is no longer
/// registered is not written any more), or a process of that id exists.
/// Without a way to tell (no `/proc`), every process counts as gone and
/// the age alone decides.
fn writer_may_run(name: &str) -> bool {
    let pid = name
        .split_once(PARTIAL_MARKER)
        .and_then(|(_, rest)| rest.split_once('-'))
        .and_then(|(pid, _)| pid.parse::<u32>().ok());
    match pid {
        Some(pid) if pid == std::process::id() => false,
        Some(pid) => Path::new("/proc").join(pid.to_string()).exists(),
        None => false,
    }
}

/// Removes the partial files in `dir` that this process is not writing
/// and that were last modified at least `older_than` ago, and the bytes
/// kept for a resumption that were last modified at least `kept_older_than`
/// ago; returns how many went. Files that vanish meanwhile, or cannot be
/// read, are left to the next sweep.
pub fn sweep_partials(
    dir: &Path,
    older_than: Duration,
    kept_older_than: Duration,
) -> std::io::Result<usize> {
    let now = SystemTime::now();
    let mut removed = 0;
    for entry in std::fs::read_dir(dir)? {
        let Ok(entry) = entry else { continue };
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !is_partial_name(name) {
            continue;
        }
        let path = entry.path();
        let kept = is_kept_name(name);
        if live().contains(&path) || (!kept && writer_may_run(name)) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        // A modification time in the future (clock stepped back) counts
        // as fresh.
        let age = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .unwrap_or(Duration::ZERO);
        let limit = if kept { kept_older_than } else { older_than };
        if age >= limit && std::fs::remove_file(&path).is_ok() {
            removed += 1;
        }
    }
    Ok(removed)
}

/// `.NAME.ackwise-partial-SUFFIX`, as the receiver names its temporary
/// files (real names never contain the marker).
fn is_partial_name(name: &str) -> bool {
    name.starts_with('.') && name.contains(PARTIAL_MARKER)
}

/// A partial file kept for a resumption: the marker is followed by
/// [`RESUME_MARKER`] (the visible part of the name cannot contain the
/// marker, so the first one is the receiver's).
fn is_kept_name(name: &str) -> bool {
    name.split_once(PARTIAL_MARKER)
        .is_some_and(|(_, rest)| rest.starts_with(RESUME_MARKER))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);
    const HOUR: Duration = Duration::from_secs(3600);

    fn scratch(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ackwise-sweep-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn age(path: &Path, by: Duration) {
        let f = std::fs::File::options().write(true).open(path).unwrap();
        f.set_modified(SystemTime::now() - by).unwrap();
    }

    #[test]
    fn old_foreign_partials_go_and_everything_else_stays() {
        let dir = scratch("ages");
        let old = dir.join(".a.bin.ackwise-partial-00112233");
        let fresh = dir.join(".b.bin.ackwise-partial-44556677");
        let ours = dir.join(".c.bin.ackwise-partial-8899aabb");
        let real = dir.join("d.bin");
        let hidden = dir.join(".profile");
        for p in [&old, &fresh, &ours, &real, &hidden] {
            std::fs::write(p, b"x").unwrap();
        }
        for p in [&old, &ours, &real, &hidden] {
            age(p, Duration::from_secs(3600));
        }
        register(&ours);
        let removed = sweep_partials(&dir, MINUTE, HOUR).unwrap();
        unregister(&ours);
        assert_eq!(removed, 1);
        assert!(!old.exists());
        for p in [&fresh, &ours, &real, &hidden] {
            assert!(p.exists(), "{} went", p.display());
        }
        // Once no longer ours, an old partial goes too.
        assert_eq!(sweep_partials(&dir, MINUTE, HOUR).unwrap(), 1);
        assert!(!ours.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bytes_kept_for_a_resumption_go_only_after_the_keep_time() {
        let dir = scratch("kept");
        let kept = dir.join(".a.bin.ackwise-partial-resume-100-0011223344556677");
        let older = dir.join(".b.bin.ackwise-partial-resume-100-8899aabbccddeeff");
        for p in [&kept, &older] {
            std::fs::write(p, b"x").unwrap();
        }
        // Past the stale age of a partial, not past the keep time.
        age(&kept, Duration::from_secs(600));
        age(&older, Duration::from_secs(7200));
        assert_eq!(sweep_partials(&dir, MINUTE, HOUR).unwrap(), 1);
        assert!(kept.exists() && !older.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_partial_of_a_running_process_stays_however_old() {
        let dir = scratch("pids");
        // Process 1 (init) always runs; a pid beyond the kernel's limit
        // never does.
        let running = dir.join(".a.bin.ackwise-partial-1-00112233");
        let gone = dir.join(".b.bin.ackwise-partial-4294967295-00112233");
        for p in [&running, &gone] {
            std::fs::write(p, b"x").unwrap();
            age(p, Duration::from_secs(3600));
        }
        assert_eq!(sweep_partials(&dir, MINUTE, HOUR).unwrap(), 1);
        assert_eq!(running.exists(), Path::new("/proc/1").exists());
        assert!(!gone.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
