//! End to end: the write keys the other act tests leave out, in a real terminal (tmux)
//! against `kscope sim`, kubectl checking each: ctrl-k kills a pod at once (grace 0) that a
//! delete would leave Terminating for a minute; ctrl-s suspends a CronJob and, pressed
//! again, resumes it; ctrl-t runs a Job from it.

use crate::common::act::{Fixture, listed, rows};

const SLOW: &str = "apiVersion: v1
kind: Pod
metadata:
  name: slow
  namespace: default
spec:
  terminationGracePeriodSeconds: 60
  containers:
  - name: app
    image: nginx:1.27
";

#[tokio::test]
async fn kill_suspend_resume_and_run_a_job_after_a_confirm() {
    let Some(fx) = Fixture::start("kill-cron").await else {
        return;
    };
    let manifest = fx.dir.join("slow.yaml");
    std::fs::write(&manifest, SLOW).expect("manifest");
    fx.kubectl_ok(&["apply", "-f", &manifest.display().to_string()]);
    fx.kubectl_ok(&[
        "create",
        "cronjob",
        "nightly",
        "--image=busybox:1.36",
        "--schedule=0 0 * * *",
        "-n",
        "default",
    ]);
    let session = fx.kscope("--readwrite -n default");
    session.wait_for("the pod", |s| listed(s) && s.contains("slow"));

    session.keys(&["C-k"]);
    session.wait_for("the dialog", |s| {
        s.contains("confirm: kill")
            && s.contains("grace period: 0 seconds")
            && s.contains("dry run: the server accepts it")
    });
    session.keys(&["y"]);
    session.wait_for("the row gone", |s| {
        s.contains("kill: Pod default/slow: done") && !rows(s).iter().any(|r| r.contains("slow"))
    });
    let pods = fx.kubectl_ok(&["get", "pods", "-n", "default", "-o", "name"]);
    assert!(
        !pods.contains("slow"),
        "gone at once, not Terminating: {pods}"
    );

    session.keys(&[":cronjobs", "Enter"]);
    session.wait_for("the cronjob", |s| {
        listed(s) && rows(s).iter().any(|r| r.contains("nightly"))
    });
    let suspended = [
        "get",
        "cronjob",
        "nightly",
        "-n",
        "default",
        "-o",
        "jsonpath={.spec.suspend}",
    ];
    for (verb, after) in [("suspend", "true"), ("resume", "false")] {
        session.keys(&["C-s"]);
        session.wait_for("the dialog", |s| {
            s.contains(&format!("confirm: {verb}")) && s.contains("dry run: the server accepts it")
        });
        session.keys(&["y"]);
        fx.kubectl_until(&format!("{verb}d"), &suspended, |out| out == after)
            .await;
    }

    session.keys(&["C-t"]);
    session.wait_for("the dialog", |s| {
        s.contains("confirm: run a job from") && s.contains("dry run: the server accepts it")
    });
    session.keys(&["y"]);
    fx.kubectl_until(
        "the job",
        &["get", "jobs", "-n", "default", "-o", "name"],
        |out| out.contains("job.batch/nightly-"),
    )
    .await;
    let jobs = fx.kubectl_ok(&["get", "jobs", "-n", "default", "-o", "name"]);
    assert_eq!(jobs.lines().count(), 1, "one job, made by the key: {jobs}");
}
