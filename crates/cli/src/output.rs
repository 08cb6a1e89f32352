//! Writing to stdout (protocol: the result only) and stderr (messages). A closed pipe ends the
//! program quietly.

use std::io::Write;

/// Writes to stdout; exits quietly if the reader went away.
pub fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush())
        && e.kind() == std::io::ErrorKind::BrokenPipe
    {
        std::process::exit(0);
    }
}

/// One line on stdout.
pub fn out_line(text: &str) {
    out(&format!("{text}\n"));
}

/// One line on stderr.
pub fn err_line(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

pub fn warn(text: &str) {
    err_line(&format!("toolbelt: warning: {text}"));
}
