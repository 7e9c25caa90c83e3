//! Table cells of the kinds beyond the first six, as kubectl's server-side printers
//! (pkg/printers/internalversion) fill them, and of custom resources from their
//! CRD's additionalPrinterColumns.

use serde_json::{Value, json};

use super::printing::{age, human_duration, template_columns, text};
use crate::manifests::now_seconds;
use crate::resources::Resource;

/// How many endpoints, hosts... a cell lists before `+ N more...`, as the printers do.
const LIST_MAX: usize = 3;

/// `a,b,c + N more...` of `items`.
fn limited(items: &[String], separator: &str) -> String {
    let mut out = items
        .iter()
        .take(LIST_MAX)
        .cloned()
        .collect::<Vec<_>>()
        .join(separator);
    if items.len() > LIST_MAX {
        out.push_str(&format!(" + {} more...", items.len() - LIST_MAX));
    }
    out
}

fn or(text: String, empty: &str) -> String {
    if text.is_empty() {
        empty.to_string()
    } else {
        text
    }
}

fn since(timestamp: &Value) -> String {
    timestamp
        .as_str()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map_or_else(
            || "<unknown>".to_string(),
            |t| human_duration(now_seconds() - t.as_second()),
        )
}

fn seconds(timestamp: &Value) -> Option<i64> {
    timestamp
        .as_str()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map(|t| t.as_second())
}

fn labels(map: &Value) -> String {
    map.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", text(v)))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default()
}

fn int_or_string(v: &Value) -> String {
    match v {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        _ => "N/A".to_string(),
    }
}

/// `ReadWriteOnce` → `RWO`, joined by commas.
fn access_modes(modes: &Value) -> String {
    let short: Vec<&str> = modes
        .as_array()
        .map(|m| {
            m.iter()
                .filter_map(|m| match m.as_str()? {
                    "ReadWriteOnce" => Some("RWO"),
                    "ReadOnlyMany" => Some("ROX"),
                    "ReadWriteMany" => Some("RWX"),
                    "ReadWriteOncePod" => Some("RWOP"),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    short.join(",")
}

fn service_ports(ports: &Value) -> String {
    let list: Vec<String> = ports
        .as_array()
        .map(|ps| {
            ps.iter()
                .map(|p| {
                    let protocol = p["protocol"].as_str().unwrap_or("TCP");
                    match p["nodePort"].as_u64() {
                        Some(node) => format!("{}:{node}/{protocol}", p["port"]),
                        None => format!("{}/{protocol}", p["port"]),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    or(list.join(","), "<none>")
}

fn load_balancer_ips(status: &Value) -> Vec<String> {
    status["loadBalancer"]["ingress"]
        .as_array()
        .map(|ing| {
            ing.iter()
                .filter_map(|i| i["ip"].as_str().or(i["hostname"].as_str()))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn service(obj: &Value) -> Vec<Value> {
    let spec = &obj["spec"];
    let kind = spec["type"].as_str().unwrap_or("ClusterIP");
    let external: Vec<String> = spec["externalIPs"]
        .as_array()
        .map(|a| a.iter().map(text).collect())
        .unwrap_or_default();
    let external = match kind {
        "LoadBalancer" => {
            let mut ips = load_balancer_ips(&obj["status"]);
            ips.extend(external);
            or(ips.join(","), "<pending>")
        }
        "ExternalName" => text(&spec["externalName"]),
        _ => or(external.join(","), "<none>"),
    };
    vec![
        json!(text(&obj["metadata"]["name"])),
        json!(kind),
        json!(or(text(&spec["clusterIP"]), "<none>")),
        json!(external),
        json!(service_ports(&spec["ports"])),
        json!(age(obj)),
        json!(or(labels(&spec["selector"]), "<none>")),
    ]
}

fn endpoints(obj: &Value) -> String {
    let mut out = Vec::new();
    for subset in obj["subsets"].as_array().into_iter().flatten() {
        let ports: Vec<u64> = subset["ports"]
            .as_array()
            .map(|p| p.iter().filter_map(|p| p["port"].as_u64()).collect())
            .unwrap_or_default();
        for address in subset["addresses"].as_array().into_iter().flatten() {
            let ip = text(&address["ip"]);
            if ports.is_empty() {
                out.push(ip);
            } else {
                out.extend(ports.iter().map(|p| format!("{ip}:{p}")));
            }
        }
    }
    or(limited(&out, ","), "<none>")
}

fn endpoint_slice(obj: &Value) -> Vec<Value> {
    let ports: Vec<String> = obj["ports"]
        .as_array()
        .map(|p| {
            p.iter()
                .filter_map(|p| p["port"].as_u64())
                .map(|p| p.to_string())
                .collect()
        })
        .unwrap_or_default();
    let addresses: Vec<String> = obj["endpoints"]
        .as_array()
        .map(|eps| {
            eps.iter()
                .flat_map(|e| e["addresses"].as_array().cloned().unwrap_or_default())
                .map(|a| text(&a))
                .collect()
        })
        .unwrap_or_default();
    vec![
        json!(text(&obj["metadata"]["name"])),
        json!(text(&obj["addressType"])),
        json!(or(ports.join(","), "<unset>")),
        json!(or(limited(&addresses, ","), "<unset>")),
        json!(age(obj)),
    ]
}

/// Both Event kinds: core/v1's fields, or events.k8s.io/v1's (`regarding`, `note`,
/// `deprecated*`), printed alike as the server prints its internal Event.
fn event(obj: &Value, v1: bool) -> Vec<Value> {
    let field = |core: &str, new: &str| &obj[if v1 { new } else { core }];
    let last = if obj["series"]["lastObservedTime"].is_string() {
        since(&obj["series"]["lastObservedTime"])
    } else if field("lastTimestamp", "deprecatedLastTimestamp").is_string() {
        since(field("lastTimestamp", "deprecatedLastTimestamp"))
    } else {
        since(&obj["eventTime"])
    };
    let first = if field("firstTimestamp", "deprecatedFirstTimestamp").is_string() {
        since(field("firstTimestamp", "deprecatedFirstTimestamp"))
    } else {
        since(&obj["eventTime"])
    };
    let regarding = field("involvedObject", "regarding");
    let source = field("source", "deprecatedSource");
    let component = or(
        text(&source["component"]),
        &text(
            &obj[if v1 {
                "reportingController"
            } else {
                "reportingComponent"
            }],
        ),
    );
    let host = text(&source["host"]);
    let source = match (component.is_empty(), host.is_empty()) {
        (_, true) => component,
        (true, false) => host,
        (false, false) => format!("{component}, {host}"),
    };
    let count = match field("count", "deprecatedCount").as_i64() {
        Some(n) => n,
        None if obj["series"]["count"].is_i64() => obj["series"]["count"].as_i64().unwrap_or(1),
        None => 1,
    };
    vec![
        json!(last),
        json!(text(&obj["type"])),
        json!(text(&obj["reason"])),
        json!(format!(
            "{}/{}",
            text(&regarding["kind"]).to_lowercase(),
            text(&regarding["name"])
        )),
        json!(text(&regarding["fieldPath"])),
        json!(source),
        json!(text(field("message", "note"))),
        json!(first),
        json!(count.to_string()),
        json!(text(&obj["metadata"]["name"])),
    ]
}

fn job_status(obj: &Value) -> &'static str {
    let conditions = obj["status"]["conditions"].as_array();
    let has = |t: &str| {
        conditions.is_some_and(|cs| cs.iter().any(|c| c["type"] == t && c["status"] == "True"))
    };
    if has("Complete") {
        "Complete"
    } else if has("Failed") {
        "Failed"
    } else if obj["metadata"]["deletionTimestamp"].is_string() {
        "Terminating"
    } else if has("SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else if has("FailureTarget") {
        "FailureTarget"
    } else if has("Suspended") {
        "Suspended"
    } else {
        "Running"
    }
}

fn job(obj: &Value) -> Vec<Value> {
    let spec = &obj["spec"];
    let status = &obj["status"];
    let succeeded = status["succeeded"].as_u64().unwrap_or(0);
    let completions = match spec["completions"].as_u64() {
        Some(c) => format!("{succeeded}/{c}"),
        None => format!(
            "{succeeded}/1 of {}",
            spec["parallelism"].as_u64().unwrap_or(1)
        ),
    };
    let duration = match (
        seconds(&status["startTime"]),
        seconds(&status["completionTime"]),
    ) {
        (Some(start), Some(end)) => human_duration(end - start),
        (Some(start), None) => human_duration(now_seconds() - start),
        _ => String::new(),
    };
    let [containers, images, _] = template_columns(&spec["template"], &Value::Null);
    vec![
        json!(text(&obj["metadata"]["name"])),
        json!(job_status(obj)),
        json!(completions),
        json!(duration),
        json!(age(obj)),
        json!(containers),
        json!(images),
        json!(or(labels(&spec["selector"]["matchLabels"]), "<none>")),
    ]
}

fn cron_job(obj: &Value) -> Vec<Value> {
    let spec = &obj["spec"];
    let job = &spec["jobTemplate"]["spec"];
    let [containers, images, _] = template_columns(&job["template"], &Value::Null);
    let last = if obj["status"]["lastScheduleTime"].is_string() {
        since(&obj["status"]["lastScheduleTime"])
    } else {
        "<none>".to_string()
    };
    vec![
        json!(text(&obj["metadata"]["name"])),
        json!(text(&spec["schedule"])),
        json!(or(text(&spec["timeZone"]), "<none>")),
        json!(spec["suspend"].as_bool().unwrap_or(false)),
        json!(obj["status"]["active"].as_array().map_or(0, Vec::len)),
        json!(last),
        json!(age(obj)),
        json!(containers),
        json!(images),
        json!(or(labels(&job["selector"]["matchLabels"]), "<none>")),
    ]
}

fn hpa_targets(obj: &Value) -> String {
    let current = obj["status"]["currentMetrics"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let list: Vec<String> = obj["spec"]["metrics"]
        .as_array()
        .map(|metrics| {
            metrics
                .iter()
                .filter(|m| m["type"] == "Resource")
                .map(|m| {
                    let name = text(&m["resource"]["name"]);
                    let target = &m["resource"]["target"];
                    let now = current
                        .iter()
                        .find(|c| c["resource"]["name"] == m["resource"]["name"])
                        .map(|c| &c["resource"]["current"]);
                    match target["averageUtilization"].as_u64() {
                        Some(want) => {
                            let have = now
                                .and_then(|c| c["averageUtilization"].as_u64())
                                .map_or("<unknown>".to_string(), |u| format!("{u}%"));
                            format!("{name}: {have}/{want}%")
                        }
                        None => {
                            let have = now
                                .map(|c| text(&c["averageValue"]))
                                .filter(|v| !v.is_empty())
                                .unwrap_or_else(|| "<unknown>".to_string());
                            format!("{name}: {have}/{}", text(&target["averageValue"]))
                        }
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    or(limited(&list, ", "), "<none>")
}

fn owner_of(obj: &Value) -> String {
    obj["metadata"]["ownerReferences"]
        .as_array()
        .and_then(|refs| refs.iter().find(|r| r["controller"] == true))
        .map_or("<none>".to_string(), |r| {
            let group = text(&r["apiVersion"])
                .rsplit_once('/')
                .map(|(g, _)| g.to_string())
                .unwrap_or_default();
            let kind = text(&r["kind"]).to_lowercase();
            match group.as_str() {
                "" => format!("{kind}/{}", text(&r["name"])),
                g => format!("{kind}.{g}/{}", text(&r["name"])),
            }
        })
}

/// The cells of one object of a kind beyond the first six.
pub(super) fn cells(resource: Resource, obj: &Value) -> Vec<Value> {
    let name = json!(text(&obj["metadata"]["name"]));
    let count = |v: &Value| v.as_u64().unwrap_or(0);
    let spec = &obj["spec"];
    let status = &obj["status"];
    match resource {
        Resource::Services => service(obj),
        Resource::Endpoints => vec![name, json!(endpoints(obj)), json!(age(obj))],
        Resource::ConfigMaps => {
            let size = |v: &Value| v.as_object().map_or(0, |m| m.len());
            vec![
                name,
                json!(size(&obj["data"]) + size(&obj["binaryData"])),
                json!(age(obj)),
            ]
        }
        Resource::Events => event(obj, false),
        Resource::EventsV1 => event(obj, true),
        Resource::ServiceAccounts => vec![
            name,
            json!(obj["secrets"].as_array().map_or(0, Vec::len)),
            json!(age(obj)),
        ],
        Resource::PersistentVolumeClaims => {
            let phase = if obj["metadata"]["deletionTimestamp"].is_string() {
                "Terminating".to_string()
            } else {
                text(&status["phase"])
            };
            vec![
                name,
                json!(phase),
                json!(text(&spec["volumeName"])),
                json!(text(&status["capacity"]["storage"])),
                json!(access_modes(&status["accessModes"])),
                json!(text(&spec["storageClassName"])),
                json!(or(text(&spec["volumeAttributesClassName"]), "<unset>")),
                json!(age(obj)),
                json!(or(text(&spec["volumeMode"]), "<unset>")),
            ]
        }
        Resource::PersistentVolumes => {
            let claim = &spec["claimRef"];
            let claim = if claim.is_object() {
                format!("{}/{}", text(&claim["namespace"]), text(&claim["name"]))
            } else {
                String::new()
            };
            vec![
                name,
                json!(text(&spec["capacity"]["storage"])),
                json!(access_modes(&spec["accessModes"])),
                json!(text(&spec["persistentVolumeReclaimPolicy"])),
                json!(text(&status["phase"])),
                json!(claim),
                json!(text(&spec["storageClassName"])),
                json!(or(text(&spec["volumeAttributesClassName"]), "<unset>")),
                json!(text(&status["reason"])),
                json!(age(obj)),
                json!(or(text(&spec["volumeMode"]), "<unset>")),
            ]
        }
        Resource::EndpointSlices => endpoint_slice(obj),
        Resource::StatefulSets => {
            let [containers, images, _] = template_columns(&spec["template"], &spec["selector"]);
            vec![
                name,
                json!(format!(
                    "{}/{}",
                    count(&status["readyReplicas"]),
                    count(&spec["replicas"])
                )),
                json!(age(obj)),
                json!(containers),
                json!(images),
            ]
        }
        Resource::DaemonSets => {
            let [containers, images, selector] =
                template_columns(&spec["template"], &spec["selector"]);
            vec![
                name,
                json!(count(&status["desiredNumberScheduled"])),
                json!(count(&status["currentNumberScheduled"])),
                json!(count(&status["numberReady"])),
                json!(count(&status["updatedNumberScheduled"])),
                json!(count(&status["numberAvailable"])),
                json!(or(
                    labels(&spec["template"]["spec"]["nodeSelector"]),
                    "<none>"
                )),
                json!(age(obj)),
                json!(containers),
                json!(images),
                json!(selector),
            ]
        }
        Resource::ControllerRevisions => vec![
            name,
            json!(owner_of(obj)),
            json!(obj["revision"].as_i64().unwrap_or(0).to_string()),
            json!(age(obj)),
        ],
        Resource::Jobs => job(obj),
        Resource::CronJobs => cron_job(obj),
        Resource::Leases => vec![name, json!(text(&spec["holderIdentity"])), json!(age(obj))],
        Resource::Ingresses => {
            let hosts: Vec<String> = spec["rules"]
                .as_array()
                .map(|rules| rules.iter().map(|r| or(text(&r["host"]), "*")).collect())
                .unwrap_or_default();
            let ports = if spec["tls"].as_array().is_some_and(|t| !t.is_empty()) {
                "80, 443"
            } else {
                "80"
            };
            vec![
                name,
                json!(or(text(&spec["ingressClassName"]), "<none>")),
                json!(or(limited(&hosts, ","), "*")),
                json!(load_balancer_ips(status).join(",")),
                json!(ports),
                json!(age(obj)),
            ]
        }
        Resource::PodDisruptionBudgets => vec![
            name,
            json!(int_or_string(&spec["minAvailable"])),
            json!(int_or_string(&spec["maxUnavailable"])),
            json!(count(&status["disruptionsAllowed"])),
            json!(age(obj)),
        ],
        Resource::HorizontalPodAutoscalers => {
            let target = &spec["scaleTargetRef"];
            let min = spec["minReplicas"]
                .as_u64()
                .map_or("<unset>".to_string(), |m| m.to_string());
            vec![
                name,
                json!(format!(
                    "{}/{}",
                    text(&target["kind"]),
                    text(&target["name"])
                )),
                json!(hpa_targets(obj)),
                json!(min),
                json!(count(&spec["maxReplicas"]).to_string()),
                json!(count(&status["currentReplicas"]).to_string()),
                json!(age(obj)),
            ]
        }
        Resource::CustomResourceDefinitions => {
            vec![name, json!(text(&obj["metadata"]["creationTimestamp"]))]
        }
        custom => super::crd_table::custom_cells(custom, obj),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_cut_at_three() {
        let items: Vec<String> = (1..=5).map(|i| format!("10.0.0.{i}:80")).collect();
        assert_eq!(
            limited(&items, ","),
            "10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 2 more..."
        );
    }
}
