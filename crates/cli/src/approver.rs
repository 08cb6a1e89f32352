//! The terminal approver: asks on the controlling terminal.

use std::io::{BufRead, Write};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;
use toolbelt_core::approver::{Approver, ConfirmationRequest, Outcome};
use toolbelt_core::tool::ConfirmationDetails;

pub struct TerminalApprover;

fn describe(req: &ConfirmationRequest) -> String {
    let body = match &req.details {
        ConfirmationDetails::Info { prompt, urls, .. } => {
            let mut s = prompt.clone();
            for u in urls {
                s.push_str(&format!("\n  {u}"));
            }
            s
        }
        ConfirmationDetails::Edit { file_diff, .. } => file_diff.clone(),
        ConfirmationDetails::Exec { command, .. } => command.clone(),
        ConfirmationDetails::Mcp { server_name, tool_name, .. } => {
            format!("MCP server {server_name}: {tool_name}")
        }
    };
    format!("{}\n{}\n", req.details.title(), body)
}

fn ask_blocking(req: ConfirmationRequest) -> Outcome {
    let tty = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty");
    let Ok(tty) = tty else { return Outcome::Cancel };
    let mut writer = match tty.try_clone() {
        Ok(w) => w,
        Err(_) => return Outcome::Cancel,
    };
    let mut reader = std::io::BufReader::new(tty);
    let mcp = req.server_name.is_some();
    let options = if mcp {
        "[y] allow once  [t] always allow this tool  [s] always allow this server  [n] cancel"
    } else {
        "[y] allow once  [a] always allow (this session)  [n] cancel"
    };
    loop {
        let _ = write!(writer, "\n{}{options}\n> ", describe(&req));
        let _ = writer.flush();
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return Outcome::Cancel,
            Ok(_) => {}
        }
        match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" | "1" => return Outcome::ProceedOnce,
            "a" | "always" if !mcp => return Outcome::ProceedAlways,
            "t" if mcp => return Outcome::ProceedAlwaysTool,
            "s" if mcp => return Outcome::ProceedAlwaysServer,
            "n" | "no" | "c" | "cancel" | "" => return Outcome::Cancel,
            _ => {}
        }
    }
}

#[async_trait]
impl Approver for TerminalApprover {
    async fn confirm(&self, request: &ConfirmationRequest, cancel: &CancellationToken) -> Outcome {
        let req = request.clone();
        tokio::select! {
            r = tokio::task::spawn_blocking(move || ask_blocking(req)) => r.unwrap_or(Outcome::Cancel),
            () = cancel.cancelled() => Outcome::Cancel,
        }
    }
}
