//! Issue 35: what an MCP client can make `toolbelt mcp` take on is bounded like every other
//! input.

use std::path::{Path, PathBuf};

use serde_json::json;
use toolbelt_test_support::TempTree;

use super::mcp_session::Mcp;

/// Every root an MCP client names is opened, checked and granted to commands: 100,000 of them
/// were all taken. More than `MCP_ROOTS` serve nothing, and the call says why.
#[test]
fn a_client_offering_more_than_64_roots_is_told_so() {
    let t = TempTree::new();
    let dirs: Vec<PathBuf> = (0..65)
        .map(|i| {
            let d = t.root().join(format!("r{i}"));
            std::fs::create_dir(&d).unwrap();
            d.canonicalize().unwrap()
        })
        .collect();
    std::fs::write(dirs[0].join("a.txt"), "in the first root\n").unwrap();
    let read = json!({"file_path": dirs[0].join("a.txt")});
    // 64 are served.
    let refs: Vec<&Path> = dirs[..64].iter().map(PathBuf::as_path).collect();
    let mut m = Mcp::start(&t, t.root(), &[], &[], Some(&refs));
    let (text, error) = m.call("read_file", read.clone());
    assert!(!error && text.contains("in the first root"), "{text}");
    // One more and nothing is.
    let refs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    m.list_changed(&refs);
    let (text, error) = m.call("read_file", read);
    assert!(error, "{text}");
    assert!(
        text.contains("Nothing is served")
            && text.contains("it offered 65 roots; at most 64 are served"),
        "{text}"
    );
}
