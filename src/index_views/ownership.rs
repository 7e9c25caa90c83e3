//! Ownership trees, both ways. Every store gets an index from each owner's uid to the
//! objects naming it in `metadata.ownerReferences` (see [`owner_uid_index`]), kept live by
//! the informer filling the store, so the children of an object are one hash lookup per
//! kind watched, and a tree costs what it holds, not what the cluster holds. Up, each
//! ownerReference names its owner's kind and name, so a parent is one lookup by key in its
//! kind's store (the uid checked, as the garbage collector checks it).

use std::collections::HashSet;
use std::sync::Arc;

use kscope_informers::indexer::Indexer;

use super::columns::{RowHealth, TableRow};

/// Levels followed at most, down or up: ownership is a DAG in principle, and a hand-written
/// cycle (which the garbage collector tolerates) must not loop.
const MAX_DEPTH: usize = 32;

/// The kinds a tree watches unless told otherwise: the workloads and what they own, named
/// as for kubectl. The CLI's `kscope tree` and the TUI's tree view read the same list, so
/// they show the same tree.
pub const TREE_KINDS: &str = "deployments,replicasets,pods,statefulsets,daemonsets,jobs,cronjobs,controllerrevisions,configmaps,services,endpointslices";

pub use super::owner_index::{OWNER_UID_INDEX, Owned, owner_uid_index};

/// An owner as an ownerReference names it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct OwnerLink {
    pub kind: String,
    pub name: String,
    pub uid: String,
    pub controller: bool,
}

/// One object of a tree.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TreeNode {
    /// The `kind` field (`ReplicaSet`, `Widget`).
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub name: String,
    pub uid: String,
    /// Its health as its table shows it; empty when the kind has none.
    pub health: String,
    /// Its table row's colour.
    #[serde(skip)]
    pub row_health: RowHealth,
    #[serde(skip)]
    pub owners: Vec<OwnerLink>,
}

impl TreeNode {
    fn of<T: TableRow>(kind: &str, obj: &T) -> Self {
        Self {
            kind: kind.to_string(),
            namespace: obj.namespace().map(str::to_string),
            name: obj.name().to_string(),
            uid: obj.uid().to_string(),
            health: obj.summary(),
            row_health: TableRow::health(obj),
            owners: obj
                .owners()
                .into_iter()
                .map(|o| OwnerLink {
                    kind: o.kind.to_string(),
                    name: o.name.to_string(),
                    uid: o.uid.to_string(),
                    controller: o.controller,
                })
                .collect(),
        }
    }

    /// `Kind/namespace/name`, or `Kind/name` when cluster-scoped.
    pub fn label(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{}/{ns}/{}", self.kind, self.name),
            None => format!("{}/{}", self.kind, self.name),
        }
    }

    /// The owner followed up: the controller, else the first.
    fn parent(&self) -> Option<&OwnerLink> {
        self.owners
            .iter()
            .find(|o| o.controller)
            .or_else(|| self.owners.first())
    }
}

/// A node and its dependents, down.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Tree {
    #[serde(flatten)]
    pub node: TreeNode,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<Tree>,
}

impl Tree {
    /// How many objects the tree holds, itself included.
    pub fn len(&self) -> usize {
        1 + self.children.iter().map(Tree::len).sum::<usize>()
    }

    fn uids(&self, into: &mut HashSet<String>) {
        into.insert(self.node.uid.clone());
        for child in &self.children {
            child.uids(into);
        }
    }

    /// Never: a tree holds its root.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The chain `nodes` (an object first, its root last, as [`Forest::ancestors`] gives
    /// it) as a tree from the root down, so it prints as a tree does.
    pub fn chain(nodes: Vec<TreeNode>) -> Option<Tree> {
        nodes.into_iter().fold(None, |below, node| {
            Some(Tree {
                node,
                children: below.into_iter().collect(),
            })
        })
    }

    /// Its nodes depth first, each with the lines drawn before it (`│ ├─`), as `tree`(1)
    /// and kubectl-tree draw them.
    pub fn lines(&self) -> Vec<(String, &TreeNode)> {
        let mut out = Vec::with_capacity(self.len());
        out.push((String::new(), &self.node));
        self.walk("", &mut out);
        out
    }

    fn walk<'a>(&'a self, indent: &str, out: &mut Vec<(String, &'a TreeNode)>) {
        let n = self.children.len();
        for (i, child) in self.children.iter().enumerate() {
            let last = i + 1 == n;
            out.push((
                format!("{indent}{}", if last { "└─" } else { "├─" }),
                &child.node,
            ));
            child.walk(&format!("{indent}{}", if last { "  " } else { "│ " }), out);
        }
    }
}

/// One kind's store, as a tree reads it.
pub trait OwnershipStore: Send + Sync {
    /// The kind's `kind` field, as ownerReferences name it.
    fn kind(&self) -> &str;

    /// The object at `key` (`namespace/name`, or `name`).
    fn get(&self, key: &str) -> Option<TreeNode>;

    /// The objects naming `owner_uid` among their owners, by key.
    fn dependents(&self, owner_uid: &str) -> Vec<TreeNode>;
}

/// A store of `T` with the owner-uid index, for trees.
pub struct StoreOf<T> {
    kind: String,
    indexer: Indexer<T>,
}

impl<T> StoreOf<T> {
    /// `indexer` must have [`OWNER_UID_INDEX`] (every store built with
    /// [`crate::definitions::index_funcs`] does); without it, nothing has dependents.
    pub fn new(kind: impl Into<String>, indexer: Indexer<T>) -> Self {
        Self {
            kind: kind.into(),
            indexer,
        }
    }
}

impl<T: TableRow> OwnershipStore for StoreOf<T> {
    fn kind(&self) -> &str {
        &self.kind
    }

    fn get(&self, key: &str) -> Option<TreeNode> {
        self.indexer
            .get_by_key(key)
            .map(|obj| TreeNode::of(&self.kind, obj.as_ref()))
    }

    fn dependents(&self, owner_uid: &str) -> Vec<TreeNode> {
        let mut found: Vec<TreeNode> = self
            .indexer
            .by_index(OWNER_UID_INDEX, owner_uid)
            .unwrap_or_default()
            .iter()
            .map(|obj| TreeNode::of(&self.kind, obj.as_ref()))
            .collect();
        found.sort_unstable_by(|a, b| a.namespace.cmp(&b.namespace).then(a.name.cmp(&b.name)));
        found
    }
}

/// The stores of every kind watched, read together.
#[derive(Clone, Default)]
pub struct Forest {
    stores: Vec<Arc<dyn OwnershipStore>>,
}

impl Forest {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, store: Arc<dyn OwnershipStore>) {
        self.stores.push(store);
    }

    /// The kinds it holds, as ownerReferences name them.
    pub fn kinds(&self) -> Vec<&str> {
        self.stores.iter().map(|s| s.kind()).collect()
    }

    /// The object of `kind` (its `kind` field, any case) at `namespace`/`name`.
    pub fn find(&self, kind: &str, namespace: Option<&str>, name: &str) -> Option<TreeNode> {
        let key = match namespace {
            Some(ns) => format!("{ns}/{name}"),
            None => name.to_string(),
        };
        self.stores
            .iter()
            .filter(|s| s.kind().eq_ignore_ascii_case(kind))
            .find_map(|s| s.get(&key))
    }

    /// `root` and everything owning it directly or not, depth first, each kind's dependents
    /// sorted by name, kinds in the order they were added.
    pub fn descendants(&self, root: TreeNode) -> Tree {
        let mut seen = HashSet::new();
        seen.insert(root.uid.clone());
        self.grow(root, 0, &mut seen)
    }

    fn grow(&self, node: TreeNode, depth: usize, seen: &mut HashSet<String>) -> Tree {
        let mut children = Vec::new();
        if depth < MAX_DEPTH && !node.uid.is_empty() {
            for store in &self.stores {
                for child in store.dependents(&node.uid) {
                    if seen.insert(child.uid.clone()) {
                        children.push(self.grow(child, depth + 1, seen));
                    }
                }
            }
        }
        Tree { node, children }
    }

    /// The chain from `node` up to its root, `node` first: each step its controller (else its
    /// first owner), found in the owner's namespace-mates or among cluster-scoped objects,
    /// with the uid the reference names. The chain stops at an owner not watched or gone.
    pub fn ancestors(&self, node: TreeNode) -> Vec<TreeNode> {
        let mut chain = vec![node];
        let mut seen = HashSet::new();
        while chain.len() <= MAX_DEPTH {
            let Some(last) = chain.last() else { break };
            seen.insert(last.uid.clone());
            let Some(link) = last.parent() else { break };
            let namespace = last.namespace.clone();
            let owner = self
                .find(&link.kind, namespace.as_deref(), &link.name)
                .or_else(|| self.find(&link.kind, None, &link.name))
                .filter(|o| o.uid == link.uid);
            match owner {
                Some(o) if !seen.contains(&o.uid) => chain.push(o),
                _ => break,
            }
        }
        chain
    }

    /// `node` in its place: the chain of its owners from the root down to it (as
    /// [`Forest::ancestors`] finds it), with its own dependents below it (as
    /// [`Forest::descendants`]), so both directions read as one tree. In a cycle of owners
    /// the chain stops at the first owner already below.
    pub fn around(&self, node: TreeNode) -> Tree {
        let below = self.descendants(node.clone());
        let mut inside = HashSet::new();
        below.uids(&mut inside);
        self.ancestors(node)
            .into_iter()
            .skip(1)
            .take_while(|owner| !inside.contains(&owner.uid))
            .fold(below, |child, owner| Tree {
                node: owner,
                children: vec![child],
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kscope_informers::indexer::IndexerWriter;
    use kscope_resources::GenericObject;
    use kscope_resources::decode_object;
    use serde_json::json;

    fn generic(
        kind: &str,
        name: &str,
        uid: &str,
        owner: Option<(&str, &str, &str)>,
    ) -> GenericObject {
        let mut obj = json!({"kind": kind, "apiVersion": "example.com/v1",
            "metadata": {"name": name, "namespace": "ns", "uid": uid}});
        if let Some((k, n, u)) = owner {
            obj["metadata"]["ownerReferences"] =
                json!([{"kind": k, "name": n, "uid": u, "controller": true}]);
        }
        decode_object(&serde_json::to_vec(&obj).unwrap()).unwrap()
    }

    fn store(kind: &str, objects: Vec<GenericObject>) -> Arc<dyn OwnershipStore> {
        let writer = IndexerWriter::new(vec![(
            OWNER_UID_INDEX.to_string(),
            owner_uid_index::<GenericObject>(),
        )])
        .unwrap();
        for o in objects {
            writer.add(Arc::new(o)).unwrap();
        }
        Arc::new(StoreOf::new(kind, writer.reader()))
    }

    fn forest() -> Forest {
        let mut forest = Forest::new();
        forest.add(store("Widget", vec![generic("Widget", "w", "u-w", None)]));
        forest.add(store(
            "ConfigMap",
            vec![
                generic("ConfigMap", "b", "u-b", Some(("Widget", "w", "u-w"))),
                generic("ConfigMap", "a", "u-a", Some(("Widget", "w", "u-w"))),
                // Names the widget, with another uid: a new object of the same name owns it.
                generic("ConfigMap", "stale", "u-s", Some(("Widget", "w", "u-old"))),
            ],
        ));
        forest.add(store(
            "Leaf",
            vec![generic("Leaf", "l", "u-l", Some(("ConfigMap", "a", "u-a")))],
        ));
        forest
    }

    #[test]
    fn descendants_follow_owner_uids_across_kinds_sorted_by_name() {
        let forest = forest();
        let root = forest.find("widget", Some("ns"), "w").unwrap();
        let tree = forest.descendants(root);
        let drawn: Vec<String> = tree
            .lines()
            .into_iter()
            .map(|(prefix, n)| format!("{prefix}{}", n.label()))
            .collect();
        assert_eq!(
            drawn,
            [
                "Widget/ns/w",
                "├─ConfigMap/ns/a",
                "│ └─Leaf/ns/l",
                "└─ConfigMap/ns/b",
            ]
        );
    }

    #[test]
    fn ancestors_climb_to_the_root_and_stop_at_a_uid_that_does_not_match() {
        let forest = forest();
        let leaf = forest.find("Leaf", Some("ns"), "l").unwrap();
        let up: Vec<String> = forest.ancestors(leaf).iter().map(TreeNode::label).collect();
        assert_eq!(up, ["Leaf/ns/l", "ConfigMap/ns/a", "Widget/ns/w"]);
        let chain = Tree::chain(forest.ancestors(forest.find("Leaf", Some("ns"), "l").unwrap()));
        let drawn: Vec<String> = chain
            .iter()
            .flat_map(Tree::lines)
            .map(|(prefix, n)| format!("{prefix}{}", n.label()))
            .collect();
        assert_eq!(drawn, ["Widget/ns/w", "└─ConfigMap/ns/a", "  └─Leaf/ns/l"]);
        let stale = forest.find("ConfigMap", Some("ns"), "stale").unwrap();
        assert_eq!(forest.ancestors(stale).len(), 1);
    }

    #[test]
    fn a_cycle_of_owners_ends() {
        let mut forest = Forest::new();
        forest.add(store(
            "Thing",
            vec![
                generic("Thing", "a", "u-a", Some(("Thing", "b", "u-b"))),
                generic("Thing", "b", "u-b", Some(("Thing", "a", "u-a"))),
            ],
        ));
        let a = forest.find("Thing", Some("ns"), "a").unwrap();
        assert_eq!(forest.descendants(a.clone()).len(), 2);
        assert_eq!(forest.ancestors(a.clone()).len(), 2);
        assert_eq!(forest.around(a).len(), 2, "b is below a: not above it too");
    }

    #[test]
    fn around_puts_the_owners_above_and_the_dependents_below() {
        let forest = forest();
        let a = forest.find("ConfigMap", Some("ns"), "a").unwrap();
        let drawn: Vec<String> = forest
            .around(a)
            .lines()
            .into_iter()
            .map(|(prefix, n)| format!("{prefix}{}", n.label()))
            .collect();
        assert_eq!(drawn, ["Widget/ns/w", "└─ConfigMap/ns/a", "  └─Leaf/ns/l"]);
        let w = forest.find("Widget", Some("ns"), "w").unwrap();
        assert_eq!(forest.around(w.clone()), forest.descendants(w));
    }
}
