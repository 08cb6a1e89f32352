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
        ConfirmationDetails::Exec { command, root_commands, .. } => {
            format!(
                "{command}\n(\"always\" allows {})",
                toolbelt_core::policy::grant::covers_command(command, root_commands)
            )
        }
        ConfirmationDetails::Mcp { server_name, tool_name, .. } => {
            format!("MCP server {server_name}: {tool_name}")
        }
    };
    // Everything in a confirmation comes from the model or a server: shown, never interpreted.
    let name = match &req.server_name {
        Some(_) => String::new(),
        None => format!(" ({})", req.tool_name),
    };
    crate::terminal::visible(&format!("{}{name}\n{}\n", req.details.title(), body))
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
    let editable = matches!(req.details, ConfirmationDetails::Edit { .. });
    let options = if mcp {
        "[y] allow once  [t] always allow this tool  [s] always allow this server  [n] cancel"
    } else if editable {
        "[y] allow once  [a] always allow (auto_edit for this session)  [s] always allow and save  [e] modify in $VISUAL/$EDITOR  [n] cancel"
    } else {
        "[y] allow once  [a] always allow (this session)  [s] always allow and save  [n] cancel"
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
            "s" => return Outcome::ProceedAlwaysAndSave,
            "e" | "edit" if editable => return Outcome::ModifyWithEditor,
            "n" | "no" | "c" | "cancel" | "" => return Outcome::Cancel,
            _ => {}
        }
    }
}

/// Opens `$VISUAL`, else `$EDITOR`, else `vi` on the proposal and returns what was saved.
fn edit_blocking(file_name: String, proposed: String) -> Option<String> {
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".into());
    // A folder only this user can enter, with a name nobody can guess or pre-create (a
    // predictable `/tmp/toolbelt-modify-<pid>` let a local user plant a symlink there).
    let dir = tempfile::Builder::new().prefix("toolbelt-modify-").tempdir().ok()?;
    let path = dir.path().join(format!("proposed-{}", file_name.replace(['/', '\\'], "_")));
    toolbelt_core::files::write_private(&path, proposed.as_bytes()).ok()?;
    let mut parts = editor.split_whitespace();
    let program = parts.next()?;
    let tty_in = std::fs::File::open("/dev/tty").ok()?;
    let tty_out = std::fs::OpenOptions::new().write(true).open("/dev/tty").ok()?;
    let status = std::process::Command::new(program)
        .args(parts)
        .arg(&path)
        .stdin(tty_in)
        .stdout(tty_out)
        .status()
        .ok()?;
    let edited = std::fs::read_to_string(&path).ok();
    drop(dir);
    if status.success() { edited } else { None }
}

#[async_trait]
impl Approver for TerminalApprover {
    async fn edit(
        &self,
        request: &ConfirmationRequest,
        proposed: &str,
        cancel: &CancellationToken,
    ) -> Option<String> {
        let name = match &request.details {
            ConfirmationDetails::Edit { file_name, .. } => file_name.clone(),
            _ => "proposal.txt".into(),
        };
        let proposed = proposed.to_string();
        tokio::select! {
            r = tokio::task::spawn_blocking(move || edit_blocking(name, proposed)) => r.ok().flatten(),
            () = cancel.cancelled() => None,
        }
    }

    async fn confirm(&self, request: &ConfirmationRequest, cancel: &CancellationToken) -> Outcome {
        let req = request.clone();
        tokio::select! {
            r = tokio::task::spawn_blocking(move || ask_blocking(req)) => r.unwrap_or(Outcome::Cancel),
            () = cancel.cancelled() => Outcome::Cancel,
        }
    }
}
