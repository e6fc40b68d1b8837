//! Running the real `rave` binary: a `rave serve` child that says where it
//! listens, killed when dropped.

// Each test binary compiles this module and uses its own subset of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

pub const RAVE: &str = env!("CARGO_BIN_EXE_rave");

/// A running `rave serve`, killed when dropped (also when a test fails).
pub struct Server {
    pub child: Child,
    pub base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts `command` (a `rave serve` on port 0, perhaps behind a
    /// wrapper) and waits for its listening line.
    pub fn start(mut command: Command) -> Server {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start rave serve");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the listening line");
        let base = line
            .trim()
            .strip_prefix("rave listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Server { child, base }
    }

    /// SIGTERM, then waits (at most 20 s) for rave to drain and exit;
    /// answers how it exited.
    pub fn terminate(&mut self) -> ExitStatus {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill -TERM {pid} failed");
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("poll rave serve") {
                return status;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "rave did not stop on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGKILL, and wait until the process is gone.
    pub fn kill(&mut self) {
        self.child.kill().expect("SIGKILL rave serve");
        self.child.wait().expect("reap rave serve");
    }
}

/// The arguments of `rave serve` on a free port over `data`, unlimited rate.
pub fn serve_args(data: &Path, extra: &[&str]) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = [
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--rate-limit-per-minute",
        "0",
        "--data",
    ]
    .iter()
    .map(Into::into)
    .collect();
    args.push(data.into());
    args.extend(extra.iter().map(Into::into));
    args
}

pub fn serve(data: &Path, extra: &[&str]) -> Server {
    let mut command = Command::new(RAVE);
    command.args(serve_args(data, extra));
    Server::start(command)
}
