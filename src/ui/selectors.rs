//! Enter on a Service: the pods its selector picks. The selector is in the Service's spec,
//! which the generic store does not keep, so it is fetched in the background when asked for;
//! the table then shows the pods through label indexes, a hash lookup per label.

use std::collections::BTreeMap;

use serde_json::Value;
use tokio::sync::mpsc;

use kscope_client::fetch::fetch_object;
use kscope_resources::Kind;

/// Fetches finished but not yet taken: one a keystroke, so a few are plenty.
const CHANNEL: usize = 8;

/// A Service's selector, fetched for the drill-down.
#[derive(Debug)]
pub struct Selected {
    pub namespace: String,
    pub name: String,
    /// The selector's labels, or why there are none to follow.
    pub result: Result<BTreeMap<String, String>, String>,
    generation: u64,
}

/// Fetches Services' selectors off the UI thread; only the latest ask's answer is taken.
pub struct SelectorFetcher {
    client: kube::Client,
    generation: u64,
    tx: mpsc::Sender<Selected>,
    rx: mpsc::Receiver<Selected>,
}

impl SelectorFetcher {
    pub fn new(client: kube::Client) -> Self {
        let (tx, rx) = mpsc::channel(CHANNEL);
        Self {
            client,
            generation: 0,
            tx,
            rx,
        }
    }

    /// Starts fetching the selector of Service `namespace/name` (`services`, the discovered
    /// kind). Must run inside a Tokio runtime.
    pub fn fetch(&mut self, services: Kind, namespace: String, name: String) {
        self.generation += 1;
        let generation = self.generation;
        let (client, tx) = (self.client.clone(), self.tx.clone());
        tokio::spawn(async move {
            let result = fetch_object(&client, services, Some(&namespace), &name)
                .await
                .map_err(|e| e.to_string())
                .and_then(|service| selector(&service));
            // The receiver lives as long as the fetcher; if it is gone, nobody waits.
            let _ = tx
                .send(Selected {
                    namespace,
                    name,
                    result,
                    generation,
                })
                .await;
        });
    }

    /// The next finished fetch. Cancel-safe, for the event loop's `select!`.
    pub async fn selected(&mut self) -> Option<Selected> {
        self.rx.recv().await
    }

    /// The fetch's answer, unless a later ask superseded it.
    pub fn finish(&self, selected: Selected) -> Option<Selected> {
        (selected.generation == self.generation).then_some(selected)
    }
}

/// A Service's `spec.selector`: a plain label map, unlike a workload's LabelSelector.
fn selector(service: &Value) -> Result<BTreeMap<String, String>, String> {
    let labels: BTreeMap<String, String> = service["spec"]["selector"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect();
    if labels.is_empty() {
        Err("it has no selector: its endpoints are not its pods' (they are managed by hand, or it is an ExternalName)".into())
    } else {
        Ok(labels)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_services_selector_is_its_label_map() {
        let service = serde_json::json!({"spec": {"selector": {"app": "web", "tier": "front"}}});
        let labels = selector(&service).unwrap();
        assert_eq!(
            labels.into_iter().collect::<Vec<_>>(),
            [
                ("app".to_string(), "web".to_string()),
                ("tier".to_string(), "front".to_string())
            ]
        );
        let without = serde_json::json!({"spec": {"type": "ExternalName"}});
        assert!(selector(&without).unwrap_err().contains("no selector"));
    }
}
