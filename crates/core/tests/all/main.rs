//! toolbelt-core integration tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod house;
mod shell_policy;
