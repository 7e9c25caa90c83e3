//! `kscope get` across several clusters (`--context a --context b`, `--contexts GLOB`,
//! `--all-contexts`): one informer per cluster, all started at once, each waited for within
//! its own bound; one table with a CLUSTER column first, or one List whose items name their
//! cluster; every cluster that is not current named on stderr.

use std::io::Write;
use std::sync::Arc;

use serde_json::Value;

use kscope_client::discovery::Discovery;
use kscope_client::fetch::FetchError;
use kscope_client::fleet::{Reading, Trouble, dedupe, read_each};
use kscope_config::Config;
use kscope_index_views::columns::TableRow;
use kscope_index_views::query::{ClusterFilter, Query};
use kscope_resources::{
    Deployment, GenericObject, Kind, Namespace, Node, Pod, ReplicaSet, ResourceKind, Secret,
};

use super::get::{GetArgs, STORE_DRAIN, full_objects, query, select_keys, within_scope};
use super::output::{OutputFormat, TableShape, list_of, table_cells, write_object, write_table};
use super::{CommandError, Resolved, check_current, start_informer, wait_for_sync_reporting};

/// Where each item of a fleet's `-o json|yaml` List names its cluster (the kubeconfig
/// context it was read through): an annotation, as multi-cluster aggregators such as
/// Karmada's proxy and Clusterpedia mark the objects they merge, so that the List stays one
/// kubectl, jq and client libraries read as any other.
pub const CLUSTER_ANNOTATION: &str = "kscope.dev/cluster";

/// One cluster's share of the output.
#[derive(Default)]
struct ClusterPart {
    headers: Option<Vec<String>>,
    rows: Vec<Vec<String>>,
    objects: Vec<Value>,
    /// Why its store was not current after --watch-for, when --allow-stale printed it.
    stale: Option<String>,
}

/// `kscope get` when its flags name several contexts
/// ([`kscope_client::cluster::ClusterArgs::several_contexts`]).
pub async fn run(args: &GetArgs, out: &mut impl Write) -> Result<(), CommandError> {
    let query = query(args)?;
    let resource = args.informer.resource.trim();
    if resource.is_empty() || resource.contains(',') {
        return Err(CommandError::Usage(
            "across several contexts, name one resource type, e.g. pods".into(),
        ));
    }
    if !args.names.is_empty() || args.output.columns.is_some() {
        return Err(CommandError::Usage(
            "across several contexts, get lists (no NAME arguments) as table, wide, name, json or yaml".into(),
        ));
    }
    let config = Config::load(args.informer.config.as_deref())?;
    let (clusters, query) = query.split_clusters();
    let (config, query, clusters) = (&config, &query, &clusters);
    let readings = read_each(
        &args.informer.cluster,
        args.sync_timeout,
        |cluster| async move { read_cluster(args, config, query, clusters, cluster).await },
    )
    .await?;
    let (mut readings, same) = dedupe(readings);
    for s in &same {
        eprintln!(
            "kscope: context {} reaches the same cluster as {} ({}): counted once, as {}",
            s.context, s.kept, s.how, s.kept
        );
    }
    readings.sort_by(|a, b| a.context.cmp(&b.context));
    let mut parts: Vec<(String, ClusterPart)> = Vec::new();
    let mut troubled: Vec<String> = Vec::new();
    for Reading { context, outcome } in readings {
        let said = match outcome {
            Err(err) => format!("unreachable: {err}"),
            Ok(connected) => match connected.read {
                Ok(Some(part)) => {
                    if let Some(stale) = &part.stale {
                        troubled.push(format!("{context} (stale)"));
                        eprintln!("kscope: cluster {context}: stale: {stale}");
                    }
                    parts.push((context, part));
                    continue;
                }
                Ok(None) => continue,
                Err(err) => {
                    let (word, text) = (trouble(&err), err.to_string());
                    match text.starts_with(word) {
                        true => text,
                        false => format!("{word}: {text}"),
                    }
                }
            },
        };
        eprintln!("kscope: cluster {context}: {said}");
        let word = said.split(':').next().unwrap_or_default();
        troubled.push(format!("{context} ({word})"));
    }
    if troubled.is_empty() || args.allow_stale {
        print(args, &parts, out)?;
    }
    if troubled.is_empty() {
        return Ok(());
    }
    Err(CommandError::ClustersNotCurrent {
        clusters: troubled,
        printed: args.allow_stale,
    })
}

/// The word for what kept a cluster from being read.
pub(crate) fn trouble(err: &CommandError) -> &'static str {
    match err {
        CommandError::Sync(err) => Trouble::of(err).word(),
        CommandError::NotSynced { .. } => Trouble::NotSynced.word(),
        CommandError::UnknownName(_) => Trouble::NotServed.word(),
        CommandError::Discovery(_) => Trouble::Unreachable.word(),
        CommandError::Fetch(FetchError::Forbidden { .. }) => Trouble::Forbidden.word(),
        CommandError::Fetch(FetchError::NotFound { .. }) => Trouble::NotServed.word(),
        CommandError::Fetch(FetchError::Unreachable { .. } | FetchError::Silent { .. }) => {
            Trouble::Unreachable.word()
        }
        _ => "failed",
    }
}

/// The merged output: rows (or items) cluster by cluster in the order of their names.
fn print(
    args: &GetArgs,
    parts: &[(String, ClusterPart)],
    out: &mut impl Write,
) -> Result<(), CommandError> {
    let format = args.output.format;
    if format.prints_objects() {
        let items: Vec<Value> = parts.iter().flat_map(|(_, p)| p.objects.clone()).collect();
        write_object(out, &list_of(items), format)?;
        return Ok(());
    }
    if parts.iter().all(|(_, p)| p.rows.is_empty()) {
        eprintln!("No resources found");
        return Ok(());
    }
    let rows: Vec<Vec<String>> = parts
        .iter()
        .flat_map(|(context, p)| {
            p.rows.iter().map(move |row| {
                let mut cells = Vec::with_capacity(row.len() + 1);
                cells.push(context.clone());
                cells.extend(row.iter().cloned());
                cells
            })
        })
        .collect();
    match parts.iter().find_map(|(_, p)| p.headers.as_ref()) {
        // `-o name`: the cluster, a space, and kind/name, one object a line.
        None if format == OutputFormat::Name => {
            for row in rows {
                writeln!(out, "{}", row.join(" "))?;
            }
        }
        headers => {
            let mut all: Vec<&str> = vec!["CLUSTER"];
            all.extend(headers.into_iter().flatten().map(String::as_str));
            write_table(out, &all, &rows)?;
        }
    }
    Ok(())
}

/// Reads one cluster: `None` when the `cluster` terms leave it out.
async fn read_cluster(
    args: &GetArgs,
    config: &Config,
    query: &Query,
    clusters: &ClusterFilter,
    cluster: kscope_client::cluster::Cluster,
) -> Result<Option<ClusterPart>, CommandError> {
    if !clusters.admits(&cluster.context) {
        return Ok(None);
    }
    let resource = args.informer.resource.trim();
    let (kind, discovery) = match resource.parse::<ResourceKind>() {
        Ok(kind) => (Kind::BuiltIn(kind), Discovery::built_ins()),
        Err(_) => {
            let discovery = Discovery::run(&cluster.client).await?;
            (discovery.resolve(resource)?, discovery)
        }
    };
    let resolved = Resolved {
        config: config.clone(),
        cluster,
        kind,
        discovery,
    };
    let part = match resolved.kind.built_in() {
        Some(ResourceKind::Pods) => read::<Pod>(args, query, &resolved).await,
        Some(ResourceKind::Nodes) => read::<Node>(args, query, &resolved).await,
        Some(ResourceKind::Namespaces) => read::<Namespace>(args, query, &resolved).await,
        Some(ResourceKind::Deployments) => read::<Deployment>(args, query, &resolved).await,
        Some(ResourceKind::ReplicaSets) => read::<ReplicaSet>(args, query, &resolved).await,
        Some(ResourceKind::Secrets) => read::<Secret>(args, query, &resolved).await,
        None => read::<GenericObject>(args, query, &resolved).await,
    }?;
    Ok(Some(part))
}

/// One cluster's store, synced within --sync-timeout, selected by the query.
async fn read<T: TableRow>(
    args: &GetArgs,
    query: &Query,
    resolved: &Resolved,
) -> Result<ClusterPart, CommandError> {
    let context = &resolved.cluster.context;
    let kind = &resolved.kind;
    let (informer, scope) = start_informer::<T>(&args.informer, resolved, None).await?;
    let resource = format!("{kind} in {context}");
    if let Err(err) = wait_for_sync_reporting(&informer, &resource, args.sync_timeout).await {
        informer.shutdown().await;
        return Err(err);
    }
    let mut stale = None;
    if let Some(duration) = args.watch_for {
        tokio::time::sleep(duration).await;
        if let Err(err) = check_current(&informer, &resource, STORE_DRAIN).await {
            stale = Some(match err {
                CommandError::NotCurrent { state, .. } => state,
                other => other.to_string(),
            });
        }
    }
    let indexer = informer.indexer();
    let keys = select_keys(&within_scope(query, &scope, resolved)?, indexer)?;
    let objects: Vec<Arc<T>> = keys.iter().filter_map(|k| indexer.get_by_key(k)).collect();
    informer.shutdown().await;
    if args.output.format.prints_objects() {
        let selected = Some(keys.into_iter().collect());
        let mut objects = full_objects(args, resolved, selected).await?.objects;
        for object in &mut objects {
            annotate(object, context);
        }
        return Ok(ClusterPart {
            objects,
            stale,
            ..ClusterPart::default()
        });
    }
    let shape = TableShape {
        with_namespace: kind.namespaced() && scope.namespace().is_none(),
        with_kind: false,
    };
    let (headers, rows) = table_cells(&objects, kind, args.output.format, shape);
    Ok(ClusterPart {
        headers,
        rows,
        objects: Vec::new(),
        stale,
    })
}

/// Names `context` in the object's [`CLUSTER_ANNOTATION`].
fn annotate(object: &mut Value, context: &str) {
    let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let annotations = meta
        .entry("annotations")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    if let Some(annotations) = annotations.as_object_mut() {
        annotations.insert(CLUSTER_ANNOTATION.into(), Value::String(context.into()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cluster_is_an_annotation_added_to_those_there() {
        let mut pod = serde_json::json!({"metadata": {"name": "a", "annotations": {"x": "1"}}});
        annotate(&mut pod, "prod-eu");
        assert_eq!(
            pod["metadata"]["annotations"],
            serde_json::json!({"x": "1", CLUSTER_ANNOTATION: "prod-eu"})
        );
        let mut bare = serde_json::json!({"metadata": {"name": "b"}});
        annotate(&mut bare, "dev");
        assert_eq!(bare["metadata"]["annotations"][CLUSTER_ANNOTATION], "dev");
    }
}
