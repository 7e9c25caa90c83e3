//! Namespace sets (k9s #1679): namespaces saved under a name for a cluster group (the
//! contexts shown together, sorted; one context alone is a group of one), usable as the
//! table's scope with `:nsset NAME`, and the scope each group was last shown in, restored
//! at the next start. Kept in the XDG state directory beside the favourites.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use kscope_client::cluster::{NamespaceScope, NamespaceSet};

use super::state_file;

/// The file's contents: each group's sets and last scope, by the group's key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Stored {
    #[serde(default)]
    groups: BTreeMap<String, Group>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Group {
    /// Each set's namespaces, sorted, by its name.
    #[serde(default)]
    sets: BTreeMap<String, Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last: Option<LastScope>,
}

/// A scope as the file keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum LastScope {
    All,
    Namespace(String),
    Set {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        namespaces: Vec<String>,
    },
}

impl From<&NamespaceScope> for LastScope {
    fn from(scope: &NamespaceScope) -> Self {
        match scope {
            NamespaceScope::All => Self::All,
            NamespaceScope::One(ns) => Self::Namespace(ns.clone()),
            NamespaceScope::Set(set) => Self::Set {
                name: set.name.clone(),
                namespaces: set.namespaces().to_vec(),
            },
        }
    }
}

impl From<LastScope> for NamespaceScope {
    fn from(last: LastScope) -> Self {
        match last {
            LastScope::All => Self::All,
            LastScope::Namespace(ns) => Self::One(ns),
            LastScope::Set { name, namespaces } => Self::Set(NamespaceSet::new(name, namespaces)),
        }
    }
}

/// The group of the contexts `shown` (the header's context: one, or several joined by
/// commas): their names sorted, so that `--context b --context a` is the group of `a,b`.
pub fn group_of(shown: &str) -> String {
    let mut contexts: Vec<&str> = shown.split(',').collect();
    contexts.sort_unstable();
    contexts.dedup();
    contexts.join(",")
}

/// The sets and the file they are kept in (none: in memory only).
#[derive(Debug, Clone, Default)]
pub struct NamespaceSets {
    path: Option<PathBuf>,
    stored: Stored,
    /// Why the file could not be read, to be said once at start.
    problem: Option<String>,
}

impl NamespaceSets {
    /// Reads `path`; a missing file is no sets yet. A malformed one is set aside, not
    /// overwritten, and said (see [`NamespaceSets::take_problem`]).
    pub fn load(path: PathBuf) -> Self {
        let (stored, problem) = state_file::load_or_set_aside(&path, "namespace sets");
        Self {
            path: Some(path),
            stored,
            problem,
        }
    }

    /// Why the file could not be read, once.
    pub fn take_problem(&mut self) -> Option<String> {
        self.problem.take()
    }

    /// The set `name` of `group`, as a scope.
    pub fn get(&self, group: &str, name: &str) -> Option<NamespaceScope> {
        let namespaces = self.stored.groups.get(group)?.sets.get(name)?;
        Some(NamespaceScope::Set(NamespaceSet::new(
            Some(name.to_string()),
            namespaces.iter().cloned(),
        )))
    }

    /// Every set of `group`, by name.
    pub fn sets(&self, group: &str) -> Vec<NamespaceSet> {
        self.stored
            .groups
            .get(group)
            .map(|g| {
                g.sets
                    .iter()
                    .map(|(name, ns)| NamespaceSet::new(Some(name.clone()), ns.iter().cloned()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Saves `namespaces` as the set `name` of `group` (replacing one of that name); the
    /// set as a scope.
    pub fn save(
        &mut self,
        group: &str,
        name: &str,
        namespaces: impl IntoIterator<Item = String>,
    ) -> NamespaceScope {
        let set = NamespaceSet::new(Some(name.to_string()), namespaces);
        self.group(group)
            .sets
            .insert(name.to_string(), set.namespaces().to_vec());
        self.write();
        NamespaceScope::Set(set)
    }

    /// Deletes the set `name` of `group`; false when there was none.
    pub fn delete(&mut self, group: &str, name: &str) -> bool {
        let deleted = self.group(group).sets.remove(name).is_some();
        if deleted {
            self.write();
        }
        deleted
    }

    /// The scope `group` was last shown in.
    pub fn last(&self, group: &str) -> Option<NamespaceScope> {
        let last = self.stored.groups.get(group)?.last.clone()?;
        Some(last.into())
    }

    /// `group` is shown in `scope` now: kept for the next start.
    pub fn shown(&mut self, group: &str, scope: &NamespaceScope) {
        let last = Some(LastScope::from(scope));
        let entry = self.group(group);
        if entry.last != last {
            entry.last = last;
            self.write();
        }
    }

    fn group(&mut self, group: &str) -> &mut Group {
        self.stored.groups.entry(group.to_string()).or_default()
    }

    fn write(&self) {
        if let Some(path) = &self.path {
            state_file::save(path, &self.stored, "namespace sets");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(scope: Option<NamespaceScope>) -> Option<Vec<String>> {
        scope.and_then(|s| s.members().map(<[String]>::to_vec))
    }

    #[test]
    fn sets_and_the_last_scope_are_kept_per_group_between_runs() {
        let dir = std::env::temp_dir().join(format!("kscope-nssets-{}", std::process::id()));
        let path = dir.join("namespace-sets.json");
        let _ = std::fs::remove_dir_all(&dir);
        let group = group_of("prod-eu,prod-us");
        assert_eq!(group, group_of("prod-us,prod-eu"), "the contexts sorted");
        let mut sets = NamespaceSets::load(path.clone());
        assert_eq!(sets.take_problem(), None, "a first run");
        let team = sets.save(&group, "team-a", ["c".into(), "a".into()]);
        sets.save("dev", "mine", ["x".into()]);
        sets.shown(&group, &team);
        sets.shown("dev", &NamespaceScope::One("x".into()));

        let mut again = NamespaceSets::load(path.clone());
        assert_eq!(
            names(again.get(&group, "team-a")),
            Some(vec!["a".into(), "c".into()])
        );
        assert_eq!(again.get("prod-eu", "team-a"), None, "another group's");
        assert_eq!(again.last(&group), Some(team));
        assert_eq!(again.last("dev"), Some(NamespaceScope::One("x".into())));
        assert_eq!(
            again
                .sets(&group)
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            ["team-a (a, c)"]
        );
        assert!(again.delete(&group, "team-a"));
        assert!(!again.delete(&group, "team-a"));
        assert_eq!(
            NamespaceSets::load(path.clone()).get(&group, "team-a"),
            None
        );

        std::fs::write(&path, "{not json").unwrap();
        let mut bad = NamespaceSets::load(path.clone());
        let problem = bad.take_problem().expect("said");
        assert!(problem.contains("set aside"), "{problem}");
        assert_eq!(bad.last("dev"), None);
        assert_eq!(
            std::fs::read_to_string(dir.join("namespace-sets.json.bad")).unwrap(),
            "{not json",
            "what the person saved is kept"
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_file_without_sets_or_last_scope_reads() {
        let stored: Stored =
            serde_json::from_str(r#"{"groups": {"a": {}, "b": {"last": "all"}}}"#).unwrap();
        assert_eq!(stored.groups["b"].last, Some(LastScope::All));
        assert!(stored.groups["a"].sets.is_empty());
    }
}
