//! The describe of one object: its kind's describer, or the generic one.

use serde::de::DeserializeOwned;
use serde_json::Value;

use kscope_resources::Timestamp;

use super::context::Ctx;
use super::sources::DescribeSources;
use super::writer::Out;
use super::{apps, generic, node, pod, service};

/// The describe text, a line each, as `kubectl describe` prints it at `now`.
pub fn describe(sources: &DescribeSources, now: Timestamp) -> Vec<String> {
    let mut out = Out::default();
    let kind = sources.object.get("kind").and_then(Value::as_str);
    let group = sources
        .object
        .get("apiVersion")
        .and_then(Value::as_str)
        .map(|v| v.rsplit_once('/').map_or("", |(group, _)| group));
    let ctx = Ctx { now, sources };
    let typed = match (group, kind) {
        (Some(""), Some("Pod")) => typed(&ctx, &mut out, pod::pod),
        (Some(""), Some("Node")) => typed(&ctx, &mut out, node::node),
        (Some(""), Some("Service")) => typed(&ctx, &mut out, service::service),
        (Some(""), Some("Secret")) => typed(&ctx, &mut out, generic::secret),
        (Some(""), Some("ConfigMap")) => typed(&ctx, &mut out, generic::config_map),
        (Some("apps"), Some("Deployment")) => typed(&ctx, &mut out, apps::deployment),
        (Some("apps"), Some("ReplicaSet")) => typed(&ctx, &mut out, apps::replica_set),
        (Some("apps"), Some("StatefulSet")) => typed(&ctx, &mut out, apps::stateful_set),
        (Some("batch"), Some("Job")) => typed(&ctx, &mut out, apps::job),
        _ => false,
    };
    if !typed {
        out = Out::default();
        generic::generic(&ctx, &mut out);
    }
    out.finish()
}

/// Runs a typed describer when the object decodes as its type; false sends it to the
/// generic describer (kubectl's own fallback for what it cannot read).
fn typed<T: DeserializeOwned>(ctx: &Ctx<'_>, out: &mut Out, f: fn(&Ctx<'_>, &mut Out, &T)) -> bool {
    match serde_json::from_value::<T>(ctx.sources.object.clone()) {
        Ok(object) => {
            f(ctx, out, &object);
            true
        }
        Err(_) => false,
    }
}
