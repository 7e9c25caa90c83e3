//! The TUI's `App` as the tests start and watch it: every test goes through here, so that a
//! change to how the App is built or read touches this file, not each test.

use std::time::{Duration, Instant};

use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_client::discovery::{Catalog, Discovery};
use kscope_config::{Config, LogSettings};
use kscope_index_views::definitions::IndexDefinition;
use kscope_index_views::live::Window;
use kscope_index_views::usage::UsageSettings;
use kscope_resources::ResourceKind;
use kscope_ui::app::App;
use kscope_ui::contexts::ContextSwitcher;
use kscope_ui::detail::DetailController;
use kscope_ui::draw::Header;
use kscope_ui::favourites::Favourites;
use kscope_ui::namespace_sets::NamespaceSets;
use kscope_ui::nav::ViewSpec;
use kscope_ui::table::TableStarter;

/// How long a wait on the App may take before the test fails: a hang guard, not a deadline
/// the test is about (a loaded two-core machine is slow, not wrong).
const BOUND: Duration = Duration::from_secs(60);

/// The rows [`wait_rows`] reads: more than any test's cluster shows at once.
const HEIGHT: usize = 200;

/// An App to start: [`AppStart::new`], what differs from the defaults, then
/// [`AppStart::start`]. Defaults: the built-in indexes, the built-in kinds only, panels
/// hidden, default log settings.
pub struct AppStart {
    cluster: Cluster,
    view: ViewSpec,
    indexes: Option<Vec<IndexDefinition>>,
    catalog: Option<Catalog>,
    panels: bool,
    logs: Option<LogSettings>,
    contexts: Option<ContextSwitcher>,
    favourites: Option<Favourites>,
    namespace_sets: Option<(NamespaceSets, bool)>,
    usage: Option<UsageSettings>,
    fleet: Vec<Cluster>,
}

impl AppStart {
    pub fn new(cluster: Cluster, view: ViewSpec) -> Self {
        Self {
            cluster,
            view,
            indexes: None,
            catalog: None,
            panels: false,
            logs: None,
            contexts: None,
            favourites: None,
            namespace_sets: None,
            usage: None,
            fleet: Vec::new(),
        }
    }

    /// Showing every namespace's pods.
    pub fn pods(cluster: Cluster) -> Self {
        Self::new(
            cluster,
            ViewSpec::new(ResourceKind::Pods, NamespaceScope::All),
        )
    }

    /// Knowing the kinds `catalog` knows (custom resources, `all`).
    pub fn catalog(mut self, catalog: Catalog) -> Self {
        self.catalog = Some(catalog);
        self
    }

    /// Knowing the kinds one discovery of the cluster finds now.
    pub async fn discovered(self) -> Self {
        let discovery = Discovery::run(&self.cluster.client)
            .await
            .expect("discovers");
        self.catalog(Catalog::new(discovery))
    }

    pub fn indexes(mut self, indexes: Vec<IndexDefinition>) -> Self {
        self.indexes = Some(indexes);
        self
    }

    pub fn panels(mut self) -> Self {
        self.panels = true;
        self
    }

    pub fn log_settings(mut self, settings: LogSettings) -> Self {
        self.logs = Some(settings);
        self
    }

    /// Able to switch to `contexts`' clusters.
    pub fn contexts(mut self, contexts: ContextSwitcher) -> Self {
        self.contexts = Some(contexts);
        self
    }

    /// Able to switch to every context of `args`' kubeconfig, each connected as `args` say.
    pub fn kubeconfig_contexts(self, args: &kscope_client::cluster::ClusterArgs) -> Self {
        let (list_args, connect_args) = (args.clone(), args.clone());
        self.contexts(ContextSwitcher::new(
            std::sync::Arc::new(move || list_args.context_names()),
            std::sync::Arc::new(move |context: String| {
                let args = connect_args.with_context(&context);
                Box::pin(async move { args.connect().await })
            }),
        ))
    }

    pub fn favourites(mut self, favourites: Favourites) -> Self {
        self.favourites = Some(favourites);
        self
    }

    /// Keeping namespace sets in `sets`; with `restore`, opening in the group's last scope.
    pub fn namespace_sets(mut self, sets: NamespaceSets, restore: bool) -> Self {
        self.namespace_sets = Some((sets, restore));
        self
    }

    /// Every table across `clusters` (the first is the one given to [`AppStart::new`]).
    pub fn fleet(mut self, clusters: Vec<Cluster>) -> Self {
        self.fleet = clusters;
        self
    }

    /// Reading the usage columns from the metrics API so.
    pub fn usage(mut self, settings: UsageSettings) -> Self {
        self.usage = Some(settings);
        self
    }

    pub fn start(self) -> App {
        let indexes = self
            .indexes
            .unwrap_or_else(|| Config::built_in().expect("built-in config").indexes);
        let detail = DetailController::new(self.cluster.client.clone(), None);
        let mut starter = TableStarter::new(self.cluster, indexes, 64);
        if let Some(catalog) = self.catalog {
            starter = starter.with_catalog(catalog);
        }
        if let Some(usage) = self.usage {
            starter = starter.with_usage(usage);
        }
        if !self.fleet.is_empty() {
            starter = starter.for_fleet(self.fleet);
        }
        let mut app = App::new(starter, self.view, self.panels, detail).expect("app");
        if let Some(settings) = self.logs {
            app = app.with_log_settings(settings);
        }
        if let Some(contexts) = self.contexts {
            app = app.with_contexts(contexts);
        }
        if let Some(favourites) = self.favourites {
            app = app.with_favourites(favourites);
        }
        if let Some((sets, restore)) = self.namespace_sets {
            app = app.with_namespace_sets(sets, restore);
        }
        app
    }
}

/// Waits (a minute at most) until `ok` holds of the App and its rows, the header's sync kept
/// current as the event loop keeps it; returns the rows.
pub async fn wait_rows(app: &mut App, what: &str, ok: impl Fn(&App, &Window) -> bool) -> Window {
    let deadline = Instant::now() + BOUND;
    loop {
        let status = app.table().status().borrow().clone();
        app.update_sync(&status);
        let window = app.window(HEIGHT);
        if ok(app, &window) {
            // Rows are rebuilt off this thread: `ok` may have read the App's state of a
            // snapshot newer than `window`. The rows read after it are that snapshot's (or
            // a newer one's), so those are returned, once `ok` holds of them too.
            let after = app.window(HEIGHT);
            if ok(app, &after) {
                return after;
            }
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {:?} {window:?}",
            app.header()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The header of a hand-drawn frame: the demo context, listed, no error, no filter; a test
/// sets what it is about (`Header { sync: …, ..header(…) }`).
pub fn header(resource: &str, scope: &str) -> Header {
    Header {
        context: "kscope-demo".into(),
        server: "https://127.0.0.1:6443/".into(),
        resource: resource.into(),
        scope: scope.into(),
        sync: "watching at rv 43".into(),
        sync_short: None,
        listed: true,
        error: None,
        events_per_second: 0.0,
        stale_since: None,
        undecodable: 0,
        filter: String::new(),
        favourites: Vec::new(),
        usage: None,
        readwrite: false,
    }
}

/// [`header`] for every namespace's pods.
pub fn pods_header() -> Header {
    header("pods", kscope_ui::ALL_NAMESPACES)
}

/// The screen without what changes from run to run: the server's address (line one), the
/// event rate, ages (`5s`, `3m`), and the scheduled minute a CronJob's Job is named after
/// (`checkout-report-29919000`, which moves with the day), each replaced by a mark of the
/// same width.
pub fn stable(text: &str) -> String {
    text.lines()
        .skip(1)
        .map(|line| {
            let line = match line.find(" ev/s") {
                Some(at) => {
                    let start = line[..at].rfind(' ').map_or(0, |s| s + 1);
                    format!(
                        "{}{}{}",
                        &line[..start],
                        "#".repeat(at - start),
                        &line[at..]
                    )
                }
                None => line.to_string(),
            };
            line.split_inclusive(' ')
                .map(|word| {
                    let trimmed = word.trim_end();
                    let is_age = trimmed.starts_with(|c: char| c.is_ascii_digit())
                        && trimmed.ends_with(['s', 'm', 'h', 'd', 'y'])
                        && trimmed
                            .chars()
                            .all(|c| c.is_ascii_digit() || "smhdy".contains(c));
                    let scheduled = trimmed.len() > 9
                        && trimmed.as_bytes()[trimmed.len() - 9] == b'-'
                        && trimmed[trimmed.len() - 8..]
                            .bytes()
                            .all(|b| b.is_ascii_digit());
                    match (is_age, scheduled) {
                        (true, _) => {
                            format!("{}{}", "~".repeat(trimmed.len()), &word[trimmed.len()..])
                        }
                        (false, true) => format!(
                            "{}{}{}",
                            &trimmed[..trimmed.len() - 8],
                            "#".repeat(8),
                            &word[trimmed.len()..]
                        ),
                        (false, false) => word.to_string(),
                    }
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}
