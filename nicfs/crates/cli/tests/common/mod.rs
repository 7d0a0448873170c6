//! Shared by the tests that run the `nicfs` binary: a back-end daemon that is killed when the
//! test ends, however it ends (a failed assertion must not leave a daemon behind).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use nicfs::mount::comm_path;
use nicfs_comm::CommRegion;

/// `nicfs args`, with its output discarded.
pub fn nicfs(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_nicfs"));
    c.args(args).stdout(Stdio::null()).stderr(Stdio::null());
    c
}

/// A running `nicfs daemon`, killed on drop.
pub struct Daemon(Child);

impl Daemon {
    /// Starts `nicfs daemon --pm pm extra..` and waits until it serves the comm region.
    pub fn start(pm: &str, extra: &[&str]) -> Daemon {
        let d = Daemon(nicfs(&[&["daemon", "--pm", pm][..], extra].concat()).spawn().expect("spawn daemon"));
        for _ in 0..500 {
            if d.serves(pm) {
                return d;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the daemon did not come up");
    }

    fn serves(&self, pm: &str) -> bool {
        CommRegion::open(&comm_path(Path::new(pm)))
            .is_ok_and(|c| c.backend_pid().load(std::sync::atomic::Ordering::Acquire) == self.0.id() as u64)
    }

    /// Kills it (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }

    /// Whether it is still running.
    #[allow(dead_code)] // not every test binary asks
    pub fn is_running(&mut self) -> bool {
        self.0.try_wait().expect("try_wait").is_none()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill();
    }
}
