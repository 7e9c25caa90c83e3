//! Where a pod store's memory goes (issue #22's ≤ 1 KB per pod): one kscope child (classic
//! DeltaFIFO, paged list, the 5 default indexes, one handler) syncs the sim's pods and, once
//! steady, reports its RSS, the C heap in use (glibc's `mallinfo2`) and the store's heap by
//! structure (objects, keys, the key table, each index), counted from its contents.

use std::fmt::Write as _;

use super::{ChildProc, ClientResult, GIB, MIB, Plan, SimProc, num, procfs};

pub async fn run(plan: &Plan) -> String {
    let mut out = String::new();
    for &pods in &plan.sizes {
        let sim = SimProc::start(pods, plan).await;
        let load = procfs::load_average().unwrap_or(0.0);
        let name = "kscope:classic:list";
        let mut result = ClientResult {
            name: name.to_string(),
            expected: sim.pods().await,
            ..ClientResult::default()
        };
        let available = procfs::mem_available().unwrap_or(u64::MAX);
        let mem_cap = plan
            .mem_cap
            .min(available.saturating_sub((1.5 * GIB) as u64));
        let mut child = ChildProc::spawn(name, &sim.kubeconfig, mem_cap, plan.pin.map(|p| p.1));
        let steady = async {
            let synced = child.wait_for("synced", plan.sync_timeout).await?;
            result.sync_s = num(&synced, "sync_s");
            result.cpu_sync = num(&synced, "cpu");
            child.wait_for("steady", plan.sync_timeout).await
        }
        .await;
        child.stop().await;
        sim.stop().await;
        let steady = match steady {
            Ok(steady) => steady,
            Err(failure) => {
                let _ = writeln!(out, "\n### Heap at {pods} pods: FAILED: {failure}");
                continue;
            }
        };
        result.objects = num(&steady, "objects") as u64;
        let per_pod = |bytes: f64| bytes / result.objects.max(1) as f64;
        let _ = writeln!(
            out,
            "\n### Heap at {pods} pods (load average {load:.1})\n\n\
             - {} pods in store, synced in {:.2} s with {:.2} s of CPU; RSS {:.0} MiB ({:.0} B per pod), peak {:.0} MiB ({:.0} B per \
             pod); C heap in use {:.0} MiB ({:.0} B per pod).\n- The store by structure, bytes \
             per pod (requested sizes, before malloc's header and rounding): {}",
            result.objects,
            result.sync_s,
            result.cpu_sync,
            num(&steady, "rss") / MIB,
            per_pod(num(&steady, "rss")),
            num(&steady, "peak") / MIB,
            per_pod(num(&steady, "peak")),
            num(&steady, "heap_in_use") / MIB,
            per_pod(num(&steady, "heap_in_use")),
            steady["heap"]
        );
    }
    out
}
