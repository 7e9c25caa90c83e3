//! Every kind the server serves, against the sim: `kscope get` prints what kubectl prints
//! (the same columns, the same cells but for the ones that tell time), the TUI lists any
//! kind by its kubectl name, a CRD created while kscope runs becomes a command and its
//! deletion is said in the header, a kind the user may not list says so in its own view,
//! and a Secret's values stay out of the generic projection. Skipped where kubectl is
//! absent (failed under CI=true).

use std::sync::Arc;
use std::time::{Duration, Instant};

use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_client::discovery::{Catalog, Discovery};
use kscope_client::lister_watcher::KubeListerWatcher;
use kscope_informers::lister_watcher::{ListParams, ListerWatcher};
use kscope_resources::{GenericObject, Kind};
use kscope_sim::{Faults, Sim, SimConfig};
use kscope_ui::action::Action;
use kscope_ui::app::App;
use kscope_ui::nav::ViewSpec;

use crate::common::cli::{Streaming, kscope};
use crate::common::kubectl::Kubectl;
use crate::common::tui::{AppStart, wait_rows};
use crate::sim_crds::GADGET_CRD;
use crate::tui_keys::run_command;

/// Columns whose cells tell time (the server renders them at each request): compared by
/// presence only.
const CLOCK_COLUMNS: [&str; 3] = ["AGE", "LAST SEEN", "DURATION"];

/// A table as kubectl and `kscope get` print it: the header's columns, and each row cut at
/// the header's column starts (cells may hold spaces: "LAST SEEN", event messages).
pub(crate) fn parse_table(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    let mut starts = Vec::new();
    let mut names = Vec::new();
    let bytes = header.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b' ' && (i == 0 || header[..i].ends_with("  ")) {
            let end = header[i..].find("  ").map_or(header.len(), |e| i + e);
            starts.push(i);
            names.push(header[i..end].to_string());
            i = end;
        } else {
            i += 1;
        }
    }
    let rows = lines
        .map(|line| {
            (0..starts.len())
                .map(|c| {
                    let end = starts.get(c + 1).copied().unwrap_or(line.len());
                    line.get(starts[c]..end.min(line.len()))
                        .or_else(|| line.get(starts[c]..))
                        .unwrap_or_default()
                        .trim()
                        .to_string()
                })
                .collect()
        })
        .collect();
    (names, rows)
}

/// The rows with clock cells blanked (kept non-empty checks), sorted.
pub(crate) fn comparable(names: &[String], rows: &[Vec<String>]) -> Vec<Vec<String>> {
    let mut rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            row.iter()
                .zip(names)
                .map(
                    |(cell, name)| match CLOCK_COLUMNS.contains(&name.as_str()) {
                        true => String::new(),
                        false => cell.clone(),
                    },
                )
                .collect()
        })
        .collect();
    rows.sort();
    rows
}

fn kubeconfig(fx: &Kubectl) -> String {
    fx.dir.join("kubeconfig").display().to_string()
}

#[tokio::test]
async fn kscope_get_prints_what_kubectl_prints_for_any_kind() {
    let mut config = SimConfig::with_size(40, 3, 2);
    config.controllers = false;
    let Some(fx) = Kubectl::start_with("kinds-get", config).await else {
        return;
    };
    let kubeconfig = kubeconfig(&fx);
    for kind in [
        "services",
        "cm",
        "events",
        "sts",
        "jobs",
        "ing",
        "widgets",
        "widgets.v1.example.com",
    ] {
        let want = fx.ok(&["get", kind, "-A"]).await;
        let out = kscope(
            fx.dir.as_path(),
            &["get", kind, "-A", "--kubeconfig", &kubeconfig],
        )
        .await;
        let got = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "kscope get {kind}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (want_names, want_rows) = parse_table(&want);
        let (got_names, got_rows) = parse_table(&got);
        assert_eq!(got_names, want_names, "{kind}:\n{got}\nkubectl:\n{want}");
        assert!(!want_rows.is_empty(), "{kind}: the sim seeds some");
        assert_eq!(
            comparable(&got_names, &got_rows),
            comparable(&want_names, &want_rows),
            "{kind}:\n{got}\nkubectl:\n{want}"
        );
        for (name, cell) in got_names.iter().zip(&got_rows[0]) {
            if CLOCK_COLUMNS.contains(&name.as_str()) {
                assert!(!cell.is_empty(), "{kind}: {name} is printed");
            }
        }
    }
    // -o name as kubectl names them.
    let want = fx.ok(&["get", "widgets", "-A", "-o", "name"]).await;
    let out = kscope(
        fx.dir.as_path(),
        &[
            "get",
            "widgets",
            "-A",
            "-o",
            "name",
            "--kubeconfig",
            &kubeconfig,
        ],
    )
    .await;
    let mut want: Vec<&str> = want.lines().collect();
    want.sort();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .collect::<Vec<_>>(),
        want
    );
    // A name no resource has is kubectl's error.
    let out = kscope(
        fx.dir.as_path(),
        &["get", "nothings", "--kubeconfig", &kubeconfig],
    )
    .await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the server doesn't have a resource type \"nothings\""),
        "{err}"
    );
}

/// How long discovery of the sim's resources takes, printed (no timing is asserted).
#[tokio::test]
async fn discovery_finds_every_resource_the_sim_serves() {
    let sim = Sim::start(SimConfig::with_size(10, 2, 2))
        .await
        .expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let started = Instant::now();
    let discovery = Discovery::run(&cluster.client).await.expect("discovers");
    eprintln!(
        "discovery: {} resources in {:?}",
        discovery.resources().len(),
        started.elapsed()
    );
    for (name, plural) in [
        ("svc", "services"),
        ("cm", "configmaps"),
        ("sts", "statefulsets"),
        ("ds", "daemonsets"),
        ("job", "jobs"),
        ("ing", "ingresses"),
        ("ev", "events"),
        ("crd", "customresourcedefinitions"),
        ("widgets", "widgets"),
        ("deploy.apps", "deployments"),
    ] {
        let kind = discovery.resolve(name).expect(name);
        assert_eq!(kind.plural(), plural, "{name}");
    }
    assert!(matches!(discovery.resolve("po"), Ok(Kind::BuiltIn(_))));
    assert!(discovery.resolve("pods/log").is_err(), "no subresources");
    assert!(!discovery.category("all").is_empty());
    sim.shutdown().await;
}

fn screen(app: &mut App) -> String {
    let mut terminal =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(140, 24)).expect("terminal");
    app.draw(&mut terminal).expect("draws");
    terminal.backend().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tui_lists_any_kind_and_follows_crds_as_they_come_and_go() {
    let Some(fx) = Kubectl::start("kinds-tui").await else {
        return;
    };
    let cluster = Cluster::from_config(fx.sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let (catalog, _watch, error) = Catalog::keep_current(&cluster).await;
    assert!(error.is_none(), "{error:?}");
    let pods = ViewSpec::new(kscope_resources::ResourceKind::Pods, NamespaceScope::All);
    let mut app = AppStart::new(cluster, pods)
        .catalog(catalog.clone())
        .start();
    wait_rows(&mut app, "pods", |_, w| w.total > 0).await;

    // Services and widgets, by their kubectl names, with the server's columns.
    for (command, columns) in [
        ("svc", &["NAMESPACE", "NAME", "TYPE", "CLUSTER-IP"][..]),
        ("widgets", &["NAMESPACE", "NAME"][..]),
        ("cm", &["NAMESPACE", "NAME", "DATA", "AGE"][..]),
    ] {
        run_command(&mut app, command);
        assert_eq!(app.state().command.error, None, "{command}");
        assert_ne!(app.current().kind.plural(), "pods", "{command}");
        let window = wait_rows(&mut app, command, |app, w| {
            w.total > 0 && app.header().listed
        })
        .await;
        let text = screen(&mut app);
        for column in columns {
            assert!(text.contains(column), ":{command} shows {column}:\n{text}");
        }
        let first = &window.rows[0].key;
        let name = first.rsplit('/').next().unwrap_or_default();
        assert!(text.contains(name), ":{command} lists {name}:\n{text}");
    }

    // Tab completes a discovered name.
    app.apply(Action::OpenCommand);
    for c in "statefuls".chars() {
        app.apply(Action::CommandChar(c));
    }
    app.apply(Action::CommandComplete);
    assert_eq!(app.state().command.input, "statefulsets ");
    app.apply(Action::CommandCancel);

    // A CRD created now becomes a command a moment later.
    run_command(&mut app, "gadgets");
    assert!(
        app.state()
            .command
            .error
            .as_deref()
            .is_some_and(|e| e.contains("unknown command")),
        "{:?}",
        app.state().command.error
    );
    create_gadgets(&fx, &catalog).await;
    run_command(&mut app, "gd -A");
    assert_eq!(app.current().kind.plural(), "gadgets");
    wait_rows(&mut app, "gadgets", |_, w| w.total == 1).await;
    let text = screen(&mut app);
    for column in ["NAME", "MODEL", "COUNT", "AGE", "g1", "alpha"] {
        assert!(text.contains(column), "{column}:\n{text}");
    }

    // Enter on its CRD opens its resources.
    run_command(&mut app, "crd");
    let window = wait_rows(&mut app, "crds", |_, w| {
        w.rows.iter().any(|r| &*r.key == "gadgets.example.com")
    })
    .await;
    let at = window
        .rows
        .iter()
        .position(|r| &*r.key == "gadgets.example.com");
    app.apply(Action::Top);
    for _ in 0..at.unwrap_or(0) {
        app.apply(Action::Down);
    }
    app.apply(Action::DrillDown);
    assert_eq!(app.current().kind.plural(), "gadgets");
    wait_rows(&mut app, "gadgets again", |_, w| w.total == 1).await;

    // Deleted while its table is open: the header says so, and its informer stops (its
    // Reflector ends, closing its status) instead of retrying.
    let status = app.table().status();
    fx.ok(&["delete", "crd", "gadgets.example.com"]).await;
    wait_rows(&mut app, "the CRD's deletion", |app, _| {
        app.header()
            .error
            .as_deref()
            .is_some_and(|e| e.contains("no longer served"))
    })
    .await;
    let text = screen(&mut app);
    assert!(text.contains("no longer served"), "{text}");
    assert!(text.contains("(gone)") && text.contains("STALE"), "{text}");
    let mut status = status;
    let stopped = tokio::time::timeout(Duration::from_secs(10), async {
        while status.changed().await.is_ok() {}
    })
    .await;
    assert!(stopped.is_ok(), "the gone kind's Reflector stops");
    // Back again: the same command starts a fresh informer on it.
    create_gadgets(&fx, &catalog).await;
    run_command(&mut app, "gd -A");
    assert_eq!(app.current().kind.plural(), "gadgets");
    wait_rows(&mut app, "gadgets back", |app, w| {
        w.total == 1 && app.header().listed && app.header().error.is_none()
    })
    .await;
    assert!(app.table().status().has_changed().is_ok(), "watching again");
    let text = screen(&mut app);
    assert!(!text.contains("(gone)") && text.contains("g1"), "{text}");

    // Its printer columns changed while the table is open: listed again with the new ones.
    let rename = r#"[{"op":"replace","path":"/spec/versions/0/additionalPrinterColumns/0",
        "value":{"name":"Maker","type":"string","jsonPath":".spec.model"}}]"#;
    fx.ok(&[
        "patch",
        "crd",
        "gadgets.example.com",
        "--type=json",
        "-p",
        rename,
    ])
    .await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        app.follow_crd_change();
        let status = app.table().status().borrow().clone();
        app.update_sync(&status);
        let text = screen(&mut app);
        if text.contains("MAKER") && text.contains("alpha") {
            assert!(!text.contains("MODEL"), "{text}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the new column never showed:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let said = app.state().command.error.clone().unwrap_or_default();
    assert!(said.contains("gadgets.example.com changed"), "{said}");
}

/// Creates the Gadget CRD and one Gadget with kubectl; returns once the catalog serves them.
async fn create_gadgets(fx: &Kubectl, catalog: &Catalog) {
    fx.ok(&["apply", "-f", &fx.file("crd.yaml", GADGET_CRD)])
        .await;
    fx.ok(&["create", "-f", &fx.file("gadget.yaml", GADGET)])
        .await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while catalog.current().resolve("gadgets").is_err() {
        assert!(Instant::now() < deadline, "gadgets never discovered");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kind_the_user_may_not_list_says_so_and_the_others_keep_working() {
    let mut config = SimConfig::with_size(20, 2, 2);
    config.faults = Faults {
        forbidden: vec!["configmaps".into()],
        ..Faults::default()
    };
    let sim = Sim::start(config).await.expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let catalog = Catalog::new(Discovery::run(&cluster.client).await.expect("discovers"));
    let pods = ViewSpec::new(kscope_resources::ResourceKind::Pods, NamespaceScope::All);
    let mut app = AppStart::new(cluster, pods).catalog(catalog).start();
    wait_rows(&mut app, "pods", |_, w| w.total == 20).await;
    run_command(&mut app, "cm");
    wait_rows(&mut app, "a 403", |app, _| {
        app.header()
            .error
            .as_deref()
            .is_some_and(|e| e.contains("forbidden"))
    })
    .await;
    run_command(&mut app, "svc");
    wait_rows(&mut app, "services", |app, w| {
        w.total > 0 && app.header().error.is_none()
    })
    .await;
    // The selected Service's YAML, fetched from its discovered path.
    app.apply(Action::OpenDetail);
    let fetched = tokio::time::timeout(Duration::from_secs(15), app.finish_fetch()).await;
    assert_eq!(fetched, Ok(true), "the fetch finishes");
    assert!(app.detail_fetched());
    let text = screen(&mut app);
    assert!(
        text.contains("kind: Service") && text.contains("clusterIP"),
        "{text}"
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn a_secret_listed_generically_keeps_no_value() {
    let Some(fx) = Kubectl::start("kinds-secret").await else {
        return;
    };
    let secret = fx
        .ok(&["get", "secrets", "-A", "-o", "jsonpath={.items[0].data}"])
        .await;
    let values: Vec<String> =
        serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&secret)
            .expect("data is a map")
            .values()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
    assert!(!values.is_empty(), "{secret}");
    let cluster = Cluster::from_config(fx.sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    // Secrets as a discovered kind, forced onto the generic path.
    let resource = Discovery::run(&cluster.client)
        .await
        .expect("discovers")
        .resolve_resource("secrets")
        .cloned()
        .expect("secrets");
    let lister_watcher = KubeListerWatcher::for_kind(
        &cluster,
        Kind::Api(Arc::clone(&resource)),
        &NamespaceScope::All,
        None,
        None,
    );
    let page: kscope_informers::lister_watcher::ListPage<GenericObject> = lister_watcher
        .list(&ListParams::default())
        .await
        .expect("lists");
    assert!(!page.items.is_empty());
    let kept = format!("{:?}", page.items);
    for value in &values {
        assert!(!kept.contains(value.as_str()), "a value is kept: {kept}");
    }
    assert!(
        !resource.columns().is_empty(),
        "the Table's columns are learned"
    );
}

const GADGET: &str = r#"apiVersion: example.com/v1
kind: Gadget
metadata:
  name: g1
  namespace: default
spec:
  model: alpha
  count: 2
"#;

/// Lists every page of `lister_watcher` (500 a page, as the Reflector asks); returns the
/// names and how long it took.
async fn list_all<T: kscope_informers::object::Object, L: ListerWatcher<T>>(
    lister_watcher: &L,
) -> (Vec<String>, Duration) {
    let started = Instant::now();
    let mut names = Vec::new();
    let mut params = ListParams {
        limit: Some(500),
        ..ListParams::default()
    };
    loop {
        let page = lister_watcher.list(&params).await.expect("lists");
        names.extend(page.items.iter().map(|o| o.name().to_string()));
        match page.continue_token {
            Some(token) => params.continue_token = Some(token),
            None => break,
        }
    }
    names.sort();
    (names, started.elapsed())
}

/// The two ways a discovered kind can be read, on the same objects: the server's Table form
/// (what kscope does) and the plain objects (client-side columns would evaluate JSONPath on
/// top of this decode). Both keep the same objects; the times and sizes are printed for
/// docs/benchmarks.md, not asserted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn table_form_and_plain_lists_keep_the_same_objects() {
    let mut config = SimConfig::with_size(3000, 10, 5);
    config.controllers = false;
    let sim = Sim::start(config).await.expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let discovery = Discovery::run(&cluster.client).await.expect("discovers");
    let pods = discovery.resolve_resource("pods").cloned().expect("pods");
    let all = NamespaceScope::All;
    let table = KubeListerWatcher::for_kind(&cluster, Kind::Api(pods), &all, None, None);
    let plain = KubeListerWatcher::new(cluster.client.clone(), "/api/v1/pods", "pods")
        .with_limits(cluster.limits);
    let (table_names, table_time) = list_all::<GenericObject, _>(&table).await;
    let (plain_names, plain_time) = list_all::<GenericObject, _>(&plain).await;
    let (pod_names, pod_time) = list_all::<kscope_resources::Pod, _>(&plain).await;
    assert_eq!(table_names.len(), 3000);
    assert_eq!(table_names, plain_names);
    assert_eq!(table_names, pod_names);
    let size = |accept: &'static str, query: &'static str| {
        let client = cluster.client.clone();
        async move {
            let request = http::Request::get(format!("/api/v1/pods?limit=500{query}"))
                .header(http::header::ACCEPT, accept)
                .body(Vec::new())
                .expect("request");
            let started = Instant::now();
            let len = client.request_text(request).await.expect("answers").len();
            (len, started.elapsed())
        }
    };
    let table_accept = kscope_client::table_form::TABLE_ACCEPT;
    eprintln!(
        "3000 pods listed: Table+Object into the generic projection {table_time:?}, plain JSON \
         into the generic projection {plain_time:?}, plain JSON into the pod projection \
         {pod_time:?}; one 500-item page (bytes, time to receive): plain {:?}, Table+Object \
         {:?}, Table+Metadata {:?}",
        size("application/json", "").await,
        size(table_accept, "&includeObject=Object").await,
        size(table_accept, "&includeObject=Metadata").await,
    );
    sim.shutdown().await;
}

/// `kscope deltas` on a custom resource: each patch made with kubectl is a MODIFIED watch
/// event of that object, the second with the paths it changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deltas_stream_a_custom_resources_changes() {
    let mut config = SimConfig::with_size(10, 2, 2);
    config.controllers = false;
    let Some(fx) = Kubectl::start_with("kinds-deltas", config).await else {
        return;
    };
    let name = fx
        .ok(&[
            "get",
            "widgets",
            "-A",
            "-o",
            "jsonpath={.items[0].metadata.namespace}/{.items[0].metadata.name}",
        ])
        .await;
    let (ns, widget) = name.split_once('/').expect("namespace/name");
    let kubeconfig = kubeconfig(&fx);
    let dir = fx.dir.clone();
    // Ended by SIGINT once both patches are seen; `--for` only ends a run the test gave up on.
    let mut run = Streaming::start(
        &dir,
        &[
            "deltas",
            "widgets.example.com",
            "-A",
            "--kubeconfig",
            &kubeconfig,
            "--for",
            "120s",
        ],
    );
    // Once the widget's initial state is printed, its informer follows every change.
    let key = name.clone();
    run.wait_line("the widget's initial state", |line| {
        serde_json::from_str::<serde_json::Value>(line).is_ok_and(|l| l["key"] == key.as_str())
    })
    .await;
    // The paths a MODIFIED changed are those since the previous MODIFIED: patch twice.
    for value in ["one", "two"] {
        let patch = format!(r#"{{"metadata":{{"labels":{{"patched":"{value}"}}}}}}"#);
        let args = [
            "patch",
            "widget",
            widget,
            "-n",
            ns,
            "--type=merge",
            "-p",
            &patch,
        ];
        fx.ok(&args).await;
        // Each patch is its own MODIFIED: the next is made once this one is printed.
        let key = name.clone();
        run.wait_line("the patch's MODIFIED", move |line| {
            serde_json::from_str::<serde_json::Value>(line).is_ok_and(|l| {
                l["source"] == "watch" && l["type"] == "MODIFIED" && l["key"] == key.as_str()
            })
        })
        .await;
    }
    run.interrupt();
    let (status, lines, stderr) = run.finish().await;
    assert!(status.success(), "{stderr}");
    let lines: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let modified: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["source"] == "watch" && l["type"] == "MODIFIED" && l["key"] == name.as_str())
        .collect();
    assert_eq!(modified.len(), 2, "{lines:#?}");
    let changed = modified[1]["changed"].to_string();
    assert!(changed.contains("labels"), "{changed}");
}

/// Discovery of about 200 resources (the sim's own and 180 CRDs in 20 groups): each one
/// is found, and the time of a discovery is printed for docs/benchmarks.md, not asserted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_of_two_hundred_resources() {
    let sim = Sim::start(SimConfig::with_size(10, 2, 2))
        .await
        .expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    for i in 0..180 {
        let (plural, group) = (format!("things{i}"), format!("g{}.example.com", i % 20));
        let crd = serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {"plural": plural, "singular": format!("thing{i}"), "kind": format!("Thing{i}")},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object",
                        "x-kubernetes-preserve-unknown-fields": true}}}],
            },
        });
        let request =
            http::Request::post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(serde_json::to_vec(&crd).expect("json"))
                .expect("request");
        cluster
            .client
            .request_text(request)
            .await
            .expect("CRD created");
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    let discovery = loop {
        let discovery = Discovery::run(&cluster.client).await.expect("discovers");
        if discovery.resolve("things179.g19.example.com").is_ok() {
            break discovery;
        }
        assert!(Instant::now() < deadline, "the CRDs are never served");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let total = discovery.resources().len();
    assert!(total >= 200, "{total}");
    let mut times: Vec<Duration> = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let again = Discovery::run(&cluster.client).await.expect("discovers");
        times.push(started.elapsed());
        assert_eq!(again.resources().len(), total);
    }
    times.sort();
    eprintln!(
        "discovery of {total} resources: median {:?} of 5 ({times:?})",
        times[2]
    );
    sim.shutdown().await;
}

/// `:events` sorts by LAST SEEN, newest first, and events of the same second by their
/// resourceVersion (so that they never reshuffle, k9s #2618); LAST SEEN ages on screen
/// rather than staying what the server printed; Warnings stand out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_sort_by_last_seen_with_a_stable_tie_break_and_warnings_stand_out() {
    use kscope_index_views::columns::RowHealth;
    use kscope_resources::Timestamp;

    let sim = Sim::start(SimConfig::with_size(4, 1, 1))
        .await
        .expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let namespace = "kscope-events";
    let post = |path: String, body: serde_json::Value| {
        let client = cluster.client.clone();
        async move {
            let request = http::Request::post(path)
                .header("content-type", "application/json")
                .body(body.to_string().into_bytes())
                .expect("request");
            client.request_text(request).await.expect("created")
        }
    };
    post(
        "/api/v1/namespaces".into(),
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
    )
    .await;
    let at = |seconds_ago: i64| {
        Timestamp::from_seconds(Timestamp::now().seconds() - seconds_ago).to_string()
    };
    // Three in one second (created in this order: rising resourceVersions), one older.
    for (name, kind, seconds_ago) in [
        ("same-a", "Normal", 90),
        ("same-b", "Warning", 90),
        ("same-c", "Normal", 90),
        ("older", "Normal", 600),
    ] {
        post(
            format!("/api/v1/namespaces/{namespace}/events"),
            serde_json::json!({
                "apiVersion": "v1", "kind": "Event",
                "metadata": {"name": name, "namespace": namespace},
                "involvedObject": {"kind": "Pod", "name": "web", "namespace": namespace},
                "reason": "Tested", "message": format!("event {name}"), "type": kind,
                "firstTimestamp": at(seconds_ago), "lastTimestamp": at(seconds_ago),
                "count": 1, "source": {"component": "test"}
            }),
        )
        .await;
    }
    let catalog = Catalog::new(Discovery::run(&cluster.client).await.expect("discovers"));
    let pods = ViewSpec::new(kscope_resources::ResourceKind::Pods, NamespaceScope::All);
    let mut app = AppStart::new(cluster, pods).catalog(catalog).start();
    wait_rows(&mut app, "pods", |_, w| w.total == 4).await;
    run_command(&mut app, &format!("events -n {namespace}"));
    let window = wait_rows(&mut app, "the events", |_, w| w.total == 4).await;
    let names: Vec<&str> = window
        .rows
        .iter()
        .map(|r| r.key.rsplit('/').next().unwrap_or_default())
        .collect();
    assert_eq!(names, ["same-c", "same-b", "same-a", "older"]);
    let health: Vec<RowHealth> = window.rows.iter().map(|r| r.health).collect();
    assert_eq!(
        health,
        [
            RowHealth::Normal,
            RowHealth::Warning,
            RowHealth::Normal,
            RowHealth::Normal
        ]
    );
    // LAST SEEN is the time since, computed now: 90 s ago reads 90s (or 91s), not the
    // server's print.
    let last_seen = &window.rows[0].cells[0];
    assert!(
        last_seen == "90s" || last_seen == "91s" || last_seen == "92s",
        "{last_seen}"
    );
    assert_eq!(window.rows[3].cells[0], "10m");
    sim.shutdown().await;
}

/// A CronJob's LAST SCHEDULE ages on screen like AGE (the server printed it when the list
/// was read), while a Job's DURATION stays what the server printed: the rows captured as
/// of two days later say so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn times_since_age_on_screen_and_durations_do_not() {
    use kscope_resources::Timestamp;
    use kscope_ui::layout::Scroll;

    let mut config = SimConfig::with_size(10, 2, 2);
    config.controllers = false;
    let sim = Sim::start(config).await.expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let catalog = Catalog::new(Discovery::run(&cluster.client).await.expect("discovers"));
    let pods = ViewSpec::new(kscope_resources::ResourceKind::Pods, NamespaceScope::All);
    let mut app = AppStart::new(cluster, pods).catalog(catalog).start();
    wait_rows(&mut app, "pods", |_, w| w.total > 0).await;
    let two_days = |now: Timestamp| Timestamp::from_seconds(now.seconds() + 2 * 86_400);
    let column = |app: &App, name: &str| {
        app.table()
            .columns()
            .iter()
            .position(|c| c.name == name)
            .unwrap_or_else(|| panic!("no {name} column"))
    };
    for (command, aging, fixed) in [
        ("cj -A", "LAST SCHEDULE", None),
        ("job -A", "AGE", Some("DURATION")),
    ] {
        run_command(&mut app, command);
        let window = wait_rows(&mut app, command, |_, w| w.total > 0).await;
        let now = Timestamp::now();
        let later = app
            .table()
            .capture(&mut Scroll::default(), 50, two_days(now));
        let at = column(&app, aging);
        for (row, aged) in window.rows.iter().zip(&later.rows) {
            assert_eq!(row.key, aged.key);
            let (before, after) = (&row.cells[at], &aged.cells[at]);
            let days = |cell: &str| cell.trim_end_matches('d').parse::<i64>().ok();
            assert_eq!(
                days(after),
                days(before).map(|d| d + 2),
                "{aging} of {}: {before} then {after}",
                row.key
            );
        }
        if let Some(fixed) = fixed {
            let at = column(&app, fixed);
            for (row, aged) in window.rows.iter().zip(&later.rows) {
                assert_eq!(row.cells[at], aged.cells[at], "{fixed} stays");
            }
        }
    }
    sim.shutdown().await;
}
