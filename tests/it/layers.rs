//! The layers of DESIGN.md's data flow are the workspace's crates, so the compiler refuses an
//! import from a layer above. What it cannot refuse is a new dependency edge in a Cargo.toml:
//! this checks the crate graph against the documented one (docs/architecture.md), that only
//! the UI names a terminal crate, and that no two files of a crate import each other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::tools;

/// Each kscope crate and the kscope crates it may depend on (normal dependencies).
const GRAPH: &[(&str, &[&str])] = &[
    ("kscope-units", &[]),
    ("kscope-informers", &[]),
    ("kscope-resources", &["kscope-informers"]),
    (
        "kscope-client",
        &["kscope-informers", "kscope-resources", "kscope-units"],
    ),
    (
        "kscope-index-views",
        &[
            "kscope-client",
            "kscope-informers",
            "kscope-resources",
            "kscope-units",
        ],
    ),
    (
        "kscope-config",
        &[
            "kscope-index-views",
            "kscope-informers",
            "kscope-resources",
            "kscope-units",
        ],
    ),
    // The demo's Widget controller runs kscope's informers and workqueue inside the sim.
    ("kscope-sim", &["kscope-informers", "kscope-units"]),
    (
        "kscope-ui",
        &[
            "kscope-client",
            "kscope-config",
            "kscope-index-views",
            "kscope-informers",
            "kscope-resources",
            "kscope-units",
        ],
    ),
    // Run by hand to regenerate the sim's protobuf tables; no kscope crate depends on it.
    ("kscope-proto-schema", &[]),
    (
        "kscope",
        &[
            "kscope-client",
            "kscope-config",
            "kscope-index-views",
            "kscope-informers",
            "kscope-resources",
            "kscope-sim",
            "kscope-ui",
            "kscope-units",
        ],
    ),
];

/// The crates only the UI may depend on.
const TERMINAL: &[&str] = &["ratatui", "crossterm"];

fn metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

/// Each workspace package's normal dependencies by name, and its manifest's directory.
fn packages(metadata: &Value) -> BTreeMap<String, (BTreeSet<String>, String)> {
    let packages = metadata["packages"].as_array().expect("packages");
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .expect("dependencies")
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().expect("a name").to_owned())
                .collect();
            let manifest = Path::new(p["manifest_path"].as_str().expect("a manifest"));
            let dir = manifest
                .parent()
                .expect("a directory")
                .display()
                .to_string();
            (p["name"].as_str().expect("a name").to_owned(), (deps, dir))
        })
        .collect()
}

#[test]
fn the_crate_graph_is_the_documented_one() {
    let packages = packages(&metadata());
    let graph: BTreeMap<&str, &[&str]> = GRAPH.iter().copied().collect();
    let names: BTreeSet<&str> = packages.keys().map(String::as_str).collect();
    let documented: BTreeSet<&str> = graph.keys().copied().collect();
    assert_eq!(names, documented, "every crate has its place in GRAPH");
    let mut violations = Vec::new();
    for (name, (deps, _)) in &packages {
        let ours: BTreeSet<&str> = deps
            .iter()
            .map(String::as_str)
            .filter(|d| d.starts_with("kscope"))
            .collect();
        let allowed: BTreeSet<&str> = graph[name.as_str()].iter().copied().collect();
        for extra in ours.difference(&allowed) {
            violations.push(format!("{name} depends on {extra}"));
        }
        if name != "kscope-ui" {
            for terminal in TERMINAL.iter().filter(|t| deps.contains(**t)) {
                violations.push(format!("{name} depends on {terminal}"));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "the crate graph differs from the documented one:\n{}",
        violations.join("\n")
    );
}

/// The file-level import cycles of each crate, as the project's shared tool finds them.
#[test]
fn no_two_files_import_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = root.join("../shared/tools/cycles.py");
    let Some(python) = tools::required("python3", "to run the shared cycle finder") else {
        return;
    };
    if !script.exists() {
        tools::missing(&format!(
            "{} (the shared cycle finder beside the checkout)",
            script.display()
        ));
        return;
    }
    let mut reports = Vec::new();
    for (name, (_, dir)) in packages(&metadata()) {
        // The binary's package keeps its sources in src/, beside the member crates' folders.
        let sources = if Path::new(&dir) == root {
            root.join("src")
        } else {
            dir.into()
        };
        let out = Command::new(&python)
            .arg(&script)
            .arg(&sources)
            .output()
            .expect("python3 runs");
        let report = String::from_utf8_lossy(&out.stdout);
        assert!(
            report.contains("cycles among"),
            "{name}: the cycle finder said nothing: {report}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        if report.lines().any(|l| l.starts_with("cycle")) {
            reports.push(format!("{name}:\n{report}"));
        }
    }
    assert!(reports.is_empty(), "import cycles:\n{}", reports.join("\n"));
}
