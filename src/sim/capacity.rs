//! How large the seeded nodes are, what the seeded pods ask for, and which pod IPs each
//! node hands out: chosen together so that, at any `--pods`/`--nodes`, what the seeded pods
//! request stays within half of every node's allocatable. The other half is for what a
//! user (or the demo's Widget controller, or a new DaemonSet) creates; without it they
//! stayed Pending with `Insufficient cpu`, as no real cluster would be seeded.

use std::collections::{HashMap, HashSet};
use std::net::Ipv4Addr;

use serde_json::{Value, json};

/// What one container asks for; a request of zero is left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContainerRequests {
    pub cpu_milli: u64,
    pub memory_mi: u64,
}

impl ContainerRequests {
    const fn new(cpu_milli: u64, memory_mi: u64) -> Self {
        Self {
            cpu_milli,
            memory_mi,
        }
    }

    /// The container's `resources.requests`.
    pub fn to_json(self) -> Value {
        let mut requests = serde_json::Map::new();
        if self.cpu_milli > 0 {
            requests.insert("cpu".into(), json!(format!("{}m", self.cpu_milli)));
        }
        requests.insert("memory".into(), json!(format!("{}Mi", self.memory_mi)));
        Value::Object(requests)
    }
}

/// What an application pod's two containers (the app, and the mesh sidecar where its
/// namespace has one) ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppRequests {
    pub app: ContainerRequests,
    pub sidecar: ContainerRequests,
}

impl AppRequests {
    /// The pod's total, with or without the sidecar.
    pub fn total(&self, sidecar: bool) -> Load {
        let mut load = Load::pod(self.app);
        if sidecar {
            load.add(Load::pod(self.sidecar));
            load.pods -= 1;
        }
        load
    }
}

/// From what a team would write down to what a dense cluster's pods get: the first one
/// whose pods fit the largest nodes at the cluster's density is used.
const TIERS: [AppRequests; 6] = [
    AppRequests {
        app: ContainerRequests::new(250, 512),
        sidecar: ContainerRequests::new(100, 128),
    },
    AppRequests {
        app: ContainerRequests::new(100, 256),
        sidecar: ContainerRequests::new(50, 64),
    },
    AppRequests {
        app: ContainerRequests::new(50, 128),
        sidecar: ContainerRequests::new(20, 64),
    },
    AppRequests {
        app: ContainerRequests::new(20, 64),
        sidecar: ContainerRequests::new(10, 32),
    },
    AppRequests {
        app: ContainerRequests::new(5, 32),
        sidecar: ContainerRequests::new(2, 16),
    },
    AppRequests {
        app: ContainerRequests::new(1, 8),
        sidecar: ContainerRequests::new(1, 4),
    },
];

/// Instance sizes, smallest first: vCPUs and GiB of an `m6i` (a `c6i` has half the memory).
const SIZES: [(&str, u32, u64); 5] = [
    ("2xlarge", 8, 32),
    ("4xlarge", 16, 64),
    ("8xlarge", 32, 128),
    ("16xlarge", 64, 256),
    ("32xlarge", 128, 512),
];

/// The KiB a node reports of each GiB it has (the firmware and kernel keep the rest).
const REPORTED_KI_PER_GIB: u64 = 1_012_079;

/// What pods ask for (or a node can hold): millicores, MiB and a pod count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Load {
    pub cpu_milli: u64,
    pub memory_mi: u64,
    pub pods: u64,
}

impl Load {
    fn pod(requests: ContainerRequests) -> Self {
        Self {
            cpu_milli: requests.cpu_milli,
            memory_mi: requests.memory_mi,
            pods: 1,
        }
    }

    pub fn add(&mut self, other: Load) {
        self.cpu_milli += other.cpu_milli;
        self.memory_mi += other.memory_mi;
        self.pods += other.pods;
    }

    fn max(self, other: Load) -> Load {
        Load {
            cpu_milli: self.cpu_milli.max(other.cpu_milli),
            memory_mi: self.memory_mi.max(other.memory_mi),
            pods: self.pods.max(other.pods),
        }
    }

    /// Whether twice this load fits what a node of `cpu` cores and `memory_ki` can hold.
    fn half_of(&self, cpu: u32, memory_ki: u64) -> bool {
        2 * self.cpu_milli <= allocatable_cpu_milli(cpu)
            && 2 * self.memory_mi * 1024 <= allocatable_memory_ki(memory_ki)
    }
}

/// What the kubelet reserves for the system leaves this much cpu to pods.
pub fn allocatable_cpu_milli(cpu: u32) -> u64 {
    u64::from(cpu) * 1000 - 90
}

/// What the kubelet reserves for the system and eviction leaves this much memory to pods.
pub fn allocatable_memory_ki(memory_ki: u64) -> u64 {
    memory_ki.saturating_sub(1_000_000)
}

/// The requests of the seeded application pods when `per_node` of them share a node.
pub fn app_requests(per_node: u64) -> AppRequests {
    let (_, cpu, gib) = SIZES[SIZES.len() - 1];
    let smallest_memory = gib / 2 * REPORTED_KI_PER_GIB;
    TIERS
        .into_iter()
        .find(|tier| {
            let mut load = tier.total(true);
            load.cpu_milli *= per_node;
            load.memory_mi *= per_node;
            load.half_of(cpu, smallest_memory)
        })
        .unwrap_or(TIERS[TIERS.len() - 1])
}

/// One node's machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeShape {
    pub instance_type: String,
    pub cpu: u32,
    pub memory_ki: u64,
    pub pods: u64,
}

/// The machines of `count` nodes: three types in turn (as the old fixed ones were), of the
/// smallest size at which the busiest node's `load` is at most half of any of them. A load
/// no real machine holds at half (150,000 pods on one node) gets a machine as large as it
/// needs, named as the largest there is.
pub fn node_shapes(load: Load, count: usize) -> Vec<NodeShape> {
    let class = (0..SIZES.len())
        .find(|&c| {
            let (_, cpu, gib) = SIZES[c];
            load.half_of(cpu, gib / 2 * REPORTED_KI_PER_GIB)
        })
        .unwrap_or(SIZES.len() - 1);
    let next = (class + 1).min(SIZES.len() - 1);
    let cpu_needed = u32::try_from((2 * load.cpu_milli + 90).div_ceil(1000)).unwrap_or(u32::MAX);
    let memory_needed = 2 * load.memory_mi * 1024 + 1_000_000;
    let pods = (2 * load.pods).div_ceil(10).max(11) * 10;
    (0..count)
        .map(|i| {
            let (family, (size, cpu, gib)) = match i % 3 {
                0 => ("m6i", SIZES[class]),
                1 => ("m6i", SIZES[next]),
                _ => ("c6i", SIZES[next]),
            };
            let gib = if family == "c6i" { gib / 2 } else { gib };
            NodeShape {
                instance_type: format!("{family}.{size}"),
                cpu: cpu.max(cpu_needed),
                memory_ki: (gib * REPORTED_KI_PER_GIB).max(memory_needed),
                pods,
            }
        })
        .collect()
}

/// The pod network: node `i` owns the `i`-th block of 100.64.0.0/10, of a size that holds
/// twice its pods; a pod's IP is in its node's block, as the node's `podCIDR` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PodNetwork {
    /// Addresses a node's block holds, a power of two of at least 256.
    block: u32,
}

/// The first address of the pod network.
const POD_NETWORK: u32 = u32::from_be_bytes([100, 64, 0, 0]);
/// Its size: a /10.
const POD_NETWORK_SIZE: u64 = 1 << 22;

impl PodNetwork {
    /// Blocks for `nodes` nodes of up to `per_node` pods each (while the /10 has room).
    pub fn new(nodes: usize, per_node: u64) -> Self {
        let wanted = (2 * per_node + 16).next_power_of_two().max(256);
        let room = (POD_NETWORK_SIZE / nodes.max(1) as u64).max(256);
        let fits = 1u64 << (63 - room.leading_zeros());
        Self {
            block: u32::try_from(wanted.min(fits)).unwrap_or(256),
        }
    }

    fn base(&self, node: usize) -> u32 {
        let blocks = (POD_NETWORK_SIZE / u64::from(self.block)) as usize;
        POD_NETWORK + (node % blocks) as u32 * self.block
    }

    /// Node `node`'s `podCIDR`.
    pub fn cidr(&self, node: usize) -> String {
        let prefix = 32 - self.block.trailing_zeros();
        format!("{}/{prefix}", Ipv4Addr::from(self.base(node)))
    }

    /// The `n`-th pod address of node `node` (the first is `.2`: `.0` is the network, `.1`
    /// the node's bridge).
    pub fn pod_ip(&self, node: usize, n: u64) -> String {
        let offset = (n % u64::from(self.block - 3)) as u32 + 2;
        Ipv4Addr::from(self.base(node) + offset).to_string()
    }
}

/// A free address of `cidr` (a node's podCIDR) that none of `used` has, where the kubelet
/// puts the pods it starts: the block's top eighth first, clear of the seeded pods low in
/// the block and of the churn's (see [`ChurnAddresses`]), then the rest of its upper half;
/// `None` for a CIDR that cannot be read or is full.
pub fn free_pod_ip<'a>(cidr: &str, used: impl Iterator<Item = &'a str>) -> Option<String> {
    let (base, size) = parse_cidr(cidr)?;
    let taken: HashSet<u32> = used
        .filter_map(|ip| ip.parse::<Ipv4Addr>().ok())
        .map(u32::from)
        .collect();
    let top = size - size / 8;
    (top..size - 1)
        .chain(size / 2..top)
        .map(|offset| base.wrapping_add(offset as u32))
        .find(|ip| !taken.contains(ip))
        .map(|ip| Ipv4Addr::from(ip).to_string())
}

/// The addresses the churn gives the pods it makes on one node: every address of the
/// node's block below the kubelet's top eighth, handed out in turn and skipping those in
/// use. What is in use is read from the node's pods once, and again only when the turn has
/// gone round the block (pods that went since free their addresses then), so a new pod
/// costs no scan of its node.
#[derive(Debug)]
pub struct ChurnAddresses {
    base: u32,
    /// The offsets handed out: past the network and the bridge, below the top eighth.
    offsets: std::ops::Range<u64>,
    next: u64,
    used: HashSet<u32>,
    /// Whether `used` is to be read again before the next address.
    stale: bool,
}

impl ChurnAddresses {
    /// Addresses of `cidr`; `None` for a CIDR that cannot be read.
    pub fn new(cidr: &str) -> Option<Self> {
        let (base, size) = parse_cidr(cidr)?;
        let offsets = 2..size - size / 8;
        Some(Self {
            base,
            next: offsets.start,
            offsets,
            used: HashSet::new(),
            stale: true,
        })
    }

    /// The next free address, `in_use` giving the node's pods' addresses when they are to
    /// be read; `None` when every address is taken.
    pub fn next<I: IntoIterator<Item = String>>(
        &mut self,
        in_use: impl FnOnce() -> I,
    ) -> Option<String> {
        if self.stale {
            self.used = in_use()
                .into_iter()
                .filter_map(|ip| ip.parse::<Ipv4Addr>().ok())
                .map(u32::from)
                .collect();
            self.stale = false;
        }
        for _ in self.offsets.clone() {
            let ip = self.base.wrapping_add(self.next as u32);
            self.next += 1;
            if self.next == self.offsets.end {
                self.next = self.offsets.start;
                self.stale = true;
            }
            if self.used.insert(ip) {
                return Some(Ipv4Addr::from(ip).to_string());
            }
        }
        None
    }
}

/// A CIDR's first address and size (at least 4).
fn parse_cidr(cidr: &str) -> Option<(u32, u64)> {
    let (base, prefix) = cidr.split_once('/')?;
    let base = u32::from(base.parse::<Ipv4Addr>().ok()?);
    Some((base, 1u64 << (32 - prefix.parse::<u32>().ok()?.min(30))))
}

/// The busiest node's load, of the loads by node.
pub fn busiest(loads: &HashMap<usize, Load>) -> Load {
    loads.values().fold(Load::default(), |a, b| a.max(*b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busiest_node_is_at_most_half_full_at_any_density() {
        for per_node in [1, 20, 50, 100, 500, 2_000, 7_500, 150_000] {
            let tier = app_requests(per_node);
            let mut load = tier.total(true);
            load.cpu_milli *= per_node;
            load.memory_mi *= per_node;
            load.pods = per_node;
            for shape in node_shapes(load, 3) {
                assert!(
                    2 * load.cpu_milli <= allocatable_cpu_milli(shape.cpu),
                    "{per_node}: {shape:?}"
                );
                assert!(2 * load.memory_mi * 1024 <= allocatable_memory_ki(shape.memory_ki));
                assert!(2 * load.pods <= shape.pods);
            }
        }
        assert_eq!(app_requests(50), TIERS[0]);
    }

    #[test]
    fn the_churn_skips_addresses_in_use_and_reads_them_again_after_a_turn() {
        let mut churn = ChurnAddresses::new("10.0.0.0/29").expect("a CIDR");
        // A /29 gives the churn offsets 2 to 6; 3 is in use.
        let in_use = || vec!["10.0.0.3".to_string()];
        let ips: Vec<Option<String>> = (0..4).map(|_| churn.next(in_use)).collect();
        assert_eq!(
            ips,
            [
                Some("10.0.0.2"),
                Some("10.0.0.4"),
                Some("10.0.0.5"),
                Some("10.0.0.6")
            ]
            .map(|ip| ip.map(str::to_string))
        );
        // Round again: the pods at 2 and 5 have gone.
        let in_use = || ["10.0.0.3", "10.0.0.4", "10.0.0.6"].map(str::to_string);
        assert_eq!(churn.next(in_use).as_deref(), Some("10.0.0.2"));
        assert_eq!(churn.next(in_use).as_deref(), Some("10.0.0.5"));
        assert_eq!(churn.next(in_use), None);
    }

    #[test]
    fn each_node_hands_out_addresses_of_its_own_block() {
        let net = PodNetwork::new(20, 100);
        assert_eq!(net.cidr(0), "100.64.0.0/24");
        assert_eq!(net.cidr(1), "100.64.1.0/24");
        assert_eq!(net.pod_ip(1, 0), "100.64.1.2");
        let dense = PodNetwork::new(20, 7_500);
        assert_eq!(dense.cidr(1), "100.64.64.0/18");
        assert_eq!(dense.pod_ip(1, 300), "100.64.65.46");
        let used = ["100.64.1.224", "100.64.1.225"];
        assert_eq!(
            free_pod_ip("100.64.1.0/24", used.into_iter()).as_deref(),
            Some("100.64.1.226")
        );
        assert_eq!(free_pod_ip("nonsense", used.into_iter()), None);
    }
}
