//! Writing to stdout (protocol: the result only) and stderr (messages). A closed pipe ends the
//! program quietly; nothing untrusted reaches a terminal unescaped.

use std::io::Write;

/// Writes to stdout; exits quietly if the reader went away. On a terminal, characters it would
/// act on are shown instead (see [`crate::terminal::visible`]); to a pipe the bytes go as they
/// are.
pub fn out(text: &str) {
    use std::io::IsTerminal;
    let shown;
    let text = if std::io::stdout().is_terminal() {
        shown = crate::terminal::visible(text);
        shown.as_str()
    } else {
        text
    };
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush())
        && e.kind() == std::io::ErrorKind::BrokenPipe
    {
        std::process::exit(0);
    }
}

/// One line on stdout for a person (listings, reports): what a server, a repository or a
/// model named is shown visibly, piped or not (issue 35: `tools list | cat` passed an MCP
/// server's escape sequences through to the terminal).
pub fn out_line(text: &str) {
    write_stdout(&format!("{}\n", crate::terminal::visible(text)));
}

/// Text on stdout for a person, shown visibly whether or not stdout is a terminal.
/// A tool's text on stdout, piped or not: control characters shown visibly, CRLF line ends
/// kept ([`crate::terminal::visible_text`]).
pub fn out_text(text: &str) {
    write_stdout(&crate::terminal::visible_text(text));
}

/// Bytes on stdout as they are (`--raw`).
pub fn out_raw(text: &str) {
    write_stdout(text);
}

pub fn out_visible(text: &str) {
    write_stdout(&crate::terminal::visible(text));
}

/// One line of JSON on stdout: the same JSON value, with the characters a terminal would act
/// on written as escapes (see [`crate::terminal::json_visible`]).
pub fn out_json_line(text: &str) {
    write_stdout(&format!("{}\n", crate::terminal::json_visible(text)));
}

fn write_stdout(text: &str) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush())
        && e.kind() == std::io::ErrorKind::BrokenPipe
    {
        std::process::exit(0);
    }
}

/// One line on stderr, for a person: always shown visibly (messages quote paths, commands and
/// tool names that may hold escape sequences).
pub fn err_line(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{}", crate::terminal::visible(text));
}

pub fn warn(text: &str) {
    err_line(&format!("toolbelt: warning: {text}"));
}
