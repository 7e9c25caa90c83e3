//! Command mode (`:`), as in k9s: `:pods -n web`, `:deploy -A`, `:widgets`, `:q`. Any
//! resource discovery found is a command, named as kubectl names it. Parsing and the hints
//! shown while typing are plain functions of a discovery, so they are tested without a
//! terminal.

use std::sync::Arc;

use kscope_client::cluster::{NamespaceScope, is_namespace_name};
use kscope_client::discovery::Discovery;
use kscope_index_views::definitions::{IndexCommandError, IndexDefinition};
use kscope_informers::fifo::FifoKind;
use kscope_resources::{ApiResource, Kind, ResourceKind};

use super::action::Action;
use super::effect::Effect;
use super::line::LineEdit;
use super::nav::Category;

/// kscope's own names for built-in kinds, beside kubectl's (k9s users type them).
const ALIASES: &[(&str, ResourceKind)] = &[
    ("dp", ResourceKind::Deployments),
    ("sec", ResourceKind::Secrets),
];

const QUIT: &[&str] = &["quit", "q", "q!"];

/// The kube contexts: `:ctx` lists them, `:ctx NAME` switches to one.
const CONTEXT: &[&str] = &["ctx", "context", "contexts"];

/// The port-forwards running (see [`Command::Forwards`]), k9s's `:pf`.
const FORWARDS: &[&str] = &["pf", "portforwards"];

/// The table's informer pipeline (see [`Command::Fifo`]).
const FIFO: &str = "fifo";

/// Adds an index at run time (see [`Command::Index`]).
const INDEX: &str = "index";

/// The workbench views of the selected row or the cluster: `:tree` (see [`Command::Tree`])
/// and `:hot` (see [`Command::Hot`]).
const TREE: &str = "tree";
const HOT: &str = "hot";
/// Moves a recording's playback (see [`Command::Seek`]).
const SEEK: &str = "seek";
/// The selected pod's or workload's own /metrics (see [`Command::Metrics`]).
const METRICS: &str = "metrics";
/// The selected row's timeline (see [`Command::Timeline`]).
const TIMELINE: &str = "timeline";
/// Records the kind on screen to a file, or stops (see [`Command::Record`]).
const RECORD: &str = "record";
/// Namespace sets of the cluster group (see [`Command::NamespaceSet`]).
const NSSET: &str = "nsset";

/// What a command name names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target<'a> {
    Resource(&'a ApiResource),
    /// A category of resources (`all`), as `kscope get` takes it.
    Category(&'a str),
    Context,
    Forwards,
    Fifo,
    Index,
    /// A workbench view (`tree`, `hot`, `timeline`).
    View,
    Metrics,
    Record,
    NamespaceSet,
    Quit,
}

/// The built-in kinds first in hints, in this order, by the names people type most.
const PRIMARY: &[(ResourceKind, &str)] = &[
    (ResourceKind::Pods, "pods"),
    (ResourceKind::Nodes, "nodes"),
    (ResourceKind::Deployments, "deploy"),
    (ResourceKind::ReplicaSets, "rs"),
    (ResourceKind::Namespaces, "ns"),
    (ResourceKind::Secrets, "secrets"),
];

/// A parsed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Show `kind`; `scope` is `None` when no flag names one (the current scope stays).
    Show {
        kind: Kind,
        scope: Option<NamespaceScope>,
    },
    /// Show every kind of a category (`:all`) in one table; `scope` as for [`Command::Show`].
    ShowCategory {
        category: Category,
        scope: Option<NamespaceScope>,
    },
    /// `:ctx` (pick from the list), `:ctx NAME` (switch to it) or `:ctx A,B` (a table across
    /// those clusters).
    Context(Option<String>),
    /// Restart the table's informer with `fifo`, and with `compare`'s pipeline beside it on
    /// the same watch stream, shown side by side in the delta panel.
    Fifo {
        fifo: FifoKind,
        compare: Option<FifoKind>,
    },
    /// `:index NAME label=KEY | annotation=KEY | field=JSONPATH [kinds=a,b]`: add an index to
    /// the running informers, backfilled at once.
    Index(IndexDefinition),
    /// The selected row's ownership tree, as `x` opens it.
    Tree,
    /// The field managers and objects by write rate, as `H` opens them.
    Hot,
    /// `:seek 10:32:05` or `:seek rv=12345`: move a recording's playback there (the
    /// argument is read against where the playback is, by [`crate::playback::parse_seek`]).
    Seek(String),
    /// `:pf`: list the port-forwards, to watch or stop them.
    Forwards,
    /// `:metrics [--port PORT]`: the selected pod's (or a ready pod of the selected
    /// workload's) own Prometheus metrics, read through the pod proxy while shown.
    Metrics {
        port: Option<String>,
    },
    /// The selected row's versions, Events and field managers by resourceVersion.
    Timeline,
    /// `:record` starts recording the kind on screen to a new file under the state
    /// directory, or stops the recording under way; `:record FILE` starts one to FILE.
    Record(Option<String>),
    /// `:record stop`: finish the recording under way.
    RecordStop,
    /// `:nsset …`: the cluster group's named sets of namespaces.
    NamespaceSet(SetCommand),
    Quit,
}

/// What `:nsset` asks of the cluster group's namespace sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetCommand {
    /// `:nsset`: say the saved sets.
    List,
    /// `:nsset NAME`: show the table in the saved set.
    Show(String),
    /// `:nsset NAME a,b,c`: save the set (replacing one of that name) and show it.
    Save {
        name: String,
        namespaces: Vec<String>,
    },
    /// `:nsset -d NAME`: forget the set.
    Delete(String),
}

/// Why a command line cannot be run; the message is shown as is in the status line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error(
        "type a resource as for kubectl (pods, svc, deploy, cm, widgets.example.com...) with \
         -n NS or -A, or q"
    )]
    Empty,
    #[error("unknown command {0:?}: the server serves no such resource (Tab completes names)")]
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
    #[error("{0} cannot be listed and watched (its verbs lack list or watch)")]
    NotListable(String),
    #[error("fifo takes a FIFO (classic, real or atomic), or two to compare side by side")]
    FifoArguments,
    #[error("unknown FIFO {0:?}: classic, real or atomic")]
    UnknownFifo(String),
    #[error("both pipelines would be {0}: compare two different FIFOs")]
    SameFifo(FifoKind),
    #[error("seek takes one time (10:32:05, RFC 3339) or resourceVersion (rv=12345)")]
    SeekArgument,
    #[error(transparent)]
    Index(#[from] IndexCommandError),
    #[error("metrics takes --port PORT (a number or a container port's name), or nothing")]
    MetricsArguments,
    #[error("record takes a file to write, stop, or nothing")]
    RecordArguments,
    #[error(
        "nsset takes NAME to show a set, NAME a,b,c to save one, -d NAME to delete one, or nothing to list them"
    )]
    SetArguments,
    #[error("{0:?} is not a valid set name (lowercase letters, digits and '-', as a namespace)")]
    BadSetName(String),
}

/// The names a resource answers to in command mode: plural, short names, singular, and the
/// plural with its group (for resources outside the core group).
fn names(resource: &ApiResource) -> Vec<String> {
    let mut names = vec![resource.plural.clone()];
    names.extend(resource.short_names.iter().cloned());
    if let Some(kind) = resource.built_in() {
        names.extend(
            ALIASES
                .iter()
                .filter(|(_, k)| *k == kind)
                .map(|(a, _)| a.to_string()),
        );
    }
    if !resource.singular.is_empty() && resource.singular != resource.plural {
        names.push(resource.singular.clone());
    }
    if !resource.group.is_empty() {
        names.push(resource.group_resource());
    }
    let mut seen = Vec::with_capacity(names.len());
    names.retain(|n| {
        let new = !seen.contains(n);
        seen.push(n.clone());
        new
    });
    names
}

/// Every listable resource of `discovery` with its names, built-in kinds first, in the
/// order hints list them.
fn commands(discovery: &Discovery) -> Vec<(&ApiResource, Vec<String>)> {
    let mut listed: Vec<(&ApiResource, Vec<String>)> = discovery
        .preferred()
        .into_iter()
        .filter(|r| r.listable())
        .map(|r| (r.as_ref(), names(r)))
        .collect();
    let rank = |r: &ApiResource| {
        r.built_in()
            .and_then(|kind| PRIMARY.iter().position(|(k, _)| *k == kind))
            .unwrap_or(PRIMARY.len())
    };
    listed.sort_by_key(|(r, _)| rank(r));
    listed
}

/// The name hints offer for a resource: a built-in kind's usual one, else its first short
/// name or its plural that names it, else its plural with its group (`events.events.k8s.io`,
/// whose `events` and `ev` are the core group's).
fn primary(resource: &ApiResource, discovery: &Discovery) -> String {
    if let Some((_, name)) = PRIMARY
        .iter()
        .find(|(k, _)| Some(*k) == resource.built_in())
    {
        return (*name).to_string();
    }
    // The first of its short names and plural that resolves to it, not to another group's.
    resource
        .short_names
        .iter()
        .chain(std::iter::once(&resource.plural))
        .find(|name| {
            discovery
                .resolve_resource(name)
                .is_some_and(|r| r.as_ref() == resource)
        })
        .cloned()
        .unwrap_or_else(|| resource.group_resource())
}

/// One name per listable resource, in the order hints list them, then the categories, `ctx`,
/// `fifo`, `index`, the workbench views and `quit`.
fn primaries(discovery: &Discovery) -> Vec<String> {
    once_each(
        commands(discovery)
            .into_iter()
            .map(|(r, _)| primary(r, discovery))
            .chain(categories(discovery).into_iter().map(str::to_string))
            .chain(
                [
                    CONTEXT[0], NSSET, FIFO, INDEX, METRICS, TREE, HOT, TIMELINE, RECORD, QUIT[0],
                ]
                .map(str::to_string),
            ),
    )
}

/// `names` in their order, each once.
fn once_each(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut kept: Vec<String> = Vec::new();
    for name in names {
        if !kept.contains(&name) {
            kept.push(name);
        }
    }
    kept
}

/// Every command with its other names, `pods (po, pod)`, in the order hints list them (the
/// group-qualified names left out), then the categories (`all`), `ctx`, `fifo`, `index`,
/// `tree`, `hot`, `timeline`, `record` with its arguments (it is the one command whose
/// argument changes what it does) and `quit`.
pub fn listed(discovery: &Discovery) -> Vec<String> {
    commands(discovery)
        .into_iter()
        .map(|(r, names)| {
            let primary = primary(r, discovery);
            let others: Vec<String> = names
                .into_iter()
                .filter(|n| *n != primary && !n.contains('.'))
                .collect();
            match others.is_empty() {
                true => primary,
                false => format!("{primary} ({})", others.join(", ")),
            }
        })
        .chain(categories(discovery).into_iter().map(str::to_string))
        .chain([CONTEXT, FORWARDS].map(|names| format!("{} ({})", names[0], names[1..].join(", "))))
        .chain([format!("{NSSET} [NAME [a,b,c] | -d NAME]")])
        .chain([FIFO, INDEX, METRICS, TREE, HOT, TIMELINE].map(str::to_string))
        .chain([format!("{RECORD} [FILE | stop]")])
        .chain([QUIT].map(|names| format!("{} ({})", names[0], names[1..].join(", "))))
        .collect()
}

/// The kind `name` names: kscope's aliases, then kubectl's resolution.
fn resolve(name: &str, discovery: &Discovery) -> Option<Kind> {
    let lower = name.to_ascii_lowercase();
    if let Some((_, kind)) = ALIASES.iter().find(|(a, _)| *a == lower) {
        return Some(Kind::BuiltIn(*kind));
    }
    discovery
        .resolve(&lower)
        .ok()
        .or_else(|| lower.parse::<ResourceKind>().ok().map(Kind::BuiltIn))
}

/// Parses a command line (without the `:`): a resource named as for kubectl, among those
/// `discovery` found, or `q`.
pub fn parse(input: &str, discovery: &Discovery) -> Result<Command, CommandError> {
    let mut words = input.split_whitespace();
    let name = words.next().ok_or(CommandError::Empty)?;
    if QUIT.iter().any(|q| q.eq_ignore_ascii_case(name)) {
        return match words.next() {
            None => Ok(Command::Quit),
            Some(_) => Err(CommandError::NoArguments(name.to_string())),
        };
    }
    if CONTEXT.iter().any(|c| c.eq_ignore_ascii_case(name)) {
        let context = words.next().map(str::to_owned);
        return match words.next() {
            None => Ok(Command::Context(context)),
            Some(extra) => Err(CommandError::UnexpectedArgument(extra.to_string())),
        };
    }
    if FORWARDS.iter().any(|c| c.eq_ignore_ascii_case(name)) {
        return match words.next() {
            None => Ok(Command::Forwards),
            Some(_) => Err(CommandError::NoArguments(name.to_string())),
        };
    }
    if name.eq_ignore_ascii_case(FIFO) {
        return parse_fifo(words);
    }
    if name.eq_ignore_ascii_case(NSSET) {
        return parse_nsset(words).map(Command::NamespaceSet);
    }
    for (view, command) in [
        (TREE, Command::Tree),
        (HOT, Command::Hot),
        (TIMELINE, Command::Timeline),
    ] {
        if name.eq_ignore_ascii_case(view) {
            return match words.next() {
                None => Ok(command),
                Some(_) => Err(CommandError::NoArguments(name.to_string())),
            };
        }
    }
    if name.eq_ignore_ascii_case(SEEK) {
        let mut args = words.collect::<Vec<_>>();
        return match (args.pop(), args.is_empty()) {
            (Some(to), true) => Ok(Command::Seek(to.to_string())),
            _ => Err(CommandError::SeekArgument),
        };
    }
    if name.eq_ignore_ascii_case(METRICS) {
        return parse_metrics(words);
    }
    if name.eq_ignore_ascii_case(RECORD) {
        return match (words.next(), words.next()) {
            (None, _) => Ok(Command::Record(None)),
            (Some("stop"), None) => Ok(Command::RecordStop),
            (Some(file), None) => Ok(Command::Record(Some(file.to_string()))),
            (Some(_), Some(_)) => Err(CommandError::RecordArguments),
        };
    }
    if name.eq_ignore_ascii_case(INDEX) {
        let args = input.trim_start()[name.len()..].trim();
        return Ok(Command::Index(IndexDefinition::parse_command(args)?));
    }
    let Some(kind) = resolve(name, discovery) else {
        let Some(category) = Category::discovered(name, discovery) else {
            return Err(CommandError::Unknown(name.to_string()));
        };
        let namespaced = category.kinds.iter().any(Kind::namespaced);
        let scope = parse_scope(words, namespaced, name)?;
        return Ok(Command::ShowCategory { category, scope });
    };
    if let Kind::Api(resource) = &kind
        && !resource.listable()
    {
        return Err(CommandError::NotListable(kind.to_string()));
    }
    let scope = parse_scope(words, kind.namespaced(), &kind.to_string())?;
    Ok(Command::Show { kind, scope })
}

/// The scope flags after a resource or category: `-n NS`, `--namespace=NS`, `-A`; `None`
/// without any. `-n` on what is not `namespaced` (named `what`) is an error.
fn parse_scope<'a>(
    mut words: impl Iterator<Item = &'a str>,
    namespaced: bool,
    what: &str,
) -> Result<Option<NamespaceScope>, CommandError> {
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
        // One namespace, or a comma list as a set of them (`-n a,b`).
        let asked = NamespaceScope::parse_list(namespace)
            .map_err(|bad| CommandError::BadNamespace(bad.0))?;
        if !namespaced {
            return Err(CommandError::ClusterScoped(what.to_string()));
        }
        set(asked)?;
    }
    Ok(scope)
}

/// `:nsset`, `:nsset NAME`, `:nsset NAME a,b,c` or `:nsset -d NAME`; set names are
/// DNS-1123 labels, as namespaces' are, and each namespace listed is checked as `-n`'s.
fn parse_nsset<'a>(words: impl Iterator<Item = &'a str>) -> Result<SetCommand, CommandError> {
    let words: Vec<&str> = words.collect();
    let named = |name: &str| match is_namespace_name(name) {
        true => Ok(name.to_string()),
        false => Err(CommandError::BadSetName(name.to_string())),
    };
    match words[..] {
        [] => Ok(SetCommand::List),
        ["-d" | "--delete", name] => Ok(SetCommand::Delete(named(name)?)),
        [flag, ..] if flag.starts_with('-') => Err(CommandError::SetArguments),
        [name] => Ok(SetCommand::Show(named(name)?)),
        [name, list] => {
            let name = named(name)?;
            let scope = NamespaceScope::parse_list(list)
                .map_err(|bad| CommandError::BadNamespace(bad.0))?;
            let namespaces = match scope {
                NamespaceScope::One(ns) => vec![ns],
                other => other.members().map(<[String]>::to_vec).unwrap_or_default(),
            };
            Ok(SetCommand::Save { name, namespaces })
        }
        _ => Err(CommandError::SetArguments),
    }
}

/// `:metrics`, `:metrics --port P` or `:metrics --port=P`.
fn parse_metrics<'a>(mut words: impl Iterator<Item = &'a str>) -> Result<Command, CommandError> {
    let port = match words.next() {
        None => None,
        Some("--port") => Some(words.next().ok_or(CommandError::MetricsArguments)?),
        Some(word) => Some(
            word.strip_prefix("--port=")
                .filter(|p| !p.is_empty())
                .ok_or(CommandError::MetricsArguments)?,
        ),
    };
    match words.next() {
        None => Ok(Command::Metrics {
            port: port.map(str::to_string),
        }),
        Some(_) => Err(CommandError::MetricsArguments),
    }
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

/// The categories of the listable resources (`all`, `api-extensions`...), each once.
fn categories(discovery: &Discovery) -> Vec<&str> {
    let mut found: Vec<&str> = Vec::new();
    for r in discovery.preferred().into_iter().filter(|r| r.listable()) {
        for category in &r.categories {
            if !found.contains(&category.as_str()) {
                found.push(category);
            }
        }
    }
    found
}

/// Every name a command may start with, each with what it names.
fn all_names(discovery: &Discovery) -> Vec<(String, Target<'_>)> {
    commands(discovery)
        .into_iter()
        .flat_map(|(r, names)| names.into_iter().map(move |n| (n, Target::Resource(r))))
        .chain(
            categories(discovery)
                .into_iter()
                .map(|c| (c.to_string(), Target::Category(c))),
        )
        .chain(CONTEXT.iter().map(|c| (c.to_string(), Target::Context)))
        .chain([(NSSET.to_string(), Target::NamespaceSet)])
        .chain(FORWARDS.iter().map(|c| (c.to_string(), Target::Forwards)))
        .chain([(FIFO.to_string(), Target::Fifo)])
        .chain([(INDEX.to_string(), Target::Index)])
        .chain([TREE, HOT, TIMELINE].map(|v| (v.to_string(), Target::View)))
        .chain([(METRICS.to_string(), Target::Metrics)])
        .chain([(RECORD.to_string(), Target::Record)])
        .chain(QUIT.iter().map(|q| (q.to_string(), Target::Quit)))
        .collect()
}

/// What the status line offers while `input` is typed: the command names the first word
/// could become, then, once it is a command, what Enter would do or why it cannot.
pub fn hint(input: &str, discovery: &Discovery) -> String {
    let first = input.split_whitespace().next().unwrap_or("");
    let typing_name = !input.contains(char::is_whitespace) || first.is_empty();
    if typing_name {
        let lower = first.to_ascii_lowercase();
        let names = all_names(discovery);
        let mut matching: Vec<&str> = Vec::new();
        // Two groups' resources share names (`events`): each name is offered once.
        for name in names.iter().map(|(n, _)| n.as_str()) {
            if !first.is_empty() && name.starts_with(&lower) && !matching.contains(&name) {
                matching.push(name);
            }
        }
        if !matching.is_empty() && !matching.iter().any(|n| n.eq_ignore_ascii_case(first)) {
            return matching.join(" ");
        }
        if matching.is_empty() && !first.is_empty() && resolve(first, discovery).is_none() {
            return format!(
                "no command starts with {first:?}: {}",
                primaries(discovery).join(" ")
            );
        }
        if first.is_empty() {
            return format!("{} · [-n NAMESPACE | -A]", primaries(discovery).join(" "));
        }
    }
    match parse(input, discovery) {
        Ok(Command::Quit) => "Enter quits".into(),
        Ok(Command::Tree) => {
            "Enter shows the selected row's owners and what it owns, each with its health".into()
        }
        Ok(Command::Hot) => {
            "Enter lists the field managers and objects by write rate, hot loops flagged".into()
        }
        Ok(Command::Seek(to)) => format!("Enter moves the recording played to {to}"),
        Ok(Command::Record(None)) => {
            "Enter records the kind on screen to a new file, or stops recording · :record FILE"
                .into()
        }
        Ok(Command::Record(Some(file))) => format!("Enter records the kind on screen to {file}"),
        Ok(Command::RecordStop) => "Enter stops recording and finishes the file".into(),
        Ok(Command::NamespaceSet(SetCommand::List)) => {
            "Enter lists this cluster group's namespace sets · :nsset NAME a,b,c saves one".into()
        }
        Ok(Command::NamespaceSet(SetCommand::Show(name))) => {
            format!("Enter shows the table in the namespace set {name}")
        }
        Ok(Command::NamespaceSet(SetCommand::Save { name, namespaces })) => format!(
            "Enter saves {name} ({}) for this cluster group and shows the table in it",
            namespaces.join(", ")
        ),
        Ok(Command::NamespaceSet(SetCommand::Delete(name))) => {
            format!("Enter deletes the namespace set {name}")
        }
        Ok(Command::Forwards) => "Enter lists the port-forwards (F on a pod starts one)".into(),
        Ok(Command::Timeline) => {
            "Enter follows the selected row: its versions, Events and who changed each field".into()
        }
        Ok(Command::Context(None)) => "Enter lists the contexts · :ctx NAME switches".into(),
        Ok(Command::Context(Some(name))) if name.contains(',') => {
            format!("Enter shows contexts {name} in one table")
        }
        Ok(Command::Context(Some(name))) => format!("Enter switches to context {name}"),
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
        Ok(Command::Metrics { port }) => format!(
            "Enter shows the selected pod's or workload's own /metrics (port {}), beside kscope's informer",
            port.as_deref().unwrap_or("named metrics")
        ),
        Ok(Command::Index(index)) => {
            format!(
                "Enter adds index {} ({}) to the tables it applies to",
                index.name, index.source
            )
        }
        Ok(Command::Show { kind, scope }) => match (kind.namespaced(), scope) {
            (false, _) => format!("Enter shows {kind}"),
            (true, None) => format!("Enter shows {kind} in the current scope · -n NAMESPACE | -A"),
            (true, Some(NamespaceScope::All)) => format!("Enter shows {kind} in all namespaces"),
            (true, Some(NamespaceScope::One(ns))) => {
                format!("Enter shows {kind} in namespace {ns}")
            }
            (true, Some(NamespaceScope::Set(set))) => {
                format!("Enter shows {kind} in namespaces {set}")
            }
        },
        Ok(Command::ShowCategory { category, scope }) => {
            let kinds: Vec<String> = discovery
                .category(&category.name)
                .into_iter()
                .filter(|r| r.listable())
                .map(|r| primary(r, discovery))
                .collect();
            let scope = match scope {
                None => "the current scope".to_string(),
                Some(NamespaceScope::All) => "all namespaces".to_string(),
                Some(NamespaceScope::One(ns)) => format!("namespace {ns}"),
                Some(NamespaceScope::Set(set)) => format!("namespaces {set}"),
            };
            format!(
                "Enter shows {} ({}) in one table, in {scope}",
                category.name,
                kinds.join(" ")
            )
        }
        Err(err) => err.to_string(),
    }
}

/// Completes the command name being typed when exactly one command starts with it.
pub fn complete(input: &str, discovery: &Discovery) -> Option<String> {
    if input.contains(char::is_whitespace) || input.is_empty() {
        return None;
    }
    let lower = input.to_ascii_lowercase();
    let names = all_names(discovery);
    let mut matching = names.iter().filter(|(n, _)| n.starts_with(&lower));
    let (first, target) = matching.next()?;
    // The names of one command complete to its first (a resource's plural).
    matching
        .all(|(_, t)| t == target)
        .then(|| format!("{first} "))
}

/// `ctx ks` completed to the one context name starting so (`ctx kscope-demo`), or to what
/// the names starting so share; `None` when nothing would change.
fn complete_context(input: &str, contexts: &[String]) -> Option<String> {
    complete_argument(input, CONTEXT, contexts)
}

/// `nsset te` completed to the one saved set's name starting so, as [`complete_context`].
fn complete_set(input: &str, sets: &[String]) -> Option<String> {
    complete_argument(input, &[NSSET], sets)
}

/// The first argument of one of the `commands` completed from `names`: to the one name
/// starting as typed, or to what the names starting so share.
fn complete_argument(input: &str, commands: &[&str], names: &[String]) -> Option<String> {
    let mut words = input.split_whitespace();
    let command = words.next()?;
    if !commands.iter().any(|c| c.eq_ignore_ascii_case(command)) {
        return None;
    }
    let typed = words.next().unwrap_or("");
    if words.next().is_some() {
        return None;
    }
    let matching: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|c| c.starts_with(typed))
        .collect();
    let (first, rest) = matching.split_first()?;
    let completed = match rest {
        [] => format!("{first} "),
        _ => {
            // The longest start every match shares.
            let shared = rest.iter().fold(first.len(), |len, name| {
                let common = first
                    .char_indices()
                    .zip(name.chars())
                    .take_while(|((_, a), b)| a == b)
                    .last()
                    .map_or(0, |((i, a), _)| i + a.len_utf8());
                common.min(len)
            });
            first[..shared].to_string()
        }
    };
    let line = format!("{command} {completed}");
    (line != input).then_some(line)
}

/// The command bar: what is typed after `:`, and the last command's error.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandBar {
    pub input: String,
    pub edit: LineEdit,
    /// Why the last command (or drill-down) did nothing; shown until the next key.
    pub error: Option<String>,
    /// The resources commands name, as last discovered.
    pub discovery: Arc<Discovery>,
    /// The kubeconfig's context names, read when the bar opens: what `:ctx NAME` completes.
    pub contexts: Vec<String>,
    /// The cluster group's namespace sets, read when the bar opens: what `:nsset NAME`
    /// completes.
    pub namespace_sets: Vec<String>,
}

impl CommandBar {
    /// A key typed into the command line: Enter runs it, Esc or a backspace on nothing
    /// closes it.
    pub fn handle_key(&mut self, action: &Action) -> Option<Effect> {
        match action {
            Action::CommandBackspace if self.input.is_empty() => return Some(Effect::Close),
            Action::CommandComplete => {
                let completed = complete(&self.input, &self.discovery)
                    .or_else(|| complete_context(&self.input, &self.contexts))
                    .or_else(|| complete_set(&self.input, &self.namespace_sets));
                if let Some(completed) = completed {
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
                if self.edit.apply(&mut self.input, action).is_none() {
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
    fn fifo_takes_one_fifo_or_two_different_ones() {
        let d = Discovery::built_ins();
        assert_eq!(
            parse("fifo real", &d),
            Ok(Command::Fifo {
                fifo: FifoKind::Real,
                compare: None
            })
        );
        assert_eq!(
            parse("fifo classic atomic", &d),
            Ok(Command::Fifo {
                fifo: FifoKind::Classic,
                compare: Some(FifoKind::Atomic)
            })
        );
        assert_eq!(parse("fifo", &d), Err(CommandError::FifoArguments));
        assert_eq!(
            parse("fifo real real", &d),
            Err(CommandError::SameFifo(FifoKind::Real))
        );
        assert_eq!(
            parse("fifo fast", &d),
            Err(CommandError::UnknownFifo("fast".into()))
        );
        assert_eq!(
            parse("fifo classic real atomic", &d),
            Err(CommandError::FifoArguments)
        );
        assert!(hint("fifo classic real", &d).contains("side by side"));
    }

    #[test]
    fn the_command_line_types_completes_runs_and_closes() {
        let mut bar = CommandBar::default();
        for c in "dep".chars() {
            assert_eq!(bar.handle_key(&Action::CommandChar(c)), None);
        }
        assert_eq!(bar.handle_key(&Action::CommandComplete), None);
        assert_eq!(bar.input, "deployments ");
        assert_eq!(
            bar.handle_key(&Action::CommandRun),
            Some(Effect::Run("deployments ".into()))
        );
        assert_eq!(bar.input, "");
        assert_eq!(
            bar.handle_key(&Action::CommandBackspace),
            Some(Effect::Close)
        );
        bar.handle_key(&Action::CommandChar('x'));
        assert_eq!(bar.handle_key(&Action::CommandCancel), Some(Effect::Close));
        assert_eq!(bar.input, "");
        assert_eq!(bar.handle_key(&Action::SortNext), Some(Effect::Pass));
    }

    fn resource(
        group: &str,
        plural: &str,
        kind: &str,
        short: &[&str],
        namespaced: bool,
    ) -> std::sync::Arc<ApiResource> {
        std::sync::Arc::new(ApiResource::new(
            group,
            "v1",
            plural,
            kind.to_lowercase(),
            kind,
            namespaced,
            short.iter().map(|s| s.to_string()).collect(),
            Vec::new(),
            vec!["list".into(), "watch".into()],
        ))
    }

    #[test]
    fn categories_complete_and_say_which_kinds_they_hold() {
        let in_all = |group: &str, plural: &str, kind: &str, short: &[&str]| {
            let r = resource(group, plural, kind, short, true);
            std::sync::Arc::new(ApiResource::new(
                r.group.clone(),
                "v1",
                r.plural.clone(),
                r.singular.clone(),
                r.kind.clone(),
                true,
                r.short_names.clone(),
                vec!["all".into()],
                r.verbs.clone(),
            ))
        };
        let d = Discovery::from_resources(vec![
            in_all("", "pods", "Pod", &["po"]),
            in_all("", "services", "Service", &["svc"]),
            resource("", "configmaps", "ConfigMap", &["cm"], true),
            in_all("example.com", "widgets", "Widget", &["wd"]),
        ]);
        assert_eq!(complete("al", &d), Some("all ".into()));
        let Ok(Command::ShowCategory { category, scope }) = parse("all -n web", &d) else {
            panic!("a category parses");
        };
        let kinds: Vec<&str> = category.kinds.iter().map(Kind::plural).collect();
        assert_eq!(
            (category.name.as_str(), kinds, scope),
            (
                "all",
                vec!["pods", "services", "widgets"],
                Some(NamespaceScope::One("web".into()))
            )
        );
        assert_eq!(
            hint("all", &d),
            "Enter shows all (pods svc wd) in one table, in the current scope"
        );
        assert_eq!(
            parse("all -x", &d),
            Err(CommandError::UnknownFlag("-x".into()))
        );
        assert_eq!(parse("tree", &d), Ok(Command::Tree));
        assert_eq!(parse("HOT", &d), Ok(Command::Hot));
        assert_eq!(parse("timeline", &d), Ok(Command::Timeline));
        assert!(hint("timeline", &d).contains("who changed each field"));
        assert_eq!(
            parse("tree web", &d),
            Err(CommandError::NoArguments("tree".into()))
        );
        assert!(
            hint("", &d)
                .contains(" all ctx nsset fifo index metrics tree hot timeline record quit"),
            "{}",
            hint("", &d)
        );
        let listed = listed(&d);
        for command in [
            "all",
            "ctx (context, contexts)",
            "fifo",
            "index",
            "record [FILE | stop]",
            "quit (q, q!)",
        ] {
            assert_eq!(
                listed.iter().filter(|c| *c == command).count(),
                1,
                "{command}: {listed:?}"
            );
        }
        assert_eq!(
            parse("nothing", &d),
            Err(CommandError::Unknown("nothing".into()))
        );
    }

    #[test]
    fn ctx_completes_context_names() {
        let contexts: Vec<String> = ["kscope-demo", "kscope-other", "prod"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            complete_context("ctx p", &contexts),
            Some("ctx prod ".into())
        );
        assert_eq!(
            complete_context("ctx ks", &contexts),
            Some("ctx kscope-".into()),
            "what the two share"
        );
        assert_eq!(complete_context("ctx kscope-", &contexts), None);
        assert_eq!(complete_context("ctx x", &contexts), None);
        assert_eq!(complete_context("pods p", &contexts), None);
        let mut bar = CommandBar {
            contexts,
            ..CommandBar::default()
        };
        bar.input = "ctx kscope-d".into();
        bar.handle_key(&Action::CommandComplete);
        assert_eq!(bar.input, "ctx kscope-demo ");
        bar.namespace_sets = vec!["team-a".into(), "team-b".into(), "ops".into()];
        bar.input = "nsset o".into();
        bar.handle_key(&Action::CommandComplete);
        assert_eq!(bar.input, "nsset ops ");
        assert_eq!(
            complete_set("nsset t", &bar.namespace_sets),
            Some("nsset team-".into())
        );
        assert_eq!(complete_set("ctx t", &bar.namespace_sets), None);
    }

    #[test]
    fn discovered_resources_are_commands_hints_and_completions() {
        let d = Discovery::from_resources(vec![
            resource("", "pods", "Pod", &["po"], true),
            resource("", "services", "Service", &["svc"], true),
            resource("", "configmaps", "ConfigMap", &["cm"], true),
            resource(
                "apiextensions.k8s.io",
                "customresourcedefinitions",
                "CustomResourceDefinition",
                &["crd", "crds"],
                false,
            ),
            resource("example.com", "widgets", "Widget", &[], true),
            resource("", "events", "Event", &["ev"], true),
            resource("events.k8s.io", "events", "Event", &["ev"], true),
        ]);
        let Ok(Command::Show { kind, scope }) = parse("svc -n web", &d) else {
            panic!("svc parses");
        };
        assert_eq!(
            (kind.plural(), scope),
            ("services", Some(NamespaceScope::One("web".into())))
        );
        for name in [
            "widgets",
            "widget",
            "widgets.example.com",
            "widgets.v1.example.com",
            "WIDGETS",
        ] {
            assert!(
                matches!(parse(name, &d), Ok(Command::Show { .. })),
                "{name}"
            );
        }
        assert_eq!(
            parse("crd -n x", &d),
            Err(CommandError::ClusterScoped(
                "customresourcedefinitions.apiextensions.k8s.io".into()
            ))
        );
        assert_eq!(
            parse("po", &d)
                .ok()
                .map(|c| matches!(c, Command::Show { kind, .. } if kind == ResourceKind::Pods)),
            Some(true)
        );
        assert_eq!(complete("wid", &d), Some("widgets ".into()));
        assert_eq!(complete("c", &d), None, "configmaps and crds");
        assert_eq!(
            complete("cu", &d),
            Some("customresourcedefinitions ".into())
        );
        assert_eq!(hint("wi", &d), "widgets widget widgets.example.com");
        assert_eq!(
            hint("eve", &d),
            "events event events.events.k8s.io",
            "each name once"
        );
        assert!(
            hint("", &d).starts_with(
                "pods svc cm crd widgets ev events.events.k8s.io ctx nsset fifo index metrics tree hot timeline record quit"
            ),
            "{}",
            hint("", &d)
        );
        assert_eq!(
            hint("widgets", &d),
            "Enter shows widgets.example.com in the current scope · -n NAMESPACE | -A"
        );
    }

    #[test]
    fn a_comma_list_is_a_set_and_nsset_saves_shows_lists_and_deletes() {
        let d = Discovery::built_ins();
        let Ok(Command::Show { scope, .. }) = parse("pods -n b,a", &d) else {
            panic!("a list parses");
        };
        let scope = scope.expect("a scope");
        assert_eq!(
            scope.members(),
            Some(&["a".to_string(), "b".to_string()][..])
        );
        assert_eq!(
            hint("pods -n b,a", &d),
            "Enter shows pods in namespaces a, b"
        );
        assert_eq!(
            parse("pods -n a,B_b", &d),
            Err(CommandError::BadNamespace("B_b".into()))
        );
        assert_eq!(
            parse("pods -n a,", &d),
            Err(CommandError::BadNamespace(String::new()))
        );
        assert_eq!(
            parse("nodes -n a,b", &d),
            Err(CommandError::ClusterScoped("nodes".into()))
        );
        let nsset = |line: &str| parse(line, &d);
        assert_eq!(nsset("nsset"), Ok(Command::NamespaceSet(SetCommand::List)));
        assert_eq!(
            nsset("nsset team-a"),
            Ok(Command::NamespaceSet(SetCommand::Show("team-a".into())))
        );
        assert_eq!(
            nsset("nsset team-a c,a"),
            Ok(Command::NamespaceSet(SetCommand::Save {
                name: "team-a".into(),
                namespaces: vec!["a".into(), "c".into()]
            }))
        );
        assert_eq!(
            nsset("nsset solo web"),
            Ok(Command::NamespaceSet(SetCommand::Save {
                name: "solo".into(),
                namespaces: vec!["web".into()]
            }))
        );
        assert_eq!(
            nsset("nsset -d team-a"),
            Ok(Command::NamespaceSet(SetCommand::Delete("team-a".into())))
        );
        assert_eq!(
            nsset("nsset Team"),
            Err(CommandError::BadSetName("Team".into()))
        );
        assert_eq!(
            nsset("nsset team a,Bad"),
            Err(CommandError::BadNamespace("Bad".into()))
        );
        for bad in ["nsset -d", "nsset -x team", "nsset a b c", "nsset -d a b"] {
            assert_eq!(nsset(bad), Err(CommandError::SetArguments), "{bad}");
        }
        assert!(hint("nsset team-a c,a", &d).contains("saves team-a (a, c)"));
        assert!(listed(&d).contains(&"nsset [NAME [a,b,c] | -d NAME]".to_string()));
    }

    #[test]
    fn record_takes_a_file_stop_or_nothing() {
        let d = Discovery::from_resources(Vec::new());
        assert_eq!(parse("record", &d), Ok(Command::Record(None)));
        assert_eq!(parse("record stop", &d), Ok(Command::RecordStop));
        assert_eq!(
            parse("record /tmp/a.kscope", &d),
            Ok(Command::Record(Some("/tmp/a.kscope".into())))
        );
        assert_eq!(parse("record a b", &d), Err(CommandError::RecordArguments));
    }

    #[test]
    fn metrics_takes_a_port_or_nothing() {
        let d = Discovery::from_resources(Vec::new());
        assert_eq!(parse("metrics", &d), Ok(Command::Metrics { port: None }));
        let port = Some("http-metrics".to_string());
        assert_eq!(
            parse("metrics --port http-metrics", &d),
            Ok(Command::Metrics { port: port.clone() })
        );
        assert_eq!(
            parse("metrics --port=http-metrics", &d),
            Ok(Command::Metrics { port })
        );
        for bad in [
            "metrics --port",
            "metrics 8080",
            "metrics --port 1 2",
            "metrics --port=",
        ] {
            assert_eq!(parse(bad, &d), Err(CommandError::MetricsArguments), "{bad}");
        }
        assert!(hint("metrics --port 9090", &d).contains("port 9090"));
    }
}
