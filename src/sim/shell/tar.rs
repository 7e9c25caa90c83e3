//! `tar cf - PATH...` and `tar xf - [-C DIR]`, the two commands `kubectl cp` runs in a
//! container, over its in-memory filesystem.

use std::io::Read;
use std::path::Component;

use super::fs::{Fs, Node};

pub(super) enum Mode {
    Create,
    Extract,
}

/// A parsed `tar` command line.
pub(super) struct Request {
    pub(super) mode: Mode,
    /// `-C DIR`: where names are taken from or extracted to.
    directory: Option<String>,
    paths: Vec<String>,
}

impl Request {
    /// Old-style (`cf -`) and dashed (`-xmf -`) flags, `-C DIR`, then paths; the archive must
    /// be stdin or stdout (`f -`), as the shell has no other files to spare.
    pub(super) fn parse(args: &[String]) -> Result<Self, String> {
        let mut mode = None;
        let mut directory = None;
        let mut paths = Vec::new();
        let mut wants_file = false;
        let mut args = args.iter();
        let mut first = true;
        while let Some(arg) = args.next() {
            let flags = match arg.strip_prefix('-') {
                Some("C") => {
                    directory = Some(args.next().ok_or("option requires an argument -- 'C'")?);
                    continue;
                }
                Some(flags) if !flags.is_empty() => flags,
                _ if first => arg.as_str(),
                _ => {
                    paths.push(arg.clone());
                    continue;
                }
            };
            first = false;
            for flag in flags.chars() {
                match flag {
                    'c' => mode = Some(Mode::Create),
                    'x' => mode = Some(Mode::Extract),
                    'f' => wants_file = true,
                    'm' | 'v' | 'o' | 'p' => {}
                    other => return Err(format!("unsupported option -- '{other}'")),
                }
            }
            if std::mem::take(&mut wants_file) {
                match args.next().map(String::as_str) {
                    Some("-") => {}
                    Some(other) => {
                        return Err(format!("{other}: Cannot open: Read-only file system"));
                    }
                    None => return Err("option requires an argument -- 'f'".into()),
                }
            }
        }
        let mode = mode.ok_or("You must specify one of the '-Acdtrux' options")?;
        Ok(Self {
            mode,
            directory: directory.cloned(),
            paths,
        })
    }

    fn base(&self, cwd: &str) -> String {
        match &self.directory {
            Some(dir) => Fs::resolve(cwd, dir),
            None => cwd.to_string(),
        }
    }
}

/// An archive of the request's paths (names without their leading `/`, as tar stores them).
pub(super) fn create(fs: &Fs, cwd: &str, request: &Request) -> Result<Vec<u8>, String> {
    if request.paths.is_empty() {
        return Err("Cowardly refusing to create an empty archive".into());
    }
    let base = request.base(cwd);
    let mut builder = tar::Builder::new(Vec::new());
    let mtime = jiff::Timestamp::now().as_second().max(0) as u64;
    for given in &request.paths {
        let path = Fs::resolve(&base, given);
        let walked = fs.walk(&path);
        if walked.is_empty() {
            return Err(format!("{given}: Cannot stat: No such file or directory"));
        }
        let name_root = given.trim_start_matches('/').trim_end_matches('/');
        for (at, node) in walked {
            let name = format!("{name_root}{}", &at[path.len().min(at.len())..]);
            let name = name.trim_start_matches('/');
            if name.is_empty() {
                continue;
            }
            let mut header = tar::Header::new_gnu();
            header.set_mtime(mtime);
            let appended = match node {
                Node::Dir => {
                    header.set_entry_type(tar::EntryType::Directory);
                    header.set_mode(0o755);
                    header.set_size(0);
                    builder.append_data(&mut header, format!("{name}/"), std::io::empty())
                }
                Node::File(data) => {
                    header.set_entry_type(tar::EntryType::Regular);
                    header.set_mode(0o644);
                    header.set_size(data.len() as u64);
                    builder.append_data(&mut header, name, data.as_slice())
                }
            };
            appended.map_err(|e| e.to_string())?;
        }
    }
    builder.into_inner().map_err(|e| e.to_string())
}

/// Extracts `archive` under the request's directory; names with `..` are refused.
pub(super) fn extract(
    fs: &mut Fs,
    cwd: &str,
    request: &Request,
    archive: &[u8],
) -> Result<(), String> {
    let base = request.base(cwd);
    if !fs.is_dir(&base) {
        return Err(format!("{base}: Cannot open: No such file or directory"));
    }
    let mut archive = tar::Archive::new(archive);
    for entry in archive.entries().map_err(|e| e.to_string())? {
        let mut entry = entry.map_err(|e| e.to_string())?;
        let name = entry.path().map_err(|e| e.to_string())?.into_owned();
        if name.components().any(|c| c == Component::ParentDir) {
            return Err(format!(
                "{}: Member name contains '..'",
                name.to_string_lossy()
            ));
        }
        let path = Fs::resolve(&base, name.to_string_lossy().trim_start_matches('/'));
        match entry.header().entry_type() {
            tar::EntryType::Directory => fs.mkdir_all(&path),
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                let mut data = Vec::new();
                entry.read_to_end(&mut data).map_err(|e| e.to_string())?;
                fs.write(&path, data);
            }
            // Links and devices have no place in this filesystem; tar would make them.
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::fs::Seed;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn an_archive_of_a_directory_extracts_elsewhere() {
        let mut fs = Fs::seeded(&Seed {
            hostname: "a",
            app: "a",
            image: "a",
            ports: &[],
        });
        fs.write("/data/sub/f.txt", b"hello".to_vec());
        let made = create(&fs, "/", &Request::parse(&args("cf - /data")).unwrap()).unwrap();
        let request = Request::parse(&args("-xmf - -C /tmp")).unwrap();
        extract(&mut fs, "/", &request, &made).unwrap();
        assert!(matches!(fs.get("/tmp/data/sub/f.txt"), Some(Node::File(d)) if d == b"hello"));
        assert!(fs.is_dir("/tmp/data/sub"));
    }

    #[test]
    fn a_missing_path_or_a_real_file_is_refused() {
        let fs = Fs::default();
        let missing = create(&fs, "/", &Request::parse(&args("cf - /nope")).unwrap());
        assert!(missing.unwrap_err().contains("No such file"));
        assert!(Request::parse(&args("cf /tmp/a.tar /etc")).is_err());
    }
}
