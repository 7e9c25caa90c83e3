//! Scale benchmark (issue #7): kscope's informer (compact projections, 5 default indexes)
//! against kube-rs's `reflector` with typed k8s-openapi Pods, on the same simulated cluster.
//!
//! `cargo bench --bench scale` runs the full benchmark: for 10,000, 50,000 and 150,000 pods it
//! starts `kscope sim` in its own process and syncs it from two child processes (this binary
//! re-executed with `--child kscope|kube-rs`), so memory and CPU are per client and the sim's
//! are not counted. Then it raises the sim's churn step by step until a client falls behind or
//! the sim cannot write faster. It prints a side-by-side table with kscope/kube-rs ratios and
//! rewrites the results section of docs/benchmarks.md.
//!
//! Without `--bench` (as under `cargo test --all-targets`) it does a smoke run only: 200 pods,
//! both clients, one short churn step.
//!
//! Environment: `KSCOPE_SCALE_SIZES=10000,50000` overrides the sizes;
//! `KSCOPE_SCALE_MEM_CAP_GB=N` the memory at which a child is stopped (default: 14, or less
//! if the machine has less available); `KSCOPE_SCALE_NO_DOCS=1` skips rewriting the docs.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark that cannot set up fails, with its line"
)]

#[path = "scale/child.rs"]
mod child;
#[path = "scale/parent.rs"]
mod parent;
#[path = "scale/procfs.rs"]
mod procfs;
#[path = "scale/verdict.rs"]
mod verdict;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let which = args
            .get(i + 1)
            .expect("--child needs kscope, kube-rs or kube-rs-lean")
            .clone();
        let kubeconfig = args
            .iter()
            .position(|a| a == "--kubeconfig")
            .and_then(|k| args.get(k + 1))
            .expect("--child needs --kubeconfig FILE")
            .clone();
        child::main(&which, &kubeconfig);
        return;
    }
    let full = args.iter().any(|a| a == "--bench");
    parent::main(full);
}
