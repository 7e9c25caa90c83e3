//! The kubeconfig the sim emits (context `kscope-sim`), and a kube config built from it, so
//! kubectl and kube's client reach the sim the same way.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::Serialize;

use super::SimError;

pub const CONTEXT: &str = "kscope-sim";

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct File<'a> {
    #[serde(rename = "apiVersion")]
    api_version: &'a str,
    kind: &'a str,
    clusters: Vec<Named<'a, Cluster<'a>>>,
    users: Vec<Named<'a, User<'a>>>,
    contexts: Vec<Named<'a, Context<'a>>>,
    current_context: &'a str,
}

#[derive(Serialize)]
struct Named<'a, T> {
    name: &'a str,
    #[serde(flatten)]
    item: T,
}

#[derive(Serialize)]
struct Cluster<'a> {
    cluster: ClusterInfo<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct ClusterInfo<'a> {
    server: &'a str,
    certificate_authority_data: String,
}

#[derive(Serialize)]
struct User<'a> {
    user: UserInfo<'a>,
}

#[derive(Serialize)]
struct UserInfo<'a> {
    token: &'a str,
}

#[derive(Serialize)]
struct Context<'a> {
    context: ContextInfo<'a>,
}

#[derive(Serialize)]
struct ContextInfo<'a> {
    cluster: &'a str,
    user: &'a str,
}

/// One cluster of a kubeconfig: its context, cluster and user all go by `name`.
pub struct Entry<'a> {
    pub name: &'a str,
    pub url: &'a str,
    pub ca_pem: &'a str,
    pub token: &'a str,
}

/// The kubeconfig text for a sim at `url` serving a certificate from `ca_pem`, with `token`.
pub fn kubeconfig_yaml(url: &str, ca_pem: &str, token: &str) -> Result<String, SimError> {
    kubeconfig_yaml_many(&[Entry {
        name: CONTEXT,
        url,
        ca_pem,
        token,
    }])
}

/// A kubeconfig with a context per entry; the first is the current one.
pub fn kubeconfig_yaml_many(entries: &[Entry<'_>]) -> Result<String, SimError> {
    let current = entries
        .first()
        .map(|e| e.name)
        .ok_or_else(|| SimError::Kubeconfig("no cluster to write".into()))?;
    let file = File {
        api_version: "v1",
        kind: "Config",
        clusters: entries
            .iter()
            .map(|e| Named {
                name: e.name,
                item: Cluster {
                    cluster: ClusterInfo {
                        server: e.url,
                        certificate_authority_data: STANDARD.encode(e.ca_pem),
                    },
                },
            })
            .collect(),
        users: entries
            .iter()
            .map(|e| Named {
                name: e.name,
                item: User {
                    user: UserInfo { token: e.token },
                },
            })
            .collect(),
        contexts: entries
            .iter()
            .map(|e| Named {
                name: e.name,
                item: Context {
                    context: ContextInfo {
                        cluster: e.name,
                        user: e.name,
                    },
                },
            })
            .collect(),
        current_context: current,
    };
    serde_saphyr::to_string(&file).map_err(|e| SimError::Kubeconfig(e.to_string()))
}

/// The kubeconfig of one sim with several users (`--users admin,viewer`): one cluster, and
/// a context per user, each (name, token): the first's is `kscope-sim` and current, the
/// others' `kscope-sim-NAME`.
pub fn kubeconfig_users(
    url: &str,
    ca_pem: &str,
    users: &[(&str, &str)],
) -> Result<String, SimError> {
    let contexts: Vec<String> = users
        .iter()
        .enumerate()
        .map(|(i, (name, _))| match i {
            0 => CONTEXT.to_string(),
            _ => format!("{CONTEXT}-{name}"),
        })
        .collect();
    let file = File {
        api_version: "v1",
        kind: "Config",
        clusters: vec![Named {
            name: CONTEXT,
            item: Cluster {
                cluster: ClusterInfo {
                    server: url,
                    certificate_authority_data: STANDARD.encode(ca_pem),
                },
            },
        }],
        users: users
            .iter()
            .map(|(name, token)| Named {
                name,
                item: User {
                    user: UserInfo { token },
                },
            })
            .collect(),
        contexts: contexts
            .iter()
            .zip(users)
            .map(|(context, (name, _))| Named {
                name: context,
                item: Context {
                    context: ContextInfo {
                        cluster: CONTEXT,
                        user: name,
                    },
                },
            })
            .collect(),
        current_context: CONTEXT,
    };
    serde_saphyr::to_string(&file).map_err(|e| SimError::Kubeconfig(e.to_string()))
}

/// A kube config from the emitted kubeconfig text.
pub async fn kube_config(yaml: &str) -> Result<kube::Config, SimError> {
    let kubeconfig =
        kube::config::Kubeconfig::from_yaml(yaml).map_err(|e| SimError::Client(e.to_string()))?;
    let options = kube::config::KubeConfigOptions {
        context: Some(CONTEXT.to_string()),
        ..Default::default()
    };
    kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .map_err(|e| SimError::Client(e.to_string()))
}

/// Writes `kubeconfig` to `path`, readable by its owner only (it holds the sims' token),
/// creating the directory it goes in.
pub fn write_kubeconfig(path: &std::path::Path, kubeconfig: &str) -> Result<(), SimError> {
    let written = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => std::fs::create_dir_all(dir),
        _ => Ok(()),
    }
    .and_then(|()| crate::tls::write_private(path, kubeconfig));
    written.map_err(|source| SimError::WriteFile {
        path: path.display().to_string(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn round_trips_through_kube() {
        let cert = crate::tls::serving_cert().unwrap().0;
        let yaml = kubeconfig_yaml("https://127.0.0.1:1234", &cert.ca_pem, "secret").unwrap();
        assert!(yaml.contains("current-context: kscope-sim"));
        assert!(yaml.contains("apiVersion: v1"));
        let config = kube_config(&yaml).await.unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://127.0.0.1:1234/");
    }
}
