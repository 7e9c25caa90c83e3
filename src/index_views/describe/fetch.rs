//! GETting what a describe reads and rendering it, off the TUI's thread.

use serde_json::Value;

use kscope_client::fetch::{FetchError, fetch_list, fetch_path};
use kscope_resources::Timestamp;

use super::describer::describe;
use super::sources::{DescribeSources, ListRequest, events_request, related};

/// GETs the object at `path` (`label` names it in errors), then what its describe reads
/// (its Events and related lists, at once), and renders the describe: the TUI runs this off
/// its thread. A list that fails is said in the describe; only the object's own GET failing
/// fails the whole.
pub async fn fetch_described(
    client: &kube::Client,
    path: String,
    label: String,
) -> Result<(Value, Vec<String>), FetchError> {
    let object = fetch_path(client, path, label.clone()).await?;
    let list = |request: ListRequest| {
        let what = format!("{} of {label}", request.what);
        async move {
            let items = fetch_list(client, request.uri(), what)
                .await
                .map_err(|e| e.to_string());
            (request.what, items)
        }
    };
    let events = events_request(&object).map(list);
    let related = futures::future::join_all(related(&object).into_iter().map(list));
    let (events, related) = match events {
        Some(events) => {
            let (events, related) = futures::join!(events, related);
            (Some(events.1), related)
        }
        None => (None, related.await),
    };
    let sources = DescribeSources {
        object,
        events,
        related,
    };
    let lines = describe(&sources, Timestamp::now());
    Ok((sources.object, lines))
}
