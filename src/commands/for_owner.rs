//! `kscope deltas --for-owner KIND/NAMESPACE/NAME`: the events on an object and on the
//! objects it controls, grouped into the reconciles a workqueue would run for it (see
//! [`kscope_index_views::reconciles`]), each printed once no later event can join it.

use std::collections::HashMap;
use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::mpsc;

use kscope_client::discovery::Discovery;
use kscope_client::fetch::fetch_object;
use kscope_config::Config;
use kscope_index_views::reconciles::{Reconcile, ReconcileModel, Trigger, change_of};

use super::deltas::DeltasArgs;
use super::hotloops::{Seen, follow};
use super::tree::{DEFAULT_KINDS, resolve_kind};
use super::{CommandError, Resolved};

/// The uid of the object's controller (its ownerReference with `controller: true`).
fn controller_uid(object: &Value) -> Option<&Value> {
    object["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|r| r["controller"] == true)
        .map(|r| &r["uid"])
}

fn print(reconcile: &Reconcile, out: &mut impl Write) -> Result<(), CommandError> {
    writeln!(
        out,
        "reconcile {} at +{:.1}s ran because {}",
        reconcile.number,
        reconcile.start,
        reconcile.because()
    )?;
    for t in &reconcile.triggers {
        writeln!(
            out,
            "    +{:.1}s  {} {}  {}  rv {}",
            t.at, t.kind, t.name, t.change, t.resource_version
        )?;
    }
    out.flush()?;
    Ok(())
}

/// Follows `owner` and the kinds named by the command's RESOURCE (by default the workload
/// kinds and what they own) until `--for` ends.
pub async fn run(args: &DeltasArgs, owner: &str, out: &mut impl Write) -> Result<(), CommandError> {
    args.informer.cluster.refuse_namespace_set()?;
    let parts: Vec<&str> = owner.splitn(3, '/').collect();
    let (kind_name, namespace, name) = match parts[..] {
        [kind, namespace, name] => (kind, Some(namespace), name),
        [kind, name] => (kind, None, name),
        _ => {
            return Err(CommandError::Usage(format!(
                "--for-owner {owner}: name the object as KIND/NAMESPACE/NAME (KIND/NAME when cluster-scoped)"
            )));
        }
    };
    // The owner's dependents share its namespace: that is the one watched.
    let mut informer = args.informer.clone();
    if let Some(namespace) = namespace {
        informer.cluster.namespace = Some(namespace.to_string());
        informer.cluster.all_namespaces = false;
    }
    let informer = &informer;
    let config = Config::load(informer.config.as_deref())?;
    let cluster = informer.cluster.connect().await?;
    let discovery = Discovery::run(&cluster.client).await?;
    let owner_kind = resolve_kind(&discovery, kind_name)?;
    let mut kinds = vec![owner_kind.clone()];
    if informer.resource.trim().is_empty() {
        kinds.extend(
            DEFAULT_KINDS
                .split(',')
                .filter_map(|n| resolve_kind(&discovery, n).ok()),
        );
    } else {
        for n in informer
            .resource
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
        {
            kinds.push(resolve_kind(&discovery, n)?);
        }
    }
    let mut unique = Vec::with_capacity(kinds.len());
    for kind in kinds {
        if !unique.contains(&kind) {
            unique.push(kind);
        }
    }
    let (sender, mut seen) = mpsc::channel::<Seen>(4096);
    let mut stops = Vec::new();
    let mut tasks = Vec::new();
    for kind in unique {
        let resolved = Resolved {
            config: config.clone(),
            cluster: cluster.clone(),
            kind,
            discovery: discovery.clone(),
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        stops.push(stop);
        tasks.push(tokio::spawn(follow(
            informer,
            &resolved,
            sender.clone(),
            stopped,
        )?));
    }
    drop(sender);
    let started = Instant::now();
    let object = fetch_object(&cluster.client, owner_kind, namespace, name).await?;
    let uid = object["metadata"]["uid"].clone();
    let mut model = ReconcileModel::new(args.reconcile_duration.as_secs_f64());
    let mut previous: HashMap<String, Value> = HashMap::new();
    let mut printed = 0;
    let deadline = tokio::time::sleep(args.duration.unwrap_or(Duration::MAX));
    tokio::pin!(deadline);
    loop {
        let s = tokio::select! {
            next = seen.recv() => match next {
                Some(s) => s,
                None => break,
            },
            () = &mut deadline => break,
        };
        let meta = &s.object["metadata"];
        if meta["uid"] != uid && controller_uid(&s.object) != Some(&uid) {
            continue;
        }
        let key = meta["uid"].as_str().unwrap_or_default().to_string();
        let change = change_of(s.event, previous.get(&key), &s.object);
        previous.insert(key, s.object.clone());
        let Some(change) = change else { continue };
        model.add(Trigger {
            at: started.elapsed().as_secs_f64(),
            kind: s.object["kind"].as_str().unwrap_or(&s.kind).to_string(),
            name: meta["name"].as_str().unwrap_or_default().to_string(),
            change,
            resource_version: meta["resourceVersion"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        });
        // Every reconcile but the last is final: a later event can only join the last.
        let done = model.reconciles().len().saturating_sub(1);
        for reconcile in &model.reconciles()[printed..done] {
            print(reconcile, out)?;
        }
        printed = printed.max(done);
    }
    for reconcile in &model.reconciles()[printed..] {
        print(reconcile, out)?;
    }
    drop(stops);
    for task in tasks {
        // Each task ends by shutting its informer down; one that panicked has nothing to add.
        let _ = task.await;
    }
    Ok(())
}
