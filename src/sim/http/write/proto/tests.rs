use super::decode::MAGIC;
use super::error::ProtoError;
use super::*;
use serde_json::json;

fn varint(mut n: u64, out: &mut Vec<u8>) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn field(number: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    varint(u64::from(number) << 3 | 2, &mut out);
    varint(payload.len() as u64, &mut out);
    out.extend_from_slice(payload);
    out
}

fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let type_meta = [field(1, api_version.as_bytes()), field(2, kind.as_bytes())].concat();
    [MAGIC.to_vec(), field(1, &type_meta), field(2, raw)].concat()
}

#[test]
fn a_secret_decodes_with_its_bytes_as_base64() {
    let meta = [
        field(1, b"db"),
        field(11, &[field(1, b"app"), field(2, b"web")].concat()),
    ]
    .concat();
    let entry = [field(1, b"password"), field(2, b"hunter2")].concat();
    let raw = [field(1, &meta), field(2, &entry), field(3, b"Opaque")].concat();
    let value = decode(&envelope("v1", "Secret", &raw)).unwrap();
    assert_eq!(
        value,
        json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "db", "labels": {"app": "web"}},
                "data": {"password": "aHVudGVyMg=="}, "type": "Opaque"})
    );
}

/// Every object the sim generates is one its kind's schema declares in full, so Strict
/// validation and pruning leave the seeded cluster's objects alone.
#[test]
fn the_seeded_cluster_declares_every_field() {
    let spec = crate::workload::WorkloadSpec {
        pods: 60,
        nodes: 2,
        namespaces: 2,
        seed: 3,
        birth: 1_741_944_000,
        workload_pods: true,
    };
    for generated in crate::workload::generate(&spec, 1).unwrap() {
        let object = generated.object.decode().unwrap();
        let kind = object["kind"].as_str().unwrap();
        assert_eq!(
            unknown_fields(kind, &object),
            Vec::<String>::new(),
            "{kind}"
        );
        let mut pruned = object.clone();
        prune_unknown(kind, &mut pruned);
        assert_eq!(pruned, object);
    }
    let mut typo = json!({"kind": "Pod", "spec": {"containers": [{"name": "a", "imagee": "x"}]}});
    assert_eq!(unknown_fields("Pod", &typo), ["spec.containers[0].imagee"]);
    prune_unknown("Pod", &mut typo);
    assert_eq!(typo["spec"]["containers"][0], json!({"name": "a"}));
}

#[test]
fn bad_bodies_are_refused() {
    assert_eq!(decode(b"{}"), Err(ProtoError::NoEnvelope));
    let truncated = [MAGIC, &[0x0a, 0x05, 0x01][..]].concat();
    assert_eq!(decode(&truncated), Err(ProtoError::Truncated));
    let unknown_field = field(99, b"x");
    assert_eq!(
        decode(&envelope("v1", "Namespace", &unknown_field)),
        Err(ProtoError::UnknownField("Namespace", 99))
    );
    assert_eq!(
        decode(&envelope("v1", "Widget", b"")),
        Err(ProtoError::UnknownKind("Widget".into()))
    );
}
