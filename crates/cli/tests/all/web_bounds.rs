//! What a hostile web server's pages cost (issue 37, the attack on the HTML reader, report
//! /tmp/atk16): the peak of the child, measured by the kernel (`ru_maxrss`), for pages of
//! 2 MiB in both of web_fetch's modes.

use std::collections::HashMap;

use serde_json::json;
use toolbelt_test_support::TempTree;
use toolbelt_test_support::web_server::WebServer;

const MIB: usize = 1 << 20;

/// Runs `toolbelt call web_fetch ARGS` under a parent that reports the child's peak: (peak in
/// MB, output).
fn peak_of(t: &TempTree, server: &WebServer, args: serde_json::Value) -> (u64, String) {
    let script = "import resource, subprocess, sys\nr = subprocess.run(sys.argv[1:], capture_output=True)\nprint(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\nsys.stdout.write((r.stdout + r.stderr).decode(errors='replace'))";
    let out = std::process::Command::new("python3")
        .args(["-c", script, env!("CARGO_BIN_EXE_toolbelt"), "call", "--root"])
        .arg(t.root())
        .args(["web_fetch", &args.to_string(), "--approval-mode", "yolo"])
        .env("TOOLBELT_HOME", t.home())
        .env("HOME", t.home())
        .env("TOOLBELT_WEB_ALLOWED_PRIVATE_HOSTS", &server.host_port)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (peak, rest) = text.split_once('\n').unwrap_or((&text, ""));
    (peak.trim().parse::<u64>().unwrap_or(u64::MAX) / 1024, rest.to_owned())
}

fn pages() -> HashMap<String, Vec<u8>> {
    let lines = |open: &str, close: &str| {
        [open.as_bytes(), &b"\n".repeat(2 * MIB), b"x", close.as_bytes()].concat()
    };
    HashMap::from([
        // B1: a quote made one string for each of its lines (658 MB for 10 MiB).
        ("quote".into(), lines("<blockquote><pre>x", "</pre></blockquote>")),
        ("quotes".into(), lines(&"<blockquote>".repeat(4), "")),
        // B2: a list item widened every line and held two copies (279 MB for 10 MiB).
        ("list".into(), lines("<ol start=1234567><li><pre>x", "</pre></ol>")),
        // B3: a node and its attributes cost ~500 bytes for 24 of page (228 MB for 10 MiB).
        ("images".into(), b"<img src=a alt=b href=c>".repeat(2 * MIB / 24)),
        // B4: a byte that is not UTF-8 becomes three, then nested lists copy it (217 MB).
        ("bytes".into(), [&b"<ul><li>".repeat(30)[..], &b"\xff \xfe<br>".repeat(MIB / 3)].concat()),
        // Twelve list levels, each in the open second item of the one before, each holding a
        // text just under a block's limit (second attack: 283 MB for 10 MiB).
        ("stacked".into(), {
            let level = |_| {
                let open = "<ol start=-1.2345678901234567e-300><li><pre>".as_bytes();
                [open, &b"\n".repeat(2 * MIB / 13), b"</pre></li><li>"].concat()
            };
            (0..12).flat_map(level).collect()
        }),
        ("small".into(), b"<p>hello</p>".to_vec()),
    ])
}

#[test]
fn a_hostile_pages_text_costs_a_bounded_amount_in_both_modes() {
    let t = TempTree::new();
    let server = WebServer::with_pages(pages());
    let base = peak_of(&t, &server, json!({"url": format!("{}/p/small", server.url)})).0;
    let mut peaks = Vec::new();
    for name in ["quote", "quotes", "list", "images", "bytes", "stacked"] {
        let url = format!("{}/p/{name}", server.url);
        for args in [json!({"url": url}), json!({"prompt": format!("read {url}")})] {
            let (peak, out) = peak_of(&t, &server, args.clone());
            assert!(out.contains("untrusted_context"), "{args}: {}", &out[..out.len().min(300)]);
            peaks.push((peak.saturating_sub(base), args));
        }
    }
    // Over a call fetching a small page: the page (held twice), its text and its tree (nodes
    // of 48 bytes, at most 250,000 of them); 5–19 MB (before: 126 MB for the quote, 51 for the
    // list, 43 for the images, 52 for the bytes).
    let over: Vec<_> = peaks.iter().filter(|(p, _)| *p > 24).collect();
    assert!(
        over.is_empty(),
        "over 24 MB more than a small page's {base} MB: {over:?}\nall: {peaks:?}"
    );
}

/// B5: a prompt's fallback kept the whole text of every page until the budget was shared out
/// (nine such pages: 1.18 GB); each text is cut to the budget as it comes.
#[test]
fn a_prompt_naming_many_hostile_pages_costs_about_one() {
    let t = TempTree::new();
    let server = WebServer::with_pages(pages());
    let urls: Vec<String> = (0..9).map(|i| format!("{}/p/list?{i}", server.url)).collect();
    let base = peak_of(&t, &server, json!({"url": format!("{}/p/small", server.url)})).0;
    let (peak, out) = peak_of(&t, &server, json!({"prompt": format!("read {}", urls.join(" "))}));
    assert!(out.contains("untrusted_context"), "{}", &out[..out.len().min(300)]);
    // Before: 230 MB more than a small page.
    assert!(peak <= base + 32, "{peak} MB for nine pages of 2 MiB ({base} MB for a small page)");
}
