//! The admin endpoint under `/sim/` (outside the Kubernetes API paths): inspect the sim,
//! change churn, faults and the Widget controller's bug at run time, restart the store with a new RV epoch, and read the
//! truth a client's cache should converge to.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use serde::Deserialize;
use serde_json::json;

use super::Shared;
use super::faults::Faults;
use super::http::status::{ApiError, json_body};
use super::resources::Resource;
use super::widgets::WidgetBug;

pub(crate) fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route("/state", get(state))
        .route("/churn", put(set_churn))
        .route("/faults", put(set_faults))
        .route("/widget-bug", put(set_widget_bug))
        .route("/restart", post(restart))
        .route("/truth/{resource}", get(truth))
}

async fn state(State(shared): State<Arc<Shared>>) -> Response {
    let position = shared.store.position();
    // Keyed as kubectl names a resource across groups: `plural` in core, else `plural.group`.
    let counts: serde_json::Map<String, serde_json::Value> = shared
        .store
        .served()
        .into_iter()
        .map(|r| {
            let name = match r.group() {
                "" => r.plural().to_string(),
                group => format!("{}.{group}", r.plural()),
            };
            (name, json!(shared.store.count(r)))
        })
        .collect();
    let churn = *shared.churn.borrow();
    let faults = shared.faults.read().clone();
    json_body(
        json!({
            "epoch": position.epoch,
            "resourceVersion": position.rv.to_string(),
            "compactedResourceVersion": shared.store.compacted().to_string(),
            "churn": churn,
            "faults": faults,
            "faultsFired": shared.fired.snapshot(),
            "widgetBug": *shared.widget_bug.read(),
            "counts": counts,
        })
        .to_string(),
    )
}

/// A partial churn change: only the fields present are applied.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ChurnChange {
    rate: Option<f64>,
    paused: Option<bool>,
}

async fn set_churn(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let change: ChurnChange = match serde_json::from_slice(&body) {
        Ok(c) => c,
        Err(e) => {
            return ApiError::bad_request(format!("invalid churn change: {e}")).into_response();
        }
    };
    shared.churn.send_modify(|c| {
        if let Some(rate) = change.rate {
            c.rate = rate.max(0.0);
        }
        if let Some(paused) = change.paused {
            c.paused = paused;
        }
    });
    json_body(json!(*shared.churn.borrow()).to_string())
}

async fn set_faults(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let faults: Faults = match serde_json::from_slice(&body) {
        Ok(f) => f,
        Err(e) => return ApiError::bad_request(format!("invalid faults: {e}")).into_response(),
    };
    shared.set_faults(faults);
    json_body(json!(*shared.faults.read()).to_string())
}

/// The Widget controller's misbehaviour to switch to.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WidgetBugChange {
    mode: WidgetBug,
}

async fn set_widget_bug(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let change: WidgetBugChange = match serde_json::from_slice(&body) {
        Ok(c) => c,
        Err(e) => {
            return ApiError::bad_request(format!("invalid widget bug: {e}")).into_response();
        }
    };
    *shared.widget_bug.write() = change.mode;
    tracing::info!(bug = %change.mode, "widget controller's bug switched");
    json_body(json!({"mode": change.mode}).to_string())
}

async fn restart(State(shared): State<Arc<Shared>>) -> Response {
    let position = shared.store.restart_epoch();
    json_body(
        json!({"epoch": position.epoch, "resourceVersion": position.rv.to_string()}).to_string(),
    )
}

async fn truth(State(shared): State<Arc<Shared>>, Path(resource): Path<String>) -> Response {
    match Resource::from_name(&resource) {
        Some(r) => json_body(json!(shared.store.truth(r)).to_string()),
        None => ApiError::unknown_path().into_response(),
    }
}
