//! An SMTP server that keeps what it receives: Python's aiosmtpd (from
//! RAVE_SMTP_SINK_PYTHON; scripts/test.sh installs it) storing a maildir,
//! read back as a mail client reads it. Shared by the tests of
//! rave-requests and of the `rave` binary.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn python() -> String {
    std::env::var("RAVE_SMTP_SINK_PYTHON").unwrap_or_else(|_| {
        panic!(
            "RAVE_SMTP_SINK_PYTHON must name a Python with aiosmtpd (scripts/test.sh installs it)"
        )
    })
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// aiosmtpd on a port, storing what it receives in a maildir; stopped when
/// dropped.
pub struct Sink {
    child: Child,
    maildir: PathBuf,
}

impl Drop for Sink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Sink {
    pub fn start(port: u16, maildir: &Path) -> Sink {
        let child = Command::new(python())
            .args(["-m", "aiosmtpd", "-n", "-l", &format!("127.0.0.1:{port}")])
            .args(["-c", "aiosmtpd.handlers.Mailbox"])
            .arg(maildir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start aiosmtpd");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "aiosmtpd did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Sink {
            child,
            maildir: maildir.to_owned(),
        }
    }

    /// Every message received, oldest first: decoded headers and parts.
    pub fn received(&self) -> Vec<Value> {
        if !self.maildir.join("new").exists() {
            return Vec::new();
        }
        let reader = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../rave-requests/tests/support/read_mail.py"
        );
        let output = Command::new(python())
            .arg(reader)
            .arg(&self.maildir)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        serde_json::from_slice::<Value>(&output.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    }
}
