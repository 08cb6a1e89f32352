//! Bounded capture of a command's combined output: stdout and stderr decoded per stream and
//! appended in arrival order; past the cap the head and tail are kept in memory and everything
//! goes to a spill file; binary output (a NUL in the first 512 bytes) is counted, not kept.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

const SNIFF_BYTES: usize = 512;

/// One stream's undecoded tail (an incomplete UTF-8 sequence waiting for its next bytes).
#[derive(Default)]
pub struct Decoder {
    pending: Vec<u8>,
}

impl Decoder {
    /// Decodes what is complete; invalid bytes become U+FFFD.
    pub fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let cut = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.pending.len(),
        };
        let rest = self.pending.split_off(cut);
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending = rest;
        text
    }

    pub fn finish(&mut self) -> String {
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        text
    }
}

/// The combined output of a command.
pub struct Capture {
    cap: usize,
    head: String,
    tail: std::collections::VecDeque<u8>,
    /// Total bytes of text seen (kept or not).
    total_bytes: u64,
    total_chars: u64,
    spill_dir: PathBuf,
    spill_name: String,
    spill: Option<(PathBuf, File)>,
    /// Bytes written to the spill file (at most `spill_cap`).
    spilled: u64,
    /// The spill file's size cap (`toolbelt_core::limits::SPILL_FILE_BYTES`).
    spill_cap: u64,
    /// The last write to the spill file was cut short: nothing more goes in.
    spill_full: bool,
    spill_error: Option<String>,
    sniffed: Vec<u8>,
    binary_bytes: Option<u64>,
    /// toolbelt's `tmp/`, when the spill file counts among the files it keeps (a share of
    /// their total, and older ones pruned to make room).
    kept_root: Option<PathBuf>,
    kept: Option<toolbelt_core::files::KeptFile>,
}

impl Capture {
    pub fn new(cap: usize, spill_dir: &Path, spill_name: &str) -> Self {
        Self {
            cap: cap.max(2),
            head: String::new(),
            tail: std::collections::VecDeque::new(),
            total_bytes: 0,
            total_chars: 0,
            spill_dir: spill_dir.to_path_buf(),
            spill_name: spill_name.to_string(),
            spill: None,
            spilled: 0,
            spill_cap: toolbelt_core::limits::SPILL_FILE_BYTES,
            spill_full: false,
            spill_error: None,
            sniffed: Vec::new(),
            binary_bytes: None,
            kept_root: None,
            kept: None,
        }
    }

    /// Counts the spill file among the files kept under `tmp` (toolbelt's `tmp/`).
    pub fn kept_under(mut self, tmp: PathBuf) -> Self {
        self.kept_root = Some(tmp);
        self
    }

    /// A capture that keeps nothing (it only counts).
    pub fn discard() -> Self {
        let mut c = Self::new(2, Path::new(""), "");
        c.spill_error = Some("output is not kept".into());
        c.cap = 0;
        c
    }

    /// Looks at raw bytes before decoding; returns false once the output is known to be binary.
    pub fn sniff(&mut self, raw: &[u8]) -> bool {
        if let Some(n) = &mut self.binary_bytes {
            *n += raw.len() as u64;
            return false;
        }
        if self.sniffed.len() < SNIFF_BYTES {
            let take = raw.len().min(SNIFF_BYTES - self.sniffed.len());
            self.sniffed.extend_from_slice(&raw[..take]);
            if raw[..take].contains(&0) {
                self.binary_bytes = Some(raw.len() as u64);
                return false;
            }
        }
        true
    }

    pub fn binary_bytes(&self) -> Option<u64> {
        self.binary_bytes
    }

    /// Appends decoded text.
    pub fn push(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.total_bytes += text.len() as u64;
        self.total_chars += text.chars().count() as u64;
        if self.cap == 0 {
            return;
        }
        let half = self.cap / 2;
        if self.spill.is_none() && self.head.len() + self.tail.len() + text.len() > self.cap {
            self.start_spill();
        }
        // The file is bounded too: past its cap the rest is counted, not kept.
        let mut room =
            if self.spill_full { 0 } else { self.spill_cap.saturating_sub(self.spilled) };
        if let Some(k) = &self.kept {
            room = k.room(room.min(text.len() as u64));
        }
        if let Some((_, f)) = &mut self.spill
            && room > 0
        {
            let mut n = text.len().min(usize::try_from(room).unwrap_or(usize::MAX));
            while n < text.len() && !text.is_char_boundary(n) {
                n -= 1;
            }
            match f.write_all(&text.as_bytes()[..n]) {
                // Cut short (at the cap, or at the character boundary below it): the file is
                // full, so a later, shorter piece cannot land after a gap (found by
                // `the_spill_file_holds_a_prefix_within_its_cap`).
                Ok(()) => {
                    self.spilled += n as u64;
                    self.spill_full = n < text.len();
                }
                Err(e) => {
                    self.spill_error = Some(e.to_string());
                    self.spill = None;
                }
            }
        }
        let mut rest = text;
        // The head takes text only until the tail has begun: a head left short by a
        // character boundary must not take a later piece ahead of the tail's (found by
        // `the_spill_file_holds_a_prefix_within_its_cap`).
        if self.head.len() < half && self.tail.is_empty() {
            let mut room = half - self.head.len();
            while room < rest.len() && !rest.is_char_boundary(room) {
                room -= 1;
            }
            let take = room.min(rest.len());
            self.head.push_str(&rest[..take]);
            rest = &rest[take..];
        }
        self.tail.extend(rest.as_bytes());
        // The tail has what the head left of the memory: a head cut short at a character
        // boundary left a byte unkept and unspilled (found by the same test).
        let over = self.tail.len().saturating_sub(self.cap - self.head.len());
        if over > 0 {
            self.tail.drain(..over);
        }
    }

    fn start_spill(&mut self) {
        if self.spill_error.is_some() {
            return;
        }
        let path = self.spill_dir.join(&self.spill_name);
        if let Some(tmp) = &self.kept_root {
            let kept = toolbelt_core::files::KeptFile::start(tmp, &path, self.spill_cap);
            let first = (self.head.len() + self.tail.len()) as u64;
            if kept.room(first) < first {
                self.spill_error = Some(format!(
                    "toolbelt's kept files are at their limit of {} MiB",
                    toolbelt_core::limits::KEPT_TOTAL_BYTES >> 20
                ));
                return;
            }
            self.kept = Some(kept);
        }
        let opened = toolbelt_core::files::create_private(&path);
        match opened {
            Ok(mut f) => {
                let (a, b) = self.tail.as_slices();
                let w = f
                    .write_all(self.head.as_bytes())
                    .and_then(|()| f.write_all(a))
                    .and_then(|()| f.write_all(b));
                match w {
                    Ok(()) => {
                        self.spilled = (self.head.len() + self.tail.len()) as u64;
                        self.spill = Some((path.clone(), f));
                    }
                    Err(e) => self.spill_error = Some(e.to_string()),
                }
            }
            Err(e) => self.spill_error = Some(format!("{}: {e}", path.display())),
        }
    }

    /// The text kept so far (head and tail, without a notice).
    pub fn snapshot(&self) -> String {
        let (a, b) = self.tail.as_slices();
        let mut bytes = self.head.as_bytes().to_vec();
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// The last line so far, if it has no newline yet (a prompt waits on such a line).
    pub fn partial_line(&self) -> String {
        let bytes: Vec<u8> = if self.tail.is_empty() {
            self.head.as_bytes().to_vec()
        } else {
            let start = self.tail.len().saturating_sub(512);
            self.tail.iter().skip(start).copied().collect()
        };
        let s = String::from_utf8_lossy(&bytes);
        match s.rfind('\n') {
            Some(i) => s[i + 1..].to_string(),
            None => s.into_owned(),
        }
    }

    /// The kept text; when more was seen than kept, the head, a notice naming the spill file
    /// and the tail.
    pub fn finish(mut self) -> Captured {
        if let Some((_, f)) = &mut self.spill {
            let _ = f.flush();
        }
        let tail_bytes: Vec<u8> = self.tail.into_iter().collect();
        let mut tail = String::from_utf8_lossy(&tail_bytes).into_owned();
        if tail.starts_with('\u{FFFD}') {
            tail = tail.trim_start_matches('\u{FFFD}').to_string();
        }
        let kept = (self.head.len() + tail_bytes.len()) as u64;
        let omitted = self.total_bytes.saturating_sub(kept);
        let spill_file = self.spill.map(|(p, _)| p);
        let text = if omitted == 0 {
            self.head + &tail
        } else {
            let cap = self.spill_cap;
            let where_ = match (&spill_file, &self.spill_error) {
                (Some(p), _) if self.total_bytes > cap => format!(
                    "the first {} MiB of it are in {} (the rest, {} bytes, was not kept)",
                    cap >> 20,
                    p.display(),
                    self.total_bytes - self.spilled
                ),
                (Some(p), _) => format!("the full output is in {}", p.display()),
                (None, Some(e)) => format!("the full output could not be saved: {e}"),
                (None, None) => "the full output was not saved".to_string(),
            };
            format!(
                "{}\n[... {omitted} bytes of output omitted here to bound memory; {where_} ...]\n{tail}",
                self.head
            )
        };
        Captured {
            text,
            total_bytes: self.total_bytes,
            total_chars: self.total_chars,
            omitted_bytes: omitted,
            spill_file,
            spilled_bytes: self.spilled,
        }
    }
}

/// What [`Capture::finish`] returns.
#[derive(Debug)]
pub struct Captured {
    pub text: String,
    pub total_bytes: u64,
    pub total_chars: u64,
    pub omitted_bytes: u64,
    pub spill_file: Option<PathBuf>,
    /// How much of the output the spill file holds (less than `total_bytes` past its cap).
    pub spilled_bytes: u64,
}

/// Removes ANSI escape sequences (CSI, OSC, and two-byte escapes).
pub fn strip_ansi(s: &str) -> String {
    if !s.contains('\u{1b}') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('[') => {
                // Parameters and intermediates, then one final byte in @..~.
                for c in it.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                // Until BEL or ESC \.
                while let Some(c) = it.next() {
                    if c == '\u{7}' {
                        break;
                    }
                    if c == '\u{1b}' && it.peek() == Some(&'\\') {
                        it.next();
                        break;
                    }
                }
            }
            Some('(' | ')' | '*' | '+') => {
                it.next();
            }
            _ => {}
        }
    }
    out
}

/// Text as a terminal would show it (ANSI already stripped): `\r\n` ends a line, a lone `\r`
/// returns to the start of the line and later characters overwrite earlier ones, backspace
/// moves back one column; trailing blanks of each line go.
pub fn render_terminal(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, raw) in s.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        if !raw.contains(['\r', '\u{8}']) {
            out.push_str(raw.trim_end());
            continue;
        }
        let mut line: Vec<char> = Vec::new();
        let mut col: usize = 0;
        for c in raw.chars() {
            match c {
                '\r' => col = 0,
                '\u{8}' => col = col.saturating_sub(1),
                c => {
                    if col < line.len() {
                        line[col] = c;
                    } else {
                        line.push(c);
                    }
                    col += 1;
                }
            }
        }
        out.push_str(line.into_iter().collect::<String>().trim_end());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoder_joins_split_characters() {
        let mut d = Decoder::default();
        let e = "é".as_bytes();
        assert_eq!(d.push(&[b'a', e[0]]), "a");
        assert_eq!(d.push(&[e[1], b'b']), "éb");
        assert_eq!(d.push(&[0xff, b'c']), "\u{FFFD}c");
        assert_eq!(d.push(&[e[0]]), "");
        assert_eq!(d.finish(), "\u{FFFD}");
    }

    #[test]
    fn keeps_head_and_tail_and_spills_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Capture::new(20, dir.path(), "out.log");
        for i in 0..10 {
            c.push(&format!("line{i}\n"));
        }
        let got = c.finish();
        assert_eq!(got.total_bytes, 60);
        assert_eq!(got.omitted_bytes, 40);
        let file = got.spill_file.unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            (0..10).map(|i| format!("line{i}\n")).collect::<String>()
        );
        assert!(got.text.starts_with("line0\nline\n[... 40 bytes"), "{}", got.text);
        assert!(got.text.contains("40 bytes of output omitted"), "{}", got.text);
        assert!(got.text.contains(&file.display().to_string()));
        assert!(got.text.ends_with("8\nline9\n"), "{}", got.text);
    }

    /// Issue 35, finding 6: a command printing 1 GB left a 954 MB log. The log holds at most
    /// `SPILL_FILE_BYTES`, and the notice says how much more there was.
    #[test]
    fn the_spill_file_is_bounded_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Capture::new(1024, dir.path(), "big.log");
        let chunk = "y".repeat(1 << 20);
        let cap = toolbelt_core::limits::SPILL_FILE_BYTES;
        let n = (cap >> 20) + 6;
        for _ in 0..n {
            c.push(&chunk);
        }
        let got = c.finish();
        let file = got.spill_file.unwrap();
        assert_eq!(std::fs::metadata(&file).unwrap().len(), cap);
        assert!(
            got.text.contains(&format!("the first {} MiB of it are in", cap >> 20)),
            "{}",
            &got.text[..300]
        );
        assert!(
            got.text.contains(&format!("the rest, {} bytes, was not kept", (n << 20) - cap)),
            "{}",
            &got.text[..400]
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: toolbelt_core::testing::proptest_cases().min(200),
            failure_persistence: None,
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Issue 35, finding 6, for any output: the file kept holds the output's first bytes
        /// and never more than its cap; what the text keeps is bounded by the memory cap.
        #[test]
        fn the_spill_file_holds_a_prefix_within_its_cap(
            chunks in proptest::collection::vec("[a-z\n\u{e9}\u{4e2d}]{0,300}", 0..40),
            memory in 2usize..200,
            extra in 0u64..3000,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut c = Capture::new(memory, dir.path(), "p.log");
            c.spill_cap = memory as u64 + extra;
            let all: String = chunks.concat();
            for ch in &chunks {
                c.push(ch);
            }
            let got = c.finish();
            proptest::prop_assert_eq!(got.total_bytes, all.len() as u64);
            match &got.spill_file {
                None => proptest::prop_assert_eq!(&got.text, &all),
                Some(f) => {
                    let kept = std::fs::read(f).unwrap();
                    proptest::prop_assert!(kept.len() as u64 <= memory as u64 + extra);
                    proptest::prop_assert!(all.as_bytes().starts_with(&kept));
                    proptest::prop_assert_eq!(got.spilled_bytes, kept.len() as u64);
                    // Cut short only at the cap (or a character boundary just below it).
                    if (kept.len() as u64) < all.len() as u64 {
                        proptest::prop_assert!(kept.len() as u64 + 3 >= memory as u64 + extra);
                    }
                }
            }
        }
    }

    #[test]
    fn small_output_is_kept_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Capture::new(1000, dir.path(), "x");
        c.push("hello ");
        c.push("world");
        assert_eq!(c.partial_line(), "hello world");
        let got = c.finish();
        assert_eq!(got.text, "hello world");
        assert!(got.spill_file.is_none());
    }

    #[test]
    fn binary_is_detected_in_the_first_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Capture::new(1000, dir.path(), "x");
        assert!(c.sniff(b"abc"));
        assert!(!c.sniff(b"d\0ef"));
        assert!(!c.sniff(b"more"));
        assert_eq!(c.binary_bytes(), Some(8));
    }

    #[test]
    fn renders_carriage_returns_like_a_terminal() {
        assert_eq!(render_terminal("a\r\nb\r\n"), "a\nb\n");
        assert_eq!(render_terminal("abc\rX\r\n"), "Xbc\n");
        assert_eq!(render_terminal("10%\r50%\r100%\r\ndone"), "100%\ndone");
        assert_eq!(render_terminal("ab\u{8}c  "), "ac");
    }

    #[test]
    fn strips_colour_and_titles() {
        assert_eq!(strip_ansi("\u{1b}[31mred\u{1b}[0m \u{1b}]0;title\u{7}x"), "red x");
        assert_eq!(strip_ansi("plain"), "plain");
    }
}
