//! `uqd status` and `uqd stop`: a running daemon's state, and asking it to exit.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use uq_core::protocol::Request;

use crate::client;

#[derive(Args)]
pub struct SocketArgs {
    /// Socket path (default: UQ_SOCKET, else the per-user default).
    #[arg(long)]
    pub socket: Option<PathBuf>,
}

impl SocketArgs {
    /// The socket given, else the default.
    pub fn path(self) -> PathBuf {
        self.socket
            .unwrap_or_else(uq_core::paths::default_socket_path)
    }
}

/// Prints the running daemon's state as JSON; exit status 1 when none answers.
pub fn status(args: SocketArgs) -> Result<ExitCode, String> {
    match client::ping(&args.path(), Duration::from_secs(5)) {
        Ok(info) => {
            println!("{info}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("uqd: not running ({e})");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// Asks the running daemon to exit and waits (up to 10 s) until its socket is gone.
pub fn stop(args: SocketArgs) -> Result<ExitCode, String> {
    let socket = args.path();
    if client::call(&socket, &Request::Shutdown, Duration::from_secs(10)).is_err() {
        eprintln!("uqd: not running at {}", socket.display());
        return Ok(ExitCode::SUCCESS);
    }
    let t = Instant::now();
    while socket.exists() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(ExitCode::SUCCESS)
}
