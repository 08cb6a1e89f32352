//! Link options of the `toolbelt` binary.
#![allow(clippy::print_stdout)]

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=TOOLBELT_PIE");
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
}
