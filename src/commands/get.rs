//! `kscope get`: sync an informer, optionally keep watching, print the store (through an
//! index when asked).

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use crate::client::cluster::NamespaceScope;
use crate::duration::parse_duration;
use crate::index_views::columns::TableRow;
use crate::index_views::query::{FuzzyFilter, Query, Term};
use crate::informers::keys::Key;
use crate::resources::{
    Deployment, GenericObject, Namespace, Node, Pod, ReplicaSet, ResourceKind, Secret,
};

use super::custom_columns::{GetOutput, print_selected};
use super::output::{OutputFormat, ToJson, print_objects};
use super::{
    CommandError, InformerArgs, Resolved, check_current, start_informer, wait_for_sync_reporting,
};

/// Print objects from an informer's store, like `kubectl get`.
///
/// Exit codes: 0 printed a current store; 1 an error (bad flags, refused, unreachable); 3
/// the store did not sync within --sync-timeout; 4 after --watch-for the informer was not
/// current (relisting, backing off after failures, or behind), so nothing was printed
/// (with --allow-stale it is printed, and the exit code is still 4).
///
/// A server that is evidently not the one the store came from (504 "Too large resource
/// version", resourceVersions going back, another serving certificate) is relisted from
/// scratch rather than merged with the store.
///
/// Secrets: kscope keeps their key names, never a value; `-o json` prints each value as a
/// marker that is not base64, so applying the output back is refused by the API server
/// instead of blanking the Secret.
#[derive(Debug, Clone, clap::Args)]
pub struct GetArgs {
    #[command(flatten)]
    pub informer: InformerArgs,
    /// Filter through a store index, NAME=VALUE (built-in indexes: namespace, node, phase,
    /// owner, app; more from the configuration). Repeat, or separate with commas, to
    /// intersect.
    #[arg(long = "index", value_name = "NAME=VALUE")]
    pub index: Vec<String>,
    /// Output format: table, wide, name, json, custom-columns=HEADER:JSONPATH,... or
    /// custom-columns-file=FILE (read from the server's whole objects, as kubectl).
    #[arg(short = 'o', long, default_value = "table", value_parser = GetOutput::parse)]
    pub output: GetOutput,
    /// Filter with the query language: `app=web,node=n1`, `app in (a,b)`, `app!=web`,
    /// `!app`, and free text fuzzy-matched on namespace/name.
    #[arg(long, value_name = "QUERY")]
    pub filter: Option<String>,
    /// After syncing, keep watching this long (e.g. 30s) before printing.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub watch_for: Option<Duration>,
    /// How long to wait for the first list before giving up (exit code 3).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION", default_value = "60s")]
    pub sync_timeout: Duration,
    /// Print the store even when, after --watch-for, the informer is not current (exit
    /// code 4 all the same).
    #[arg(long)]
    pub allow_stale: bool,
}

/// The query of `--filter` and `--index NAME=VALUE` terms together.
fn query(args: &GetArgs) -> Result<Query, CommandError> {
    let mut query = match &args.filter {
        Some(text) => Query::parse(text).map_err(|source| CommandError::Filter {
            text: text.clone(),
            source,
        })?,
        None => Query::default(),
    };
    // `--index app=web,node=n1` is two terms, as `-l` reads commas.
    for term in args.index.iter().flat_map(|flag| flag.split(',')) {
        match term.split_once('=') {
            Some((index, value)) if !index.is_empty() => query.terms.push(Term::Eq {
                index: index.to_string(),
                value: value.to_string(),
            }),
            _ => {
                return Err(CommandError::Usage(format!(
                    "--index {term:?}: expected NAME=VALUE, e.g. --index app=web"
                )));
            }
        }
    }
    Ok(query)
}

pub async fn run(args: &GetArgs, out: &mut impl Write) -> Result<(), CommandError> {
    let query = query(args)?;
    let r = &args.informer.resolve().await?;
    match r.kind.built_in() {
        Some(ResourceKind::Pods) => get::<Pod>(args, query, r, out).await,
        Some(ResourceKind::Nodes) => get::<Node>(args, query, r, out).await,
        Some(ResourceKind::Namespaces) => get::<Namespace>(args, query, r, out).await,
        Some(ResourceKind::Deployments) => get::<Deployment>(args, query, r, out).await,
        Some(ResourceKind::ReplicaSets) => get::<ReplicaSet>(args, query, r, out).await,
        Some(ResourceKind::Secrets) => get::<Secret>(args, query, r, out).await,
        None => get::<GenericObject>(args, query, r, out).await,
    }
}

async fn get<T: TableRow + ToJson>(
    args: &GetArgs,
    query: Query,
    resolved: &Resolved,
    out: &mut impl Write,
) -> Result<(), CommandError> {
    let kind = &resolved.kind;
    let (informer, scope) = start_informer::<T>(&args.informer, resolved, None).await?;
    let resource = &kind.to_string();
    wait_for_sync_reporting(&informer, resource, args.sync_timeout).await?;
    let mut stale = None;
    if let Some(duration) = args.watch_for {
        tokio::time::sleep(duration).await;
        if let Err(err) = check_current(&informer, resource, STORE_DRAIN).await {
            if !args.allow_stale {
                informer.shutdown().await;
                return Err(err);
            }
            stale = Some(err);
        }
    }
    let undecodable = informer.status().borrow().undecodable_in_last_list;
    if undecodable > 0 {
        eprintln!(
            "kscope: warning: {undecodable} list item(s) of {resource} did not decode and are \
             missing from this output (see the log)"
        );
    }
    let indexer = informer.indexer();
    let selected = query.select(indexer)?;
    let mut keys: Vec<Key> = FuzzyFilter::default()
        .filter(&query.text, selected)
        .into_iter()
        .map(|(key, _)| key)
        .collect();
    keys.sort();
    let objects: Vec<Arc<T>> = keys.iter().filter_map(|k| indexer.get_by_key(k)).collect();
    informer.shutdown().await;

    // Custom columns print their header even over nothing, as kubectl's printer does.
    if let Some(columns) = &args.output.columns {
        let i = &args.informer;
        let selectors = (i.selector.as_deref(), i.field_selector.as_deref());
        let client = &resolved.cluster.client;
        print_selected(out, columns, client, (kind, &scope), selectors, &keys).await?;
    } else if objects.is_empty()
        && matches!(args.output.format, OutputFormat::Table | OutputFormat::Wide)
    {
        match (&scope, kind.namespaced()) {
            (NamespaceScope::One(ns), true) => eprintln!("No resources found in {ns} namespace."),
            _ => eprintln!("No resources found"),
        }
    } else {
        let with_namespace = kind.namespaced() && scope == NamespaceScope::All;
        print_objects(out, &objects, kind, args.output.format, with_namespace)?;
    }
    match stale {
        Some(CommandError::NotCurrent {
            resource,
            state,
            last_error,
            ..
        }) => Err(CommandError::NotCurrent {
            resource,
            state,
            last_error,
            printed: true,
        }),
        Some(other) => Err(other),
        None => Ok(()),
    }
}

/// After --watch-for, how long the store may take to apply what the Reflector has queued.
const STORE_DRAIN: Duration = Duration::from_secs(5);

#[cfg(test)]
mod tests {
    use super::*;

    fn args(index: &[&str], filter: Option<&str>) -> GetArgs {
        GetArgs {
            informer: InformerArgs {
                resource: "pods".into(),
                cluster: crate::client::cluster::ClusterArgs::default(),
                selector: None,
                field_selector: None,
                config: None,
                fifo: None,
                initial_list: None,
            },
            index: index.iter().map(|s| s.to_string()).collect(),
            filter: filter.map(str::to_string),
            output: GetOutput::parse("table").unwrap(),
            watch_for: None,
            sync_timeout: Duration::from_secs(60),
            allow_stale: false,
        }
    }

    #[test]
    fn index_flags_and_filter_make_one_query() {
        let q = query(&args(&["app=web", "node="], Some("phase!=Running api"))).unwrap();
        assert_eq!(q.terms.len(), 3);
        assert_eq!(q.text, "api");
        let err = query(&args(&["app"], None)).unwrap_err().to_string();
        assert!(err.contains("NAME=VALUE"), "{err}");
        let q = query(&args(&["app=a,node=n1"], None)).unwrap();
        assert_eq!(q.to_string(), "app=a,node=n1", "a comma separates terms");
        let err = query(&args(&["app=a,n1"], None)).unwrap_err().to_string();
        assert!(err.contains("\"n1\""), "{err}");
        let err = query(&args(&[], Some("app in a"))).unwrap_err().to_string();
        assert!(err.contains("column 8"), "{err}");
    }
}
