//! A container's small in-memory filesystem: what `ls`, `cat` and `tar` read, and what
//! `tar xf` (so `kubectl cp` into the pod) writes.

use std::collections::BTreeMap;

/// One file or directory.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    Dir,
    File(Vec<u8>),
}

/// Absolute, normalized paths (`/`, `/etc/hostname`) to what is there.
#[derive(Debug, Default)]
pub(crate) struct Fs {
    nodes: BTreeMap<String, Node>,
}

/// What a container's filesystem starts with.
pub(crate) struct Seed<'a> {
    pub(crate) hostname: &'a str,
    pub(crate) app: &'a str,
    pub(crate) image: &'a str,
    pub(crate) ports: &'a [u16],
}

impl Fs {
    pub(crate) fn seeded(seed: &Seed<'_>) -> Self {
        let mut fs = Self::default();
        for dir in [
            "/", "/bin", "/etc", "/root", "/tmp", "/var", "/var/log", "/app",
        ] {
            fs.nodes.insert(dir.to_string(), Node::Dir);
        }
        fs.write("/etc/hostname", format!("{}\n", seed.hostname).into_bytes());
        fs.write(
            "/etc/os-release",
            b"NAME=\"Alpine Linux\"\nID=alpine\nVERSION_ID=3.20.3\nPRETTY_NAME=\"Alpine Linux v3.20\"\nHOME_URL=\"https://alpinelinux.org/\"\n".to_vec(),
        );
        let ports: Vec<String> = seed.ports.iter().map(u16::to_string).collect();
        fs.write(
            "/app/config.yaml",
            format!(
                "# {app}'s configuration ({image})\napp: {app}\nlisten: [{ports}]\nlogLevel: info\nhealthz: /healthz\nreadiness: /ready\nmetrics: /metrics\n",
                app = seed.app,
                image = seed.image,
                ports = ports.join(", "),
            )
            .into_bytes(),
        );
        fs
    }

    /// `path` made absolute against `cwd`, with `.` and `..` resolved.
    pub(crate) fn resolve(cwd: &str, path: &str) -> String {
        let joined = if path.starts_with('/') {
            path.to_string()
        } else {
            format!("{cwd}/{path}")
        };
        let mut parts: Vec<&str> = Vec::new();
        for part in joined.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                part => parts.push(part),
            }
        }
        format!("/{}", parts.join("/"))
    }

    pub(crate) fn get(&self, path: &str) -> Option<&Node> {
        self.nodes.get(path)
    }

    pub(crate) fn is_dir(&self, path: &str) -> bool {
        matches!(self.nodes.get(path), Some(Node::Dir))
    }

    /// Makes `path` and its parents directories, as `mkdir -p` does.
    pub(crate) fn mkdir_all(&mut self, path: &str) {
        let mut at = String::new();
        self.nodes.insert("/".to_string(), Node::Dir);
        for part in path.split('/').filter(|p| !p.is_empty()) {
            at.push('/');
            at.push_str(part);
            self.nodes.entry(at.clone()).or_insert(Node::Dir);
        }
    }

    /// Writes file `path`, making its parent directories.
    pub(crate) fn write(&mut self, path: &str, data: Vec<u8>) {
        if let Some((parent, _)) = path.rsplit_once('/') {
            self.mkdir_all(parent);
        }
        self.nodes.insert(path.to_string(), Node::File(data));
    }

    /// The names directly inside directory `dir`, sorted.
    pub(crate) fn children(&self, dir: &str) -> Vec<&str> {
        let prefix = if dir == "/" {
            "/".to_string()
        } else {
            format!("{dir}/")
        };
        self.nodes
            .range(prefix.clone()..)
            .take_while(|(p, _)| p.starts_with(&prefix))
            .map(|(p, _)| &p[prefix.len()..])
            .filter(|rest| !rest.is_empty() && !rest.contains('/'))
            .collect()
    }

    /// `path` and everything under it, in path order.
    pub(crate) fn walk(&self, path: &str) -> Vec<(&str, &Node)> {
        let prefix = format!("{}/", path.trim_end_matches('/'));
        self.nodes
            .range(path.to_string()..)
            .filter(|(p, _)| p.as_str() == path || p.starts_with(&prefix) || path == "/")
            .map(|(p, n)| (p.as_str(), n))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fs() -> Fs {
        Fs::seeded(&Seed {
            hostname: "web-1",
            app: "web",
            image: "web:1",
            ports: &[8080],
        })
    }

    #[test]
    fn paths_resolve_against_the_working_directory() {
        assert_eq!(Fs::resolve("/tmp", "a/../b/./c"), "/tmp/b/c");
        assert_eq!(Fs::resolve("/tmp", "/etc"), "/etc");
        assert_eq!(Fs::resolve("/", ".."), "/");
    }

    #[test]
    fn children_are_only_the_direct_ones() {
        let mut fs = fs();
        fs.write("/tmp/x/y/z", b"1".to_vec());
        fs.write("/tmp/x-other", b"2".to_vec());
        assert_eq!(fs.children("/tmp"), vec!["x", "x-other"]);
        assert_eq!(fs.children("/etc"), vec!["hostname", "os-release"]);
        assert!(fs.is_dir("/tmp/x/y"));
        let walked: Vec<&str> = fs.walk("/tmp/x").into_iter().map(|(p, _)| p).collect();
        assert_eq!(walked, vec!["/tmp/x", "/tmp/x/y", "/tmp/x/y/z"]);
    }
}
