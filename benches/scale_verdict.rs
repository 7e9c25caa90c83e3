//! The scale bench's verdict arithmetic (`benches/scale/verdict.rs`) on sample numbers:
//! `cargo test --bench scale_verdict`. The scale bench itself runs without libtest's harness,
//! so its unit tests live in this target of their own.

#[allow(dead_code, reason = "the scale bench reads what these tests do not")]
#[path = "scale/verdict.rs"]
mod verdict;

#[cfg(test)]
mod tests {
    use super::verdict::*;

    fn step(lag_start: i64, lag_end: i64, backlog: u64, unread: u64, client_cpu: f64) -> Step {
        Step {
            target: 8_000.0,
            sim_rate: 7_956.0,
            client_rate: 3_144.0,
            client_cpu,
            seconds: 5.0,
            lag_start,
            lag_end,
            backlog,
            unread,
            relisted: false,
            sim_saturated: false,
        }
    }

    #[test]
    fn unread_bytes_make_a_client_behind_whatever_its_cpu() {
        // kube-rs at 10,000 pods on 2026-12-01: its lag grew with 17 MiB unread on its
        // socket while it used 19% of a core; the bench called that sim-bound.
        let idle_with_unread = step(13_307, 35_935, 0, 17_104 * 1024, 0.19);
        assert_eq!(idle_with_unread.verdict(), Verdict::Behind);
        // The same step with nothing unread is the sim's limit.
        let idle_nothing_unread = step(13_307, 35_935, 0, 0, 0.19);
        assert_eq!(idle_nothing_unread.verdict(), Verdict::SimBound);
        // A lag that stays put but with several writes unread is behind too.
        let steady_lag_unread = step(1_056, 1_200, 0, 7_700 * 1024, 0.27);
        assert_eq!(steady_lag_unread.verdict(), Verdict::Behind);
    }

    #[test]
    fn one_write_unread_still_keeps_up() {
        assert_eq!(
            step(212, 520, 0, 256 * 1024, 0.12).verdict(),
            Verdict::KeptUp
        );
        assert_eq!(
            step(212, 520, 0, UNREAD_SLACK + 1, 0.12).verdict(),
            Verdict::Behind
        );
    }

    #[test]
    fn a_busy_client_with_a_growing_lag_is_behind() {
        assert_eq!(step(1_000, 20_000, 0, 0, 0.9).verdict(), Verdict::Behind);
    }

    fn assert_sums_to_one(s: CoreShares) {
        let sum = s.client + s.others + s.interrupts + s.steal + s.idle;
        assert!((sum - 1.0).abs() < 1e-9, "{s:?} sums to {sum}");
    }

    #[test]
    fn the_client_is_not_counted_again_in_interrupts() {
        // A 2.0 s drain read 0.1 s late: the core's 210 ticks are 186 user+system, 14
        // softirq and 10 idle (the tail). The client's own ticks, 200, include the 14
        // softirq ticks the kernel charged to it as well as to softirq.
        let core = CoreTicks {
            busy: 186,
            interrupts: 14,
            steal: 0,
            idle: 10,
        };
        let s = CoreShares::split(core, 200, 10).unwrap();
        assert_sums_to_one(s);
        assert_eq!(s.client, 186.0 / 200.0);
        assert_eq!(s.interrupts, 14.0 / 200.0);
        assert_eq!((s.others, s.idle), (0.0, 0.0));
        assert_eq!(s.percents(), [93, 0, 7, 0, 0]);
    }

    #[test]
    fn other_processes_steal_and_idle_are_their_own_parts() {
        // 300 ticks: the client 120, another process 90, 6 interrupts, 24 steal, 60 idle
        // of which 20 were the tail.
        let core = CoreTicks {
            busy: 210,
            interrupts: 6,
            steal: 24,
            idle: 60,
        };
        let s = CoreShares::split(core, 120, 20).unwrap();
        assert_sums_to_one(s);
        assert_eq!(s.others, 90.0 / 280.0);
        assert_eq!(s.idle, 40.0 / 280.0);
        assert_eq!(s.percents().iter().sum::<u64>(), 100);
        // A tail longer than the idle there was takes off only that idle.
        let s = CoreShares::split(core, 120, 500).unwrap();
        assert_sums_to_one(s);
        assert_eq!(s.idle, 0.0);
        // No ticks, no split.
        assert_eq!(CoreShares::split(CoreTicks::default(), 0, 0), None);
    }

    #[test]
    fn percents_add_up_to_one_hundred() {
        let third = CoreShares {
            client: 1.0 / 3.0,
            others: 1.0 / 3.0,
            interrupts: 1.0 / 3.0,
            steal: 0.0,
            idle: 0.0,
        };
        assert_eq!(third.percents(), [34, 33, 33, 0, 0]);
    }
}
