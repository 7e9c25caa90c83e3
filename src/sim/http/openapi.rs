//! The OpenAPI documents: `/openapi/v3` (an index of group-versions, then one document per
//! group-version) and `/openapi/v2` (one document for everything), with the schema of every
//! served kind. kubectl reads v3 for `explain` and to learn that PATCH takes
//! `fieldValidation` (so it leaves validation to the server); other clients read v2.
//!
//! The built-in kinds' schemas are k8s-openapi's (its `schemars` support: the same types,
//! field docs and names as kube-apiserver's `io.k8s.api.core.v1.Pod`); the custom
//! resources' come from their CRDs. The built-in ones never change and cost some tens of
//! milliseconds to generate, which most sims are never asked for: they are made on the
//! first request, not at start, and kept.

use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use k8s_openapi::api::{
    apps, autoscaling, batch, coordination, core, discovery, events, networking, policy,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::schemars::generate::SchemaSettings;
use k8s_openapi::schemars::{JsonSchema, SchemaGenerator};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::discovery::{GroupVersion, group_versions};
use super::status::{ApiError, json_body};
use crate::resources::Resource;

/// The index's `hash` of every document: clients only use it to tell documents apart in
/// their caches, and the sim sends no caching headers, so they fetch a fresh one anyway.
const HASH: &str = "kscope-sim-1";

/// Where a document form keeps its schemas, as a JSON pointer and as `$ref`s start.
#[derive(Clone, Copy)]
enum Form {
    /// OpenAPI 3: `components.schemas`.
    V3,
    /// Swagger 2: `definitions`.
    V2,
}

impl Form {
    fn pointer(self) -> &'static str {
        match self {
            Form::V3 => "/components/schemas",
            Form::V2 => "/definitions",
        }
    }

    fn reference(self, name: &str) -> String {
        format!("#{}/{name}", self.pointer())
    }

    /// A `query` parameter's description in this form.
    fn query(self, name: &str) -> Value {
        match self {
            Form::V3 => {
                json!({"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": true}})
            }
            Form::V2 => json!({"name": name, "in": "query", "type": "string", "uniqueItems": true}),
        }
    }
}

/// A built-in kind: its group-version-kind and how to generate its schema (and those it
/// references) into a generator.
struct BuiltInKind {
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    name: fn() -> std::borrow::Cow<'static, str>,
    generate: fn(&mut SchemaGenerator) -> k8s_openapi::schemars::Schema,
}

const fn kind<K: k8s_openapi::Resource + JsonSchema>() -> BuiltInKind {
    BuiltInKind {
        group: K::GROUP,
        version: K::VERSION,
        kind: K::KIND,
        name: K::schema_name,
        generate: SchemaGenerator::subschema_for::<K>,
    }
}

/// The k8s-openapi type of each built-in kind the sim serves (see `kinds::BUILT_IN`).
static BUILT_IN_KINDS: [BuiltInKind; 25] = [
    kind::<core::v1::Namespace>(),
    kind::<core::v1::Node>(),
    kind::<core::v1::Pod>(),
    kind::<apps::v1::Deployment>(),
    kind::<apps::v1::ReplicaSet>(),
    kind::<core::v1::Secret>(),
    kind::<core::v1::Service>(),
    kind::<core::v1::Endpoints>(),
    kind::<core::v1::ConfigMap>(),
    kind::<core::v1::Event>(),
    kind::<core::v1::ServiceAccount>(),
    kind::<core::v1::PersistentVolumeClaim>(),
    kind::<core::v1::PersistentVolume>(),
    kind::<discovery::v1::EndpointSlice>(),
    kind::<apps::v1::StatefulSet>(),
    kind::<apps::v1::DaemonSet>(),
    kind::<apps::v1::ControllerRevision>(),
    kind::<batch::v1::Job>(),
    kind::<batch::v1::CronJob>(),
    kind::<coordination::v1::Lease>(),
    kind::<events::v1::Event>(),
    kind::<networking::v1::Ingress>(),
    kind::<policy::v1::PodDisruptionBudget>(),
    kind::<autoscaling::v2::HorizontalPodAutoscaler>(),
    kind::<apiextensions::v1::CustomResourceDefinition>(),
];

/// The schemas of `kinds`, and of everything they reference, in `form`; each kind's own
/// schema tagged with its group-version-kind, as kubectl looks kinds up by that tag.
fn generate<'a>(
    form: Form,
    kinds: impl IntoIterator<Item = &'a BuiltInKind>,
    extra: impl FnOnce(&mut SchemaGenerator),
) -> Map<String, Value> {
    let mut generator = SchemaSettings::openapi3()
        .with(|s| {
            s.definitions_path = form.pointer().into();
            s.meta_schema = None;
        })
        .into_generator();
    let kinds: Vec<&BuiltInKind> = kinds.into_iter().collect();
    for k in &kinds {
        (k.generate)(&mut generator);
    }
    extra(&mut generator);
    let mut schemas = generator.take_definitions(true);
    for k in kinds {
        if let Some(Value::Object(schema)) = schemas.get_mut((k.name)().as_ref()) {
            schema.insert(
                "x-kubernetes-group-version-kind".into(),
                json!([{"group": k.group, "version": k.version, "kind": k.kind}]),
            );
        }
    }
    schemas
}

/// The built-in schemas of v3, generated on first use.
struct V3Schemas {
    /// Each built-in group-version's kinds and what they reference: one document each.
    by_group_version: HashMap<(&'static str, &'static str), Map<String, Value>>,
    /// ObjectMeta and what it references, for the `metadata` of custom resources.
    object_meta: Map<String, Value>,
}

static V3_SCHEMAS: LazyLock<V3Schemas> = LazyLock::new(|| {
    let mut by_group_version = HashMap::new();
    for k in &BUILT_IN_KINDS {
        by_group_version
            .entry((k.group, k.version))
            .or_insert_with(|| {
                let in_gv = BUILT_IN_KINDS
                    .iter()
                    .filter(|o| (o.group, o.version) == (k.group, k.version));
                generate(Form::V3, in_gv, |_| {})
            });
    }
    V3Schemas {
        by_group_version,
        object_meta: generate(Form::V3, [], |g| {
            g.subschema_for::<ObjectMeta>();
        }),
    }
});

/// The built-in schemas of v2, all in its one document (ObjectMeta among them, as every
/// kind refers to it), generated on first use.
static V2_SCHEMAS: LazyLock<Map<String, Value>> =
    LazyLock::new(|| generate(Form::V2, &BUILT_IN_KINDS, |_| {}));

/// The schema of custom resource `r` of `gv` in `form`, from its CRD, named and tagged as
/// the real server publishes it; `None` for a built-in kind.
fn custom_schema(form: Form, gv: &GroupVersion, r: Resource) -> Option<(String, Value)> {
    let custom = r.descriptor().custom?;
    let mut schema = custom.schema.clone();
    for (field, description) in [
        (
            "apiVersion",
            "APIVersion defines the versioned schema of this representation of an object.",
        ),
        (
            "kind",
            "Kind is a string value representing the REST resource this object represents.",
        ),
    ] {
        schema["properties"][field] = json!({"type": "string", "description": description});
    }
    schema["properties"]["metadata"] = json!({
        "allOf": [{"$ref": form.reference(&ObjectMeta::schema_name())}],
        "description": "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
    });
    schema["x-kubernetes-group-version-kind"] =
        json!([{"group": gv.group, "version": gv.version, "kind": r.kind()}]);
    let reversed: Vec<&str> = gv.group.split('.').rev().collect();
    Some((
        format!("{}.{}.{}", reversed.join("."), gv.version, r.kind()),
        schema,
    ))
}

/// The PATCH operation of each kind of `gv`, keyed by path: what kubectl reads to learn
/// that the server validates fields itself (`fieldValidation`). It names no request body
/// types: from a strategic-merge-patch body kubectl's client-side apply would take the
/// schemas for its merge keys, which k8s-openapi's schemas do not carry, so it keeps using
/// the ones compiled into it.
fn patch_paths(form: Form, gv: &GroupVersion, paths: &mut Map<String, Value>) {
    let base = if gv.group.is_empty() {
        format!("/api/{}", gv.version)
    } else {
        format!("/apis/{}", gv.name())
    };
    for r in &gv.resources {
        let path = if r.namespaced() {
            format!("{base}/namespaces/{{namespace}}/{}/{{name}}", r.plural())
        } else {
            format!("{base}/{}/{{name}}", r.plural())
        };
        let parameters =
            ["dryRun", "fieldManager", "fieldValidation", "force"].map(|q| form.query(q));
        paths.insert(
            path,
            json!({"patch": {
                "operationId": format!("patch{}", r.kind()),
                "x-kubernetes-action": "patch",
                "x-kubernetes-group-version-kind": {"group": gv.group, "version": gv.version, "kind": r.kind()},
                "parameters": parameters,
                "responses": {"200": {"description": "OK"}},
            }}),
        );
    }
}

/// A document's schemas: cached built-in ones and per-request custom ones, borrowed into
/// one sorted map rather than copied.
fn merged<'a>(
    parts: impl IntoIterator<Item = &'a Map<String, Value>>,
    custom: &'a [(String, Value)],
) -> BTreeMap<&'a str, &'a Value> {
    let mut out: BTreeMap<&str, &Value> = parts
        .into_iter()
        .flat_map(|m| m.iter().map(|(k, v)| (k.as_str(), v)))
        .collect();
    out.extend(custom.iter().map(|(k, v)| (k.as_str(), v)));
    out
}

#[derive(Serialize)]
struct V3Document<'a> {
    openapi: &'static str,
    info: Value,
    paths: Map<String, Value>,
    components: V3Components<'a>,
}

#[derive(Serialize)]
struct V3Components<'a> {
    schemas: BTreeMap<&'a str, &'a Value>,
}

#[derive(Serialize)]
struct V2Document<'a> {
    swagger: &'static str,
    info: Value,
    paths: Map<String, Value>,
    definitions: BTreeMap<&'a str, &'a Value>,
}

fn info() -> Value {
    json!({"title": "Kubernetes", "version": "v1.32.3"})
}

fn serialized(document: &impl Serialize) -> Response {
    match serde_json::to_string(document) {
        Ok(text) => json_body(text),
        Err(e) => ApiError::internal(&e.to_string()).into_response(),
    }
}

/// Which OpenAPI document a path names.
#[derive(Debug, Clone)]
pub(crate) enum Doc {
    /// `/openapi/v3`: the index of group-versions.
    V3Index,
    /// `/openapi/v3/api/v1`, `/openapi/v3/apis/GROUP/VERSION`.
    V3(GroupVersion),
    /// `/openapi/v2`.
    V2,
}

pub(crate) fn serve(served: &[Resource], doc: Doc, headers: &HeaderMap) -> Response {
    match doc {
        Doc::V3Index => v3_index(served),
        Doc::V3(gv) => v3_document(&gv),
        Doc::V2 => v2_document(served, headers),
    }
}

/// `/openapi/v3`: where each served group-version's document is.
fn v3_index(served: &[Resource]) -> Response {
    let paths: Map<String, Value> = group_versions(served)
        .iter()
        .map(|gv| {
            let path = if gv.group.is_empty() {
                format!("api/{}", gv.version)
            } else {
                format!("apis/{}", gv.name())
            };
            let url = format!("/openapi/v3/{path}?hash={HASH}");
            (path, json!({"serverRelativeURL": url}))
        })
        .collect();
    json_body(json!({ "paths": paths }).to_string())
}

/// `/openapi/v3/api/v1`, `/openapi/v3/apis/GROUP/VERSION`: the schemas of the kinds of
/// `gv` and of what they reference.
fn v3_document(gv: &GroupVersion) -> Response {
    let built_in = &*V3_SCHEMAS;
    let custom: Vec<(String, Value)> = gv
        .resources
        .iter()
        .filter_map(|r| custom_schema(Form::V3, gv, *r))
        .collect();
    let mut parts: Vec<&Map<String, Value>> = Vec::new();
    if let Some(schemas) = built_in.by_group_version.get(&(gv.group, gv.version)) {
        parts.push(schemas);
    }
    if !custom.is_empty() {
        parts.push(&built_in.object_meta);
    }
    let mut paths = Map::new();
    patch_paths(Form::V3, gv, &mut paths);
    serialized(&V3Document {
        openapi: "3.0.0",
        info: info(),
        paths,
        components: V3Components {
            schemas: merged(parts, &custom),
        },
    })
}

/// `/openapi/v2`: every served kind in one document, as JSON. client-go asks for it as
/// protobuf only, which the sim does not write: it gets 406, and kubectl 1.32 reads v3 for
/// explain and validation (and, without v2's merge keys, keeps its compiled-in ones for
/// client-side apply, which is right here: k8s-openapi's schemas do not carry them).
fn v2_document(served: &[Resource], headers: &HeaderMap) -> Response {
    if !accepts_json(headers) {
        return ApiError::not_acceptable("application/json").into_response();
    }
    let mut paths = Map::new();
    let mut custom = Vec::new();
    for gv in group_versions(served) {
        patch_paths(Form::V2, &gv, &mut paths);
        custom.extend(
            gv.resources
                .iter()
                .filter_map(|r| custom_schema(Form::V2, &gv, *r)),
        );
    }
    serialized(&V2Document {
        swagger: "2.0",
        info: info(),
        paths,
        definitions: merged([&*V2_SCHEMAS], &custom),
    })
}

/// Whether `Accept` allows JSON (or says nothing).
fn accepts_json(headers: &HeaderMap) -> bool {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    accept.split(',').any(|range| {
        let media = range.split(';').next().unwrap_or("").trim();
        matches!(media, "application/json" | "application/*" | "*/*" | "")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_kind_has_its_k8s_openapi_schema() {
        for r in Resource::ALL {
            let d = r.descriptor();
            assert!(
                BUILT_IN_KINDS
                    .iter()
                    .any(|k| (k.group, k.version, k.kind) == (d.group, d.version, d.kind)),
                "{}/{} {} has no schema",
                d.group,
                d.version,
                d.kind
            );
        }
        assert_eq!(BUILT_IN_KINDS.len(), Resource::ALL.len());
    }

    #[test]
    fn schemas_reference_only_schemas_of_the_same_document() {
        fn refs<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
            match v {
                Value::Object(m) => {
                    if let Some(Value::String(r)) = m.get("$ref") {
                        out.push(r);
                    }
                    m.values().for_each(|v| refs(v, out));
                }
                Value::Array(a) => a.iter().for_each(|v| refs(v, out)),
                _ => {}
            }
        }
        for (gv, schemas) in &V3_SCHEMAS.by_group_version {
            let mut found = Vec::new();
            schemas.values().for_each(|v| refs(v, &mut found));
            assert!(!found.is_empty(), "{gv:?}");
            for r in found {
                let name = r.strip_prefix("#/components/schemas/").unwrap();
                assert!(schemas.contains_key(name), "{gv:?}: {r}");
            }
        }
        let pod = &V3_SCHEMAS.by_group_version[&("", "v1")]["io.k8s.api.core.v1.Pod"];
        assert_eq!(
            pod["x-kubernetes-group-version-kind"],
            json!([{"group": "", "version": "v1", "kind": "Pod"}])
        );
        // A `$ref` with a description beside it is wrapped in `allOf`, as OpenAPI 3.0
        // ignores a `$ref`'s siblings (and kube-apiserver writes it so).
        assert_eq!(
            pod["properties"]["spec"]["allOf"][0]["$ref"],
            "#/components/schemas/io.k8s.api.core.v1.PodSpec"
        );
    }
}
