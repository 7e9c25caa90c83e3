//! Prints the sim's protobuf field tables, `src/sim/http/write/proto/schema.rs`:
//!
//! ```text
//! cargo run -p kscope-proto-schema > src/sim/http/write/proto/schema.rs
//! ```
//!
//! The sim decodes kubectl's protobuf request bodies field by field (`proto/mod.rs`), so it
//! needs each message's field numbers, as k8s.io/api's `generated.proto` gives them, and
//! each field's JSON name. k8s-pb binds those protos with prost and k8s-openapi has the JSON
//! names in its serde impls, but neither says the other's names at run time (prost has no
//! reflection), so this reads both crates' sources, found through `cargo metadata` at the
//! versions the workspace locks: the `#[prost(..., tag = "N")]` attributes of k8s-pb's
//! structs and the `"jsonName" => Field::Key_...` arms of k8s-openapi's deserializers. A
//! field is matched to its JSON name by its letters (`pod_i_ps` is `podIPs`); a message
//! field with no JSON name is one Go embeds inline (`LocalObjectReference`), whose own
//! fields are the parent's in JSON. The output goes through rustfmt, as `cargo fmt` would
//! leave it.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, Result, anyhow, bail};
use heck::{ToLowerCamelCase as _, ToShoutySnakeCase as _};
use serde_json::Value;

/// The served kinds the sim decodes protobuf bodies of (`proto::root`), and the options and
/// subresource bodies client-go sends as protobuf too (a DELETE's DeleteOptions, a drain's
/// Eviction): k8s-pb module and message.
const ROOTS: [(&str, &str); 11] = [
    ("api::core::v1", "Namespace"),
    ("api::core::v1", "Node"),
    ("api::core::v1", "Pod"),
    ("api::apps::v1", "Deployment"),
    ("api::apps::v1", "ReplicaSet"),
    ("api::core::v1", "Secret"),
    ("api::core::v1", "ConfigMap"),
    ("api::batch::v1", "Job"),
    ("api::batch::v1", "CronJob"),
    ("apimachinery::pkg::apis::meta::v1", "DeleteOptions"),
    ("api::policy::v1", "Eviction"),
];

/// The apimachinery messages with JSON forms of their own, and the `Ty` the decoder reads
/// each as.
const SPECIAL: [(&str, &str, &str); 4] = [
    ("apimachinery::pkg::apis::meta::v1", "Time", "Ty::Time"),
    (
        "apimachinery::pkg::apis::meta::v1",
        "FieldsV1",
        "Ty::FieldsV1",
    ),
    (
        "apimachinery::pkg::api::resource",
        "Quantity",
        "Ty::Quantity",
    ),
    (
        "apimachinery::pkg::util::intstr",
        "IntOrString",
        "Ty::IntOrString",
    ),
];

const HEADER: &str = "\
//! Field numbers and JSON names of the protobuf messages the served kinds are made of.
//!
//! Generated, do not edit: `cargo run -p kscope-proto-schema > src/sim/http/write/proto/schema.rs`
//! (tools/proto-schema) reads the field numbers of k8s.io/api's and k8s.io/apimachinery's
//! `generated.proto` from the k8s-pb crate's sources and each field's JSON name from
//! k8s-openapi's, at the versions Cargo.lock holds. Fields Go embeds inline
//! (`LocalObjectReference` in a `SecretKeySelector`...) are `Label::Inline`.

use super::{Field, Label, Message, Ty};
";

fn main() -> Result<()> {
    let sources = Sources::locate()?;
    let schema = generate(&sources)?;
    let formatted = rustfmt(&schema)?;
    std::io::stdout()
        .write_all(formatted.as_bytes())
        .context("writing the schema")
}

/// Where the two crates' sources are.
struct Sources {
    /// k8s-pb's `src/`.
    pb: PathBuf,
    /// k8s-openapi's `src/v1_NN/`, the version its `latest` feature names.
    openapi: PathBuf,
}

impl Sources {
    fn locate() -> Result<Self> {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let out = Command::new(cargo)
            .args(["metadata", "--format-version", "1"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .context("running cargo metadata")?;
        if !out.status.success() {
            bail!(
                "cargo metadata: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let metadata: Value = serde_json::from_slice(&out.stdout).context("cargo metadata")?;
        let package = |name: &str| -> Result<&Value> {
            metadata["packages"]
                .as_array()
                .and_then(|p| p.iter().find(|p| p["name"] == name))
                .ok_or_else(|| anyhow!("{name} is not in the workspace's dependencies"))
        };
        let src = |package: &Value| -> Result<PathBuf> {
            let manifest = package["manifest_path"]
                .as_str()
                .ok_or_else(|| anyhow!("{} has no manifest path", package["name"]))?;
            Ok(Path::new(manifest).with_file_name("src"))
        };
        let openapi = package("k8s-openapi")?;
        let version = openapi["features"]["latest"][0]
            .as_str()
            .ok_or_else(|| anyhow!("k8s-openapi's `latest` feature names no version"))?;
        Ok(Self {
            pb: src(package("k8s-pb")?)?,
            openapi: src(openapi)?.join(version),
        })
    }
}

/// One prost field: number, Rust name, cardinality and type.
#[derive(Clone)]
struct PbField {
    tag: u32,
    name: String,
    label: PbLabel,
    ty: PbTy,
}

#[derive(Clone, Copy, PartialEq)]
enum PbLabel {
    Single,
    Repeated,
    Map,
}

#[derive(Clone)]
enum PbTy {
    /// `string`, `bool`, `int32`, `int64` or `bytes`.
    Scalar(&'static str),
    /// A message, by module and name.
    Message(String, String),
}

/// The sources read so far: k8s-pb's structs per module, k8s-openapi's JSON names per
/// module and type.
#[derive(Default)]
struct Cache {
    pb: HashMap<String, HashMap<String, Vec<PbField>>>,
    json: HashMap<String, HashMap<String, Vec<String>>>,
}

/// A field's JSON name, or none for a struct Go embeds.
enum Name {
    Json(String),
    Inline,
}

/// A message to write, under its constant's name: its name (prost's) and fields.
struct Out {
    name: String,
    fields: Vec<String>,
}

fn generate(sources: &Sources) -> Result<String> {
    let mut cache = Cache::default();
    let mut done: BTreeMap<String, Out> = BTreeMap::new();
    // Each message with the type whose JSON names it takes: its own, or for a message Go
    // embeds that k8s-openapi does not have (`ProbeHandler`), its parent's.
    let mut queue: VecDeque<(String, String, String)> = ROOTS
        .iter()
        .map(|(m, n)| (m.to_string(), n.to_string(), n.to_string()))
        .collect();
    let mut contexts: HashMap<String, String> = HashMap::new();
    while let Some((module, name, context)) = queue.pop_front() {
        let constant = constant(&module, &name)?;
        if let Some(seen) = contexts.get(&constant) {
            if *seen != context {
                bail!("{module}::{name} takes JSON names from both {seen} and {context}");
            }
            continue;
        }
        contexts.insert(constant.clone(), context.clone());
        let json = cache.json_names(sources, &module, &context)?.to_vec();
        let mut fields = Vec::new();
        let mut pb_fields = cache.message(sources, &module, &name)?.to_vec();
        // In field-number order, as the wire usually sends them; the proto's order is Go's.
        pb_fields.sort_by_key(|f| f.tag);
        for field in pb_fields {
            let naming = match json.iter().find(|j| same_letters(j, &field.name)) {
                Some(json) => Name::Json(json.clone()),
                // A struct Go embeds: its fields are the parent's in JSON.
                None if cache.embedded(sources, &field.ty, &json)? => Name::Inline,
                // A field newer than k8s-openapi's version: the proto's name is the JSON one,
                // in words prost split.
                None => {
                    eprintln!(
                        "{module}::{name}.{}: not in k8s-openapi's {context}, named as the proto does",
                        field.name
                    );
                    Name::Json(field.name.trim_start_matches("r#").to_lower_camel_case())
                }
            };
            let ty = match &field.ty {
                PbTy::Scalar(ty) => scalar(ty)?.to_string(),
                PbTy::Message(m, n) => {
                    match SPECIAL.iter().find(|(sm, sn, _)| sm == m && sn == n) {
                        Some((_, _, ty)) => ty.to_string(),
                        None => {
                            // A type k8s-openapi lacks that Go embeds (`ProbeHandler`) has its
                            // parent's JSON names.
                            let inner_context = match naming {
                                Name::Inline if !cache.has_json(sources, m, n)? => context.clone(),
                                _ => n.clone(),
                            };
                            queue.push_back((m.clone(), n.clone(), inner_context));
                            format!("Ty::Message(&{})", self::constant(m, n)?)
                        }
                    }
                }
            };
            let (json_name, label) = match (naming, field.label) {
                (Name::Inline, PbLabel::Single) => (String::new(), "Label::Inline"),
                (Name::Inline, _) => {
                    bail!("{module}::{name}.{} is embedded but not single", field.name)
                }
                (Name::Json(json), PbLabel::Single) => (json, "Label::Single"),
                (Name::Json(json), PbLabel::Repeated) => (json, "Label::Repeated"),
                (Name::Json(json), PbLabel::Map) => (json, "Label::Map"),
            };
            fields.push(format!(
                "Field({}, {json_name:?}, {label}, {ty}),",
                field.tag
            ));
        }
        done.insert(constant.clone(), Out { name, fields });
    }
    let mut text = HEADER.to_string();
    for (constant, out) in &done {
        text.push_str(&format!(
            "\npub(super) static {constant}: Message = Message {{\n    name: {:?},\n    fields: &[\n{}\n    ],\n}};\n",
            out.name,
            out.fields.join("\n"),
        ));
    }
    Ok(text)
}

/// `CORE_V1_POD_SPEC` for `api::core::v1::PodSpec`: group, version and name.
fn constant(module: &str, name: &str) -> Result<String> {
    let mut segments = module.rsplit("::");
    let (Some(version), Some(group)) = (segments.next(), segments.next()) else {
        bail!("{module} is not a group and version");
    };
    Ok(format!("{group}_{version}_{name}").to_shouty_snake_case())
}

fn scalar(ty: &str) -> Result<&'static str> {
    Ok(match ty {
        "string" => "Ty::String",
        "bool" => "Ty::Bool",
        "int32" => "Ty::Int32",
        "int64" => "Ty::Int64",
        "bytes" => "Ty::Bytes",
        other => bail!("no Ty for the protobuf type {other}"),
    })
}

/// Whether a JSON name and a prost field name are the same words: `podIPs` and `pod_i_ps`,
/// `type` and `r#type`.
fn same_letters(json: &str, field: &str) -> bool {
    let letters = |s: &str| -> String {
        s.trim_start_matches("r#")
            .chars()
            .filter(|c| *c != '_')
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    letters(json) == letters(field)
}

impl Cache {
    fn message(&mut self, sources: &Sources, module: &str, name: &str) -> Result<&[PbField]> {
        if !self.pb.contains_key(module) {
            let path = sources.pb.join(module.replace("::", "/")).join("mod.rs");
            let parsed = prost_structs(&path, module)?;
            self.pb.insert(module.to_string(), parsed);
        }
        self.pb
            .get(module)
            .and_then(|m| m.get(name))
            .map(Vec::as_slice)
            .ok_or_else(|| anyhow!("k8s-pb has no {module}::{name}"))
    }

    fn load_json(
        &mut self,
        sources: &Sources,
        module: &str,
    ) -> Result<&HashMap<String, Vec<String>>> {
        if !self.json.contains_key(module) {
            let dir = sources.openapi.join(module.replace("::", "/"));
            let parsed = json_names(&dir)?;
            self.json.insert(module.to_string(), parsed);
        }
        self.json
            .get(module)
            .ok_or_else(|| anyhow!("k8s-openapi's {module} was not read"))
    }

    /// Whether a field of type `ty` is one Go embeds in a parent whose JSON names are
    /// `parent`: a message whose fields are among them.
    fn embedded(&mut self, sources: &Sources, ty: &PbTy, parent: &[String]) -> Result<bool> {
        let PbTy::Message(module, name) = ty else {
            return Ok(false);
        };
        Ok(self
            .message(sources, module, name)?
            .iter()
            .any(|f| parent.iter().any(|j| same_letters(j, &f.name))))
    }

    /// k8s-openapi's JSON names of the type prost calls `name` (`PodDnsConfig` is its
    /// `PodDNSConfig`).
    fn find_json(
        &mut self,
        sources: &Sources,
        module: &str,
        name: &str,
    ) -> Result<Option<&[String]>> {
        Ok(self
            .load_json(sources, module)?
            .iter()
            .find(|(openapi, _)| same_letters(openapi, name))
            .map(|(_, names)| names.as_slice()))
    }

    fn has_json(&mut self, sources: &Sources, module: &str, name: &str) -> Result<bool> {
        Ok(self.find_json(sources, module, name)?.is_some())
    }

    /// The JSON names of `name`, none if k8s-openapi's version does not have the type.
    fn json_names(&mut self, sources: &Sources, module: &str, name: &str) -> Result<&[String]> {
        Ok(self.find_json(sources, module, name)?.unwrap_or_default())
    }
}

fn parse_file(path: &Path) -> Result<syn::File> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    syn::parse_file(&text).with_context(|| format!("parsing {}", path.display()))
}

/// The prost structs of one k8s-pb module (`mod.rs`), by name.
fn prost_structs(path: &Path, module: &str) -> Result<HashMap<String, Vec<PbField>>> {
    let mut out = HashMap::new();
    for item in parse_file(path)?.items {
        let syn::Item::Struct(item) = item else {
            continue;
        };
        let mut fields = Vec::new();
        for field in &item.fields {
            let Some(attr) = field.attrs.iter().find(|a| a.path().is_ident("prost")) else {
                continue;
            };
            let name = field
                .ident
                .as_ref()
                .map(|i| i.to_string())
                .ok_or_else(|| anyhow!("{module}::{} has an unnamed field", item.ident))?;
            let what = || format!("{module}::{}.{name}", item.ident);
            fields.push(prost_field(attr, name.clone(), &field.ty, module).with_context(what)?);
        }
        out.insert(item.ident.to_string(), fields);
    }
    Ok(out)
}

/// One field from its `#[prost(kind, optional|repeated, tag = "N")]` or
/// `#[prost(btree_map = "string, kind", tag = "N")]` and its Rust type.
fn prost_field(
    attr: &syn::Attribute,
    name: String,
    ty: &syn::Type,
    module: &str,
) -> Result<PbField> {
    let (mut kind, mut label, mut tag) = (None, PbLabel::Single, None);
    attr.parse_nested_meta(|meta| {
        let ident = meta
            .path
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_default();
        match ident.as_str() {
            "optional" => {}
            "repeated" => label = PbLabel::Repeated,
            "tag" => tag = Some(meta.value()?.parse::<syn::LitStr>()?.value().parse::<u32>()),
            "packed" => drop(meta.value()?.parse::<syn::LitStr>()?),
            "btree_map" => {
                label = PbLabel::Map;
                let types = meta.value()?.parse::<syn::LitStr>()?.value();
                kind = types.split(", ").nth(1).map(str::to_string);
            }
            "bytes" => {
                drop(meta.value()?.parse::<syn::LitStr>()?);
                kind = Some(ident);
            }
            _ => kind = Some(ident),
        }
        Ok(())
    })?;
    let tag = tag.ok_or_else(|| anyhow!("no tag"))??;
    let kind = kind.ok_or_else(|| anyhow!("no type"))?;
    let ty = match kind.as_str() {
        "message" => {
            let path = innermost(ty).ok_or_else(|| anyhow!("no message type"))?;
            let (module, name) = resolve(module, path)?;
            PbTy::Message(module, name)
        }
        "string" => PbTy::Scalar("string"),
        "bool" => PbTy::Scalar("bool"),
        "int32" => PbTy::Scalar("int32"),
        "int64" => PbTy::Scalar("int64"),
        "bytes" => PbTy::Scalar("bytes"),
        other => bail!("no Ty for the protobuf type {other}"),
    };
    Ok(PbField {
        tag,
        name,
        label,
        ty,
    })
}

/// The message type inside `Option<...>`, `Vec<...>` or a map's value.
fn innermost(ty: &syn::Type) -> Option<&syn::Path> {
    let syn::Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    match &last.arguments {
        syn::PathArguments::AngleBracketed(args) => match args.args.last()? {
            syn::GenericArgument::Type(inner) => innermost(inner),
            _ => None,
        },
        _ => Some(&path.path),
    }
}

/// A type path as written in `module` (`super::super::...::meta::v1::Time`, `PodSpec`) as
/// its module and name.
fn resolve(module: &str, path: &syn::Path) -> Result<(String, String)> {
    let mut segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let name = segments
        .pop()
        .ok_or_else(|| anyhow!("an empty type path"))?;
    let mut at: Vec<&str> = module.split("::").collect();
    let mut rest = segments.as_slice();
    while let [first, tail @ ..] = rest {
        if first != "super" {
            break;
        }
        at.pop()
            .ok_or_else(|| anyhow!("{module}: super past the crate"))?;
        rest = tail;
    }
    let module = at
        .into_iter()
        .map(str::to_string)
        .chain(rest.iter().cloned())
        .collect::<Vec<_>>()
        .join("::");
    Ok((module, name))
}

/// The JSON names of each type in one k8s-openapi module directory: the string patterns its
/// deserializer maps to `Field::Key_...`.
fn json_names(dir: &Path) -> Result<HashMap<String, Vec<String>>> {
    let mut out = HashMap::new();
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        for item in parse_file(&path)?.items {
            let syn::Item::Impl(item) = item else {
                continue;
            };
            let is_deserialize = item
                .trait_
                .as_ref()
                .and_then(|(_, path, _)| path.segments.last())
                .is_some_and(|s| s.ident == "Deserialize");
            let syn::Type::Path(self_ty) = item.self_ty.as_ref() else {
                continue;
            };
            let Some(name) = self_ty.path.segments.last() else {
                continue;
            };
            if is_deserialize {
                let mut keys = Keys(Vec::new());
                syn::visit::visit_item_impl(&mut keys, &item);
                out.insert(name.ident.to_string(), keys.0);
            }
        }
    }
    Ok(out)
}

/// Collects `"name" => Field::Key_...` match arms.
struct Keys(Vec<String>);

impl<'ast> syn::visit::Visit<'ast> for Keys {
    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        if let (syn::Pat::Lit(lit), syn::Expr::Path(body)) = (&arm.pat, arm.body.as_ref())
            && let syn::Lit::Str(s) = &lit.lit
            && body
                .path
                .segments
                .last()
                .is_some_and(|s| s.ident.to_string().starts_with("Key_"))
        {
            self.0.push(s.value());
        }
        syn::visit::visit_arm(self, arm);
    }
}

/// `text` as rustfmt leaves it, so the file is the same after `cargo fmt`.
fn rustfmt(text: &str) -> Result<String> {
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2024", "--emit", "stdout"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .context("running rustfmt")?;
    child
        .stdin
        .take()
        .ok_or_else(|| anyhow!("rustfmt has no stdin"))?
        .write_all(text.as_bytes())
        .context("writing to rustfmt")?;
    let out = child.wait_with_output().context("running rustfmt")?;
    if !out.status.success() {
        bail!("rustfmt: {}", String::from_utf8_lossy(&out.stderr));
    }
    String::from_utf8(out.stdout).context("rustfmt's output")
}
