//! How much of the client's work the stdio server takes on at once, so that no client can grow
//! it without bound and none can stall it:
//!
//! - A request runs when a place is free: at most [`MAX_RUNNING`] at once, holding at most
//!   [`MAX_RUNNING_BYTES`] of request text between them (one larger request may run alone). A
//!   request keeps its place until its answer is written, so a client that reads no answers is
//!   held back.
//! - Later requests wait in order, as the lines the client sent, up to [`MAX_WAITING_BYTES`];
//!   past that a request is answered at once with an error saying the server is busy. Reading
//!   never stops for waiting requests: the client's answers to the server's own questions (a
//!   confirmation a running call waits for) and its cancellations are always read.
//! - The transport's own answers (to lines it refuses) are written by tasks of their own, never
//!   by the read that rmcp may drop; once [`MAX_UNWRITTEN`] of them are not written yet (the
//!   client reads nothing), reading pauses until they are.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use toolbelt_core::sync::LockExt as _;

/// Requests that run at once. Each keeps its answer until it is written: with 256 places,
/// 2,000 pipelined reads of a wide file (answers of 1 MB) held 690 MB (issue 35).
pub const MAX_RUNNING: usize = 32;
/// Request text that running requests may hold between them.
pub const MAX_RUNNING_BYTES: usize = 64 << 20;
/// Request text that may wait.
pub const MAX_WAITING_BYTES: usize = 64 << 20;
/// The transport's own answers not written yet before reading pauses.
pub const MAX_UNWRITTEN: usize = 1024;

/// Where a request whose id is pending is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Waiting,
    /// Running, holding so many bytes of request text.
    Running(usize),
}

#[derive(Debug, Default)]
struct State {
    /// Requests not answered yet, by id (as JSON text).
    pending: HashMap<String, Place>,
    running: usize,
    running_bytes: usize,
    unwritten: usize,
}

impl State {
    /// Runs the request `id`, `bytes` long, when a place is free for it (one larger than the
    /// byte limit runs alone).
    fn start(&mut self, limits: &Limits, id: &str, bytes: usize) -> bool {
        let fits = self.running < limits.running
            && (self.running == 0 || self.running_bytes + bytes <= limits.running_bytes);
        if fits {
            self.running += 1;
            self.running_bytes += bytes;
            self.pending.insert(id.to_owned(), Place::Running(bytes));
        }
        fits
    }

    /// A running request of `bytes` gives its place back.
    fn release(&mut self, bytes: usize) {
        self.running -= 1;
        self.running_bytes -= bytes;
    }
}

/// A request waiting for a place: its id and the line it came in.
#[derive(Debug)]
pub(super) struct Waiting {
    pub id: String,
    pub line: Vec<u8>,
}

/// The accounting, shared with the answers being written.
#[derive(Clone, Debug)]
pub(super) struct Flow {
    state: Arc<Mutex<State>>,
    /// Signalled when a place frees or an answer of the transport is written.
    freed: Arc<tokio::sync::Notify>,
    limits: Limits,
}

/// The limits (smaller ones in tests).
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    pub running: usize,
    pub running_bytes: usize,
    pub waiting_bytes: usize,
    pub unwritten: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            running: MAX_RUNNING,
            running_bytes: MAX_RUNNING_BYTES,
            waiting_bytes: MAX_WAITING_BYTES,
            unwritten: MAX_UNWRITTEN,
        }
    }
}

/// What became of a request read.
pub(super) enum Taken {
    /// It runs now.
    Runs,
    /// It waits (the caller queues its line).
    Waits,
    /// Too much waits: it is answered at once with an error.
    Busy,
}

impl Flow {
    pub(super) fn new(limits: Limits) -> Self {
        Self { state: Arc::default(), freed: Arc::default(), limits }
    }

    /// Whether `id` belongs to a request not answered yet.
    pub(super) fn is_pending(&self, id: &str) -> bool {
        self.state.locked().pending.contains_key(id)
    }

    /// A request with `id`, `bytes` long, was read; `queued` requests wait before it. `None`
    /// when its id is pending already.
    pub(super) fn take(&self, id: &str, bytes: usize, queued: usize) -> Option<Taken> {
        let mut s = self.state.locked();
        if s.pending.contains_key(id) {
            return None;
        }
        if queued == 0 && s.start(&self.limits, id, bytes) {
            return Some(Taken::Runs);
        }
        if queued + bytes > self.limits.waiting_bytes {
            return Some(Taken::Busy);
        }
        s.pending.insert(id.to_owned(), Place::Waiting);
        Some(Taken::Waits)
    }

    /// Whether the oldest waiting request, `bytes` long, may run now; if so it runs.
    pub(super) fn start_waiting(&self, id: &str, bytes: usize) -> bool {
        self.state.locked().start(&self.limits, id, bytes)
    }

    /// The request `id` will not be answered by the server (cancelled): forgotten, its place
    /// freed. True when it was waiting (the caller drops its line).
    pub(super) fn cancel(&self, id: &str) -> bool {
        let mut s = self.state.locked();
        match s.pending.remove(id) {
            Some(Place::Waiting) => true,
            Some(Place::Running(bytes)) => {
                s.release(bytes);
                drop(s);
                self.freed.notify_one();
                false
            }
            None => false,
        }
    }

    /// The answer to `id` is about to be written: the id is free for the client's next
    /// request at once; the returned place is given back by [`Flow::written`].
    pub(super) fn answering(&self, id: &str) -> Option<usize> {
        match self.state.locked().pending.remove(id) {
            Some(Place::Running(bytes)) => Some(bytes),
            _ => None,
        }
    }

    /// The answer that held a place of `bytes` is written.
    pub(super) fn written(&self, bytes: usize) {
        self.state.locked().release(bytes);
        self.freed.notify_one();
    }

    /// One more of the transport's own answers is being written.
    pub(super) fn writing_own(&self) {
        self.state.locked().unwritten += 1;
    }

    /// One of the transport's own answers is written.
    pub(super) fn own_written(&self) {
        self.state.locked().unwritten -= 1;
        self.freed.notify_one();
    }

    /// Whether reading must pause until the transport's own answers are written.
    pub(super) fn too_much_unwritten(&self) -> bool {
        self.state.locked().unwritten >= self.limits.unwritten
    }

    /// Whether the transport's own answers are all written.
    pub(super) fn all_written(&self) -> bool {
        self.state.locked().unwritten == 0
    }

    /// Whether no request runs (every running request's answer is written, or it was
    /// cancelled).
    pub(super) fn nothing_runs(&self) -> bool {
        self.state.locked().running == 0
    }

    /// Wakes a reader waiting on [`Flow::freed`] to look again.
    pub(super) fn wake(&self) {
        self.freed.notify_one();
    }

    /// Resolves when a place frees or an answer is written.
    pub(super) fn freed(&self) -> Arc<tokio::sync::Notify> {
        self.freed.clone()
    }
}

/// The waiting requests, oldest first.
#[derive(Debug, Default)]
pub(super) struct Queue {
    lines: VecDeque<Waiting>,
    bytes: usize,
}

impl Queue {
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }

    pub(super) fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    pub(super) fn push(&mut self, w: Waiting) {
        self.bytes += w.line.len();
        self.lines.push_back(w);
    }

    pub(super) fn front(&self) -> Option<&Waiting> {
        self.lines.front()
    }

    pub(super) fn pop(&mut self) -> Option<Waiting> {
        let w = self.lines.pop_front()?;
        self.bytes -= w.line.len();
        Some(w)
    }

    /// Drops the waiting request `id`.
    pub(super) fn remove(&mut self, id: &str) {
        if let Some(i) = self.lines.iter().position(|w| w.id == id) {
            let w = self.lines.remove(i);
            self.bytes -= w.map_or(0, |w| w.line.len());
        }
    }
}
