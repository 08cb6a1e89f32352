//! The editor's side of the wire: JSON lines on stdin and stdout, read with a bound.
//!
//! The SDK's own stdio transport reads lines with no limit (a 1.2 GB line with no end took
//! the agent past 2 GB), stops for good at a byte that is not UTF-8, and echoes a line it
//! cannot parse back in full (a 300 MB one was sent back; issue 35). Here a line is held up
//! to [`ACP_MESSAGE_BYTES`]; a longer one is skipped as it is read and stands as a short
//! message that does not parse, so the SDK answers it with a parse error. Bytes that are not
//! UTF-8 become U+FFFD and the message is handled (its request is answered with its id); a
//! line that is not JSON is echoed back cut to its first part.
//!
//! A line within the limit is measured before the SDK parses it (issue 47: a 31 MiB message of
//! tiny values took 2.5 GB): a request past the values or the depth allowed stands as a short
//! request for [`REFUSED`] with its id, which the agent answers with an error that names the
//! limit; any other such message is dropped.

use agent_client_protocol::Lines;
use futures::{Sink, Stream};
use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use toolbelt_core::json_in::{self, JsonBudget};
use toolbelt_core::limits::ACP_MESSAGE_BYTES;

/// The method a request too costly to read stands as: the agent answers it with an
/// `Invalid Request` error whose data says why (`params.reason`).
pub const REFUSED: &str = "_toolbelt/refused";

/// What of a line that does not parse is echoed back in the parse error.
const ECHOED_CHARS: usize = 200;

/// ACP over stdin and stdout.
pub fn stdio()
-> Lines<impl Sink<String, Error = std::io::Error>, impl Stream<Item = std::io::Result<String>>> {
    lines(tokio::io::stdin(), tokio::io::stdout(), ACP_MESSAGE_BYTES)
}

/// ACP over any pair of byte streams, lines over `max` bytes dropped.
pub fn lines<R, W>(
    input: R,
    output: W,
    max: usize,
) -> Lines<impl Sink<String, Error = std::io::Error>, impl Stream<Item = std::io::Result<String>>>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let outgoing = Box::pin(futures::sink::unfold(output, async |mut w: W, line: String| {
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        w.write_all(&bytes).await?;
        w.flush().await?;
        Ok::<_, std::io::Error>(w)
    }));
    let reader =
        Reader { input, buf: Vec::new(), start: 0, scanned: 0, skipping: false, max, ended: false };
    let incoming = Box::pin(futures::stream::unfold(reader, async |mut r| {
        let line = r.next_line().await?;
        Some((line, r))
    }));
    Lines::new(outgoing, incoming)
}

struct Reader<R> {
    input: R,
    buf: Vec<u8>,
    /// Where the unread part of `buf` starts.
    start: usize,
    /// How much of the unread part is known to hold no line end (a long line is looked
    /// through once, not again with every read).
    scanned: usize,
    /// In a line over the limit: bytes are dropped up to its end.
    skipping: bool,
    max: usize,
    ended: bool,
}

impl<R: AsyncRead + Unpin> Reader<R> {
    /// The next line (without its end), `None` at the end of the input.
    async fn next_line(&mut self) -> Option<std::io::Result<String>> {
        loop {
            let from_here = self.start + self.scanned;
            if let Some(i) = self.buf[from_here..].iter().position(|&b| b == b'\n') {
                let (from, to) = (self.start, from_here + i);
                self.start = to + 1;
                self.scanned = 0;
                if std::mem::take(&mut self.skipping) || to - from > self.max {
                    return Some(Ok(too_long(self.max)));
                }
                let line = &self.buf[from..to];
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match checked(line) {
                    Some(text) => return Some(Ok(text)),
                    None => continue,
                }
            }
            self.scanned = self.buf.len() - self.start;
            if self.ended {
                let rest = self.buf.len() - self.start;
                self.start = self.buf.len();
                self.scanned = 0;
                return match (std::mem::take(&mut self.skipping), rest) {
                    (true, _) => Some(Ok(too_long(self.max))),
                    (false, 0) => None,
                    (false, n) if n > self.max => Some(Ok(too_long(self.max))),
                    (false, _) => {
                        let line = self.buf[self.buf.len() - rest..].to_vec();
                        checked(&line).map(Ok)
                    }
                };
            }
            // Keep the unread part only; past the limit, drop it and skip to the line's end.
            self.buf.drain(..self.start);
            self.start = 0;
            // A large message read: its room is not kept for the next (small) one.
            if self.buf.capacity() > 1 << 20 && self.buf.len() < 64 << 10 {
                self.buf.shrink_to(64 << 10);
            }
            if self.buf.len() > self.max {
                self.buf.clear();
                self.scanned = 0;
                self.skipping = true;
            }
            let mut chunk = [0u8; 64 * 1024];
            match self.input.read(&mut chunk).await {
                Ok(0) => self.ended = true,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// The stand-in for a line over the limit: not JSON, so the SDK answers a parse error.
fn too_long(max: usize) -> String {
    format!("message dropped: longer than the limit of {max} bytes (one JSON-RPC message per line)")
}

/// The line as text (bytes that are not UTF-8 as U+FFFD), or the first part of it when it is
/// not JSON (it is echoed back in the parse error), or a request for [`REFUSED`] when it is
/// too costly to parse; `None`: a message too costly to parse that is not a request (dropped).
fn checked(line: &[u8]) -> Option<String> {
    let shape = match json_in::measure(line, JsonBudget::message(usize::MAX)) {
        Ok(shape) => shape,
        Err(why) => return refused(line, &why),
    };
    toolbelt_core::memory::note_parsed(line.len(), shape.values);
    let text = String::from_utf8_lossy(line);
    if serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok() {
        return Some(text.into_owned());
    }
    Some(match text.char_indices().nth(ECHOED_CHARS) {
        Some((cut, _)) => format!("{}... [not JSON; {} bytes in all]", &text[..cut], line.len()),
        None => text.into_owned(),
    })
}

/// The stand-in for a request too costly to parse (see [`REFUSED`]); `None` for any other
/// message, which is dropped.
fn refused(line: &[u8], why: &json_in::JsonRefusal) -> Option<String> {
    let id = json_in::leading_id(line)?;
    json_in::top_value(line, "method")?;
    let reason = format!("the message was not read: {why}");
    let stand_in =
        json!({"jsonrpc": "2.0", "id": id, "method": REFUSED, "params": {"reason": reason}});
    Some(stand_in.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt as _;

    async fn read_all(input: &'static [u8], max: usize) -> Vec<String> {
        let reader = Reader {
            input,
            buf: Vec::new(),
            start: 0,
            scanned: 0,
            skipping: false,
            max,
            ended: false,
        };
        futures::stream::unfold(reader, async |mut r| Some((r.next_line().await?, r)))
            .map(|l| l.unwrap())
            .collect()
            .await
    }

    #[tokio::test]
    async fn long_lines_are_dropped_and_the_next_ones_read() {
        let mut input = b"{\"a\":1}\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 10_000));
        input.extend(b"\n{\"b\":2}\r\n\n{\"c\":3}");
        let got = read_all(Box::leak(input.into_boxed_slice()), 1000).await;
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(got[0], "{\"a\":1}");
        assert!(got[1].starts_with("message dropped: longer than the limit of 1000 bytes"));
        assert_eq!(got[2], "{\"b\":2}");
        assert_eq!(got[3], "{\"c\":3}");
    }

    #[tokio::test]
    async fn bad_bytes_become_replacement_characters_and_garbage_is_echoed_short() {
        let got = read_all(b"{\"a\":\"\xff\"}\nnot json at all\n", 1000).await;
        assert_eq!(got, ["{\"a\":\"\u{fffd}\"}", "not json at all"]);
        let long: &'static [u8] = Box::leak(vec![b'z'; 500].into_boxed_slice());
        let got = read_all(long, 1000).await;
        assert!(
            got[0].starts_with(&"z".repeat(200))
                && got[0].ends_with("[not JSON; 500 bytes in all]")
        );
    }
}
