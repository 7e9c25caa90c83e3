//! Switching clusters without a restart (`:ctx`, as in k9s): the kube contexts a person can
//! switch to, a picker over them, and the connection to the chosen one, made in the
//! background so the screen stays live while a slow or unreachable server is tried.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures::future::join_all;
use tokio::sync::mpsc;

use kscope_client::cluster::{Cluster, ClusterError};
use kscope_client::discovery::{Catalog, CatalogWatch, DiscoveryError};

use super::action::Action;
use super::effect::Effect;

/// Connects to the context named; boxed so the kubeconfig's contexts and the demo's
/// simulated clusters are one type.
pub type Connect = Arc<
    dyn Fn(String) -> Pin<Box<dyn Future<Output = Result<Cluster, ClusterError>> + Send>>
        + Send
        + Sync,
>;

/// Lists the contexts a person can switch to and their current one, read when asked.
pub type ListContexts =
    Arc<dyn Fn() -> Result<(Vec<String>, Option<String>), ClusterError> + Send + Sync>;

/// A connection attempt that finished, for the event loop.
pub struct Connected {
    pub context: String,
    pub result: Result<Switched, ClusterError>,
    generation: u64,
}

/// A cluster connected to, with what it serves already discovered: a category or a custom
/// resource on screen before the switch can then be shown from it at once.
pub struct Switched {
    pub cluster: Cluster,
    pub catalog: Catalog,
    /// Keeps `catalog` current (CRDs created or deleted) while it is kept.
    pub catalog_watch: CatalogWatch,
    /// Why only the built-in kinds are known, if discovery failed.
    pub discovery_error: Option<DiscoveryError>,
    /// `:ctx a,b`: every cluster of the set (`cluster` is the first), each discovering in
    /// the background; empty for one context.
    pub fleet: Vec<Cluster>,
}

/// The contexts and the connection in flight, if any.
pub struct ContextSwitcher {
    list: ListContexts,
    connect: Connect,
    /// Counts attempts: a later `:ctx` supersedes an earlier one still connecting.
    generation: u64,
    connecting: Option<String>,
    tx: mpsc::UnboundedSender<Connected>,
    rx: mpsc::UnboundedReceiver<Connected>,
}

impl ContextSwitcher {
    pub fn new(list: ListContexts, connect: Connect) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Self {
            list,
            connect,
            generation: 0,
            connecting: None,
            tx,
            rx,
        }
    }

    /// A switcher offering only `context`, already connected: nothing to switch to.
    pub fn single(context: String, cluster: Cluster) -> Self {
        let name = context.clone();
        Self::new(
            Arc::new(move || Ok((vec![name.clone()], Some(name.clone())))),
            Arc::new(move |_| {
                let cluster = cluster.clone();
                Box::pin(async move { Ok(cluster) })
            }),
        )
    }

    pub fn contexts(&self) -> Result<(Vec<String>, Option<String>), ClusterError> {
        (self.list)()
    }

    /// The context being connected to, while it is.
    pub fn connecting(&self) -> Option<&str> {
        self.connecting.as_deref()
    }

    /// Starts connecting to `context` in the background, and discovering what it serves
    /// (bounded by discovery's own timeout). Must run inside a Tokio runtime.
    pub fn connect(&mut self, context: String) {
        self.generation += 1;
        self.connecting = Some(context.clone());
        let generation = self.generation;
        let connect = self.connect.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let names: Vec<String> = context
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect();
            let result = match names.as_slice() {
                [_, _, ..] => connect_set(&connect, names).await,
                _ => match connect(context.clone()).await {
                    Ok(cluster) => {
                        let (catalog, catalog_watch, discovery_error) =
                            Catalog::keep_current(&cluster).await;
                        Ok(Switched {
                            cluster,
                            catalog,
                            catalog_watch,
                            discovery_error,
                            fleet: Vec::new(),
                        })
                    }
                    Err(err) => Err(err),
                },
            };
            // The receiver lives as long as the switcher; if it is gone, nobody waits.
            let _ = tx.send(Connected {
                context,
                result,
                generation,
            });
        });
    }

    /// The next finished attempt. Cancel-safe, for the event loop's `select!`.
    pub async fn connected(&mut self) -> Option<Connected> {
        self.rx.recv().await
    }

    /// The attempt's result, unless a later attempt superseded it.
    pub fn finish(
        &mut self,
        connected: Connected,
    ) -> Option<(String, Result<Switched, ClusterError>)> {
        if connected.generation != self.generation {
            return None;
        }
        self.connecting = None;
        Some((connected.context, connected.result))
    }
}

/// `:ctx a,b`: every context given a client at once (none waits on a server: each
/// cluster's informers find out for themselves whether it answers), the first standing for
/// the set wherever one cluster is needed. Any context that cannot be given one fails the
/// switch, named.
async fn connect_set(connect: &Connect, names: Vec<String>) -> Result<Switched, ClusterError> {
    let connected = join_all(names.iter().map(|name| connect(name.clone()))).await;
    let fleet = connected.into_iter().collect::<Result<Vec<Cluster>, _>>()?;
    let Some(first) = fleet.first().cloned() else {
        return Err(ClusterError::NoContextMatches(names.join(",")));
    };
    let (catalog, catalog_watch) = Catalog::discover_in_background(&first);
    Ok(Switched {
        cluster: first,
        catalog,
        catalog_watch,
        discovery_error: None,
        fleet,
    })
}

/// The `:ctx` picker: the contexts, the current one starred, one selected, and those marked
/// to open together as a fleet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextPicker {
    pub names: Vec<String>,
    pub current: Option<String>,
    pub selected: usize,
    /// Marked with space, by position in `names`: Enter opens them all, in the kubeconfig's
    /// order, as `:ctx a,b` does.
    pub marked: BTreeSet<usize>,
}

impl ContextPicker {
    /// A picker over `names` with the selection on the current context.
    pub fn new(names: Vec<String>, current: Option<String>) -> Self {
        let selected = current
            .as_ref()
            .and_then(|c| names.iter().position(|n| n == c))
            .unwrap_or(0);
        Self {
            names,
            current,
            selected,
            marked: BTreeSet::new(),
        }
    }

    /// Moves, marks, chooses (`Effect::SwitchContext`: the marked contexts when there are
    /// any, else the selected one) or closes (`Effect::Close`).
    pub fn handle_key(&mut self, action: &Action) -> Option<Effect> {
        let last = self.names.len().saturating_sub(1);
        match action {
            Action::Up => self.selected = self.selected.saturating_sub(1),
            Action::Down => self.selected = (self.selected + 1).min(last),
            Action::Top => self.selected = 0,
            Action::Bottom => self.selected = last,
            Action::MarkContext if self.selected < self.names.len() => {
                self.marked = &self.marked ^ &BTreeSet::from([self.selected]);
            }
            Action::ChooseValue if !self.marked.is_empty() => {
                let names: Vec<&str> = self
                    .marked
                    .iter()
                    .filter_map(|&i| self.names.get(i).map(String::as_str))
                    .collect();
                return Some(Effect::SwitchContext(names.join(",")));
            }
            Action::ChooseValue => {
                return self
                    .names
                    .get(self.selected)
                    .map(|name| Effect::SwitchContext(name.clone()));
            }
            Action::Back | Action::ToggleIndexes => return Some(Effect::Close),
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_picker_starts_on_the_current_context_and_chooses_the_selected() {
        let names = vec!["a".to_owned(), "b".to_owned(), "c".to_owned()];
        let mut picker = ContextPicker::new(names, Some("b".into()));
        assert_eq!(picker.selected, 1);
        picker.handle_key(&Action::Down);
        picker.handle_key(&Action::Down);
        assert_eq!(picker.selected, 2, "stops at the last");
        assert_eq!(
            picker.handle_key(&Action::ChooseValue),
            Some(Effect::SwitchContext("c".into()))
        );
        assert_eq!(picker.handle_key(&Action::Back), Some(Effect::Close));
        assert_eq!(
            ContextPicker::new(Vec::new(), None).handle_key(&Action::ChooseValue),
            None
        );
    }

    #[test]
    fn marked_contexts_open_together_in_the_kubeconfigs_order() {
        let names = vec!["a".to_owned(), "b".to_owned(), "c".to_owned()];
        let mut picker = ContextPicker::new(names, Some("a".into()));
        picker.handle_key(&Action::Bottom);
        picker.handle_key(&Action::MarkContext);
        picker.handle_key(&Action::Top);
        picker.handle_key(&Action::MarkContext);
        picker.handle_key(&Action::Down);
        picker.handle_key(&Action::MarkContext);
        picker.handle_key(&Action::MarkContext);
        assert_eq!(picker.marked, BTreeSet::from([0, 2]), "space again unmarks");
        assert_eq!(
            picker.handle_key(&Action::ChooseValue),
            Some(Effect::SwitchContext("a,c".into())),
            "the marked, not the selected"
        );
        picker.marked.clear();
        assert_eq!(
            picker.handle_key(&Action::ChooseValue),
            Some(Effect::SwitchContext("b".into()))
        );
        let mut empty = ContextPicker::new(Vec::new(), None);
        empty.handle_key(&Action::MarkContext);
        assert!(empty.marked.is_empty());
    }
}
