//! A pod's QoS class, as the API server sets it on every pod it admits, whoever creates it
//! (a client or a controller).

use serde_json::Value;

/// The pod's QoS class from its containers' resources: Guaranteed when every container's
/// cpu and memory requests equal their limits (requests default to limits), BestEffort when
/// none asks for any, else Burstable.
pub(crate) fn class(spec: &Value) -> &'static str {
    const TRACKED: [&str; 2] = ["cpu", "memory"];
    let containers: Vec<&Value> = ["initContainers", "containers"]
        .iter()
        .filter_map(|list| spec[*list].as_array())
        .flatten()
        .collect();
    let any = containers.iter().any(|c| {
        TRACKED.iter().any(|r| {
            !c["resources"]["requests"][*r].is_null() || !c["resources"]["limits"][*r].is_null()
        })
    });
    if !any {
        return "BestEffort";
    }
    let guaranteed = containers.iter().all(|c| {
        TRACKED.iter().all(|r| {
            let limit = &c["resources"]["limits"][*r];
            let request = &c["resources"]["requests"][*r];
            !limit.is_null() && (request.is_null() || request == limit)
        })
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}
