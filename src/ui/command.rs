//! Command mode (`:`), as in k9s: `:pods -n web`, `:deploy -A`, `:q`. Parsing and the hints
//! shown while typing are plain functions, so they are tested without a terminal.

use crate::client::cluster::NamespaceScope;
use crate::informers::fifo::FifoKind;
use crate::resources::ResourceKind;

use super::action::Action;
use super::effect::Effect;
use super::line::LineEdit;

/// Every command name with what it opens, in the order hints list them.
const COMMANDS: &[(&str, Target)] = &[
    ("pods", Target::Kind(ResourceKind::Pods)),
    ("po", Target::Kind(ResourceKind::Pods)),
    ("pod", Target::Kind(ResourceKind::Pods)),
    ("nodes", Target::Kind(ResourceKind::Nodes)),
    ("no", Target::Kind(ResourceKind::Nodes)),
    ("node", Target::Kind(ResourceKind::Nodes)),
    ("deployments", Target::Kind(ResourceKind::Deployments)),
    ("deploy", Target::Kind(ResourceKind::Deployments)),
    ("dp", Target::Kind(ResourceKind::Deployments)),
    ("deployment", Target::Kind(ResourceKind::Deployments)),
    ("replicasets", Target::Kind(ResourceKind::ReplicaSets)),
    ("rs", Target::Kind(ResourceKind::ReplicaSets)),
    ("replicaset", Target::Kind(ResourceKind::ReplicaSets)),
    ("namespaces", Target::Kind(ResourceKind::Namespaces)),
    ("ns", Target::Kind(ResourceKind::Namespaces)),
    ("namespace", Target::Kind(ResourceKind::Namespaces)),
    ("secrets", Target::Kind(ResourceKind::Secrets)),
    ("sec", Target::Kind(ResourceKind::Secrets)),
    ("secret", Target::Kind(ResourceKind::Secrets)),
    ("fifo", Target::Fifo),
    ("quit", Target::Quit),
    ("q", Target::Quit),
    ("q!", Target::Quit),
];

/// The names hints offer when nothing matches yet: one per command.
const PRIMARY: &[&str] = &["pods", "nodes", "deploy", "rs", "ns", "secrets", "quit"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Kind(ResourceKind),
    /// The FIFO of the table's informer (see [`Command::Fifo`]).
    Fifo,
    Quit,
}

/// A parsed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Show `kind`; `scope` is `None` when no flag names one (the current scope stays).
    Show {
        kind: ResourceKind,
        scope: Option<NamespaceScope>,
    },
    /// Restart the table's informer with `fifo`, and with `compare`'s pipeline beside it on
    /// the same watch stream, shown side by side in the delta panel.
    Fifo {
        fifo: FifoKind,
        compare: Option<FifoKind>,
    },
    Quit,
}

/// Why a command line cannot be run; the message is shown as is in the status line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("type a command: {names} (with -n NS or -A), or q", names = PRIMARY[..PRIMARY.len() - 1].join(", "))]
    Empty,
    #[error("unknown command {0:?}; commands: {names}", names = listed().join(", "))]
    Unknown(String),
    #[error("{0} needs a namespace: -n NAMESPACE")]
    MissingNamespace(String),
    #[error("{0:?} is not a valid namespace name (lowercase letters, digits and '-')")]
    BadNamespace(String),
    #[error("unknown flag {0:?}; use -n NAMESPACE or -A")]
    UnknownFlag(String),
    #[error("{0} are cluster-scoped: -n does not apply")]
    ClusterScoped(String),
    #[error("-n and -A ask for different scopes: give one")]
    ConflictingScope,
    #[error(":{0} takes no arguments")]
    NoArguments(String),
    #[error("unexpected argument {0:?}; use -n NAMESPACE or -A")]
    UnexpectedArgument(String),
    #[error("fifo takes a FIFO (classic, real or atomic), or two to compare side by side")]
    FifoArguments,
    #[error("unknown FIFO {0:?}: classic, real or atomic")]
    UnknownFifo(String),
    #[error("both pipelines would be {0}: compare two different FIFOs")]
    SameFifo(FifoKind),
}

/// Every command with its other names, `pods (po, pod)`, in the order hints list them.
pub fn listed() -> Vec<String> {
    PRIMARY
        .iter()
        .filter_map(|primary| {
            let (_, target) = COMMANDS.iter().find(|(name, _)| name == primary)?;
            let others: Vec<&str> = COMMANDS
                .iter()
                .filter(|(name, t)| t == target && name != primary)
                .map(|(name, _)| *name)
                .collect();
            Some(if others.is_empty() {
                (*primary).to_string()
            } else {
                format!("{primary} ({})", others.join(", "))
            })
        })
        .collect()
}

/// Parses a command line (without the `:`).
pub fn parse(input: &str) -> Result<Command, CommandError> {
    let mut words = input.split_whitespace();
    let name = words.next().ok_or(CommandError::Empty)?;
    let target = COMMANDS
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|&(_, t)| t)
        .ok_or_else(|| CommandError::Unknown(name.to_string()))?;
    let kind = match target {
        Target::Quit => {
            return match words.next() {
                None => Ok(Command::Quit),
                Some(_) => Err(CommandError::NoArguments(name.to_string())),
            };
        }
        Target::Fifo => return parse_fifo(words),
        Target::Kind(kind) => kind,
    };
    let mut scope = None;
    let mut set = |new: NamespaceScope| match &scope {
        Some(old) if *old != new => Err(CommandError::ConflictingScope),
        _ => {
            scope = Some(new);
            Ok(())
        }
    };
    while let Some(word) = words.next() {
        let namespace = match word {
            "-A" | "--all-namespaces" => {
                set(NamespaceScope::All)?;
                continue;
            }
            "-n" | "--namespace" => words
                .next()
                .ok_or_else(|| CommandError::MissingNamespace(word.to_string()))?,
            _ => match word
                .strip_prefix("--namespace=")
                .or_else(|| word.strip_prefix("-n="))
                .or_else(|| word.strip_prefix("-n"))
            {
                Some(ns) if !ns.is_empty() => ns,
                Some(_) => return Err(CommandError::MissingNamespace(word.to_string())),
                None if word.starts_with('-') => {
                    return Err(CommandError::UnknownFlag(word.to_string()));
                }
                None => return Err(CommandError::UnexpectedArgument(word.to_string())),
            },
        };
        if !is_namespace_name(namespace) {
            return Err(CommandError::BadNamespace(namespace.to_string()));
        }
        if !kind.namespaced() {
            return Err(CommandError::ClusterScoped(kind.plural().to_string()));
        }
        set(NamespaceScope::One(namespace.to_string()))?;
    }
    Ok(Command::Show { kind, scope })
}

/// `:fifo classic|real|atomic [OTHER]`: one FIFO, or two to compare side by side.
fn parse_fifo<'a>(words: impl Iterator<Item = &'a str>) -> Result<Command, CommandError> {
    let fifos = words
        .map(|w| {
            w.parse::<FifoKind>()
                .map_err(|_| CommandError::UnknownFifo(w.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    match fifos[..] {
        [fifo] => Ok(Command::Fifo {
            fifo,
            compare: None,
        }),
        [fifo, other] if fifo == other => Err(CommandError::SameFifo(fifo)),
        [fifo, other] => Ok(Command::Fifo {
            fifo,
            compare: Some(other),
        }),
        _ => Err(CommandError::FifoArguments),
    }
}

/// A DNS-1123 label, as namespace names must be.
fn is_namespace_name(name: &str) -> bool {
    name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

/// What the status line offers while `input` is typed: the command names the first word
/// could become, then, once it is a command, what Enter would do or why it cannot.
pub fn hint(input: &str) -> String {
    let first = input.split_whitespace().next().unwrap_or("");
    let typing_name = !input.contains(char::is_whitespace) || first.is_empty();
    if typing_name {
        let matching: Vec<&str> = COMMANDS
            .iter()
            .map(|&(n, _)| n)
            .filter(|n| !first.is_empty() && n.starts_with(&first.to_ascii_lowercase()))
            .collect();
        if !matching.is_empty() && !matching.iter().any(|n| n.eq_ignore_ascii_case(first)) {
            return matching.join(" ");
        }
        if matching.is_empty() && !first.is_empty() {
            return format!("no command starts with {first:?}: {}", PRIMARY.join(" "));
        }
        if first.is_empty() {
            return format!("{} · [-n NAMESPACE | -A]", PRIMARY.join(" "));
        }
    }
    match parse(input) {
        Ok(Command::Quit) => "Enter quits".into(),
        Ok(Command::Fifo {
            fifo,
            compare: None,
        }) => format!(
            "Enter restarts the table's informer with the {fifo} FIFO · add another FIFO to compare"
        ),
        Ok(Command::Fifo {
            fifo,
            compare: Some(other),
        }) => format!(
            "Enter restarts the table's informer with {fifo} and {other} side by side on one watch stream"
        ),
        Ok(Command::Show { kind, scope }) => match (kind.namespaced(), scope) {
            (false, _) => format!("Enter shows {kind}"),
            (true, None) => format!("Enter shows {kind} in the current scope · -n NAMESPACE | -A"),
            (true, Some(NamespaceScope::All)) => format!("Enter shows {kind} in all namespaces"),
            (true, Some(NamespaceScope::One(ns))) => {
                format!("Enter shows {kind} in namespace {ns}")
            }
        },
        Err(err) => err.to_string(),
    }
}

/// Completes the command name being typed when exactly one command starts with it.
pub fn complete(input: &str) -> Option<String> {
    if input.contains(char::is_whitespace) || input.is_empty() {
        return None;
    }
    let lower = input.to_ascii_lowercase();
    let mut kinds = COMMANDS.iter().filter(|(n, _)| n.starts_with(&lower));
    let (first, target) = kinds.next()?;
    // Aliases of one command complete to its first (longest) name.
    kinds.all(|(_, t)| t == target).then(|| format!("{first} "))
}

/// The command bar: what is typed after `:`, and the last command's error.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandBar {
    pub input: String,
    pub edit: LineEdit,
    /// Why the last command (or drill-down) did nothing; shown until the next key.
    pub error: Option<String>,
}

impl CommandBar {
    /// A key typed into the command line: Enter runs it, Esc or a backspace on nothing
    /// closes it.
    pub fn handle(&mut self, action: Action) -> Option<Effect> {
        match action {
            Action::CommandBackspace if self.input.is_empty() => return Some(Effect::Close),
            Action::CommandComplete => {
                if let Some(completed) = complete(&self.input) {
                    self.input = completed;
                    self.edit.apply(&mut self.input, &Action::LineEnd);
                }
            }
            Action::CommandCancel => {
                self.input.clear();
                return Some(Effect::Close);
            }
            Action::CommandRun => {
                self.edit.remember(&self.input);
                return Some(Effect::Run(std::mem::take(&mut self.input)));
            }
            action => {
                if self.edit.apply(&mut self.input, &action).is_none() {
                    return Some(Effect::Pass);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_types_completes_runs_and_closes() {
        let mut bar = CommandBar::default();
        for c in "dep".chars() {
            assert_eq!(bar.handle(Action::CommandChar(c)), None);
        }
        assert_eq!(bar.handle(Action::CommandComplete), None);
        assert_eq!(bar.input, "deployments ");
        assert_eq!(
            bar.handle(Action::CommandRun),
            Some(Effect::Run("deployments ".into()))
        );
        assert_eq!(bar.input, "");
        assert_eq!(bar.handle(Action::CommandBackspace), Some(Effect::Close));
        bar.handle(Action::CommandChar('x'));
        assert_eq!(bar.handle(Action::CommandCancel), Some(Effect::Close));
        assert_eq!(bar.input, "");
        assert_eq!(bar.handle(Action::SortNext), Some(Effect::Pass));
    }

    #[test]
    fn fifo_takes_one_fifo_or_two_different_ones() {
        assert_eq!(
            parse("fifo real"),
            Ok(Command::Fifo {
                fifo: FifoKind::Real,
                compare: None
            })
        );
        assert_eq!(
            parse("fifo classic atomic"),
            Ok(Command::Fifo {
                fifo: FifoKind::Classic,
                compare: Some(FifoKind::Atomic)
            })
        );
        assert_eq!(parse("fifo"), Err(CommandError::FifoArguments));
        assert_eq!(
            parse("fifo real real"),
            Err(CommandError::SameFifo(FifoKind::Real))
        );
        assert_eq!(
            parse("fifo fast"),
            Err(CommandError::UnknownFifo("fast".into()))
        );
        assert_eq!(
            parse("fifo classic real atomic"),
            Err(CommandError::FifoArguments)
        );
        assert!(hint("fifo classic real").contains("side by side"));
    }
}
