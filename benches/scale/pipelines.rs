//! kscope's pipelines side by side (issue #24): each FIFO (classic, real, atomic) under each
//! initial-list mode (watch-list, paged list), against the wire: the same pods read in one
//! unpaginated GET whose body is thrown away. Per pipeline: time to the first object in the
//! store (first table rows), time to synced, CPU and peak memory to sync, and the churn it
//! keeps up with (the same ladder as the main benchmark).

use std::fmt::Write as _;
use std::time::Instant;

use futures::AsyncReadExt;

use super::{ChildProc, ClientResult, GIB, MIB, Plan, SimProc, Verdict, measure, procfs};

const FIFOS: [&str; 3] = ["classic", "real", "atomic"];
const MODES: [&str; 2] = ["watchList", "list"];

/// One pipeline's run.
struct PipelineResult {
    fifo: &'static str,
    mode: &'static str,
    result: ClientResult,
}

/// The wire: one unpaginated GET of `uri` (asking for `accept`), read to the end and thrown
/// away: seconds and bytes.
pub(super) async fn wire_get(sim: &SimProc, uri: &str, accept: &str) -> Result<(f64, u64), String> {
    let request = http::Request::get(uri)
        .header("accept", accept)
        .body(Vec::new())
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    let body = sim
        .admin
        .request_stream(request)
        .await
        .map_err(|e| format!("GET {uri}: {e}"))?;
    let mut body = std::pin::pin!(body);
    let mut buf = vec![0u8; 1 << 20];
    let mut bytes = 0u64;
    loop {
        let n = body
            .read(&mut buf)
            .await
            .map_err(|e| format!("reading the list: {e}"))?;
        if n == 0 {
            break;
        }
        bytes += n as u64;
    }
    Ok((started.elapsed().as_secs_f64(), bytes))
}

/// The wire for pods: one unpaginated list of every pod.
async fn wire_seconds(sim: &SimProc) -> Result<(f64, u64), String> {
    wire_get(sim, "/api/v1/pods", "application/json").await
}

pub async fn run(plan: &Plan) -> String {
    let mut out = String::new();
    for &pods in &plan.sizes {
        let sim = SimProc::start(pods, plan).await;
        let mut loads: Vec<f64> = procfs::load_average().into_iter().collect();
        // The best of three, as the wire's own time without a passing slowdown.
        let mut wire: Option<(f64, u64)> = None;
        for _ in 0..3 {
            match wire_seconds(&sim).await {
                Ok(w) if wire.is_none_or(|best| w.0 < best.0) => wire = Some(w),
                Ok(_) => {}
                Err(e) => eprintln!("scale: the wire GET failed: {e}"),
            }
        }
        let mut results = Vec::new();
        for mode in MODES {
            for fifo in FIFOS {
                let name = format!("kscope:{fifo}:{mode}");
                let mut result = ClientResult {
                    name: name.clone(),
                    ..ClientResult::default()
                };
                sim.set_churn(0.0).await;
                if let Err(failure) = sim.restore_pods(pods as u64).await {
                    eprintln!("scale: could not bring the sim back to {pods} pods: {failure}");
                }
                result.expected = sim.pods().await;
                let available = procfs::mem_available().unwrap_or(u64::MAX);
                let mem_cap = plan
                    .mem_cap
                    .min(available.saturating_sub((1.5 * GIB) as u64));
                let mut child =
                    ChildProc::spawn(&name, &sim.kubeconfig, mem_cap, plan.pin.map(|p| p.1));
                if let Err(failure) = measure(&mut child, &mut result, &sim, pods, plan).await {
                    result.failure = Some(failure);
                }
                sim.set_churn(0.0).await;
                child.stop().await;
                loads.extend(procfs::load_average());
                eprintln!("scale: pipelines, {pods} pods, {name}: {result:?}");
                results.push(PipelineResult { fifo, mode, result });
            }
        }
        sim.stop().await;
        render(&mut out, pods, wire, &results, &loads);
    }
    if !plan.full
        && let Some(line) = out.lines().find(|l| l.contains("FAILED"))
    {
        panic!("smoke run: a pipeline failed: {line}");
    }
    out
}

fn render(
    out: &mut String,
    pods: usize,
    wire: Option<(f64, u64)>,
    results: &[PipelineResult],
    loads: &[f64],
) {
    let (low, high) = loads
        .iter()
        .fold((f64::MAX, 0.0f64), |(lo, hi), l| (lo.min(*l), hi.max(*l)));
    let _ = writeln!(
        out,
        "\n### Pipelines at {pods} pods (load average {low:.1}–{high:.1}, {} CPUs)\n",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    match wire {
        Some((seconds, bytes)) => {
            let _ = writeln!(
                out,
                "Wire: one unpaginated GET of every pod, body thrown away: {seconds:.2} s for \
                 {:.0} MiB.\n",
                bytes as f64 / MIB
            );
        }
        None => {
            let _ = writeln!(out, "Wire: the GET failed (see stderr).\n");
        }
    }
    let _ = writeln!(
        out,
        "| pipeline | first rows | synced | synced ÷ wire | CPU to sync | peak RSS | churn kept up with |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
    for p in results {
        let r = &p.result;
        if let Some(failure) = &r.failure {
            let _ = writeln!(
                out,
                "| {} / {} | FAILED: {failure} | | | | | |",
                p.fifo, p.mode
            );
            continue;
        }
        let kept = r
            .steps
            .iter()
            .filter(|s| s.kept_up())
            .map(|s| s.sim_rate)
            .fold(0.0f64, f64::max);
        // Where the ladder stopped for the sim (it could write or deliver no faster, the
        // client idle with nothing queued or unread), the client's own limit is higher; a
        // client that fell behind, even as the sim topped out, found its own.
        let bound = r.steps.last().map_or("", |s| match s.verdict() {
            Verdict::SimBound => " (sim-bound)",
            Verdict::KeptUp if s.sim_saturated => " (sim-bound)",
            Verdict::KeptUp | Verdict::Behind => "",
        });
        let ratio = wire.map_or("–".to_string(), |(w, _)| format!("{:.2}×", r.sync_s / w));
        let _ = writeln!(
            out,
            "| {} / {} | {:.0} ms | {:.2} s | {ratio} | {:.2} s | {:.0} MiB | {:.0} writes/s{bound} |",
            p.fifo,
            p.mode,
            r.first_row_s * 1e3,
            r.sync_s,
            r.cpu_sync,
            r.peak as f64 / MIB,
            kept
        );
    }
}
