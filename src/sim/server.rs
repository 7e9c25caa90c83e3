//! Starting a sim (generate the cluster, bind, spawn the server, churn and controllers) and
//! the handle to the running sim.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::RwLock;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::churn::{self, ChurnSettings};
use crate::config::SimConfig;
use crate::error::SimError;
use crate::faults::{FaultRolls, Faults, FaultsFired, FaultsFiredSnapshot};
use crate::resources::Resource;
use crate::shared::{Shared, SimUser, VIEWER};
use crate::store::{self, Position, Store};
use crate::{controllers, crd, http, kubeconfig, manifests, tls, widgets, workload};

/// How long before the start the default timeline is laid out from: the newest generated
/// pods come 70 minutes after it, so even they are some minutes old.
const DEFAULT_AGE_OF_NEWEST_APPS: i64 = 2 * 3_600;

/// How long `shutdown` waits for open connections to finish.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Entry point: `Sim::start(config)`.
pub struct Sim;

impl Sim {
    /// Generates the cluster, binds, and spawns the server and the churn on the current
    /// tokio runtime.
    pub async fn start(config: SimConfig) -> Result<SimHandle, SimError> {
        if !config.allow_remote && !config.listen.ip().is_loopback() {
            return Err(SimError::RemoteNotAllowed(config.listen));
        }
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|source| SimError::Bind {
                addr: config.listen,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| SimError::Bind {
            addr: config.listen,
            source,
        })?;
        let spec = workload::WorkloadSpec {
            pods: config.pods,
            nodes: config.nodes,
            namespaces: config.namespaces,
            seed: config.seed,
            birth: config
                .birth
                .unwrap_or_else(|| manifests::now_seconds() - DEFAULT_AGE_OF_NEWEST_APPS),
            workload_pods: config.workload_pods,
        };
        let store = Store::new(config.history);
        let widgets = config.widgets;
        let loaded =
            tokio::task::spawn_blocking(move || load(&store, &spec, widgets).map(|()| store))
                .await
                .map_err(|e| SimError::Workload(e.to_string()))??;
        let identity = tls::identity(
            config.state_dir.as_deref(),
            config.token.clone(),
            random_token,
        )?;
        let token = identity.token;
        let (churn, _) = tokio::sync::watch::channel(ChurnSettings {
            rate: config.churn_rate,
            paused: false,
        });
        let shared = Arc::new(Shared {
            store: loaded,
            faults: RwLock::new(Faults::default()),
            fired: FaultsFired::default(),
            fault_rolls: FaultRolls::new(config.seed),
            users: sim_users(&config.users, &token),
            token,
            bookmark_interval: config.bookmark_interval,
            stream_creation_timeout: config.stream_creation_timeout,
            shutdown: CancellationToken::new(),
            churn,
            history: config.history,
            controllers: controllers::Controllers::default(),
            noisy_logs: config.noisy_logs.clone(),
            widget_metrics: widgets::WidgetMetrics::default(),
            widget_bug: RwLock::new(config.widget_bug),
            container_files: parking_lot::Mutex::default(),
        });
        shared.set_faults(config.faults.clone());
        shared.controllers.set_enabled(config.controllers);
        let url = format!("https://{addr}");
        let cert = identity.cert;
        let kubeconfig = match shared.users.as_slice() {
            [_] => kubeconfig::kubeconfig_yaml(&url, &cert.ca_pem, &shared.token)?,
            users => {
                let named: Vec<(&str, &str)> = users
                    .iter()
                    .map(|u| (u.name.as_str(), u.token.as_str()))
                    .collect();
                kubeconfig::kubeconfig_users(&url, &cert.ca_pem, &named)?
            }
        };
        let ca_pem = cert.ca_pem.clone();
        let app = http::router(shared.clone());
        let stop = shared.shutdown.clone();
        let listener =
            tls::TlsListener::new(listener, cert.config, stop.clone()).map_err(|source| {
                SimError::Bind {
                    addr: config.listen,
                    source,
                }
            })?;
        let server = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(stop.cancelled_owned());
            if let Err(e) = serve.await {
                tracing::warn!(error = %e, "sim server stopped");
            }
        });
        let churn = tokio::spawn(churn::run(
            shared.clone(),
            config.churn_seed,
            config.churn_for,
        ));
        let controllers = tokio::spawn(controllers::run(shared.clone()));
        let mut tasks = vec![server, churn, controllers];
        if config.widget_controller && config.controllers {
            tasks.push(tokio::spawn(widgets::run(shared.clone())));
        }
        tracing::info!(%url, "sim ready");
        Ok(SimHandle {
            shared,
            url,
            addr,
            ca_pem,
            kubeconfig,
            tasks,
        })
    }
}

/// Generates the initial cluster (on every core) into the store.
fn load(store: &Store, spec: &workload::WorkloadSpec, widgets: usize) -> Result<(), SimError> {
    let first_rv = store.position().rv + 1;
    let generated =
        workload::generate(spec, first_rv).map_err(|e| SimError::Workload(e.to_string()))?;
    store.load(
        generated
            .into_iter()
            .map(|g| (g.resource, store::Key::from(g.key), g.rv, g.object)),
    );
    let namespaces: Vec<String> = store
        .truth(Resource::Namespaces)
        .into_keys()
        .filter(|ns| !workload::SYSTEM_NAMESPACES.contains(&ns.as_str()))
        .collect();
    let (served, objects) = crd::demo(
        store.instance(),
        &namespaces,
        spec.seed,
        spec.birth - 60 * 86_400,
        store.position().rv + 1,
    )
    .map_err(|e| SimError::Workload(e.to_string()))?;
    store.load(objects);
    if widgets > 0
        && let Some(&resource) = served.iter().find(|r| r.plural() == "widgets")
    {
        let bulk = crd::bulk_widgets(
            resource,
            &namespaces,
            widgets,
            spec.seed,
            spec.birth,
            store.position().rv + 1,
        )
        .map_err(|e| SimError::Workload(e.to_string()))?;
        store.load(bulk);
    }
    store.write(|txn| served.into_iter().for_each(|r| txn.serve(r)));
    Ok(())
}

/// The sim's users: `names` (the first with `token`, the others a random token each), or
/// with none the one user `kscope-sim`.
fn sim_users(names: &[String], token: &str) -> Vec<SimUser> {
    if names.is_empty() {
        return vec![SimUser {
            name: crate::http::status::SIM_USER.to_string(),
            token: token.to_string(),
            read_only: false,
        }];
    }
    names
        .iter()
        .enumerate()
        .map(|(i, name)| SimUser {
            name: name.clone(),
            token: if i == 0 {
                token.to_string()
            } else {
                random_token()
            },
            read_only: name == VIEWER,
        })
        .collect()
}

pub(crate) fn random_token() -> String {
    use rand::Rng;
    let bytes: [u8; 24] = rand::rng().random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A running sim. Dropping it stops the server and the churn.
pub struct SimHandle {
    /// `pub(crate)` for the tests that look into the controllers' queue.
    pub(crate) shared: Arc<Shared>,
    url: String,
    addr: SocketAddr,
    /// The CA its serving certificate chains to.
    ca_pem: String,
    kubeconfig: String,
    tasks: Vec<JoinHandle<()>>,
}

/// One kubeconfig for several sims: a context (and cluster and user) named after each.
pub fn kubeconfig_for(sims: &[(&str, &SimHandle)]) -> Result<String, SimError> {
    let entries: Vec<kubeconfig::Entry<'_>> = sims
        .iter()
        .map(|(name, sim)| kubeconfig::Entry {
            name,
            url: &sim.url,
            ca_pem: &sim.ca_pem,
            token: &sim.shared.token,
        })
        .collect();
    kubeconfig::kubeconfig_yaml_many(&entries)
}

impl SimHandle {
    /// `https://127.0.0.1:PORT`; the CA to trust is in the kubeconfig.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The bearer token clients must send.
    pub fn token(&self) -> &str {
        &self.shared.token
    }

    /// A kubeconfig with context `kscope-sim` pointing at this sim.
    pub fn kubeconfig_yaml(&self) -> &str {
        &self.kubeconfig
    }

    /// A kube config for this sim, parsed from the same kubeconfig kubectl would use.
    pub async fn kube_config(&self) -> Result<kube::Config, SimError> {
        kubeconfig::kube_config(&self.kubeconfig).await
    }

    pub async fn client(&self) -> Result<kube::Client, SimError> {
        kube::Client::try_from(self.kube_config().await?)
            .map_err(|e| SimError::Client(e.to_string()))
    }

    /// The newest resourceVersion and the epoch.
    pub fn position(&self) -> Position {
        self.shared.store.position()
    }

    pub fn churn(&self) -> ChurnSettings {
        *self.shared.churn.borrow()
    }

    /// Changes per second; 0 stops the churn.
    pub fn set_churn_rate(&self, rate: f64) {
        self.shared.churn.send_modify(|c| c.rate = rate.max(0.0));
    }

    /// Turns the controllers, scheduler and kubelets that react to client writes on (the
    /// default) or off, for tests of the write path alone.
    pub fn set_controllers(&self, on: bool) {
        self.shared.controllers.set_enabled(on);
    }

    /// How many times each fault has fired.
    pub fn faults_fired(&self) -> FaultsFiredSnapshot {
        self.shared.fired.snapshot()
    }

    pub fn faults(&self) -> Faults {
        self.shared.faults.read().clone()
    }

    pub fn set_faults(&self, faults: Faults) {
        self.shared.set_faults(faults);
    }

    /// Restarts the store with a new RV epoch, as after an etcd restore: every RV clients
    /// hold becomes too old (410) and they must relist.
    pub fn restart_epoch(&self) -> Position {
        self.shared.store.restart_epoch()
    }

    /// The server's current state as `namespace/name` (or `name`) → resourceVersion.
    pub fn truth(&self, resource: Resource) -> BTreeMap<String, String> {
        self.shared.store.truth(resource)
    }

    /// Stops serving: watches end, and the tasks get a short grace period. A connection
    /// whose client stopped reading cannot see the end of its watch, so after the grace
    /// period the server is aborted rather than waited for.
    pub async fn shutdown(mut self) {
        self.shared.shutdown.cancel();
        for mut task in self.tasks.drain(..) {
            if tokio::time::timeout(SHUTDOWN_GRACE, &mut task)
                .await
                .is_err()
            {
                task.abort();
            }
        }
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        self.shared.shutdown.cancel();
    }
}
