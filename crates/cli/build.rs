//! Link options of the `toolbelt` binary.
#![allow(clippy::print_stdout)]

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=link-order.txt");
    println!("cargo:rerun-if-env-changed=TOOLBELT_PIE");
    println!("cargo:rerun-if-env-changed=TOOLBELT_LINK_ORDER");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("CARGO_CFG_TARGET_ENV") != "gnu" {
        return;
    }
    if var("TOOLBELT_PIE").is_empty() {
        // A position-dependent executable: a PIE binary of this size has ~50,000 pointers the
        // loader must fix at every start, each fix a copy-on-write fault of its page (~250
        // pages): 1 ms of a 3 ms `toolbelt call`. The price is that toolbelt's own code and
        // data sit at fixed addresses (its stack, heap and libraries are still randomised).
        // `TOOLBELT_PIE=1 cargo build --release` builds a PIE instead (README, "Install").
        println!("cargo:rustc-link-arg-bins=-no-pie");
    } else {
        // Relative relocations packed (DT_RELR, glibc 2.36+; the linker emits them only when
        // the C library supports them): a smaller table for the loader to read.
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    // The functions a call runs, placed together (scripts/link-order.sh lists them): the
    // kernel maps a binary's code 64 KiB around each page a process touches, and a call's
    // 1.5 MB of code spread over 23 MB of text mapped 13 MB of it. Names the build no longer
    // has are skipped. Only with rustc's own LLD (x86_64 Linux since Rust 1.90): another
    // linker may not know the option. `TOOLBELT_LINK_ORDER=0` leaves the order to the linker.
    let order = Path::new(&var("CARGO_MANIFEST_DIR")).join("link-order.txt");
    if var("PROFILE") == "release"
        && var("TOOLBELT_LINK_ORDER") != "0"
        && order.is_file()
        && uses_rust_lld(&var)
    {
        println!("cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}", order.display());
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// Whether the binary is linked by the LLD that rustc ships: the default on x86_64 Linux since
/// Rust 1.90, unless a linker is chosen in the configuration or the flags.
fn uses_rust_lld(var: &dyn Fn(&str) -> String) -> bool {
    if var("CARGO_CFG_TARGET_ARCH") != "x86_64" || !var("RUSTC_LINKER").is_empty() {
        return false;
    }
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    if flags.contains("linker")
        || flags.contains("link-self-contained")
        || flags.contains("fuse-ld")
    {
        return false;
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let Ok(out) = std::process::Command::new(rustc).arg("--version").output() else { return false };
    // "rustc 1.95.0 (...)": the minor version.
    let text = String::from_utf8_lossy(&out.stdout);
    let minor = text.split_whitespace().nth(1).and_then(|v| v.split('.').nth(1));
    minor.and_then(|m| m.parse::<u32>().ok()).is_some_and(|m| m >= 90)
}
