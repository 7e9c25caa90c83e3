//! The scale bench's verdicts as arithmetic over what was measured: whether a client kept up
//! with a churn step, fell behind or waited on the sim, and where its pinned core's time went
//! during a backlog drain. Apart from the processes, so that `benches/scale_verdict.rs`
//! checks them on sample numbers.

/// Bytes unread on a client's sockets to the sim that still count as keeping up: about one of
/// the sim's watch writes. The sim writes events in chunks of about 256 KiB (the last event
/// goes past it; TLS adds under 1%), so a client that keeps up can be sampled just after one
/// arrived and before it woke to read it; and kscope reads through a 256 KiB buffer below TLS,
/// so up to one write may sit in kscope's process where kube-rs's would still be in the
/// socket. More than that unread means the client had not read one write when the next came:
/// it is behind on the wire, whatever its CPU says.
pub const UNREAD_SLACK: u64 = 384 * 1024;

/// One churn step's window as a client saw it.
#[derive(Debug, Clone)]
pub struct Step {
    pub target: f64,
    /// Writes per second the sim really made (all resources; pods are most of them).
    pub sim_rate: f64,
    /// Pod events per second the client processed.
    pub client_rate: f64,
    /// The client's CPU use over the window, in cores.
    pub client_cpu: f64,
    /// The window's length, in seconds.
    pub seconds: f64,
    pub lag_start: i64,
    pub lag_end: i64,
    /// Events received and queued inside the client (kscope's DeltaFIFO and handler queue;
    /// kube-rs's reflector has no queue of its own, so 0).
    pub backlog: u64,
    /// Bytes the sim sent that the client had not read from its sockets to the sim yet, at
    /// the window's end: the backlog on the wire side, the only one kube-rs's reflector has.
    pub unread: u64,
    pub relisted: bool,
    /// The sim made under 80% of the writes asked of it: its churn generator topped out.
    pub sim_saturated: bool,
}

/// How a client fared in one churn step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Its lag stayed within about a second and a half of writes and did not grow, with
    /// nothing relisted, queued or unread.
    KeptUp,
    /// It relisted, or work waited for it (queued inside it, or unread on its sockets), or
    /// its lag grew while it used half a core or more.
    Behind,
    /// Its lag grew while nothing waited for it, in it or on its sockets, and it used under
    /// half a core: the events it lacked were still in the sim, which could not send faster.
    SimBound,
}

impl Step {
    pub fn verdict(&self) -> Verdict {
        // Writes of about a second: the lag and the queue a client may have and keep up.
        let slack = self
            .sim_rate
            .max(self.target.min(self.sim_rate * 2.0))
            .max(500.0);
        // Keeping up: the lag stays within about a second and a half of writes and does not
        // grow by more than a tenth of what was written in the window.
        let lag_ok = (self.lag_end as f64) < 1.5 * slack
            && ((self.lag_end - self.lag_start) as f64)
                < 0.1 * self.sim_rate * self.seconds + 500.0;
        let nothing_waits =
            !self.relisted && (self.backlog as f64) < slack && self.unread <= UNREAD_SLACK;
        match (lag_ok, nothing_waits) {
            (true, true) => Verdict::KeptUp,
            (false, true) if self.client_cpu < 0.5 => Verdict::SimBound,
            _ => Verdict::Behind,
        }
    }

    pub fn kept_up(&self) -> bool {
        self.verdict() == Verdict::KeptUp
    }
}

/// One CPU's ticks (USER_HZ, 10 ms) by where /proc/stat says they went. The kernel files each
/// tick under one of these, so they do not overlap.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CoreTicks {
    /// user, nice and system: processes, the client among them.
    pub busy: u64,
    /// irq and softirq: on loopback, also the sim's TCP sends that the client's ACKs release.
    pub interrupts: u64,
    /// Time the hypervisor ran something else on this virtual CPU.
    pub steal: u64,
    /// idle and iowait.
    pub idle: u64,
}

impl CoreTicks {
    /// The ticks from `before` to `self`.
    pub fn since(self, before: CoreTicks) -> CoreTicks {
        CoreTicks {
            busy: self.busy.saturating_sub(before.busy),
            interrupts: self.interrupts.saturating_sub(before.interrupts),
            steal: self.steal.saturating_sub(before.steal),
            idle: self.idle.saturating_sub(before.idle),
        }
    }

    fn total(self) -> u64 {
        self.busy + self.interrupts + self.steal + self.idle
    }
}

/// Where the client's pinned core's time went over a drain, as shares of that core's time:
/// disjoint, and summing to 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CoreShares {
    pub client: f64,
    /// Other processes on the same core.
    pub others: f64,
    pub interrupts: f64,
    pub steal: f64,
    pub idle: f64,
}

impl CoreShares {
    /// Splits `core` (the core's ticks from the resume to when the parent saw the drain's
    /// end) given `client`, the client's utime+stime ticks read at the same two moments, and
    /// `tail`, the ticks from the drain's end to that reading, which the client spent waiting
    /// to be seen.
    ///
    /// Every share is of the core's own tick count over one interval, not of a wall-clock
    /// time measured apart. The tail is taken off as idle time (as much as there was), from
    /// the idle ticks and the total alike. The client's ticks are not disjoint from the
    /// core's interrupt ticks: a kernel without `CONFIG_IRQ_TIME_ACCOUNTING` (this machine's,
    /// 6.18) charges an interrupt served while the client ran to the client as well, where
    /// /proc/stat files it under irq or softirq only; and the client's time is the
    /// scheduler's, not tick-sampled. So its share is at most the core's user+system time:
    /// the excess was interrupts, counted there, and what the client did not use of
    /// user+system went to other processes.
    pub fn split(core: CoreTicks, client: u64, tail: u64) -> Option<CoreShares> {
        let tail = tail.min(core.idle);
        let total = core.total() - tail;
        if total == 0 {
            return None;
        }
        let client = client.min(core.busy);
        let share = |ticks: u64| ticks as f64 / total as f64;
        Some(CoreShares {
            client: share(client),
            others: share(core.busy - client),
            interrupts: share(core.interrupts),
            steal: share(core.steal),
            idle: share(core.idle - tail),
        })
    }

    /// Whole percentages of client, others, interrupts, steal and idle that add up to 100:
    /// each rounded down, then the points left over go to the largest remainders.
    pub fn percents(&self) -> [u64; 5] {
        let exact = [
            self.client,
            self.others,
            self.interrupts,
            self.steal,
            self.idle,
        ]
        .map(|s| s * 100.0);
        let mut whole = exact.map(|p| p.floor() as u64);
        let left = 100u64.saturating_sub(whole.iter().sum());
        let mut by_remainder: Vec<usize> = (0..exact.len()).collect();
        by_remainder.sort_by(|&a, &b| {
            (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor()))
        });
        for &i in by_remainder.iter().take(left as usize) {
            whole[i] += 1;
        }
        whole
    }
}
