//! A custom resource's printer columns, evaluated by kscope on plain JSON, against the
//! sim's own Table (what kubectl prints): one column of each type, values of the wrong
//! type, missing ones, several results, a priority-1 column (`-o wide`) and a `date` column;
//! then the TUI table of the same columns, drawn from a fixed store. Skipped where kubectl
//! is absent (failed under CI=true).

use std::sync::Arc;

use kscope_client::printer_columns::client_columns;
use kscope_index_views::live::{LiveView, SortSpec};
use kscope_index_views::printer_columns::KubectlPrinterColumns;
use kscope_index_views::query::Query;
use kscope_index_views::registry::IndexRegistry;
use kscope_resources::decode::from_slice;
use kscope_resources::{ApiResource, GenericObject, Kind, Timestamp, decoding_with_columns};
use kscope_ui::draw::{self, Header, Parts};
use kscope_ui::state::UiState;
use kscope_ui::table::capture;
use parking_lot::Mutex;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::common::cli::kscope;
use crate::common::kubectl::Kubectl;
use crate::kinds::parse_table;

use crate::common::tui;

/// Printers: a column of each type, several results (TAGS), a filter (READY), a `date`
/// column (SINCE) and a priority-1 one (OWNER); spec and status take any value.
const PRINTER_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: printers.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: printers
    singular: printer
    kind: Printer
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Colour, type: string, jsonPath: .spec.colour}
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Ratio, type: number, jsonPath: .spec.ratio}
    - {name: "On", type: boolean, jsonPath: .spec.on}
    - {name: Tags, type: string, jsonPath: ".spec.tags[*]"}
    - {name: Ready, type: string, jsonPath: ".status.conditions[?(@.type==\"Ready\")].status"}
    - {name: Since, type: date, jsonPath: .status.since}
    - {name: Owner, type: string, jsonPath: .spec.owner, priority: 1}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
"#;

/// p1 has every value of its column's type; p2 has each of the wrong type or none; p3 has
/// floats where integers are wanted, an object where a string is, and a null.
const PRINTERS: &str = r#"apiVersion: example.com/v1
kind: Printer
metadata: {name: p1, namespace: web}
spec: {colour: blue, size: 3, ratio: 0.5, "on": true, tags: [a, b], owner: team-a}
status:
  since: "2020-01-01T00:00:00Z"
  conditions: [{type: Synced, status: "False"}, {type: Ready, status: "True"}]
---
apiVersion: example.com/v1
kind: Printer
metadata: {name: p2, namespace: web}
spec: {colour: 7, size: big, ratio: 2, "on": "yes", tags: []}
status: {since: "not a date", conditions: "none"}
---
apiVersion: example.com/v1
kind: Printer
metadata: {name: p3, namespace: db}
spec: {colour: {shade: dark, code: 1}, size: 2.9, ratio: 1234567.5, "on": false, owner: null}
status: {since: 5}
"#;

/// The cells that tell time: compared as durations (both printed one), not as text.
const CLOCK: [&str; 2] = ["AGE", "SINCE"];

fn is_duration(cell: &str) -> bool {
    !cell.is_empty()
        && cell
            .chars()
            .all(|c| c.is_ascii_digit() || "smhdy".contains(c))
        && cell.starts_with(|c: char| c.is_ascii_digit())
}

/// The rows sorted, each clock cell that is a duration read as "<duration>".
fn comparable(names: &[String], rows: &[Vec<String>]) -> Vec<Vec<String>> {
    let mut rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            row.iter()
                .zip(names)
                .map(
                    |(cell, name)| match CLOCK.contains(&name.as_str()) && is_duration(cell) {
                        true => "<duration>".to_string(),
                        false => cell.clone(),
                    },
                )
                .collect()
        })
        .collect();
    rows.sort();
    rows
}

#[tokio::test]
async fn client_side_printer_columns_print_what_kubectl_prints() {
    let Some(fx) = Kubectl::start("crd-columns").await else {
        return;
    };
    for namespace in ["web", "db"] {
        fx.ok(&["create", "namespace", namespace]).await;
    }
    fx.ok(&["apply", "-f", &fx.file("crd.yaml", PRINTER_CRD)])
        .await;
    fx.ok(&["create", "-f", &fx.file("printers.yaml", PRINTERS)])
        .await;
    let kubeconfig = fx.dir.join("kubeconfig").display().to_string();
    for wide in [false, true] {
        let mut args = vec!["get", "printers", "-A"];
        if wide {
            args.extend(["-o", "wide"]);
        }
        let want = fx.ok(&args).await;
        args.extend(["--kubeconfig", &kubeconfig]);
        let out = kscope(fx.dir.as_path(), &args).await;
        let got = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "kscope {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (want_names, want_rows) = parse_table(&want);
        let (got_names, got_rows) = parse_table(&got);
        assert_eq!(got_names, want_names, "kscope:\n{got}\nkubectl:\n{want}");
        let got_rows = comparable(&got_names, &got_rows);
        assert_eq!(
            got_rows,
            comparable(&want_names, &want_rows),
            "kscope:\n{got}\nkubectl:\n{want}"
        );
        // What the rules give, as both print it: a nil cell (wrong type, missing) as nothing.
        let expected: [&[&str]; 3] = [
            // db/p3: a float cut to an integer, a large float in Go's form, an object as
            // JSON, a date of the wrong type, a null string.
            &[
                "db",
                "p3",
                r#"{"code":1,"shade":"dark"}"#,
                "2",
                "1.2345675e+06",
                "false",
                "",
                "",
                "",
            ],
            &[
                "web",
                "p1",
                "blue",
                "3",
                "0.5",
                "true",
                "a",
                "True",
                "<duration>",
            ],
            // web/p2: a number in a string column, wrong types, no tags, no Ready
            // condition, a date that does not parse.
            &["web", "p2", "7", "", "2", "", "", "", "<invalid>"],
        ];
        for (row, want) in got_rows.iter().zip(expected) {
            assert_eq!(&row[..want.len()], want, "{got}");
        }
        let names = got_names.join(" ");
        match wide {
            false => assert_eq!(
                names,
                "NAMESPACE NAME COLOUR SIZE RATIO ON TAGS READY SINCE"
            ),
            true => {
                assert_eq!(
                    names,
                    "NAMESPACE NAME COLOUR SIZE RATIO ON TAGS READY SINCE OWNER"
                );
                let owners: Vec<&str> = got_rows.iter().map(|r| r[9].as_str()).collect();
                assert_eq!(owners, ["<no value>", "team-a", ""]);
            }
        }
    }
}

/// The CRD above as JSON, which is how the lister-watcher reads it.
fn crd_json() -> Vec<u8> {
    let value: serde_json::Value = serde_saphyr::from_str(PRINTER_CRD).expect("the CRD parses");
    serde_json::to_vec(&value).expect("JSON")
}

#[test]
fn the_tui_table_of_a_custom_resource_shows_its_printer_columns() {
    let resource = Arc::new(ApiResource::new(
        "example.com",
        "v1",
        "printers",
        "printer",
        "Printer",
        true,
        vec![],
        vec![],
        vec!["list".into(), "watch".into()],
    ));
    let columns = client_columns(&crd_json(), &resource, &KubectlPrinterColumns, None)
        .expect("the CRD's columns compile");
    let (registry, store) =
        IndexRegistry::<GenericObject>::for_kind(Kind::Api(resource.clone()), Vec::new())
            .expect("registry");
    // Times relative to now, so that the ages drawn are the same on every run.
    let now = Timestamp::now();
    let ago = |seconds: i64| {
        jiff::Timestamp::from_second(now.seconds() - seconds)
            .expect("valid time")
            .to_string()
    };
    let objects = [
        format!(
            r#"{{"metadata":{{"name":"p1","namespace":"web","creationTimestamp":"{}"}},
            "spec":{{"colour":"blue","size":3,"ratio":0.5,"on":true,"tags":["a","b"],"owner":"team-a"}},
            "status":{{"since":"{}","conditions":[{{"type":"Ready","status":"True"}}]}}}}"#,
            ago(2 * 86_400),
            ago(3 * 3600)
        ),
        format!(
            r#"{{"metadata":{{"name":"p2","namespace":"web","creationTimestamp":"{}"}},
            "spec":{{"colour":7,"size":"big","ratio":2,"on":"yes","tags":[]}},
            "status":{{"since":"not a date"}}}}"#,
            ago(5 * 86_400)
        ),
    ];
    for json in &objects {
        let object: GenericObject =
            decoding_with_columns(Some(&columns), || from_slice(json.as_bytes())).expect("decodes");
        store.add(Arc::new(object)).expect("add");
    }
    let view =
        Mutex::new(LiveView::new(registry, Query::default(), SortSpec::default()).expect("view"));
    let header = Header {
        sync: "watching at rv 5".into(),
        ..tui::header("printers.example.com", kscope_ui::ALL_NAMESPACES)
    };
    let mut terminal = Terminal::new(TestBackend::new(120, 12)).expect("terminal");
    let mut state = UiState::new(false);
    let view_columns = view.lock().columns();
    let at = std::time::SystemTime::UNIX_EPOCH
        + std::time::Duration::from_secs(u64::try_from(now.seconds()).expect("after 1970"));
    let parts = Parts {
        header: &header,
        columns: &view_columns,
        with_namespace: true,
        now: at,
        color: false,
    };
    draw::frame(&mut terminal, &mut state, None, &parts, |state, rows| {
        capture(&view, &mut state.table.scroll, rows, now)
    })
    .expect("draws");
    insta::assert_snapshot!(terminal.backend().to_string());
}
