//! The conflict bug's second field manager: a "tuner" that keeps setting the `data.color`
//! of the ConfigMaps the controller owns, which the controller then sets back.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::Shared;
use crate::resources::Resource;

use super::bug::WidgetBug;
use super::reconciler::{OWNER_LABEL, record_manager};

/// The tuner's field manager.
pub(super) const TUNER: &str = "widget-tuner";
/// The colour the tuner wants.
const TUNED: &str = "tuned";
/// How often the tuner looks.
const PERIOD: Duration = Duration::from_millis(200);

/// Runs for as long as the controller does, writing only while the conflict bug is on.
pub(super) async fn run(shared: Arc<Shared>) {
    loop {
        tokio::time::sleep(PERIOD).await;
        if *shared.widget_bug.read() != WidgetBug::Conflict {
            continue;
        }
        let result = shared.store.write(|txn| {
            let owned = txn.find(Resource::ConfigMaps, |key, o| {
                key.ends_with("-config")
                    && o.decode()
                        .is_ok_and(|c| c["metadata"]["labels"][OWNER_LABEL].is_string())
            });
            for key in owned {
                let Some(mut config) = txn
                    .get(Resource::ConfigMaps, &key)
                    .and_then(|c| c.decode().ok())
                else {
                    continue;
                };
                if config["data"]["color"] == TUNED {
                    continue;
                }
                config["data"]["color"] = json!(TUNED);
                record_manager(&mut config, TUNER, None, json!({"f:data": {"f:color": {}}}));
                txn.put(Resource::ConfigMaps, &key, &mut config)?;
            }
            Ok::<(), crate::store::StoreError>(())
        });
        if let Err(e) = result {
            tracing::warn!(error = %e, "widget tuner cannot write");
        }
    }
}
