//! The layers of DESIGN.md's data flow, checked on the source: each top-level module imports
//! only from the layers below it, the informer, resource, client and view layers name no
//! terminal crate, and no two files import each other, directly or through a cycle.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::tools;

/// What each top-level module of `src/` may import from the crate, besides itself.
const ALLOWED: &[(&str, &[&str])] = &[
    ("duration", &[]),
    ("quantity", &[]),
    ("logging", &[]),
    ("informers", &[]),
    ("resources", &["informers"]),
    ("client", &["informers", "resources", "duration"]),
    (
        "index_views",
        &["informers", "resources", "client", "quantity"],
    ),
    (
        "config",
        &["index_views", "informers", "resources", "duration"],
    ),
    (
        "commands",
        &[
            "config",
            "index_views",
            "client",
            "resources",
            "informers",
            "duration",
        ],
    ),
    // The demo's Widget controller runs kscope's informers and workqueue inside the sim.
    ("sim", &["duration", "informers", "quantity"]),
    (
        "ui",
        &[
            "commands",
            "config",
            "index_views",
            "client",
            "resources",
            "informers",
            "duration",
            "sim",
            "logging",
        ],
    ),
];

/// Layers that know nothing of a terminal.
const NO_TERMINAL: &[&str] = &["informers", "resources", "client", "index_views"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The file's code, comments left out, so that a doc comment may name another layer.
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("a source file is readable");
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules that `code` names as `crate::NAME`.
fn crate_imports(code: &str) -> Vec<String> {
    code.match_indices("crate::")
        .filter(|(at, _)| {
            // `kscope::crate::` never occurs; `$crate::` in a macro is the crate itself too.
            !code[..*at].ends_with(|c: char| c.is_alphanumeric() || c == '_')
        })
        .map(|(at, m)| {
            code[at + m.len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

#[test]
fn each_layer_imports_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut violations = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src/");
        let top = relative
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .map(|c| c.trim_end_matches(".rs"))
            .expect("a file name");
        if matches!(top, "main" | "lib") {
            continue;
        }
        let Some(may_import) = allowed.get(top) else {
            violations.push(format!(
                "{}: module `{top}` has no layer here",
                relative.display()
            ));
            continue;
        };
        let code = code_of(file);
        for imported in crate_imports(&code) {
            if imported != top && !may_import.contains(&imported.as_str()) {
                violations.push(format!(
                    "{}: `{top}` imports `crate::{imported}`",
                    relative.display()
                ));
            }
        }
        if NO_TERMINAL.contains(&top) {
            for name in ["ratatui", "crossterm"] {
                if code.contains(name) {
                    violations.push(format!("{}: `{top}` names {name}", relative.display()));
                }
            }
        }
    }
    violations.sort();
    violations.dedup();
    assert!(
        violations.is_empty(),
        "layer violations:\n{}",
        violations.join("\n")
    );
}

/// The file-level import cycles, as the project's shared tool finds them.
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
    let out = Command::new(python)
        .arg(&script)
        .arg("src")
        .current_dir(root)
        .output()
        .expect("python3 runs");
    let report = String::from_utf8_lossy(&out.stdout);
    let cycles: Vec<&str> = report.lines().filter(|l| l.starts_with("cycle")).collect();
    assert!(cycles.is_empty(), "import cycles:\n{report}");
}
