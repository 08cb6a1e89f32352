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

/// Issue 20: list_directory of 200,000 entries gave the model 4.4 MB with no cap or notice.
/// Every tool's text is capped (1,000,000 characters), the cut named and the whole saved.
#[test]
fn a_listing_over_the_output_cap_is_cut_and_saved_whole() {
    let s = crate::shell::session();
    let dir = s.tree.root().join("many");
    std::fs::create_dir(&dir).unwrap();
    let long = "n".repeat(240);
    for i in 0..4500 {
        std::fs::write(dir.join(format!("{long}{i:05}")), "").unwrap();
    }
    let c = s.call("list_directory", serde_json::json!({"dir_path": "many"}));
    let out = crate::shell::output(&c);
    assert!(out.len() < 1_100_000, "{}", out.len());
    assert!(out.starts_with("Output too large. Showing first 200,000 and last 800,000 characters. For full output see: "), "{}", &out[..200]);
    let file = out.split("For full output see: ").nth(1).unwrap().lines().next().unwrap();
    let saved = std::fs::read_to_string(file).unwrap();
    assert_eq!(saved.matches(&long).count(), 4500);
    assert!(out.contains("characters omitted"));
}
