//! Index views against the simulated API server over real HTTP: label indexes and a live
//! view agree with `kubectl get -l` after churn, relabels, deletes, and deletions seen only
//! through relists (tombstones). Skipped, saying so, where kubectl is not installed (a failure in CI).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::common::tools;
use kscope_client::lister_watcher::KubeListerWatcher;
use kscope_config::Config;
use kscope_index_views::live::{SortSpec, ViewWorker};
use kscope_index_views::query::Query;
use kscope_index_views::registry::IndexRegistry;
use kscope_informers::informer::Notification;
use kscope_informers::object::Object;
use kscope_informers::reflector::ReflectorMetricsSnapshot;
use kscope_informers::running::{InformerConfig, RunningInformer};
use kscope_resources::{Pod, ResourceKind};
use kscope_sim::{Faults, Resource, Sim, SimConfig, SimHandle};

struct Kubectl {
    program: PathBuf,
    dir: PathBuf,
}

impl Kubectl {
    fn new(program: PathBuf, sim: &SimHandle, name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("kscope-views-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("kubeconfig"), sim.kubeconfig_yaml()).expect("kubeconfig");
        Self { program, dir }
    }

    async fn ok(&self, args: &[&str]) -> String {
        let mut command = Command::new(&self.program);
        command
            .args(args)
            .env("KUBECONFIG", self.dir.join("kubeconfig"))
            .env("HOME", &self.dir)
            .stdin(Stdio::null());
        let output = tokio::task::spawn_blocking(move || command.output())
            .await
            .expect("join")
            .expect("kubectl runs");
        assert!(
            output.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// `namespace/name` of the pods `kubectl get pods -A -l selector` lists.
    async fn pods(&self, selector: &str) -> BTreeSet<String> {
        self.ok(&[
            "get",
            "pods",
            "-A",
            "-l",
            selector,
            "-o",
            "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{\"\\n\"}{end}",
        ])
        .await
        .lines()
        .map(str::to_string)
        .collect()
    }
}

impl Drop for Kubectl {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn split(key: &str) -> (&str, &str) {
    key.split_once('/').expect("namespaced key")
}

fn stored(registry: &IndexRegistry<Pod>) -> BTreeMap<String, String> {
    registry
        .indexer()
        .list()
        .iter()
        .map(|p| {
            (
                format!("{}/{}", p.namespace().unwrap_or_default(), p.name()),
                p.resource_version().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn index_keys(registry: &IndexRegistry<Pod>, index: &str, value: &str) -> BTreeSet<String> {
    registry
        .indexer()
        .index_keys(index, value)
        .expect("known index")
        .iter()
        .map(|k| k.to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn label_indexes_and_live_view_equal_kubectl_under_churn_and_relists() {
    let Some(kubectl) = tools::required("kubectl", "to read the sim as a real client") else {
        return;
    };
    let sim = Sim::start(
        SimConfig::with_size(150, 4, 3)
            .seed(11)
            .churn(40.0, Some(Duration::from_secs(8))),
    )
    .await
    .expect("sim starts");
    let kubectl = Kubectl::new(kubectl, &sim, "labels");
    let config =
        Config::merged(Some(("test.yaml", "indexes:\n  team: {label: team}\n"))).expect("config");
    let (registry, writer) = IndexRegistry::<Pod>::new(config.indexes).expect("indexes");
    let client = sim.client().await.expect("client");
    let lister_watcher = KubeListerWatcher::new(client, ResourceKind::Pods.list_path(None), "pods");
    let informer = RunningInformer::start(InformerConfig::new("pods"), lister_watcher, writer);
    tokio::time::timeout(Duration::from_secs(30), informer.wait_for_sync(|_| false))
        .await
        .expect("synced in time")
        .expect("synced");

    let tombstones = Arc::new(AtomicUsize::new(0));
    let mut handler = informer.informer().add_event_handler();
    let seen = tombstones.clone();
    tokio::spawn(async move {
        while let Some(n) = handler.recv().await {
            if let Notification::Delete { obj } = n
                && obj.is_tombstone()
            {
                seen.fetch_add(1, Ordering::SeqCst);
            }
        }
    });

    let counts = registry.value_counts("app").expect("app index");
    let app = counts
        .first()
        .expect("pods have app labels")
        .value
        .to_string();
    let worker = ViewWorker::start(
        informer.informer(),
        registry.clone(),
        Query::parse(&format!("app={app}")).expect("query"),
        SortSpec::default(),
    )
    .expect("view");

    // Relabel some pods of the app while watches deliver the change.
    let members: Vec<String> = index_keys(&registry, "app", &app).into_iter().collect();
    assert!(members.len() >= 6, "{app}: {members:?}");
    for key in &members[..2] {
        let (ns, name) = split(key);
        kubectl
            .ok(&[
                "label",
                "pod",
                name,
                "-n",
                ns,
                "app=relabelled",
                "--overwrite",
            ])
            .await;
    }
    let (ns, name) = split(&members[2]);
    kubectl
        .ok(&["label", "pod", name, "-n", ns, "team=blue", "--overwrite"])
        .await;

    // Then make every watch fail at once, so the reflector only relists: deletes and
    // relabels are seen through Replace, the deletes as tombstones.
    sim.set_faults(Faults {
        watch_gone_ratio: 1.0,
        ..Faults::default()
    });
    // Ends the open watch (as after an etcd restore); new ones fail with 410.
    let expired = informer.metrics().snapshot().expired;
    sim.restart_epoch();
    wait_metrics(&informer, "a 410 after the restart", |m| {
        m.expired > expired
    })
    .await;
    // Forced, so that each pod goes at once rather than after its grace period (when the
    // watches work again and would bring its delete as an event).
    for key in &members[3..5] {
        let (ns, name) = split(key);
        kubectl
            .ok(&[
                "delete",
                "pod",
                name,
                "-n",
                ns,
                "--grace-period=0",
                "--force",
                "--wait=false",
            ])
            .await;
    }
    let (ns, name) = split(&members[5]);
    kubectl.ok(&["label", "pod", name, "-n", ns, "app-"]).await;
    // A list begun after the writes sees them: the deletes come as its tombstones.
    let lists = informer.metrics().snapshot().lists;
    wait_metrics(&informer, "a relist after the writes", |m| m.lists > lists).await;
    sim.set_faults(Faults::default());

    // Churn stops after its time; the store then converges on the server's truth.
    tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            if sim.churn().paused && stored(&registry) == sim.truth(Resource::Pods) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await
    .expect("the store converges on the server's truth");
    assert!(
        tombstones.load(Ordering::SeqCst) >= 2,
        "deletes seen in relists are tombstones"
    );

    // Every app value, the relabel and the runtime-config index equal kubectl's selection.
    let mut values: Vec<String> = registry
        .value_counts("app")
        .expect("app index")
        .into_iter()
        .map(|c| c.value.to_string())
        .collect();
    values.push("relabelled".into());
    for value in &values {
        let selector = format!("app={value}");
        assert_eq!(
            index_keys(&registry, "app", value),
            kubectl.pods(&selector).await,
            "{selector}"
        );
    }
    let mut teams: Vec<String> = registry
        .value_counts("team")
        .expect("team index")
        .into_iter()
        .map(|c| c.value.to_string())
        .collect();
    teams.push("blue".into());
    for team in &teams {
        let selector = format!("team={team}");
        assert_eq!(
            index_keys(&registry, "team", team),
            kubectl.pods(&selector).await,
            "{selector}"
        );
    }
    // Both relabelled pods hold the new value, but for one the churn deleted since.
    let truth = sim.truth(Resource::Pods);
    let relabelled = members[..2]
        .iter()
        .filter(|k| truth.contains_key(*k))
        .count();
    assert!(
        relabelled > 0,
        "the churn deleted both relabelled pods: pick another seed"
    );
    assert_eq!(index_keys(&registry, "app", "relabelled").len(), relabelled);

    // The live view holds exactly the app's pods, in name order.
    let want = kubectl.pods(&format!("app={app}")).await;
    let view = worker.view().clone();
    let mut version = worker.version();
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let rows: BTreeSet<String> = view
                .lock()
                .keys(0, usize::MAX)
                .iter()
                .map(|k| k.to_string())
                .collect();
            if rows == want && worker.pending() == 0 {
                return;
            }
            version.changed().await.expect("worker runs");
        }
    })
    .await
    .expect("the live view equals kubectl get -l");
    let window = view
        .lock()
        .window(0, usize::MAX, kscope_resources::Timestamp::now());
    let names: Vec<&str> = window.rows.iter().map(|r| r.cells[0].as_str()).collect();
    assert!(names.windows(2).all(|w| w[0] <= w[1]), "{names:?}");

    drop(worker);
    informer.shutdown().await;
}

/// Waits (a minute at most) until the Reflector's counters say `what`.
async fn wait_metrics(
    informer: &RunningInformer<Pod>,
    what: &str,
    done: impl Fn(&ReflectorMetricsSnapshot) -> bool,
) {
    tokio::time::timeout(Duration::from_secs(60), async {
        while !done(&informer.metrics().snapshot()) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{what}: never seen"));
}
