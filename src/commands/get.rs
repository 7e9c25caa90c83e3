//! `kscope get`: sync an informer, optionally keep watching, print the store (through an
//! index when asked).

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use crate::cluster::{ClusterArgs, NamespaceScope};
use crate::duration::parse_duration;
use crate::index_views::columns::TableRow;
use crate::index_views::definitions::{default_index_definitions, index_funcs};
use crate::informers::controller::{InformerConfig, RunningInformer};
use crate::informers::indexer::{Indexer, IndexerError};
use crate::informers::keys::Key;
use crate::resources::{Deployment, Namespace, Node, Pod, ReplicaSet, ResourceKind};

use super::output::{OutputFormat, ToJson, print_objects};
use super::{CommandError, gives_up, lister_watcher};

/// Print objects from an informer's store, like `kubectl get`.
#[derive(Debug, Clone, clap::Args)]
pub struct GetArgs {
    /// pods (po), nodes (no), namespaces (ns), deployments (deploy), replicasets (rs).
    pub resource: String,
    /// Label selector sent to the server (`app=web,tier!=db`).
    #[arg(short = 'l', long)]
    pub selector: Option<String>,
    /// Field selector sent to the server (`spec.nodeName=node-1`).
    #[arg(long)]
    pub field_selector: Option<String>,
    /// Filter through a store index, NAME=VALUE (indexes: namespace, node, phase, owner,
    /// app). Repeat to intersect.
    #[arg(long = "index", value_name = "NAME=VALUE")]
    pub index: Vec<String>,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value = "table")]
    pub output: OutputFormat,
    /// After syncing, keep watching this long (e.g. 30s) before printing.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub watch_for: Option<Duration>,
}

/// Parses `NAME=VALUE` index terms.
fn index_terms(terms: &[String]) -> Result<Vec<(String, String)>, CommandError> {
    terms
        .iter()
        .map(|t| match t.split_once('=') {
            Some((name, value)) if !name.is_empty() => Ok((name.to_string(), value.to_string())),
            _ => Err(CommandError::Usage(format!(
                "--index {t:?}: expected NAME=VALUE, e.g. --index app=web"
            ))),
        })
        .collect()
}

/// The keys matching every `(index, value)` term: set intersection, smallest set first.
pub fn keys_matching_all<T: crate::informers::object::Object>(
    indexer: &Indexer<T>,
    terms: &[(String, String)],
) -> Result<Vec<Key>, IndexerError> {
    let mut sizes = Vec::with_capacity(terms.len());
    for (name, value) in terms {
        sizes.push(indexer.with_index_set(name, value, |set| set.map_or(0, |s| s.len()))?);
    }
    let mut order: Vec<usize> = (0..terms.len()).collect();
    order.sort_by_key(|&i| sizes[i]);
    let Some((&first, rest)) = order.split_first() else {
        return Ok(indexer.list_keys());
    };
    let mut keys = indexer.index_keys(&terms[first].0, &terms[first].1)?;
    for &i in rest {
        let (name, value) = &terms[i];
        keys = indexer.with_index_set(name, value, |set| match set {
            Some(set) => keys.into_iter().filter(|k| set.contains(k)).collect(),
            None => Vec::new(),
        })?;
    }
    Ok(keys)
}

pub async fn run(
    cluster_args: &ClusterArgs,
    args: &GetArgs,
    out: &mut impl Write,
) -> Result<(), CommandError> {
    let kind: ResourceKind = args.resource.parse()?;
    match kind {
        ResourceKind::Pods => get::<Pod>(cluster_args, args, kind, out).await,
        ResourceKind::Nodes => get::<Node>(cluster_args, args, kind, out).await,
        ResourceKind::Namespaces => get::<Namespace>(cluster_args, args, kind, out).await,
        ResourceKind::Deployments => get::<Deployment>(cluster_args, args, kind, out).await,
        ResourceKind::ReplicaSets => get::<ReplicaSet>(cluster_args, args, kind, out).await,
    }
}

async fn get<T: TableRow + ToJson>(
    cluster_args: &ClusterArgs,
    args: &GetArgs,
    kind: ResourceKind,
    out: &mut impl Write,
) -> Result<(), CommandError> {
    let terms = index_terms(&args.index)?;
    let cluster = cluster_args.connect().await?;
    let scope = cluster_args.scope(&cluster);
    let lister_watcher = lister_watcher(
        &cluster,
        kind,
        &scope,
        args.selector.clone(),
        args.field_selector.clone(),
    );
    let indexer = Indexer::new(index_funcs::<T>(&default_index_definitions()))
        .map_err(|e| CommandError::Usage(e.to_string()))?;
    let informer =
        RunningInformer::start(InformerConfig::new(kind.plural()), lister_watcher, indexer);
    informer
        .wait_for_sync(gives_up)
        .await
        .map_err(CommandError::Sync)?;
    if let Some(duration) = args.watch_for {
        tokio::time::sleep(duration).await;
    }
    let indexer = informer.indexer();
    let mut keys = keys_matching_all(indexer, &terms).map_err(|e| match e {
        IndexerError::UnknownIndex(name) => {
            let mut known: Vec<String> = indexer
                .index_names()
                .iter()
                .map(|n| n.to_string())
                .collect();
            known.sort();
            CommandError::Usage(format!(
                "unknown index {name:?}; indexes: {}",
                known.join(", ")
            ))
        }
        other => CommandError::Usage(other.to_string()),
    })?;
    keys.sort();
    let objects: Vec<Arc<T>> = keys.iter().filter_map(|k| indexer.get_by_key(k)).collect();
    informer.shutdown().await;

    if objects.is_empty() && matches!(args.output, OutputFormat::Table | OutputFormat::Wide) {
        match (&scope, kind.namespaced()) {
            (NamespaceScope::One(ns), true) => eprintln!("No resources found in {ns} namespace."),
            _ => eprintln!("No resources found"),
        }
        return Ok(());
    }
    let with_namespace = kind.namespaced() && scope == NamespaceScope::All;
    print_objects(out, &objects, args.output, with_namespace)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::informers::testing::obj;

    #[test]
    fn index_terms_parse() {
        assert_eq!(
            index_terms(&["app=web".into(), "node=".into()]).unwrap(),
            [
                ("app".to_string(), "web".to_string()),
                ("node".to_string(), String::new())
            ]
        );
        assert!(
            index_terms(&["app".into()])
                .unwrap_err()
                .to_string()
                .contains("NAME=VALUE")
        );
    }

    #[test]
    fn intersection_of_index_terms() {
        use std::borrow::Cow;

        use smallvec::smallvec;

        use crate::informers::indexer::index_func;
        use crate::informers::testing::TestObj;
        let by_label = index_func(|o: &TestObj| Ok(smallvec![Cow::Borrowed(o.label.as_str())]));
        let by_ns = index_func(|o: &TestObj| {
            Ok(o.namespace
                .as_deref()
                .map(Cow::Borrowed)
                .into_iter()
                .collect())
        });
        let indexer = Indexer::new([("label", by_label), ("ns", by_ns)]).unwrap();
        for (key, label) in [
            ("a/1", "web"),
            ("a/2", "db"),
            ("b/3", "web"),
            ("b/4", "web"),
        ] {
            indexer.add(obj(key, 1, label)).unwrap();
        }
        let terms = |t: &[(&str, &str)]| -> Vec<(String, String)> {
            t.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        let mut keys =
            keys_matching_all(&indexer, &terms(&[("label", "web"), ("ns", "b")])).unwrap();
        keys.sort();
        assert_eq!(keys, [Key::from("b/3"), Key::from("b/4")]);
        assert!(
            keys_matching_all(&indexer, &terms(&[("label", "nope"), ("ns", "a")]))
                .unwrap()
                .is_empty()
        );
        assert_eq!(keys_matching_all(&indexer, &[]).unwrap().len(), 4);
        assert!(matches!(
            keys_matching_all(&indexer, &terms(&[("team", "x")])),
            Err(IndexerError::UnknownIndex(_))
        ));
    }
}
