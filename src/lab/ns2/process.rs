//! Running `ns` on a script in a private temporary directory, with a wall
//! clock limit, and turning every way that can fail into an [`Ns2Error`].

use super::Ns2Error;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Environment variable naming the `ns` binary to use instead of the one
/// on `PATH` (for installations outside `PATH`).
pub const NS2_PROGRAM_ENV: &str = "ACKWISE_NS2";

/// The `ns` program: [`NS2_PROGRAM_ENV`] if set, else the first `ns` on
/// `PATH`; `None` if there is none.
pub fn find_ns() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(NS2_PROGRAM_ENV) {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("ns"))
        .find(|p| p.is_file())
}

/// A directory removed, with its contents, when dropped: each run gets its
/// own so that parallel runs never share a trace file.
pub(crate) struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub(crate) fn new() -> Result<TempDir, Ns2Error> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        // A few attempts cover a stale directory left by a killed process
        // that happened to have the same pid.
        let mut last = None;
        for _ in 0..16 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("ackwise-ns2-{}-{n}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) => last = Some(e),
            }
        }
        Err(Ns2Error::Io {
            context: format!("creating a directory in {}", base.display()),
            source: last.unwrap_or_else(|| std::io::Error::other("no attempt made")),
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // Best effort: a leftover directory in /tmp is no reason to fail.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> Ns2Error {
    let context = context.into();
    move |source| Ns2Error::Io { context, source }
}

/// What a finished `ns` run left behind.
pub(crate) struct Finished {
    /// Its standard output.
    pub stdout: String,
    /// Wall time from spawn to exit.
    pub wall: std::time::Duration,
}

/// The first non-empty line of `text`: Tcl prints the error message first
/// and the call stack after it, so the first line says what went wrong.
fn first_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("(no output on stderr)")
        .chars()
        .take(200)
        .collect()
}

/// Writes `script` into `dir` and runs `ns` on it there, killing it after
/// `timeout`.
pub(crate) fn run_script(
    dir: &TempDir,
    script: &str,
    timeout: std::time::Duration,
) -> Result<Finished, Ns2Error> {
    let program = find_ns().ok_or(Ns2Error::NotInstalled)?;
    let script_path = dir.path().join("run.tcl");
    std::fs::write(&script_path, script).map_err(io("writing the ns-2 script"))?;
    // Output goes to files rather than pipes: a chatty run can then never
    // block on a full pipe while we wait for it.
    let out_path = dir.path().join("stdout.txt");
    let err_path = dir.path().join("stderr.txt");
    let out = std::fs::File::create(&out_path).map_err(io("creating ns-2 stdout file"))?;
    let err = std::fs::File::create(&err_path).map_err(io("creating ns-2 stderr file"))?;
    let started = Instant::now();
    let mut child = Command::new(&program)
        .arg("run.tcl")
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Ns2Error::NotInstalled,
            _ => Ns2Error::Io {
                context: format!("starting {}", program.display()),
                source: e,
            },
        })?;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(io("waiting for ns-2"))? {
            break status;
        }
        if started.elapsed() > timeout {
            // Kill only our own child, then reap it.
            let _ = child.kill();
            let _ = child.wait();
            return Err(Ns2Error::TimedOut { after: timeout });
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    let wall = started.elapsed();
    let stdout = std::fs::read_to_string(&out_path).map_err(io("reading ns-2 stdout"))?;
    if !status.success() {
        let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
        return Err(Ns2Error::Failed {
            status: status.to_string(),
            message: first_line(&stderr),
        });
    }
    Ok(Finished { stdout, wall })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_line_skips_blank_lines_and_handles_empty_text() {
        assert_eq!(
            first_line("\n  divide by zero\n    while executing"),
            "divide by zero"
        );
        assert_eq!(first_line(""), "(no output on stderr)");
    }

    #[test]
    fn temp_dirs_are_distinct_and_removed() {
        let a = TempDir::new().unwrap();
        let b = TempDir::new().unwrap();
        assert_ne!(a.path(), b.path());
        let p = a.path().to_path_buf();
        std::fs::write(p.join("x"), "y").unwrap();
        drop(a);
        assert!(!p.exists());
    }
}
