//! A command's own files read back as untrusted (issue 18, adversarial review): the file the
//! shell lists its jobs into is the command's to replace. A FIFO in its place blocked toolbelt
//! in open(2): the deadline never fired, signals were ignored, an MCP server stopped answering.

use std::time::{Duration, Instant};

use super::shell::{output, session};

#[test]
fn a_fifo_in_place_of_the_jobs_file_does_not_hang_the_call() {
    let s = session();
    let start = Instant::now();
    let r = s.shell("trap - EXIT; rm -f \"$_bgpids_file\"; mkfifo \"$_bgpids_file\"; echo made");
    assert!(output(&r).contains("made"), "{}", output(&r));
    assert!(start.elapsed() < Duration::from_secs(5), "took {:?}", start.elapsed());
    // A link to a file the command could not read itself is not followed either.
    let r = s.shell("trap - EXIT; rm -f \"$_bgpids_file\"; ln -s /proc/self/stat \"$_bgpids_file\"; echo linked");
    assert!(!output(&r).contains("Background PIDs"), "{}", output(&r));
}
