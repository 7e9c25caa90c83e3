//! `kscope get`: sync an informer, optionally keep watching, print the store (through an
//! index when asked).

use std::collections::HashSet;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use kscope_client::cluster::NamespaceScope;
use kscope_client::fetch::{FetchError, ListRequest, fetch_all, fetch_object};
use kscope_index_views::columns::TableRow;
use kscope_index_views::definitions::{indexes_for, namespaces_term};
use kscope_index_views::query::{FuzzyFilter, Query, Term};
use kscope_informers::keys::Key;
use kscope_resources::secret::{is_secret, mask_secret};
use kscope_resources::{
    Deployment, GenericObject, Kind, Namespace, Node, Pod, ReplicaSet, ResourceKind, Secret,
};
use kscope_units::duration::parse_duration;

use super::custom_columns::{GetOutput, print_selected};
use super::output::{OutputFormat, TableShape, list_of, print_table, write_object};
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
/// Several clusters (`--context` repeated, `--contexts GLOB`, `--all-contexts`): one table
/// with a CLUSTER column first, sorted by cluster, then as for one; `cluster=NAME` in
/// --filter or --index picks clusters; `-o json|yaml` is one List whose items carry the
/// annotation `kscope.dev/cluster`. Exit code 4 when any cluster is not current
/// (unreachable, forbidden, the kind not served, not synced within --sync-timeout, stale
/// after --watch-for), each named on stderr; nothing is printed unless --allow-stale, which
/// prints the current clusters' rows (exit code still 4).
///
/// A server that is evidently not the one the store came from (504 "Too large resource
/// version", resourceVersions going back, another serving certificate) is relisted from
/// scratch rather than merged with the store.
///
/// `-o json` and `-o yaml` print the whole objects, read from the server (the store keeps
/// less), as kubectl prints them: a List, or the object itself for one NAME.
///
/// Secrets: kscope never prints a value. `-o json|yaml` print each `data`/`stringData`
/// value (and the last-applied annotation) as a mask with its size, said on stderr; the mask
/// is not base64, so applying the output back is refused by the API server instead of
/// blanking the Secret.
#[derive(Debug, Clone, clap::Args)]
pub struct GetArgs {
    #[command(flatten)]
    pub informer: InformerArgs,
    /// Only the objects of these names, in this order (in the namespace of -n or the
    /// context's).
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
    /// Filter through a store index, NAME=VALUE (built-in indexes: namespace, node, phase,
    /// owner, app; more from the configuration). Repeat, or separate with commas, to
    /// intersect.
    #[arg(long = "index", value_name = "NAME=VALUE")]
    pub index: Vec<String>,
    /// Output format: table, wide, name, json, yaml, custom-columns=HEADER:JSONPATH,... or
    /// custom-columns-file=FILE (read from the server's whole objects, as kubectl).
    #[arg(short = 'o', long, default_value = "table", value_parser = GetOutput::parse)]
    pub output: GetOutput,
    /// Keep `metadata.managedFields` in `-o json|yaml` (left out by default, as kubectl
    /// leaves them out).
    #[arg(long)]
    pub show_managed_fields: bool,
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
pub(super) fn query(args: &GetArgs) -> Result<Query, CommandError> {
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
    if !args.names.is_empty() && args.informer.cluster.all_namespaces {
        return Err(CommandError::Usage(
            "a resource cannot be retrieved by name across all namespaces".into(),
        ));
    }
    if !args.names.is_empty() && args.informer.cluster.refuse_namespace_set().is_err() {
        return Err(CommandError::Usage(
            "a resource cannot be retrieved by name across several namespaces (-n a,b)".into(),
        ));
    }
    let kinds = args.informer.resolve_all().await?;
    if !args.names.is_empty() && kinds.several {
        return Err(CommandError::Usage(
            "NAME arguments need exactly one resource type (not a list or a category)".into(),
        ));
    }
    let mut parts: Vec<(&Resolved, Part)> = Vec::with_capacity(kinds.resolved.len());
    let mut failed = 0;
    for resolved in &kinds.resolved {
        match part(args, &query, resolved, kinds.several).await {
            Ok(part) => parts.push((resolved, part)),
            // Of several kinds, one that cannot be read is said and the others printed.
            Err(err) if kinds.several => {
                eprintln!("error: {}: {err}", resolved.kind);
                failed += 1;
            }
            Err(err) => return Err(err),
        }
    }
    if args.output.format.prints_objects() {
        let mut objects: Vec<Value> = parts
            .iter_mut()
            .flat_map(|(_, p)| std::mem::take(&mut p.objects))
            .collect();
        let missing = parts.iter().any(|(_, p)| !p.missing.is_empty());
        // kubectl prints one named object as itself, anything else as a List.
        let printed = match (args.names.len(), objects.len()) {
            (1, 1) => objects.pop(),
            (_, 0) if missing => None,
            _ => Some(list_of(objects)),
        };
        if let Some(value) = printed {
            write_object(out, &value, args.output.format)?;
        }
    } else {
        // Tables one after another with a blank line between, as `kubectl get all`.
        let separator: &[u8] = match args.output.format {
            OutputFormat::Name => b"",
            _ => b"\n",
        };
        let mut first = true;
        for (_, part) in parts.iter().filter(|(_, p)| !p.text.is_empty()) {
            if !first {
                out.write_all(separator)?;
            }
            out.write_all(&part.text)?;
            first = false;
        }
        let missing = parts.iter().any(|(_, p)| !p.missing.is_empty());
        let headed = args.output.columns.is_some();
        if first && !missing && failed == 0 && !headed && args.output.format != OutputFormat::Name {
            let scope = kinds
                .resolved
                .first()
                .map(|r| args.informer.cluster.scope(&r.cluster));
            let namespaced = kinds.resolved.iter().any(|r| r.kind.namespaced());
            match scope {
                Some(NamespaceScope::One(ns)) if namespaced => {
                    eprintln!("No resources found in {ns} namespace.")
                }
                Some(NamespaceScope::Set(set)) if namespaced => {
                    eprintln!("No resources found in namespaces {set}.")
                }
                _ => eprintln!("No resources found"),
            }
        }
    }
    for (resolved, part) in &parts {
        not_found(&resolved.kind, &part.missing)?;
    }
    if failed > 0 {
        return Err(CommandError::SomeKindsFailed { failed });
    }
    match parts.into_iter().find_map(|(_, p)| p.stale) {
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

/// One kind's share of the output.
#[derive(Default)]
pub(super) struct Part {
    /// Its table or `-o name` lines; nothing when no object matched.
    text: Vec<u8>,
    /// Its whole objects, for `-o json|yaml`.
    pub(super) objects: Vec<Value>,
    /// Names asked for that are not there.
    missing: Vec<String>,
    /// Why the store was not current after --watch-for, when --allow-stale printed it.
    stale: Option<CommandError>,
}

/// Reads one kind: whole objects straight from the server when the store has nothing to
/// select, else through an informer's store. `several` names rows `kind.group/name`.
async fn part(
    args: &GetArgs,
    query: &Query,
    r: &Resolved,
    several: bool,
) -> Result<Part, CommandError> {
    if args.output.format.prints_objects() && query.is_empty() && args.watch_for.is_none() {
        return full_objects(args, r, None).await;
    }
    match r.kind.built_in() {
        Some(ResourceKind::Pods) => get::<Pod>(args, query, r, several).await,
        Some(ResourceKind::Nodes) => get::<Node>(args, query, r, several).await,
        Some(ResourceKind::Namespaces) => get::<Namespace>(args, query, r, several).await,
        Some(ResourceKind::Deployments) => get::<Deployment>(args, query, r, several).await,
        Some(ResourceKind::ReplicaSets) => get::<ReplicaSet>(args, query, r, several).await,
        Some(ResourceKind::Secrets) => get::<Secret>(args, query, r, several).await,
        None => get::<GenericObject>(args, query, r, several).await,
    }
}

async fn get<T: TableRow>(
    args: &GetArgs,
    query: &Query,
    resolved: &Resolved,
    several: bool,
) -> Result<Part, CommandError> {
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
    // A watch-list that fell back is said, so that a server which accepts watch-lists and
    // never delivers them (each `get` waiting out the bound) is seen, not just slow.
    let fell_back = informer
        .status()
        .borrow()
        .initial_list
        .as_ref()
        .and_then(|initial| initial.fallback_reason.clone());
    if let Some(reason) = fell_back {
        eprintln!("kscope: {resource}: read by a list instead of a watch-list: {reason}");
    }
    let undecodable = informer.status().borrow().undecodable_in_last_list;
    if undecodable > 0 {
        eprintln!(
            "kscope: warning: {undecodable} list item(s) of {resource} did not decode and are \
             missing from this output (see the log)"
        );
    }
    let indexer = informer.indexer();
    let query = &within_scope(query, &scope, resolved)?;
    let mut keys = select_keys(query, indexer)?;
    let mut missing = Vec::new();
    if !args.names.is_empty() {
        let selected: HashSet<Key> = keys.into_iter().collect();
        keys = Vec::new();
        for name in &args.names {
            let key: Key = match scope.namespace().filter(|_| kind.namespaced()) {
                Some(ns) => format!("{ns}/{name}").into(),
                None => name.as_str().into(),
            };
            match selected.contains(&key) {
                true => keys.push(key),
                false => missing.push(name.clone()),
            }
        }
    }
    let objects: Vec<Arc<T>> = keys.iter().filter_map(|k| indexer.get_by_key(k)).collect();
    informer.shutdown().await;

    if args.output.format.prints_objects() {
        // Only a query has the store select; else the server's list is the answer.
        let selected = (!query.is_empty()).then(|| keys.into_iter().collect());
        let mut part = full_objects(args, resolved, selected).await?;
        part.stale = stale;
        return Ok(part);
    }
    let mut text = Vec::new();
    // Custom columns print their header even over nothing, as kubectl's printer does.
    if let Some(columns) = &args.output.columns {
        let i = &args.informer;
        let selectors = (i.selector.as_deref(), i.field_selector.as_deref());
        let client = &resolved.cluster.client;
        print_selected(&mut text, columns, client, (kind, &scope), selectors, &keys).await?;
    } else if !objects.is_empty() {
        let with_namespace = kind.namespaced() && !matches!(scope, NamespaceScope::One(_));
        let shape = TableShape {
            with_namespace,
            with_kind: several,
        };
        print_table(&mut text, &objects, kind, args.output.format, shape)?;
    }
    Ok(Part {
        text,
        objects: Vec::new(),
        missing,
        stale,
    })
}

/// `query` kept to a set of namespaces' objects (`-n a,b`: the informer lists every
/// namespace), through the namespace index; as it is for one namespace or all, or a
/// cluster-scoped kind.
pub(super) fn within_scope(
    query: &Query,
    scope: &NamespaceScope,
    resolved: &Resolved,
) -> Result<Query, CommandError> {
    let Some(members) = scope.members().filter(|_| resolved.kind.namespaced()) else {
        return Ok(query.clone());
    };
    let indexes = indexes_for(
        &resolved.kind,
        &resolved.config.indexes,
        &resolved.discovery,
    );
    let term = namespaces_term(members, &indexes).ok_or_else(|| {
        CommandError::Usage(
            "-n a,b reads the namespace index: add one reading the namespace field to the \
             configuration's indexes"
                .into(),
        )
    })?;
    let mut scoped = query.clone();
    scoped.terms.insert(0, term);
    Ok(scoped)
}

/// The keys of the store that `query` selects, in key order (`namespace/name`), as
/// `kubectl get` prints them.
pub(super) fn select_keys<T: kscope_informers::object::Object>(
    query: &Query,
    indexer: &kscope_informers::indexer::Indexer<T>,
) -> Result<Vec<Key>, CommandError> {
    let selected = query.select(indexer)?;
    let mut keys: Vec<Key> = FuzzyFilter::default()
        .filter(&query.text, selected)
        .into_iter()
        .map(|(key, _)| key)
        .collect();
    keys.sort();
    Ok(keys)
}

/// Says each missing name as kubectl does; an error if there was any.
fn not_found(kind: &Kind, missing: &[String]) -> Result<(), CommandError> {
    if missing.is_empty() {
        return Ok(());
    }
    let resource = match kind.group() {
        "" => kind.plural().to_string(),
        group => format!("{}.{group}", kind.plural()),
    };
    for name in missing {
        eprintln!("Error from server (NotFound): {resource} {name:?} not found");
    }
    Err(CommandError::NotFound {
        missing: missing.len(),
    })
}

/// The whole objects, read from the server: those named on the command line (one GET
/// each), else a list with the command's selectors, of which only the `selected` keys when
/// the store selected them. Secrets are masked (and said so), managed fields left out
/// unless asked for.
pub(super) async fn full_objects(
    args: &GetArgs,
    resolved: &Resolved,
    selected: Option<HashSet<Key>>,
) -> Result<Part, CommandError> {
    let kind = &resolved.kind;
    let client = &resolved.cluster.client;
    let scope = args.informer.cluster.scope(&resolved.cluster);
    let namespace = scope.namespace().filter(|_| kind.namespaced());
    let mut missing = Vec::new();
    let mut objects = Vec::new();
    if args.names.is_empty() {
        let request = ListRequest {
            kind,
            namespace,
            label_selector: args.informer.selector.as_deref(),
            field_selector: args.informer.field_selector.as_deref(),
        };
        objects = fetch_all(client, &request).await?;
        if let Some(selected) = &selected {
            objects.retain(|o| selected.contains(&key_of(o)));
        }
    } else {
        for name in &args.names {
            if selected.as_ref().is_some_and(|s| {
                let key: Key = match namespace {
                    Some(ns) => format!("{ns}/{name}").into(),
                    None => name.as_str().into(),
                };
                !s.contains(&key)
            }) {
                missing.push(name.clone());
                continue;
            }
            match fetch_object(client, kind.clone(), namespace, name).await {
                Ok(object) => objects.push(object),
                Err(FetchError::NotFound { .. }) => missing.push(name.clone()),
                Err(other) => return Err(other.into()),
            }
        }
    }
    if !args.show_managed_fields {
        for object in &mut objects {
            if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("managedFields");
            }
        }
    }
    let masked: usize = objects
        .iter_mut()
        .filter(|o| is_secret(o))
        .map(|o| usize::from(mask_secret(o) > 0))
        .sum();
    if masked > 0 {
        eprintln!(
            "kscope: the values of {masked} Secret(s) are masked: kscope never prints a \
             Secret's values"
        );
    }
    Ok(Part {
        objects,
        missing,
        ..Part::default()
    })
}

/// The store's key of a listed object: `namespace/name`, or `name`.
fn key_of(object: &Value) -> Key {
    let meta = |field: &str| {
        object
            .pointer(&format!("/metadata/{field}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    match meta("namespace") {
        "" => meta("name").into(),
        ns => format!("{ns}/{}", meta("name")).into(),
    }
}

/// After --watch-for, how long the store may take to apply what the Reflector has queued.
pub(super) const STORE_DRAIN: Duration = Duration::from_secs(5);

#[cfg(test)]
mod tests {
    use super::*;

    fn args(index: &[&str], filter: Option<&str>) -> GetArgs {
        GetArgs {
            informer: InformerArgs {
                resource: "pods".into(),
                cluster: kscope_client::cluster::ClusterArgs::default(),
                selector: None,
                field_selector: None,
                config: None,
                fifo: None,
                initial_list: None,
            },
            names: Vec::new(),
            index: index.iter().map(|s| s.to_string()).collect(),
            filter: filter.map(str::to_string),
            output: GetOutput::parse("table").unwrap(),
            show_managed_fields: false,
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
