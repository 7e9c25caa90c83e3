//! Whether a namespace asked for (`:pods -n shop`, `-n` at start) exists: one GET of it in
//! the background. A namespace that does not exist is said, and dropped from the
//! favourites, instead of showing as an empty table that looks like a quiet namespace.

use std::collections::HashSet;

use tokio::sync::mpsc;

use kscope_client::fetch::{FetchError, fetch_object};
use kscope_resources::ResourceKind;

/// Answers kept before the loop takes them: one per namespace shown, taken at once.
const CHANNEL: usize = 8;

/// The answer for one namespace of one context.
#[derive(Debug)]
pub struct Checked {
    pub context: String,
    pub namespace: String,
    /// The API server answered 404. Any other failure (forbidden, unreachable) says
    /// nothing about the namespace and counts as existing.
    pub missing: bool,
}

/// Runs the GETs on one cluster and hands their answers to the event loop.
pub struct NamespaceCheck {
    client: kube::Client,
    tx: mpsc::Sender<Checked>,
    rx: mpsc::Receiver<Checked>,
    /// Found to exist: not asked again. A missing one is (it may be created meanwhile).
    existing: HashSet<(String, String)>,
}

impl NamespaceCheck {
    pub fn new(client: kube::Client) -> Self {
        let (tx, rx) = mpsc::channel(CHANNEL);
        Self {
            client,
            tx,
            rx,
            existing: HashSet::new(),
        }
    }

    /// Asks whether `namespace` exists in `context`'s cluster. Must run inside a Tokio
    /// runtime.
    pub fn check(&self, context: String, namespace: String) {
        if self
            .existing
            .contains(&(context.clone(), namespace.clone()))
        {
            return;
        }
        let (client, tx) = (self.client.clone(), self.tx.clone());
        tokio::spawn(async move {
            let result = fetch_object(&client, ResourceKind::Namespaces, None, &namespace).await;
            let missing = matches!(result, Err(FetchError::NotFound { .. }));
            // The receiver lives as long as the tables; if it is gone, nobody waits.
            let _ = tx
                .send(Checked {
                    context,
                    namespace,
                    missing,
                })
                .await;
        });
    }

    /// The next answer. Cancel-safe, for the event loop's `select!`.
    pub async fn checked(&mut self) -> Option<Checked> {
        self.rx.recv().await
    }

    /// Takes an answer in: an existing namespace is not asked about again.
    pub fn finish(&mut self, checked: &Checked) {
        if !checked.missing {
            self.existing
                .insert((checked.context.clone(), checked.namespace.clone()));
        }
    }
}
