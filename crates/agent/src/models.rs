//! The Gemini models a person may choose, as Gemini CLI 0.61 offers them to a user signed in
//! with an API key or Vertex AI (who has the preview models): the default `auto`, the preview
//! models, then the generally available ones; the aliases `pro`, `flash` and `flash-lite`; and
//! the names 0.61 accepts. A name outside these is refused before any request is sent, unless
//! it is written as `models/NAME` or `tunedModels/NAME` (a model toolbelt does not list).

/// The model a session starts with when nothing names one (0.61's default).
pub const DEFAULT_MODEL: &str = "auto";

/// One model on offer: its id, the name an editor shows, and a line about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelChoice {
    pub id: String,
    pub name: String,
    pub description: Option<String>,
}

/// `auto` stands for this model: toolbelt sends every request of an `auto` session to it.
const AUTO_MODEL: &str = "gemini-3-pro-preview";

/// The list an editor shows, in 0.61's order.
const OFFERED: &[&str] = &[
    "auto",
    "gemini-3-pro-preview",
    "gemini-3-flash-preview",
    "gemini-2.5-pro",
    "gemini-3.5-flash",
    "gemini-3.1-flash-lite",
];

/// Names 0.61 knows besides the offered ones, and GA models the API still serves.
const ALSO_KNOWN: &[&str] = &[
    "gemini-3.1-pro-preview",
    "gemini-3.1-pro-preview-customtools",
    "gemini-3-flash",
    "gemini-3.8-flash",
    "gemini-3.5-flash-lite",
    "gemma-4-31b-it",
    "gemma-4-26b-a4b-it",
    "gemini-2.5-flash",
    "gemini-2.5-flash-lite",
];

/// The models an editor may switch between.
pub fn offered() -> Vec<ModelChoice> {
    OFFERED
        .iter()
        .map(|id| ModelChoice {
            id: (*id).to_string(),
            name: if *id == "auto" { "Auto".to_string() } else { (*id).to_string() },
            description: (*id == "auto").then(|| {
                format!(
                    "The default: every request goes to {AUTO_MODEL} (no routing between models)"
                )
            }),
        })
        .collect()
}

/// The model a request names when a person chose `name`: aliases resolved, known names as
/// they are, `models/…` and `tunedModels/…` passed through; anything else refused with the
/// names there are.
pub fn resolve(name: &str) -> Result<String, String> {
    let name = name.trim();
    let resolved = match name {
        "auto" | "pro" | "auto-gemini-3" => AUTO_MODEL,
        "auto-gemini-2.5" => "gemini-2.5-pro",
        "flash" => "gemini-3-flash-preview",
        "flash-lite" => "gemini-3.1-flash-lite",
        n if OFFERED.contains(&n) || ALSO_KNOWN.contains(&n) => n,
        n if n.starts_with("models/") || n.starts_with("tunedModels/") => {
            crate::client::check_model_name(n)?;
            n
        }
        _ => {
            return Err(format!(
                "{name:?} is not a Gemini model toolbelt knows; choose one of {}, or the aliases pro, flash and flash-lite (write models/NAME for a model not listed)",
                OFFERED.join(", ")
            ));
        }
    };
    Ok(resolved.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 50 E3: 0.61's list and default; aliases as 0.61 resolves them for a user with the
    /// preview models; unknown names refused before a request is made.
    #[test]
    fn the_list_default_and_aliases_follow_gemini_cli_0_61() {
        let ids: Vec<String> = offered().into_iter().map(|c| c.id).collect();
        assert_eq!(
            ids,
            [
                "auto",
                "gemini-3-pro-preview",
                "gemini-3-flash-preview",
                "gemini-2.5-pro",
                "gemini-3.5-flash",
                "gemini-3.1-flash-lite"
            ]
        );
        assert_eq!(DEFAULT_MODEL, "auto");
        assert_eq!(offered()[0].name, "Auto");
        for (alias, model) in [
            ("auto", "gemini-3-pro-preview"),
            ("pro", "gemini-3-pro-preview"),
            ("flash", "gemini-3-flash-preview"),
            ("flash-lite", "gemini-3.1-flash-lite"),
            ("auto-gemini-2.5", "gemini-2.5-pro"),
            ("gemini-2.5-flash", "gemini-2.5-flash"),
            ("models/gemini-exp-1", "models/gemini-exp-1"),
            ("tunedModels/mine-7", "tunedModels/mine-7"),
        ] {
            assert_eq!(resolve(alias).unwrap(), model, "{alias}");
        }
        for unknown in ["gpt-4o", "gemini-9-ultra", "", "models/../x"] {
            let e = resolve(unknown).unwrap_err();
            assert!(
                e.contains("auto, gemini-3-pro-preview") || e.contains("not a Gemini model name"),
                "{unknown}: {e}"
            );
        }
    }
}
