//! What `toolbelt run -o text` shows on stderr while it works: each tool call as it starts, a
//! running command's output as it comes (indented), each result as it ends, and on a terminal
//! only, a spinner while a call runs without printing. stdout keeps the model's answer alone.

use std::io::Write as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Frames of the spinner.
const FRAMES: [char; 4] = ['|', '/', '-', '\\'];
/// Quiet this long before the spinner shows.
const QUIET: Duration = Duration::from_millis(250);
/// Lines of a result shown when its output was not streamed.
const RESULT_LINES: usize = 5;

#[derive(Default)]
struct State {
    /// Calls running now (names), in the order they started.
    running: Vec<(String, String)>,
    /// Calls whose output was shown as it came.
    streamed: Vec<String>,
    /// Whether the last output written ended its line.
    mid_line: bool,
    /// Whether the spinner's line is on the screen.
    spinner: bool,
    frame: usize,
    last_write: Option<Instant>,
}

/// Progress on stderr, shared by the run's printer and the scheduler's output events.
pub struct Progress {
    state: Mutex<State>,
    terminal: bool,
}

impl Progress {
    pub fn new() -> Self {
        use std::io::IsTerminal as _;
        Progress { state: Mutex::new(State::default()), terminal: std::io::stderr().is_terminal() }
    }

    /// Whether a spinner may be drawn (stderr is a terminal).
    pub fn on_terminal(&self) -> bool {
        self.terminal
    }

    fn write(&self, state: &mut State, text: &str) {
        let mut err = std::io::stderr().lock();
        if state.spinner {
            let _ = err.write_all(b"\r\x1b[2K");
            state.spinner = false;
        }
        let _ = err.write_all(crate::terminal::visible(text).as_bytes());
        let _ = err.flush();
        state.last_write = Some(Instant::now());
    }

    fn locked(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A call starts: `→ name args`.
    pub fn started(&self, id: &str, name: &str, args: &str) {
        let mut s = self.locked();
        let end = if s.mid_line { "\n" } else { "" };
        s.mid_line = false;
        let shown: String = args.chars().take(300).collect();
        let more = if shown.len() < args.len() { " …" } else { "" };
        self.write(&mut s, &format!("{end}→ {name} {shown}{more}\n"));
        s.running.push((id.to_string(), name.to_string()));
    }

    /// A running call printed `chunk`: shown indented, as it comes.
    pub fn output(&self, id: &str, chunk: &str) {
        let mut s = self.locked();
        if !s.streamed.iter().any(|c| c == id) {
            s.streamed.push(id.to_string());
        }
        let mut text = String::with_capacity(chunk.len() + 16);
        for piece in chunk.split_inclusive('\n') {
            if !s.mid_line {
                text.push_str("  │ ");
            }
            text.push_str(piece);
            s.mid_line = !piece.ends_with('\n');
        }
        self.write(&mut s, &text);
    }

    /// A call ended: `← name: ok` with the first lines of what it returned when its output was
    /// not shown as it came, or `← name: error: ...`.
    pub fn finished(&self, id: &str, name: &str, output: Option<&str>, error: Option<&str>) {
        let mut s = self.locked();
        s.running.retain(|(c, _)| c != id);
        let streamed = s.streamed.iter().any(|c| c == id);
        s.streamed.retain(|c| c != id);
        let mut text = String::new();
        if s.mid_line {
            text.push('\n');
            s.mid_line = false;
        }
        match error {
            Some(m) => {
                text.push_str(&format!("← {name}: error: {}\n", m.lines().next().unwrap_or("")));
            }
            None => {
                text.push_str(&format!("← {name}: ok\n"));
                if let Some(out) = output.filter(|_| !streamed) {
                    let lines: Vec<&str> = out.lines().filter(|l| !l.trim().is_empty()).collect();
                    for l in lines.iter().take(RESULT_LINES) {
                        let l: String = l.chars().take(200).collect();
                        text.push_str(&format!("  {l}\n"));
                    }
                    if lines.len() > RESULT_LINES {
                        text.push_str(&format!("  … {} more lines\n", lines.len() - RESULT_LINES));
                    }
                }
            }
        }
        self.write(&mut s, &text);
    }

    /// Draws the spinner's next frame when a call has run quietly for a while (terminal only).
    pub fn tick(&self) {
        if !self.terminal {
            return;
        }
        let mut s = self.locked();
        let quiet = s.last_write.is_none_or(|t| t.elapsed() >= QUIET);
        let Some((_, name)) = s.running.last().cloned() else { return };
        if !quiet || s.mid_line {
            return;
        }
        s.frame = (s.frame + 1) % FRAMES.len();
        let line = format!("\r\x1b[2K{} {name} is running", FRAMES[s.frame]);
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(line.as_bytes());
        let _ = err.flush();
        s.spinner = true;
    }

    /// Clears the spinner before the answer or the run's end.
    pub fn clear(&self) {
        let mut s = self.locked();
        if s.spinner {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(b"\r\x1b[2K");
            let _ = err.flush();
            s.spinner = false;
        }
    }
}
