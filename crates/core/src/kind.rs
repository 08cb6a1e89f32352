//! What a tool does, as far as scheduling and policy care.

use serde::{Deserialize, Serialize};

/// The kind of a tool, with upstream's wire names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Reads files or folders.
    Read,
    /// Changes a file.
    Edit,
    /// Deletes something.
    Delete,
    /// Moves or renames something.
    Move,
    /// Searches.
    Search,
    /// Runs a command.
    Execute,
    /// Thinks or remembers (no effect outside the session).
    Think,
    /// Runs an agent.
    Agent,
    /// Fetches from the network.
    Fetch,
    /// Talks to the person.
    Communicate,
    /// Plans.
    Plan,
    /// Switches the session's mode.
    SwitchMode,
    /// Anything else.
    Other,
}

impl Kind {
    /// Kinds that change the world: these calls never run alongside others.
    pub fn is_mutating(self) -> bool {
        matches!(self, Kind::Edit | Kind::Delete | Kind::Move | Kind::Execute)
    }

    /// Kinds that only look: read, search, fetch.
    pub fn is_read_only(self) -> bool {
        matches!(self, Kind::Read | Kind::Search | Kind::Fetch)
    }

    /// Upstream's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Read => "read",
            Kind::Edit => "edit",
            Kind::Delete => "delete",
            Kind::Move => "move",
            Kind::Search => "search",
            Kind::Execute => "execute",
            Kind::Think => "think",
            Kind::Agent => "agent",
            Kind::Fetch => "fetch",
            Kind::Communicate => "communicate",
            Kind::Plan => "plan",
            Kind::SwitchMode => "switch_mode",
            Kind::Other => "other",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutating_and_read_only_kinds_follow_upstream_lists() {
        let mutating: Vec<Kind> = [Kind::Edit, Kind::Delete, Kind::Move, Kind::Execute].to_vec();
        for k in mutating {
            assert!(k.is_mutating() && !k.is_read_only(), "{k:?}");
        }
        for k in [Kind::Read, Kind::Search, Kind::Fetch] {
            assert!(k.is_read_only() && !k.is_mutating(), "{k:?}");
        }
        assert!(!Kind::Other.is_mutating() && !Kind::Other.is_read_only());
        assert_eq!(serde_json::to_string(&Kind::SwitchMode).unwrap(), "\"switch_mode\"");
    }
}

/// What a tool's calls can do to the world: the facts behind MCP's tool hints
/// (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`). Tools whose kind
/// says less than they do (a memory tool that writes a file, a shell that reaches the network)
/// state their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effects {
    /// It changes something outside the call: a file, the session's state, the world.
    pub writes: bool,
    /// What it changes can be lost (overwritten, deleted); meaningful only when it writes.
    pub destroys: bool,
    /// Calling it again with the same arguments has no further effect.
    pub idempotent: bool,
    /// It reaches beyond the workspace: the network, other programs.
    pub open_world: bool,
}

impl Effects {
    /// The effects a kind implies; kinds that say nothing (`Other`, `Agent`) assume the worst.
    pub fn of_kind(kind: Kind) -> Self {
        let (writes, destroys, idempotent, open_world) = match kind {
            Kind::Read | Kind::Search => (false, false, true, false),
            Kind::Fetch => (false, false, true, true),
            Kind::Communicate => (false, false, false, false),
            Kind::Edit | Kind::Delete | Kind::Move => (true, true, false, false),
            Kind::Execute => (true, true, false, true),
            Kind::Think | Kind::Plan | Kind::SwitchMode => (true, false, false, false),
            Kind::Agent | Kind::Other => (true, true, false, true),
        };
        Self { writes, destroys, idempotent, open_world }
    }
}
