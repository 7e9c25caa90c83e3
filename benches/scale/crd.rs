//! The CRD mode (issue #22): a custom resource as large as a cluster's pods, `kscope sim
//! --widgets N` (Widgets of about 3 KB each), synced by kscope as the explorer reads a
//! custom resource (plain JSON into `GenericObject`s with the CRD's printer columns evaluated
//! client-side, default indexes, one handler), beside the alternative (the server's Table
//! form) and plain JSON without cells, and
//! by kube-rs's reflector over `DynamicObject`, each in its own child process, one after the
//! other, on the same sim. Measured: time and CPU to synced, peak and steady RSS. Beside
//! them, the wire: the same Widgets in one unpaginated GET, as plain JSON and as the Table
//! kscope asks for, the body thrown away, which is what the sim alone costs.

use std::fmt::Write as _;

use super::{ChildProc, ClientResult, GIB, MIB, Plan, SimProc, num, procfs};

/// The clients compared: kscope as it reads a custom resource (plain JSON, printer columns
/// client-side) with the same footing as kube-rs's default watcher (a paged list, then a
/// watch) and with its own default (the watch-list); the alternative measured, the server's
/// Table form, both ways; plain JSON without cells (what the columns cost); and kube-rs.
const CLIENTS: [&str; 6] = [
    "kscope-crd:classic:list",
    "kscope-crd:classic:watchList",
    "kscope-crd-table:classic:list",
    "kscope-crd-table:classic:watchList",
    "kscope-crd-json:classic:list",
    "kube-rs-crd",
];

const LIST_PATH: &str = "/apis/example.com/v1/widgets";
/// What kscope's Table form (the alternative measured) asks for (`src/client/table_form.rs`).
const TABLE_ACCEPT: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

/// One unpaginated GET of every Widget, read to the end and thrown away: seconds and bytes.
async fn wire_seconds(sim: &SimProc, table: bool) -> Result<(f64, u64), String> {
    if table {
        let uri = format!("{LIST_PATH}?includeObject=Object");
        super::pipelines::wire_get(sim, &uri, TABLE_ACCEPT).await
    } else {
        super::pipelines::wire_get(sim, LIST_PATH, "application/json").await
    }
}

/// The best of `runs` GETs, as the wire's own time without a passing slowdown.
async fn best_wire(sim: &SimProc, table: bool, runs: usize) -> Option<(f64, u64)> {
    let mut best: Option<(f64, u64)> = None;
    for _ in 0..runs {
        match wire_seconds(sim, table).await {
            Ok(w) if best.is_none_or(|b| w.0 < b.0) => best = Some(w),
            Ok(_) => {}
            Err(e) => eprintln!("scale: crd: the wire GET failed: {e}"),
        }
    }
    best
}

/// Syncs one client and waits for its steady state; no churn (the sim's churn writes pods).
async fn sync_once(
    child: &mut ChildProc,
    result: &mut ClientResult,
    plan: &Plan,
) -> Result<(), String> {
    let synced = child.wait_for("synced", plan.sync_timeout).await?;
    result.sync_s = num(&synced, "sync_s");
    result.cpu_sync = num(&synced, "cpu");
    result.objects = num(&synced, "objects") as u64;
    let steady = child.wait_for("steady", plan.sync_timeout).await?;
    result.steady_rss = num(&steady, "rss") as u64;
    result.first_row_s = num(&steady, "first_row_s");
    result.peak = num(&steady, "peak") as u64;
    Ok(())
}

pub async fn run(plan: &Plan) -> String {
    let mut out = String::new();
    for &widgets in &plan.sizes {
        let sim = SimProc::start_with_widgets(100, widgets, plan).await;
        let mut loads: Vec<f64> = procfs::load_average().into_iter().collect();
        let expected = sim.count("widgets.example.com").await;
        let runs = if plan.full { 3 } else { 1 };
        let plain = best_wire(&sim, false, runs).await;
        let table = best_wire(&sim, true, runs).await;
        let mut results = Vec::new();
        for name in CLIENTS {
            let mut result = ClientResult {
                name: name.to_string(),
                expected,
                ..ClientResult::default()
            };
            let available = procfs::mem_available().unwrap_or(u64::MAX);
            let mem_cap = plan
                .mem_cap
                .min(available.saturating_sub((1.5 * GIB) as u64));
            let mut child = ChildProc::spawn(name, &sim.kubeconfig, mem_cap, plan.pin.map(|p| p.1));
            if let Err(failure) = sync_once(&mut child, &mut result, plan).await {
                result.failure = Some(failure);
            }
            child.stop().await;
            loads.extend(procfs::load_average());
            eprintln!("scale: crd, {widgets} widgets, {name}: {result:?}");
            results.push(result);
        }
        sim.stop().await;
        if !plan.full {
            for r in &results {
                assert!(
                    r.failure.is_none() && r.objects == r.expected,
                    "smoke run: {} synced {} of {} widgets ({:?})",
                    r.name,
                    r.objects,
                    r.expected,
                    r.failure
                );
            }
        }
        render(&mut out, expected, plain, table, &results, &loads);
    }
    out
}

fn render(
    out: &mut String,
    widgets: u64,
    plain: Option<(f64, u64)>,
    table: Option<(f64, u64)>,
    results: &[ClientResult],
    loads: &[f64],
) {
    let (low, high) = loads
        .iter()
        .fold((f64::MAX, 0.0f64), |(lo, hi), l| (lo.min(*l), hi.max(*l)));
    let _ = writeln!(
        out,
        "\n### {widgets} Widgets of ~3 KB (load average {low:.1}–{high:.1}, {} CPUs)\n",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    for (what, wire) in [
        ("plain JSON", plain),
        ("Table, includeObject=Object", table),
    ] {
        match wire {
            Some((seconds, bytes)) => {
                let _ = writeln!(
                    out,
                    "- Wire, {what}: one unpaginated GET, body thrown away: {seconds:.2} s for \
                     {:.0} MiB.",
                    bytes as f64 / MIB
                );
            }
            None => {
                let _ = writeln!(out, "- Wire, {what}: the GET failed (see stderr).");
            }
        }
    }
    let _ = writeln!(
        out,
        "\n| client | objects | synced | CPU to sync | peak RSS | steady RSS | per object | synced ÷ kube-rs | CPU ÷ kube-rs | peak ÷ kube-rs |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let baseline = results
        .iter()
        .find(|r| r.name == "kube-rs-crd" && r.failure.is_none());
    for r in results {
        if let Some(failure) = &r.failure {
            let _ = writeln!(out, "| {} | FAILED: {failure} | | | | | | | | |", r.name);
            continue;
        }
        // No ratio against a baseline too small to measure (the smoke run's CPU ticks).
        let ratio = |f: fn(&ClientResult) -> f64| match baseline.map(f) {
            Some(b) if b > 0.0 => format!("{:.3}", f(r) / b),
            _ => "–".to_string(),
        };
        let _ = writeln!(
            out,
            "| {} | {} / {} | {:.2} s | {:.2} s | {:.0} MiB | {:.0} MiB | {:.2} KiB | {} | {} | {} |",
            r.name,
            r.objects,
            r.expected,
            r.sync_s,
            r.cpu_sync,
            r.peak as f64 / MIB,
            r.steady_rss as f64 / MIB,
            r.peak as f64 / 1024.0 / r.objects.max(1) as f64,
            ratio(|r| r.sync_s),
            ratio(|r| r.cpu_sync),
            ratio(|r| r.peak as f64),
        );
    }
}
