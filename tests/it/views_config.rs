//! `kscope get` takes its indexes from the configuration: the built-in file, the user's file
//! under $XDG_CONFIG_HOME, or `--config FILE`; bad files are reported with file, line and key,
//! by `kscope get` and by the TUI (whose keys come from the same file) alike; an index set
//! to `null` in the user's file is removed.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use crate::common::tools;
use kscope_sim::{Sim, SimConfig};

/// A private directory: kubeconfig, configuration files, XDG homes.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("kscope-views-config-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        Self(dir)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("dir");
        }
        std::fs::write(&path, text).expect("write");
        path
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the kscope binary with its XDG directories inside `dir`, off the async runtime.
async fn kscope(dir: &Dir, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kscope"));
    command
        .args(args)
        .env("XDG_CONFIG_HOME", dir.0.join("config-home"))
        .env("XDG_STATE_HOME", dir.0.join("state"))
        .env("HOME", &dir.0)
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null());
    tokio::task::spawn_blocking(move || command.output())
        .await
        .expect("join")
        .expect("kscope runs")
}

/// `namespace/name` of each row of an all-namespaces pod table.
fn rows(out: &Output) -> BTreeSet<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip(1)
        .filter_map(|l| {
            let mut cols = l.split_whitespace();
            Some(format!("{}/{}", cols.next()?, cols.next()?))
        })
        .collect()
}

#[tokio::test]
async fn bad_config_names_file_line_and_key() {
    let dir = Dir::new("bad");
    let bad = dir.write("bad.yaml", "indexes:\n  team:\n    labl: team\n");
    let out = kscope(&dir, &["get", "pods", "--config", &bad.to_string_lossy()]).await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.yaml:3:"), "{err}");
    assert!(err.contains("labl"), "{err}");
    let out = kscope(&dir, &["get", "pods", "--config", "/nonexistent.yaml"]).await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent.yaml: cannot read"), "{err}");
    // A bad file in the XDG place is an error too.
    dir.write(
        "config-home/kscope/config.yaml",
        "indexes:\n  team:\n    field: teams\n",
    );
    let out = kscope(&dir, &["get", "pods"]).await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("config-home/kscope/config.yaml:3:12: indexes.team.field"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_indexes_from_xdg_and_from_config_flag() {
    let Some(kubectl_path) = tools::required("kubectl", "to read the sim as a real client") else {
        return;
    };
    let sim = Sim::start(SimConfig::with_size(60, 3, 2).seed(5))
        .await
        .expect("sim starts");
    let dir = Dir::new("user");
    let kubeconfig = dir.write("kubeconfig", sim.kubeconfig_yaml());
    let kubeconfig = kubeconfig.to_string_lossy().into_owned();
    let kubectl = Command::new(&kubectl_path)
        .args([
            "get",
            "pods",
            "-A",
            "-o",
            "jsonpath={.items[0].metadata.labels.team}",
        ])
        .env("KUBECONFIG", &kubeconfig)
        .env("HOME", &dir.0)
        .output()
        .expect("kubectl runs");
    let team = String::from_utf8_lossy(&kubectl.stdout).into_owned();
    assert!(!team.is_empty(), "sim pods carry a team label");
    let want: BTreeSet<String> = String::from_utf8_lossy(
        &Command::new(&kubectl_path)
            .args([
                "get",
                "pods",
                "-A",
                "-l",
                &format!("team={team}"),
                "-o",
                "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{\"\\n\"}{end}",
            ])
            .env("KUBECONFIG", &kubeconfig)
            .env("HOME", &dir.0)
            .output()
            .expect("kubectl runs")
            .stdout,
    )
    .lines()
    .map(str::to_string)
    .collect();
    let index = format!("squad={team}");
    let get = [
        "get",
        "pods",
        "-A",
        "--kubeconfig",
        &kubeconfig,
        "--index",
        &index,
    ];

    let out = kscope(&dir, &get).await;
    assert!(!out.status.success(), "no squad index built in");
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown index \"squad\""));

    let flag = dir.write("flag.yaml", "indexes:\n  squad: {label: team}\n");
    let mut with_flag = get.to_vec();
    let flag = flag.to_string_lossy().into_owned();
    with_flag.extend(["--config", &flag]);
    let out = kscope(&dir, &with_flag).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(rows(&out), want);

    dir.write(
        "config-home/kscope/config.yaml",
        "indexes:\n  squad:\n    label: team\n",
    );
    let out = kscope(&dir, &get).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(rows(&out), want);
}

#[tokio::test]
async fn bad_keys_are_reported_by_get_and_by_the_tui() {
    let dir = Dir::new("keys");
    dir.write(
        "config-home/kscope/config.yaml",
        "keys:\n  normal:\n    down: [j]\n    up: [k, j]\n",
    );
    let want =
        "config-home/kscope/config.yaml:4:13: keys.normal.up: j is also bound to down in normal";
    let out = kscope(&dir, &["get", "pods"]).await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(want), "{err}");
    let out = kscope(&dir, &["--demo"]).await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(want), "{err}");
    dir.write(
        "config-home/kscope/config.yaml",
        "keys:\n  normal:\n    down: [j, hyper-j]\n",
    );
    let out = kscope(&dir, &["--demo"]).await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("config-home/kscope/config.yaml:3:15: keys.normal.down: unknown key"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_built_in_index_set_to_null_in_the_users_file_is_removed() {
    let sim = Sim::start(SimConfig::with_size(20, 2, 2).seed(3))
        .await
        .expect("sim starts");
    let dir = Dir::new("removed");
    let kubeconfig = dir.write("kubeconfig", sim.kubeconfig_yaml());
    let kubeconfig = kubeconfig.to_string_lossy().into_owned();
    let get = |index: &'static str| {
        let kubeconfig = kubeconfig.clone();
        let dir = &dir;
        async move {
            let args = [
                "get",
                "pods",
                "-A",
                "--kubeconfig",
                &kubeconfig,
                "--index",
                index,
            ];
            kscope(dir, &args).await
        }
    };
    let out = get("app=nothing-has-this").await;
    assert!(
        out.status.success(),
        "app is built in: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.write(
        "config-home/kscope/config.yaml",
        "# no app index here\nindexes:\n  app: null\n",
    );
    let out = get("app=nothing-has-this").await;
    assert!(!out.status.success(), "app was removed");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown index \"app\""), "{err}");
    assert!(!err.contains(" app,") && !err.ends_with(" app"), "{err}");
    // The other built-in indexes stay.
    let out = get("phase=Running").await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!rows(&out).is_empty());
}
