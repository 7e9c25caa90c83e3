//! Indexes for any kind, against the sim over real HTTP: a JSONPath field index on a custom
//! resource, and on pods (a hand-written projection), selects exactly what a client-side
//! filter of `kubectl get … -o json` selects (through `kscope get --index` and through the
//! TUI's filter); an index scoped to kinds is offered, and gets a column, only on them; a
//! path that does not fit an object leaves it out, counted and logged once; a bad JSONPath
//! is placed at file:line:col; a path into a Secret's values is refused; a built-in index
//! can be removed. Skipped where kubectl is absent (failed under CI=true).

use std::collections::{BTreeMap, BTreeSet};
use std::process::Output;

use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_client::discovery::{Catalog, CatalogWatch};
use kscope_config::Config;
use kscope_index_views::live::Window;
use kscope_sim::SimConfig;
use kscope_ui::action::Action;
use kscope_ui::app::App;
use kscope_ui::nav::ViewSpec;
use serde_json::Value;

use crate::common::cli::{kscope, log};
use crate::common::kubectl::Kubectl;
use crate::common::tui::{AppStart, wait_rows};
use crate::tui_keys::run_command;

/// The indexes under test: a condition's status and a number on widgets only, a colour on
/// every kind (none but widgets have one), one whose path meets a string where it wants an
/// object, and the built-in `app` removed.
const CONFIG: &str = "indexes:
  app: null
  ready:
    kinds: [widgets.example.com]
    field: '.status.conditions[?(@.type==\"Ready\")].status'
  replicas:
    kinds: [widget]
    field: '{.spec.replicas}'
  colour:
    field: .spec.color
  shade:
    kinds: [widgets]
    field: .spec.color.shade
";

fn sim_config() -> SimConfig {
    let mut config = SimConfig::with_size(30, 3, 2);
    // No controller rewrites the widgets' status while kubectl and kscope read them.
    config.controllers = false;
    config
}

/// `namespace/name` of every object of `resource` kubectl lists, with its JSON.
async fn listed(fx: &Kubectl, resource: &str) -> BTreeMap<String, Value> {
    let list: Value = serde_json::from_str(&fx.ok(&["get", resource, "-A", "-o", "json"]).await)
        .expect("kubectl prints JSON");
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|o| {
            let key = format!(
                "{}/{}",
                o["metadata"]["namespace"].as_str().unwrap_or_default(),
                o["metadata"]["name"].as_str().unwrap_or_default()
            );
            (key, o.clone())
        })
        .collect()
}

/// `kscope get RESOURCE -A --index INDEX` with the indexes of the config file `config`.
async fn get_indexed(fx: &Kubectl, resource: &str, config: &str, index: &str) -> Output {
    let kubeconfig = fx.dir.join("kubeconfig").display().to_string();
    let args = [
        "get",
        resource,
        "-A",
        "--kubeconfig",
        &kubeconfig,
        "--config",
        config,
        "--index",
        index,
    ];
    kscope(&fx.dir, &args).await
}

/// The widgets whose `value(widget)` is `want`: the client-side filter kscope must match.
fn filtered(
    widgets: &BTreeMap<String, Value>,
    value: impl Fn(&Value) -> Option<String>,
    want: &str,
) -> BTreeSet<String> {
    widgets
        .iter()
        .filter(|(_, w)| value(w).as_deref() == Some(want))
        .map(|(k, _)| k.clone())
        .collect()
}

fn ready(w: &Value) -> Option<String> {
    w["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")
        .and_then(|c| c["status"].as_str())
        .map(str::to_string)
}

/// `namespace/name` of each row of an all-namespaces table from `kscope get`.
fn rows(out: &Output) -> BTreeSet<String> {
    assert!(
        out.status.success(),
        "kscope get: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip(1)
        .filter_map(|l| {
            let mut cols = l.split_whitespace();
            Some(format!("{}/{}", cols.next()?, cols.next()?))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_field_index_on_a_custom_resource_selects_what_kubectl_json_gives() {
    let Some(fx) = Kubectl::start_with("kinds-index-get", sim_config()).await else {
        return;
    };
    let config = fx.file("config.yaml", CONFIG);
    let all = listed(&fx, "widgets").await;
    assert!(all.len() >= 4, "the sim serves widgets: {all:?}");
    let get = |index: String| {
        let config = config.clone();
        let fx = &fx;
        async move { get_indexed(fx, "widgets", &config, &index).await }
    };
    let mut seen = 0;
    for status in ["True", "False"] {
        let want = filtered(&all, ready, status);
        seen += want.len();
        assert_eq!(
            rows(&get(format!("ready={status}")).await),
            want,
            "{status}"
        );
    }
    assert_eq!(seen, all.len(), "every widget has a Ready condition");
    for colour in ["blue", "green", "red"] {
        let want = filtered(
            &all,
            |w| w["spec"]["color"].as_str().map(str::to_string),
            colour,
        );
        assert_eq!(
            rows(&get(format!("colour={colour}")).await),
            want,
            "{colour}"
        );
    }
    // A number indexes as kubectl prints it.
    let replicas = |w: &Value| w["spec"]["replicas"].as_i64().map(|n| n.to_string());
    let some = all
        .values()
        .find_map(replicas)
        .expect("a widget with replicas");
    let want = filtered(&all, replicas, &some);
    assert_eq!(rows(&get(format!("replicas={some}")).await), want);

    // Scoped: pods are offered neither the widgets' indexes nor `app`, which is removed;
    // `colour` is on every kind, and no pod has one.
    let pods = |index: &'static str| get_indexed(&fx, "pods", &config, index);
    assert!(rows(&pods("colour=blue").await).is_empty());
    for index in ["ready=True", "app=web"] {
        let out = pods(index).await;
        assert!(!out.status.success(), "pods --index {index}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("unknown index"), "{index}: {err}");
    }

    // The path that meets a string where it wants an object: every widget is left out of
    // that index, and the log says so once.
    let before = log(&fx.dir).len();
    let out = get("shade=x".to_string()).await;
    assert!(rows(&out).is_empty());
    let logged = log(&fx.dir).split_off(before);
    assert_eq!(
        logged
            .matches("an object left out of a field index")
            .count(),
        1,
        "{logged}"
    );
    assert!(
        logged.contains("a string where an object was expected"),
        "{logged}"
    );
}

/// The App over the sim with `config`'s indexes, showing `resource` in every namespace,
/// with the discovery watch that keeps its catalog current.
async fn start_indexed_app(fx: &Kubectl, resource: &str, config: &str) -> (App, CatalogWatch) {
    let cluster = Cluster::from_config(fx.sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let (catalog, watch, error) = Catalog::keep_current(&cluster).await;
    assert!(error.is_none(), "{error:?}");
    let kind = catalog.current().resolve(resource).expect("served");
    let view = ViewSpec::new(kind, NamespaceScope::All);
    let config = Config::merged(Some(("test.yaml", config))).expect("config");
    let app = AppStart::new(cluster, view)
        .indexes(config.indexes)
        .catalog(catalog)
        .start();
    (app, watch)
}

fn keys(window: &Window) -> BTreeSet<String> {
    window.rows.iter().map(|r| r.key.to_string()).collect()
}

/// Types `text` in the filter bar over whatever it holds (Esc would leave the view).
fn filter(app: &mut App, text: &str) {
    app.apply(Action::OpenFilter);
    for _ in 0..64 {
        app.apply(Action::FilterBackspace);
    }
    for c in text.chars() {
        app.apply(Action::FilterChar(c));
    }
    app.apply(Action::FilterAccept);
}

/// Filters the table on screen by `index` = the first value `value` gives of an object of
/// `all`, and checks that exactly the objects of `all` with that value show.
async fn filter_matches(
    app: &mut App,
    all: &BTreeMap<String, Value>,
    index: &str,
    value: impl Fn(&Value) -> Option<String> + Copy,
) {
    let some = all
        .values()
        .find_map(value)
        .expect("an object with a value");
    let want = filtered(all, value, &some);
    filter(app, &format!("{index}={some}"));
    let window = wait_rows(app, index, |_, w| w.total == want.len() && w.total > 0).await;
    assert_eq!(keys(&window), want, "{index}={some}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tui_offers_an_index_only_on_its_kinds_and_filters_by_it() {
    let Some(fx) = Kubectl::start_with("kinds-index-tui", sim_config()).await else {
        return;
    };
    let all = listed(&fx, "widgets").await;
    let (mut app, _watch) = start_indexed_app(&fx, "pods", CONFIG).await;
    wait_rows(&mut app, "pods", |_, w| w.total > 0).await;
    let names = app.table().index_names();
    assert_eq!(
        names,
        ["namespace", "node", "phase", "status", "owner", "colour"],
        "pods"
    );
    let index_columns: Vec<String> = app
        .table()
        .columns()
        .into_iter()
        .filter(|c| c.index)
        .map(|c| c.name)
        .collect();
    assert_eq!(index_columns, ["COLOUR"], "pods");

    run_command(&mut app, "widgets -A");
    assert_eq!(app.state().command.error, None);
    wait_rows(&mut app, "widgets", |_, w| w.total == all.len()).await;
    assert_eq!(
        app.table().index_names(),
        ["namespace", "owner", "ready", "replicas", "colour", "shade"]
    );
    let index_columns: Vec<String> = app
        .table()
        .columns()
        .into_iter()
        .filter(|c| c.index)
        .map(|c| c.name)
        .collect();
    assert_eq!(index_columns, ["READY", "REPLICAS", "COLOUR", "SHADE"]);
    for status in ["True", "False"] {
        filter(&mut app, &format!("ready={status}"));
        let want = filtered(&all, ready, status);
        let window = wait_rows(&mut app, status, |_, w| w.total == want.len()).await;
        assert_eq!(keys(&window), want, "ready={status}");
    }
    let counts = app.table().value_counts("ready");
    let total: usize = counts.iter().map(|c| c.count).sum();
    assert_eq!(total, all.len());
    assert_eq!(app.table().index_misfits("shade").count, all.len());
    assert!(app.table().value_counts("shade").is_empty());

    // Services: `colour` (every kind) is offered, the widgets' indexes are not.
    run_command(&mut app, "svc -A");
    assert_eq!(app.state().command.error, None);
    wait_rows(&mut app, "services", |_, w| w.total > 0).await;
    assert_eq!(app.table().index_names(), ["namespace", "owner", "colour"]);
}

#[tokio::test]
async fn a_bad_json_path_in_the_config_is_placed_at_file_line_column() {
    let dir = crate::common::cli::temp_dir("kinds-index-bad");
    let file = dir.join("bad.yaml");
    std::fs::write(
        &file,
        "# mine\nindexes:\n  ready:\n    kinds: [widgets]\n    field: .status.conditions[?(@.type==)].status\n",
    )
    .expect("write");
    let out = kscope(
        &dir,
        &["get", "pods", "--config", &file.display().to_string()],
    )
    .await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.yaml:5:41: indexes.ready.field: invalid JSONPath at character 30"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_added_at_run_time_is_backfilled_or_relisted() {
    let Some(fx) = Kubectl::start_with("kinds-index-runtime", sim_config()).await else {
        return;
    };
    let all = listed(&fx, "widgets").await;
    let (mut app, _watch) = start_indexed_app(&fx, "widgets", CONFIG).await;
    wait_rows(&mut app, "widgets", |_, w| w.total == all.len()).await;
    let status = |app: &App| app.state().command.error.clone().unwrap_or_default();

    // A label index: backfilled from the store at once, with its column.
    run_command(&mut app, "index squad label=team");
    assert!(
        status(&app).contains("added to widgets.example.com and backfilled"),
        "{}",
        status(&app)
    );
    assert!(app.table().index_names().contains(&"squad".to_string()));
    assert!(
        app.table()
            .columns()
            .iter()
            .any(|c| c.index && c.name == "SQUAD")
    );
    let team = |w: &Value| w["metadata"]["labels"]["team"].as_str().map(str::to_string);
    let some = all
        .values()
        .find_map(team)
        .expect("a widget with a team label");
    filter(&mut app, &format!("squad={some}"));
    let want = filtered(&all, team, &some);
    let window = wait_rows(&mut app, "squad", |_, w| w.total == want.len()).await;
    assert_eq!(keys(&window), want);

    // The same name again is refused; a source that does not parse is said.
    run_command(&mut app, "index squad label=x");
    assert!(status(&app).contains("squad"), "{}", status(&app));
    run_command(&mut app, "index bad field=.spec[");
    assert!(
        status(&app).contains("invalid JSONPath"),
        "{}",
        status(&app)
    );

    // A JSONPath on a discovered kind: the store keeps no object, so the table relists.
    run_command(&mut app, "index size field=.spec.size kinds=widgets");
    assert!(
        status(&app).contains("relisting widgets.example.com"),
        "{}",
        status(&app)
    );
    let size = |w: &Value| w["spec"]["size"].as_str().map(str::to_string);
    filter_matches(&mut app, &all, "size", size).await;

    // An index for other kinds is kept for them and said not to apply here.
    run_command(&mut app, "index zone label=zone kinds=svc");
    assert!(
        status(&app).contains("does not apply to widgets"),
        "{}",
        status(&app)
    );
    assert!(!app.table().index_names().contains(&"zone".to_string()));
    run_command(&mut app, "svc -A");
    wait_rows(&mut app, "services", |_, w| w.total > 0).await;
    assert!(app.table().index_names().contains(&"zone".to_string()));
    assert!(!app.table().index_names().contains(&"size".to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_columns_print_what_kubectl_prints() {
    let Some(fx) = Kubectl::start_with("kinds-index-columns", sim_config()).await else {
        return;
    };
    let kubeconfig = fx.dir.join("kubeconfig").display().to_string();
    let template = fx.file(
        "columns.txt",
        "NAME          REPLICAS         IMAGE\n.metadata.name {.spec.replicas} .spec.template.spec.containers[*].image\n",
    );
    let cases: Vec<(&str, Vec<&str>, String)> = vec![
        (
            "pods",
            vec!["-A"],
            "NAME:.metadata.name,NS:.metadata.namespace,NODE:.spec.nodeName,\
             IMAGES:.spec.containers[*].image,\
             READY:.status.conditions[?(@.type==\"Ready\")].status,\
             RESTARTS:.status.containerStatuses[0].restartCount,LABELS:.metadata.labels,\
             NOTHING:.spec.nothing"
                .to_string(),
        ),
        (
            "svc",
            vec!["-A"],
            "NAME:.metadata.name,TYPE:.spec.type,PORTS:.spec.ports[*].port,SELECTOR:.spec.selector"
                .to_string(),
        ),
        (
            "widgets",
            vec!["-A"],
            "N:.metadata.name,SIZE:.spec.size,REPLICAS:.spec.replicas,\
             READY:{.status.conditions[?(@.type==\"Ready\")].status}"
                .to_string(),
        ),
        (
            "nodes",
            vec![],
            "NAME:.metadata.name,CAPACITY:.status.capacity.cpu,TAINTS:.spec.taints".to_string(),
        ),
    ];
    for (resource, flags, spec) in cases {
        let output = format!("custom-columns={spec}");
        let mut args = vec!["get", resource];
        args.extend(&flags);
        args.extend(["-o", &output]);
        let want = fx.ok(&args).await;
        assert!(want.lines().count() > 1, "{resource}: {want}");
        args.extend(["--kubeconfig", &kubeconfig]);
        let out = kscope(&fx.dir, &args).await;
        assert!(
            out.status.success(),
            "{resource}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), want, "{resource}");
    }
    // From a file, over deployments; and over nothing, a header alone.
    let output = format!("custom-columns-file={template}");
    for scope in [&["-A"][..], &["-n", "default"][..]] {
        let mut args = vec!["get", "deploy", "-o", &output];
        args.extend(scope);
        let want = fx.ok(&args).await;
        assert_eq!(want.lines().count() > 1, scope == ["-A"], "{want}");
        args.extend(["--kubeconfig", &kubeconfig]);
        let out = kscope(&fx.dir, &args).await;
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            want,
            "deployments {scope:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_columns_never_print_a_secret_value() {
    let Some(fx) = Kubectl::start_with("kinds-index-secret", sim_config()).await else {
        return;
    };
    let kubeconfig = fx.dir.join("kubeconfig").display().to_string();
    let list: Value =
        serde_json::from_str(&fx.ok(&["get", "secrets", "-A", "-o", "json"]).await).expect("JSON");
    let values: Vec<String> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|s| s["data"].as_object())
        .flat_map(|data| data.values().filter_map(Value::as_str).map(str::to_string))
        .filter(|v| v.len() >= 4)
        .collect();
    assert!(!values.is_empty(), "the sim's secrets hold data");
    let spec = "custom-columns=N:.metadata.name,DATA:.data,ONE:.data.*";
    let out = kscope(
        &fx.dir,
        &[
            "get",
            "secrets",
            "-A",
            "-o",
            spec,
            "--kubeconfig",
            &kubeconfig,
        ],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.lines().count() > 1, "{printed}");
    for value in &values {
        assert!(
            !printed.contains(value.as_str()),
            "a Secret value printed:\n{printed}"
        );
    }
}

/// JSONPath indexes on pods, whose projection is hand-written: a multi-valued path, a
/// filter, a member, and a path that meets a string where it wants an object.
const POD_CONFIG: &str = "indexes:
  image:
    kinds: [pods]
    field: .spec.containers[*].image
  podready:
    kinds: [po]
    field: '.status.conditions[?(@.type==\"Ready\")].status'
  account:
    field: .spec.serviceAccountName
  zone:
    kinds: [pods]
    field: .spec.nodeName.zone
";

/// Every container image of a pod, each once.
fn images(pod: &Value) -> BTreeSet<String> {
    pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["image"].as_str().map(str::to_string))
        .collect()
}

/// The pods having `image` among their containers' images.
fn with_image(pods: &BTreeMap<String, Value>, image: &str) -> BTreeSet<String> {
    pods.iter()
        .filter(|(_, p)| images(p).contains(image))
        .map(|(k, _)| k.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_field_index_on_pods_selects_what_kubectl_json_gives() {
    let Some(fx) = Kubectl::start_with("kinds-index-pods", sim_config()).await else {
        return;
    };
    let config = fx.file("config.yaml", POD_CONFIG);
    let all = listed(&fx, "pods").await;
    let get = |index: String| {
        let config = config.clone();
        let fx = &fx;
        async move { get_indexed(fx, "pods", &config, &index).await }
    };
    let every_image: BTreeSet<String> = all.values().flat_map(images).collect();
    assert!(
        all.values().any(|p| images(p).len() >= 2),
        "some pod has two images"
    );
    for image in &every_image {
        let want = with_image(&all, image);
        assert!(!want.is_empty());
        assert_eq!(rows(&get(format!("image={image}")).await), want, "{image}");
    }
    let mut seen = 0;
    for status in ["True", "False"] {
        let want = filtered(&all, ready, status);
        seen += want.len();
        assert_eq!(
            rows(&get(format!("podready={status}")).await),
            want,
            "{status}"
        );
    }
    assert_eq!(seen, all.len(), "every pod has a Ready condition");
    let account = |p: &Value| p["spec"]["serviceAccountName"].as_str().map(str::to_string);
    let some = all.values().find_map(account).expect("a service account");
    assert_eq!(
        rows(&get(format!("account={some}")).await),
        filtered(&all, account, &some)
    );

    // A pod whose node name is a string has no member `zone`: left out, logged once.
    let before = log(&fx.dir).len();
    assert!(rows(&get("zone=a".to_string()).await).is_empty());
    let logged = log(&fx.dir).split_off(before);
    assert_eq!(
        logged
            .matches("an object left out of a field index")
            .count(),
        1,
        "{logged}"
    );
    assert!(
        logged.contains("a string where an object was expected"),
        "{logged}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tui_filters_pods_by_a_json_path_index_and_adds_one_at_run_time() {
    let Some(fx) = Kubectl::start_with("kinds-index-pods-tui", sim_config()).await else {
        return;
    };
    let all = listed(&fx, "pods").await;
    let (mut app, _watch) = start_indexed_app(&fx, "pods", POD_CONFIG).await;
    wait_rows(&mut app, "pods", |_, w| w.total == all.len()).await;
    assert_eq!(
        app.table().index_names(),
        [
            "namespace",
            "node",
            "phase",
            "status",
            "owner",
            "app",
            "image",
            "podready",
            "account",
            "zone"
        ]
    );
    let index_columns: Vec<String> = app
        .table()
        .columns()
        .into_iter()
        .filter(|c| c.index)
        .map(|c| c.name)
        .collect();
    assert_eq!(
        index_columns,
        ["APP", "IMAGE", "PODREADY", "ACCOUNT", "ZONE"]
    );
    for image in all.values().flat_map(images).collect::<BTreeSet<_>>() {
        filter(&mut app, &format!("image={image}"));
        let want = with_image(&all, &image);
        let window = wait_rows(&mut app, &image, |_, w| w.total == want.len()).await;
        assert_eq!(keys(&window), want, "image={image}");
    }
    filter(&mut app, "podready=False");
    let want = filtered(&all, ready, "False");
    let window = wait_rows(&mut app, "podready", |_, w| w.total == want.len()).await;
    assert_eq!(keys(&window), want);
    // Multi-valued: a pod with two images counts under each.
    let counts: usize = app
        .table()
        .value_counts("image")
        .iter()
        .map(|c| c.count)
        .sum();
    assert_eq!(counts, all.values().map(|p| images(p).len()).sum::<usize>());
    let on_nodes = all
        .values()
        .filter(|p| p["spec"]["nodeName"].is_string())
        .count();
    assert!(on_nodes > 0);
    assert_eq!(app.table().index_misfits("zone").count, on_nodes);

    // At run time: the pods are relisted, and the new index answers.
    let status = |app: &App| app.state().command.error.clone().unwrap_or_default();
    run_command(&mut app, "index qos field=.status.qosClass kinds=pods");
    assert!(status(&app).contains("relisting pods"), "{}", status(&app));
    let qos = |p: &Value| p["status"]["qosClass"].as_str().map(str::to_string);
    filter_matches(&mut app, &all, "qos", qos).await;

    // On secrets, a path into their values is refused; a metadata path is not.
    run_command(&mut app, "index token field=.data.token kinds=secrets");
    assert!(
        status(&app).contains("may not read their values"),
        "{}",
        status(&app)
    );
    assert!(!app.table().index_names().contains(&"token".to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_into_secret_values_is_refused_and_a_metadata_path_is_not() {
    let Some(fx) = Kubectl::start_with("kinds-index-secret-paths", sim_config()).await else {
        return;
    };
    let kubeconfig = fx.dir.join("kubeconfig").display().to_string();
    // Scoped to secrets: refused where it is written.
    let file = fx.file(
        "scoped.yaml",
        "indexes:\n  token:\n    field: .data.token\n    kinds: [pods, secrets]\n",
    );
    let out = kscope(
        &fx.dir,
        &[
            "get",
            "secrets",
            "-A",
            "--kubeconfig",
            &kubeconfig,
            "--config",
            &file,
        ],
    )
    .await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("scoped.yaml:4:19: indexes.token.kinds: .data.token: a field index on secrets may not read their values"),
        "{err}"
    );
    // Unscoped: never offered on secrets; a metadata path is, and selects as kubectl's JSON.
    let file = fx.file(
        "unscoped.yaml",
        "indexes:\n  token:\n    field: .data.token\n  secretname:\n    field: .metadata.name\n  kind:\n    field: .type\n",
    );
    let get = |index: &'static str| get_indexed(&fx, "secrets", &file, index);
    let out = get("token=x").await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown index"));
    let secrets = listed(&fx, "secrets").await;
    let kind = |s: &Value| s["type"].as_str().map(str::to_string);
    let opaque = filtered(&secrets, kind, "Opaque");
    assert!(!opaque.is_empty(), "the sim has Opaque secrets");
    assert_eq!(rows(&get("kind=Opaque").await), opaque);
}
