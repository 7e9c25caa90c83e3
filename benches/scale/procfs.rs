//! Memory and CPU from /proc (Linux), and a description of the machine.

use super::verdict::CoreTicks;

/// VmRSS and VmHWM (peak RSS) in bytes of `pid` ("self" for this process).
pub fn rss_and_peak(pid: &str) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kb: u64 = line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kb * 1024)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// User + system CPU seconds of this process, all threads (/proc/self/stat, USER_HZ = 100).
pub fn cpu_seconds() -> f64 {
    cpu_ticks("self").unwrap_or(0) as f64 / 100.0
}

/// User + system CPU ticks (USER_HZ = 100) of process `pid` ("self" for this one), all
/// threads: the parent reads a child's at the same moments as its core's /proc/stat.
pub fn cpu_ticks(pid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may contain spaces.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line; `rest` starts at field 3.
    let ticks = |i: usize| fields.get(i)?.parse::<u64>().ok();
    Some(ticks(11)? + ticks(12)?)
}

/// CPU `cpu`'s times since boot; `None` if /proc/stat has no such CPU.
pub fn cpu_times(cpu: usize) -> Option<CoreTicks> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let name = format!("cpu{cpu}");
    let line = stat
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name.as_str()))?;
    let ticks: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already
    // in user and nice.
    let at = |i: usize| ticks.get(i).copied().unwrap_or(0);
    Some(CoreTicks {
        busy: at(0) + at(1) + at(2),
        idle: at(3) + at(4),
        interrupts: at(5) + at(6),
        steal: at(7),
    })
}

/// MemAvailable in bytes.
pub fn mem_available() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line["MemAvailable:".len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// The 1-minute load average: how busy the rest of the machine was.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// CPU model, cores, memory, kernel and rustc, for the docs.
pub fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map_or("unknown CPU".to_string(), |m| m.trim().to_string());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let total_gib = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| {
            l["MemTotal:".len()..]
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<f64>()
                .ok()
        })
        .map_or(0.0, |kb| kb / 1024.0 / 1024.0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap_or_default()
        .trim()
        .to_string();
    let rustc = std::process::Command::new(std::env::var("RUSTC").unwrap_or("rustc".into()))
        .arg("-V")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    format!("{model}, {cores} cores, {total_gib:.0} GiB RAM, Linux {kernel}, {rustc}")
}

/// Bytes received on this process's TCP connections to port `server_port` that it has not
/// read yet (the Recv-Q of /proc/self/net/tcp and tcp6, for the sockets among
/// /proc/self/fd whose remote end is that port): a client's backlog still on the wire side,
/// which a client without a queue of its own (kube-rs's reflector decodes and stores inline)
/// has only there. The port keeps out any socket that is not to the sim.
pub fn unread_socket_bytes(server_port: u16) -> u64 {
    let Ok(fds) = std::fs::read_dir("/proc/self/fd") else {
        return 0;
    };
    let inodes: std::collections::HashSet<String> = fds
        .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .filter_map(|target| {
            let target = target.to_string_lossy().into_owned();
            Some(
                target
                    .strip_prefix("socket:[")?
                    .strip_suffix(']')?
                    .to_string(),
            )
        })
        .collect();
    let mut unread = 0;
    for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // sl local remote st tx_queue:rx_queue tr:when retrnsmt uid timeout inode ...
            let (Some(remote), Some(queues), Some(inode)) =
                (fields.get(2), fields.get(4), fields.get(9))
            else {
                continue;
            };
            // ADDRESS:PORT, both in hex.
            let to_server = remote
                .rsplit_once(':')
                .and_then(|(_, port)| u16::from_str_radix(port, 16).ok())
                == Some(server_port);
            if !to_server || !inodes.contains(*inode) {
                continue;
            }
            if let Some((_, rx)) = queues.split_once(':') {
                unread += u64::from_str_radix(rx, 16).unwrap_or(0);
            }
        }
    }
    unread
}

/// Bytes the C heap has handed out and not had back (glibc's `mallinfo2().uordblks`): the
/// heap in use, without what malloc holds free.
#[allow(unsafe_code)] // libc: mallinfo2 has no safe wrapper.
pub fn heap_in_use() -> u64 {
    // SAFETY: mallinfo2 only reads the allocator's statistics and returns them by value.
    let info = unsafe { libc::mallinfo2() };
    info.uordblks as u64
}
