//! toolbelt-tools: the built-in tools, one file per tool.
//!
//! - [`fs::read_file`], [`fs::list_directory`]

pub mod fs;

use std::sync::Arc;

use toolbelt_core::Tool;

/// Every built-in tool, in upstream's registration order.
pub fn builtin_tools() -> Vec<Arc<dyn Tool>> {
    vec![Arc::new(fs::list_directory::ListDirectory), Arc::new(fs::read_file::ReadFile)]
}
