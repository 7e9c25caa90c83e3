//! Writes from the table: what each write key does to which kinds, the confirm dialog's
//! facts (read from the server before anything is written: the object's state, its
//! dependents, a dry run), and the write itself, off the UI thread. Every write is logged
//! to kscope's log (time, context, verb, kind, namespace/name, result), never its body.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{FutureExt, StreamExt, stream};
use parking_lot::Mutex;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use kscope_client::fetch::{fetch_list, fetch_object};
use kscope_client::write::{self, DeleteOptions, PatchType, Propagation, Target, WriteError};
use kscope_config::WriteSource;
use kscope_config::keys::Action;
use kscope_resources::Kind;

use super::effect::{Effect, ObjectRef};

mod rollback;

/// What a write key asks for, once the object's state is known (cordon or uncordon).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Delete,
    Kill,
    Restart,
    Scale,
    RolloutUndo,
    SetImage,
    Cordon,
    Uncordon,
    Drain,
    Suspend,
    Resume,
    TriggerJob,
}

impl Verb {
    /// The verb a write action asks for, before the object's state is read.
    pub fn of(action: &Action) -> Option<Self> {
        Some(match action {
            Action::Delete => Self::Delete,
            Action::Kill => Self::Kill,
            Action::Restart => Self::Restart,
            Action::Scale => Self::Scale,
            Action::RolloutUndo => Self::RolloutUndo,
            Action::SetImage => Self::SetImage,
            Action::Cordon => Self::Cordon,
            Action::Drain => Self::Drain,
            Action::Suspend => Self::Suspend,
            Action::TriggerJob => Self::TriggerJob,
            _ => return None,
        })
    }

    /// Whether it applies to `kind`, and if not, what it applies to.
    fn applies_to(self, kind: &Kind) -> Result<(), &'static str> {
        let (group, plural) = (kind.group(), kind.plural());
        let ok = match self {
            Self::Delete | Self::Kill => true,
            Self::Restart | Self::RolloutUndo | Self::SetImage => matches!(
                (group, plural),
                ("apps", "deployments" | "statefulsets" | "daemonsets")
            ),
            Self::Scale => matches!(
                (group, plural),
                ("apps", "deployments" | "statefulsets" | "replicasets")
            ),
            Self::Cordon | Self::Uncordon | Self::Drain => (group, plural) == ("", "nodes"),
            Self::Suspend | Self::Resume | Self::TriggerJob => {
                (group, plural) == ("batch", "cronjobs")
            }
        };
        if ok {
            return Ok(());
        }
        Err(match self {
            Self::Delete | Self::Kill => "any object",
            Self::Restart | Self::RolloutUndo | Self::SetImage => {
                "deployments, statefulsets and daemonsets"
            }
            Self::Scale => "deployments, statefulsets and replicasets",
            Self::Cordon | Self::Uncordon | Self::Drain => "nodes",
            Self::Suspend | Self::Resume | Self::TriggerJob => "cronjobs",
        })
    }

    fn word(self) -> &'static str {
        match self {
            Self::Delete => "delete",
            Self::Kill => "kill",
            Self::Restart => "restart",
            Self::Scale => "scale",
            Self::RolloutUndo => "roll back",
            Self::SetImage => "set the image of",
            Self::Cordon => "cordon",
            Self::Uncordon => "uncordon",
            Self::Drain => "drain",
            Self::Suspend => "suspend",
            Self::Resume => "resume",
            Self::TriggerJob => "run a job from",
        }
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// What a refused write key says in read-only mode: how to turn writes on, from where the
/// mode came.
pub fn read_only_refusal(
    key: &str,
    verb: impl fmt::Display,
    context: &str,
    source: WriteSource,
) -> String {
    let how = match source {
        WriteSource::Flag => "started with --readonly; start kscope without it (or with \
                              --readwrite)"
            .to_string(),
        WriteSource::Context => format!(
            "the config sets contexts: {context}: readwrite: false; set it to true, or start \
             kscope with --readwrite"
        ),
        WriteSource::Default => format!(
            "start kscope with --readwrite, or set readwrite: true in the config (or \
             contexts: {context}: readwrite: true for this context only)"
        ),
    };
    format!("read-only: {key} would {verb}; {how}")
}

/// The targets of a write key, checked against what it applies to.
pub fn check_targets(verb: Verb, targets: &[Target]) -> Result<(), String> {
    for target in targets {
        if let Err(what) = verb.applies_to(&target.kind) {
            return Err(format!(
                "{verb} is for {what}; {} is a {}",
                target.label(),
                target.kind.kind()
            ));
        }
    }
    Ok(())
}

/// A write waiting for the person's yes: the facts the dialog states, filled in as the
/// server answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Which preparation the answers belong to.
    pub id: u64,
    pub verb: Verb,
    pub targets: Vec<Target>,
    /// What will happen, line by line, once read; `None` while the server is asked.
    pub facts: Option<Vec<String>>,
    /// The server's dry-run answer: `Ok` what it would do, `Err` why it refuses.
    pub dry_run: Option<Result<String, String>>,
    /// Scale: the replicas now.
    pub replicas: Option<i64>,
    /// A rollout undo: the JSON patch back to the revision the dialog names, sent as read;
    /// a set image: the strategic merge patch of the image typed.
    pub patch: Option<Value>,
    /// A delete's cascade, as chosen in the dialog (kubectl's default until then).
    pub propagation: Propagation,
    /// A delete: what its targets own, directly or not, as the ownership index has it;
    /// `None` until its informers have answered.
    pub dependents: Option<Dependents>,
}

/// A delete's dependents, read from the owner-uid indexes the ownership tree (`x`) reads
/// (see [`super::tree::TreeWatch::dependents`]), not from the server again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dependents {
    pub objects: Vec<ObjectRef>,
    /// Whether every kind watched has listed: until then more may come.
    pub complete: bool,
}

/// A container a set image may pick: as the pod template names it, its image now, and
/// whether it is an init container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Container {
    pub name: String,
    pub image: String,
    pub init: bool,
}

/// One answer from a write task.
#[derive(Debug)]
pub enum WriteEvent {
    /// The dialog's facts for preparation `id`.
    Prepared { id: u64, prepared: Prepared },
    /// The server's dry run of the image typed in set image `id`'s dialog.
    Checked {
        id: u64,
        dry_run: Result<String, String>,
    },
    /// A long write's progress (a drain's evictions).
    Progress(String),
    /// The write finished: what it did, or why it stopped.
    Done(Result<String, String>),
    /// What the server says the write keys may not do on a table of `kind` in `namespace`.
    Access {
        kind: Kind,
        namespace: Option<String>,
        forbidden: Vec<(Action, String)>,
    },
}

/// One SelfSubjectAccessReview's question: namespace, verb, group, resource.
type AccessKey = (Option<String>, String, String, String);

/// How long an access answer is kept: a role granted or taken away shows within a minute,
/// and a table opened again meanwhile asks nothing.
const ACCESS_TTL: Duration = Duration::from_secs(60);

/// Reviews in flight at once for one table: a table has at most a dozen write keys, and
/// the API server's other clients (the informers) share the connection pool.
const REVIEWS_AT_ONCE: usize = 4;

/// The server's access answers (`Some(why)`: denied), each kept for [`ACCESS_TTL`].
#[derive(Debug, Default)]
struct AccessCache {
    answers: HashMap<AccessKey, (Instant, Option<String>)>,
}

impl AccessCache {
    /// The answer to `key` if it was given less than [`ACCESS_TTL`] before `now`.
    fn get(&self, key: &AccessKey, now: Instant) -> Option<Option<String>> {
        self.answers
            .get(key)
            .filter(|(at, _)| now.saturating_duration_since(*at) < ACCESS_TTL)
            .map(|(_, denied)| denied.clone())
    }

    fn put(&mut self, key: AccessKey, now: Instant, denied: Option<String>) {
        self.answers.insert(key, (now, denied));
    }
}

/// The review behind each write key that applies to `kind`: (key's action, verb, group,
/// resource). A drain is asked as its cordon's patch; an edit (`e`, any kind) is a patch;
/// a shell and an attach are asked as the
/// `create` on `pods/exec` and `pods/attach` the server asks for.
fn access_checks(kind: &Kind) -> Vec<(Action, &'static str, String, String)> {
    let own = |verb| (verb, kind.group().to_string(), kind.plural().to_string());
    let mut checks: Vec<_> = [
        Action::Delete,
        Action::Kill,
        Action::Restart,
        Action::Scale,
        Action::RolloutUndo,
        Action::SetImage,
        Action::Cordon,
        Action::Drain,
        Action::Suspend,
        Action::TriggerJob,
    ]
    .into_iter()
    .filter_map(|action| {
        let verb = Verb::of(&action)?;
        verb.applies_to(kind).ok()?;
        let (verb, group, resource) = match verb {
            Verb::Delete | Verb::Kill => own("delete"),
            Verb::TriggerJob => ("create", "batch".to_string(), "jobs".to_string()),
            _ => own("patch"),
        };
        Some((action, verb, group, resource))
    })
    .chain(std::iter::once((
        Action::Edit,
        "patch",
        kind.group().to_string(),
        kind.plural().to_string(),
    )))
    .collect();
    if (kind.group(), kind.plural()) == ("", "pods") {
        checks.push((
            Action::OpenShell,
            "create",
            String::new(),
            "pods/exec".into(),
        ));
        checks.push((
            Action::Attach,
            "create",
            String::new(),
            "pods/attach".into(),
        ));
    }
    checks
}

/// Why a review said no, as a person reads it: who may not do what where, then the
/// server's reason when it gives one.
fn denial(user: &str, verb: &str, resource: &str, namespace: Option<&str>, reason: &str) -> String {
    let user = if user.is_empty() { "your user" } else { user };
    let where_ = namespace.map_or("in any namespace".to_string(), |ns| format!("in {ns}"));
    match reason {
        "" => format!("{user} cannot {verb} {resource} {where_}"),
        reason => format!("{user} cannot {verb} {resource} {where_}: {reason}"),
    }
}

/// One key's review: the cache's answer when it `known` one, else the server's, kept.
/// `Some(why)` when denied; `None` when allowed or when the review itself failed.
async fn review_one(
    client: kube::Client,
    access: Arc<Mutex<AccessCache>>,
    user: String,
    key: AccessKey,
    known: Option<Option<String>>,
) -> Option<String> {
    if let Some(denied) = known {
        return denied;
    }
    let (namespace, verb, group, resource) = &key;
    let (allowed, reason) = write::can_i(&client, verb, group, resource, namespace.as_deref())
        .await
        .ok()?;
    let denied = (!allowed).then(|| denial(&user, verb, resource, namespace.as_deref(), &reason));
    access.lock().put(key, Instant::now(), denied.clone());
    denied
}

/// Starts the dialog's reads and the confirmed writes, and hands back their answers.
pub struct WriteController {
    client: kube::Client,
    context: String,
    sender: mpsc::UnboundedSender<WriteEvent>,
    receiver: mpsc::UnboundedReceiver<WriteEvent>,
    next_id: u64,
    /// The server's answers so far, so a table opened again asks nothing; per controller,
    /// so per context.
    access: Arc<Mutex<AccessCache>>,
    /// The user's name (SelfSubjectReview), asked once, for the refusals' wording.
    user: Arc<Mutex<Option<String>>>,
}

impl WriteController {
    pub fn new(client: kube::Client, context: String) -> Self {
        let (sender, receiver) = mpsc::unbounded_channel();
        Self {
            client,
            context,
            sender,
            receiver,
            next_id: 0,
            access: Arc::default(),
            user: Arc::default(),
        }
    }

    /// Asks the server what the write keys may do on a table of `kind` in `namespace`
    /// (every namespace: `None`): the reviews concurrently, at most [`REVIEWS_AT_ONCE`] at a
    /// time, answers kept per namespace, verb and resource for [`ACCESS_TTL`]; the answer
    /// comes as [`WriteEvent::Access`]. A review that fails denies nothing: the write's own
    /// dry run still asks.
    pub fn review(&self, kind: &Kind, namespace: Option<String>) {
        let client = self.client.clone();
        let sender = self.sender.clone();
        let access = self.access.clone();
        let user = self.user.clone();
        let kind = kind.clone();
        tokio::spawn(async move {
            let checks = access_checks(&kind);
            let asked: Vec<_> = {
                let cache = access.lock();
                let now = Instant::now();
                checks
                    .into_iter()
                    .map(|(action, verb, group, resource)| {
                        let key: AccessKey = (namespace.clone(), verb.to_string(), group, resource);
                        let known = cache.get(&key, now);
                        (action, key, known)
                    })
                    .collect()
            };
            if asked.iter().any(|(_, _, known)| known.is_none()) && user.lock().is_none() {
                // Only the name in the refusal depends on it: a failure says "your user".
                let name = write::whoami(&client).await.unwrap_or_default();
                *user.lock() = Some(name);
            }
            let name = user.lock().clone().unwrap_or_default();
            let answers: Vec<Option<(Action, String)>> = stream::iter(asked)
                .map(|(action, key, known)| {
                    review_one(client.clone(), access.clone(), name.clone(), key, known)
                        .map(move |denied| denied.map(|why| (action, why)))
                })
                .buffered(REVIEWS_AT_ONCE)
                .collect()
                .await;
            let _ = sender.send(WriteEvent::Access {
                kind,
                namespace,
                forbidden: answers.into_iter().flatten().collect(),
            });
        });
    }

    /// The same, on another context's client: answers still under way are dropped.
    pub fn for_client(&self, client: kube::Client, context: String) -> Self {
        Self::new(client, context)
    }

    /// The next answer. Cancel-safe, for the event loop's `select!`.
    pub async fn next(&mut self) -> Option<WriteEvent> {
        self.receiver.recv().await
    }

    /// Starts reading what the dialog states for `verb` on `targets`; returns the plan the
    /// answer will fill.
    pub fn prepare(&mut self, verb: Verb, targets: Vec<Target>) -> Plan {
        self.next_id += 1;
        let id = self.next_id;
        let client = self.client.clone();
        let sender = self.sender.clone();
        let read = targets.clone();
        tokio::spawn(async move {
            let prepared = prepare(&client, verb, &read).await;
            let _ = sender.send(WriteEvent::Prepared { id, prepared });
        });
        Plan {
            id,
            verb,
            targets,
            facts: None,
            dry_run: None,
            replicas: None,
            patch: None,
            propagation: Propagation::default(),
            dependents: None,
        }
    }

    /// Asks the server for the dry run of `plan` as the dialog has it now: a set image's
    /// typed image, a delete's cascade chosen.
    pub fn check(&self, plan: &Plan) {
        let client = self.client.clone();
        let sender = self.sender.clone();
        let plan = plan.clone();
        tokio::spawn(async move {
            let change = Change {
                replicas: None,
                patch: plan.patch.as_ref(),
                propagation: plan.propagation,
            };
            let mut dry_run = Ok("the server accepts it".to_string());
            for target in &plan.targets {
                let answer =
                    write_one(&client, plan.verb, target, &Value::Null, change, true).await;
                if let Err(err) = answer {
                    dry_run = Err(format!("{}: {}", target.label(), plain(&err)));
                    break;
                }
            }
            let _ = sender.send(WriteEvent::Checked {
                id: plan.id,
                dry_run,
            });
        });
    }

    /// Does the confirmed write; `replicas` is the scale's new count.
    pub fn execute(&self, plan: Plan, replicas: Option<i64>) {
        let client = self.client.clone();
        let sender = self.sender.clone();
        let context = self.context.clone();
        tokio::spawn(async move {
            let done = execute(&client, &context, &plan, replicas, &sender).await;
            let _ = sender.send(WriteEvent::Done(done));
        });
    }
}

/// Names of at most this many targets are listed; the rest are counted.
const LISTED: usize = 5;

fn listed(names: &[String]) -> String {
    let mut text = names
        .iter()
        .take(LISTED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > LISTED {
        text.push_str(&format!(" and {} more", names.len() - LISTED));
    }
    text
}

/// What the dialog states, read from the server: the verb as the object's state makes it,
/// the lines, the dry run, a scale's current replicas, a rollout undo's patch and the
/// containers a set image picks from.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    pub verb: Verb,
    pub facts: Vec<String>,
    pub dry_run: Result<String, String>,
    pub replicas: Option<i64>,
    pub patch: Option<Value>,
    pub containers: Vec<Container>,
}

async fn prepare(client: &kube::Client, verb: Verb, targets: &[Target]) -> Prepared {
    let refused = |verb, facts, why: String| Prepared {
        verb,
        facts,
        dry_run: Err(why),
        replicas: None,
        patch: None,
        containers: Vec::new(),
    };
    let mut facts = Vec::new();
    let mut objects = Vec::new();
    for target in targets {
        match fetch_object(
            client,
            target.kind.clone(),
            target.namespace.as_deref(),
            &target.name,
        )
        .await
        {
            Ok(object) => objects.push(object),
            Err(err) => return refused(verb, facts, err.to_string()),
        }
    }
    let first = objects.first().cloned().unwrap_or(Value::Null);
    let flag = |pointer: &str| first.pointer(pointer).and_then(Value::as_bool) == Some(true);
    let verb = match verb {
        Verb::Cordon if flag("/spec/unschedulable") => Verb::Uncordon,
        Verb::Suspend if flag("/spec/suspend") => Verb::Resume,
        verb => verb,
    };
    let labels: Vec<String> = targets.iter().map(Target::label).collect();
    facts.push(format!("{verb} {}", listed(&labels)));
    let mut replicas = None;
    let mut patch = None;
    let mut containers = Vec::new();
    match verb {
        Verb::Delete | Verb::Kill => {
            facts.push(match verb {
                Verb::Kill => "grace period: 0 seconds: gone at once, no graceful shutdown".into(),
                _ => match first
                    .pointer("/spec/terminationGracePeriodSeconds")
                    .and_then(Value::as_i64)
                {
                    Some(s) => format!(
                        "grace period: the object's own, {s}s (the row shows Terminating until it goes)"
                    ),
                    None => "grace period: the object's own".into(),
                },
            });
        }
        Verb::Restart => facts.push(
            "sets the pod template's kubectl.kubernetes.io/restartedAt annotation: the \
             controller replaces every pod, as its update strategy says"
                .into(),
        ),
        Verb::Scale => {
            replicas = first.pointer("/spec/replicas").and_then(Value::as_i64);
            facts.push(format!(
                "replicas now: {}; type the new count",
                replicas.map_or("unset".into(), |r| r.to_string())
            ));
        }
        Verb::RolloutUndo => match rollback::previous(client, &targets[0], &first).await {
            Ok(undo) => {
                facts.extend(undo.facts);
                patch = Some(undo.patch);
            }
            Err(why) => return refused(verb, facts, why),
        },
        Verb::SetImage => {
            containers = template_containers(&first);
            facts.push(
                "patches the pod template (strategic merge, as kubectl set image): the \
                 controller then rolls the pods as its update strategy says"
                    .into(),
            );
            // The dry run waits for the image typed.
            return Prepared {
                verb,
                facts,
                dry_run: Ok(String::new()),
                replicas,
                patch,
                containers,
            };
        }
        Verb::Cordon => facts.push("marks the node unschedulable: no new pods go there".into()),
        Verb::Uncordon => facts.push("the node is cordoned: lets new pods go there again".into()),
        Verb::Drain => {
            facts.push(
                "cordons the node, then evicts its pods one by one through the Eviction API; \
                 stops at the first PodDisruptionBudget refusal"
                    .into(),
            );
            match drained_pods(client, &targets[0].name).await {
                Ok((pods, skipped)) => {
                    let names: Vec<String> = pods.iter().map(|(ns, n)| format!("{ns}/{n}")).collect();
                    facts.push(format!("pods to evict ({}): {}", names.len(), listed(&names)));
                    if skipped > 0 {
                        facts.push(format!(
                            "left alone: {skipped} DaemonSet and mirror pods (as kubectl drain --ignore-daemonsets)"
                        ));
                    }
                }
                Err(err) => return refused(verb, facts, err),
            }
        }
        Verb::Suspend => facts.push("no new Jobs are started until it is resumed".into()),
        Verb::Resume => {
            facts.push("the cronjob is suspended: Jobs start on schedule again".into())
        }
        Verb::TriggerJob => facts.push(
            "creates a Job from the cronjob's jobTemplate now, as kubectl create job --from=cronjob/NAME"
                .into(),
        ),
    }
    let change = Change {
        replicas,
        patch: patch.as_ref(),
        propagation: Propagation::default(),
    };
    let mut dry_run = Ok(String::new());
    for (target, object) in targets.iter().zip(&objects) {
        let answer = write_one(client, verb, target, object, change, true).await;
        if let Err(err) = answer {
            dry_run = Err(format!("{}: {}", target.label(), plain(&err)));
            break;
        }
    }
    let dry_run = dry_run.map(|_| "the server accepts it".to_string());
    Prepared {
        verb,
        facts,
        dry_run,
        replicas,
        patch,
        containers,
    }
}

/// The containers of `object`'s pod template, init containers first, as kubectl lists them.
fn template_containers(object: &Value) -> Vec<Container> {
    [("initContainers", true), ("containers", false)]
        .into_iter()
        .flat_map(|(field, init)| {
            object
                .pointer(&format!("/spec/template/spec/{field}"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(move |c| {
                    let text = |f: &str| c.get(f).and_then(Value::as_str).unwrap_or_default();
                    Container {
                        name: text("name").to_string(),
                        image: text("image").to_string(),
                        init,
                    }
                })
        })
        .collect()
}

/// The strategic merge patch `kubectl set image` sends for one container: the list merges
/// by name, so the other containers stay as they are.
fn image_patch(container: &Container, image: &str) -> Value {
    let list = if container.init {
        "initContainers"
    } else {
        "containers"
    };
    json!({"spec": {"template": {"spec": {list: [{"name": container.name, "image": image}]}}}})
}

/// The pods a drain evicts (namespace, name), and how many it leaves alone: DaemonSet
/// pods (their controller ignores cordons) and mirror pods (the kubelet's own).
async fn drained_pods(
    client: &kube::Client,
    node: &str,
) -> Result<(Vec<(String, String)>, usize), String> {
    let selector: String = form_urlencoded::Serializer::new(String::new())
        .append_pair("fieldSelector", &format!("spec.nodeName={node}"))
        .finish();
    let pods = fetch_list(
        client,
        format!("/api/v1/pods?{selector}"),
        format!("pods on {node}"),
    )
    .await
    .map_err(|e| e.to_string())?;
    let mut evicted = Vec::new();
    let mut skipped = 0;
    for pod in pods {
        let daemon = pod
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .is_some_and(|refs| {
                refs.iter()
                    .any(|r| r.get("kind").and_then(Value::as_str) == Some("DaemonSet"))
            });
        let mirror = pod
            .pointer("/metadata/annotations/kubernetes.io~1config.mirror")
            .is_some();
        if daemon || mirror {
            skipped += 1;
            continue;
        }
        let text = |p: &str| {
            pod.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        evicted.push((text("/metadata/namespace"), text("/metadata/name")));
    }
    Ok((evicted, skipped))
}

/// What a write sets, beyond its verb: a scale's count, a rollout undo's or set image's
/// patch, a delete's cascade.
#[derive(Debug, Clone, Copy, Default)]
struct Change<'a> {
    replicas: Option<i64>,
    patch: Option<&'a Value>,
    propagation: Propagation,
}

/// One write of `verb` on `target` (`object` as read), as a dry run or for real.
async fn write_one(
    client: &kube::Client,
    verb: Verb,
    target: &Target,
    object: &Value,
    change: Change<'_>,
    dry_run: bool,
) -> Result<(), WriteError> {
    let replicas = change.replicas;
    let merge = |body: Value| async move {
        write::patch(client, target, PatchType::Merge, &body, dry_run).await
    };
    match verb {
        Verb::Delete | Verb::Kill => {
            let options = DeleteOptions {
                grace_period_seconds: (verb == Verb::Kill).then_some(0),
                propagation: change.propagation,
                dry_run,
            };
            write::delete(client, target, options).await?;
        }
        Verb::Restart => {
            let now = jiff::Timestamp::now().to_string();
            let body = json!({"spec": {"template": {"metadata": {"annotations": {
                "kubectl.kubernetes.io/restartedAt": now
            }}}}});
            write::patch(client, target, PatchType::Strategic, &body, dry_run).await?;
        }
        Verb::Scale => {
            merge(json!({"spec": {"replicas": replicas}})).await?;
        }
        Verb::RolloutUndo => {
            let body = change.patch.cloned().unwrap_or(Value::Null);
            write::patch(client, target, PatchType::Json, &body, dry_run).await?;
        }
        Verb::SetImage => {
            let body = change.patch.cloned().unwrap_or(Value::Null);
            write::patch(client, target, PatchType::Strategic, &body, dry_run).await?;
        }
        Verb::Cordon | Verb::Drain => {
            merge(json!({"spec": {"unschedulable": true}})).await?;
        }
        Verb::Uncordon => {
            merge(json!({"spec": {"unschedulable": null}})).await?;
        }
        Verb::Suspend => {
            merge(json!({"spec": {"suspend": true}})).await?;
        }
        Verb::Resume => {
            merge(json!({"spec": {"suspend": false}})).await?;
        }
        Verb::TriggerJob => {
            let namespace = target.namespace.as_deref().unwrap_or_default();
            let job = job_from(object, target, namespace);
            write::create(
                client,
                &format!("/apis/batch/v1/namespaces/{namespace}/jobs"),
                &job,
                dry_run,
            )
            .await?;
        }
    }
    Ok(())
}

/// The Job `kubectl create job --from=cronjob/NAME` makes: the template's labels,
/// annotations and spec, owned by the cronjob, marked as started by hand.
fn job_from(cronjob: &Value, target: &Target, namespace: &str) -> Value {
    let template = cronjob
        .pointer("/spec/jobTemplate")
        .cloned()
        .unwrap_or(Value::Null);
    let suffix = jiff::Timestamp::now().as_second();
    let mut annotations = template
        .pointer("/metadata/annotations")
        .cloned()
        .unwrap_or_else(|| json!({}));
    annotations["cronjob.kubernetes.io/instantiate"] = json!("manual");
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": format!("{}-manual-{suffix}", target.name),
            "namespace": namespace,
            "labels": template.pointer("/metadata/labels").cloned().unwrap_or_else(|| json!({})),
            "annotations": annotations,
            "ownerReferences": [{
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "name": target.name,
                "uid": cronjob.pointer("/metadata/uid").cloned().unwrap_or(Value::Null),
                "controller": true,
            }],
        },
        "spec": template.get("spec").cloned().unwrap_or_else(|| json!({})),
    })
}

/// Logs one write: when, where, what (`verb`: `delete`, `edit`) and how it went; never the
/// body.
pub(crate) fn audit<T>(context: &str, verb: &str, target: &Target, result: &Result<T, WriteError>) {
    let outcome = match result {
        Ok(_) => "ok".to_string(),
        Err(err) => err.to_string(),
    };
    tracing::info!(
        target: "kscope::audit",
        context,
        verb,
        kind = target.kind.kind(),
        namespace = target.namespace.as_deref().unwrap_or(""),
        name = target.name,
        result = outcome,
        "write"
    );
}

/// The confirmed write on every target; a drain evicts after cordoning.
async fn execute(
    client: &kube::Client,
    context: &str,
    plan: &Plan,
    replicas: Option<i64>,
    progress: &mpsc::UnboundedSender<WriteEvent>,
) -> Result<String, String> {
    let verb = plan.verb;
    let mut failures = Vec::new();
    for target in &plan.targets {
        let object = match verb {
            Verb::TriggerJob => fetch_object(
                client,
                target.kind.clone(),
                target.namespace.as_deref(),
                &target.name,
            )
            .await
            .map_err(|e| e.to_string())?,
            _ => Value::Null,
        };
        let change = Change {
            replicas,
            patch: plan.patch.as_ref(),
            propagation: plan.propagation,
        };
        let result = write_one(client, verb, target, &object, change, false).await;
        audit(context, verb.word(), target, &result);
        if let Err(err) = result {
            failures.push(format!("{}: {}", target.label(), plain(&err)));
            continue;
        }
        if verb == Verb::Drain {
            drain(client, context, target, progress).await?;
        }
    }
    let labels: Vec<String> = plan.targets.iter().map(Target::label).collect();
    if failures.is_empty() {
        Ok(match (verb, replicas) {
            (Verb::Scale, Some(n)) => format!("scaled {} to {n}", listed(&labels)),
            (Verb::Drain, _) => format!("drained {}", listed(&labels)),
            (Verb::RolloutUndo | Verb::SetImage, _) => format!("{verb} {}: done", listed(&labels)),
            _ => format!("{verb}: {}: done", listed(&labels)),
        })
    } else {
        Err(format!(
            "{verb} failed for {} of {}: {}",
            failures.len(),
            plan.targets.len(),
            failures.join("; ")
        ))
    }
}

/// A write's error as a person reads it: a 403 says who may not do what.
pub(crate) fn plain(err: &WriteError) -> String {
    match err {
        WriteError::Forbidden { message } => {
            format!("your user may not do this (403 Forbidden): {message}")
        }
        other => other.to_string(),
    }
}

/// Evicts the node's pods one by one, saying how far it got; stops at the first refusal.
async fn drain(
    client: &kube::Client,
    context: &str,
    node: &Target,
    progress: &mpsc::UnboundedSender<WriteEvent>,
) -> Result<(), String> {
    let (pods, _) = drained_pods(client, &node.name).await?;
    let total = pods.len();
    for (done, (namespace, name)) in pods.iter().enumerate() {
        let _ = progress.send(WriteEvent::Progress(format!(
            "drain {}: evicting {namespace}/{name} ({} of {total})",
            node.name,
            done + 1
        )));
        let result = write::evict(client, namespace, name, false)
            .await
            .map(|_| ());
        let pod = Target {
            kind: kscope_resources::ResourceKind::Pods.into(),
            namespace: Some(namespace.clone()),
            name: name.clone(),
        };
        audit(context, Verb::Drain.word(), &pod, &result);
        if let Err(err) = result {
            // The node is on the row and in the header: the line keeps room for the reason.
            let why = match err {
                WriteError::TooManyRequests { message, .. } => message,
                other => plain(&other),
            };
            return Err(format!(
                "drain stopped after {done} of {total} evictions: {namespace}/{name}: {why}"
            ));
        }
    }
    Ok(())
}

/// The confirm dialog of a write: its plan, which button has focus (Cancel, until moved),
/// and a scale's typed count.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfirmDialog {
    pub plan: Option<Plan>,
    /// Whether Enter confirms (the confirm button has focus) or cancels.
    pub on_confirm: bool,
    /// A scale's new replica count, as typed.
    pub number: String,
    /// A set image's containers, the one picked, the image typed, and whether the image
    /// is still being typed (the dialog then takes the filter bar's keys).
    pub containers: Vec<Container>,
    pub container: usize,
    pub image: String,
    pub typing: bool,
}

/// Digits a scale's count may have: 9999 replicas is more than any cluster runs.
const MAX_DIGITS: usize = 4;

/// Characters an image may have as typed: registry, path, tag and digest fit easily.
const MAX_IMAGE: usize = 512;

impl ConfirmDialog {
    /// A dialog for `plan`, focus on Cancel.
    pub fn open(plan: Plan) -> Self {
        Self {
            plan: Some(plan),
            ..Self::default()
        }
    }

    /// Takes the server's facts, if they belong to the plan shown. A set image's dry run
    /// waits for the image typed.
    pub fn prepared(&mut self, id: u64, prepared: Prepared) {
        let Some(plan) = self.plan.as_mut().filter(|p| p.id == id) else {
            return;
        };
        plan.verb = prepared.verb;
        plan.facts = Some(prepared.facts);
        plan.replicas = prepared.replicas;
        plan.patch = prepared.patch;
        plan.dry_run = Some(prepared.dry_run);
        if plan.verb == Verb::SetImage && matches!(plan.dry_run, Some(Ok(_))) {
            if prepared.containers.is_empty() {
                plan.dry_run = Some(Err("the pod template has no containers".into()));
                return;
            }
            plan.dry_run = None;
            // The first app container, as kubectl's default; init containers come first.
            self.container = prepared
                .containers
                .iter()
                .position(|c| !c.init)
                .unwrap_or_default();
            self.containers = prepared.containers;
            self.typing = true;
        }
    }

    /// Takes the server's dry run of a typed image, if it belongs to the plan shown.
    /// Takes a delete's dependents as the ownership index has them now, if they belong to
    /// the plan shown.
    pub fn dependents(&mut self, id: u64, dependents: Dependents) {
        if let Some(plan) = self.plan.as_mut().filter(|p| p.id == id) {
            plan.dependents = Some(dependents);
        }
    }

    pub fn checked(&mut self, id: u64, dry_run: Result<String, String>) {
        if let Some(plan) = self.plan.as_mut().filter(|p| p.id == id && !self.typing) {
            plan.dry_run = Some(dry_run);
        }
    }

    /// Whether the dialog's write is a delete, whose cascade can be chosen.
    pub fn cascades(&self) -> bool {
        self.plan
            .as_ref()
            .is_some_and(|p| matches!(p.verb, Verb::Delete | Verb::Kill))
    }

    /// Whether a set image's image is being typed.
    pub fn typing(&self) -> bool {
        self.typing
    }

    /// A key while the image is typed: characters, Backspace, up/down pick the container,
    /// Enter asks for the dry run, Esc cancels.
    fn type_image(&mut self, action: &Action) -> Option<Effect> {
        match action {
            Action::FilterChar(c) if !c.is_whitespace() && self.image.len() < MAX_IMAGE => {
                self.image.push(*c);
            }
            Action::FilterBackspace => {
                self.image.pop();
            }
            Action::LineHistoryPrevious => self.container = self.container.saturating_sub(1),
            Action::LineHistoryNext if self.container + 1 < self.containers.len() => {
                self.container += 1;
            }
            Action::FilterAccept if !self.image.is_empty() => {
                let container = self.containers.get(self.container)?;
                let plan = self.plan.as_mut()?;
                plan.patch = Some(image_patch(container, &self.image));
                let kind = if container.init {
                    "init container"
                } else {
                    "container"
                };
                plan.facts.get_or_insert_default().push(format!(
                    "{kind} {}: {} → {}",
                    container.name, container.image, self.image
                ));
                self.typing = false;
                return Some(Effect::Check);
            }
            Action::FilterClear => return Some(Effect::Close),
            _ => {}
        }
        None
    }

    /// The scale's typed count, when the plan is a scale.
    pub fn replicas(&self) -> Option<i64> {
        self.number.parse().ok()
    }

    /// Whether yes can be said: the facts are in, the dry run passed, a scale has a count.
    pub fn ready(&self) -> bool {
        let Some(plan) = &self.plan else {
            return false;
        };
        plan.facts.is_some()
            && matches!(plan.dry_run, Some(Ok(_)))
            && (plan.verb != Verb::Scale || self.replicas().is_some())
    }

    /// A key in the dialog: y (or Enter on the confirm button) accepts once ready; n, Esc
    /// (or Enter on Cancel) cancels; digits type a scale's count. Nothing passes through
    /// to the table behind it.
    pub fn handle_key(&mut self, action: &Action) -> Option<Effect> {
        if self.typing {
            return self.type_image(action);
        }
        let scale = self.plan.as_ref().is_some_and(|p| p.verb == Verb::Scale);
        match action {
            Action::ConfirmYes if self.ready() => return Some(Effect::Write),
            Action::ChooseValue if self.on_confirm && self.ready() => {
                return Some(Effect::Write);
            }
            Action::ChooseValue if !self.on_confirm => return Some(Effect::Close),
            Action::ConfirmNo => return Some(Effect::Close),
            Action::ConfirmSwitch => self.on_confirm = !self.on_confirm,
            Action::ConfirmCascade if self.cascades() => {
                let plan = self.plan.as_mut()?;
                if plan.facts.is_some() {
                    plan.propagation = match plan.propagation {
                        Propagation::Background => Propagation::Foreground,
                        Propagation::Foreground => Propagation::Orphan,
                        Propagation::Orphan => Propagation::Background,
                    };
                    // The server is asked again, with the cascade chosen.
                    plan.dry_run = None;
                    return Some(Effect::Check);
                }
            }
            Action::ConfirmChar(c) if scale && self.number.len() < MAX_DIGITS => {
                self.number.push(*c);
            }
            Action::ConfirmBackspace => {
                self.number.pop();
            }
            _ => {}
        }
        None
    }

    /// The dialog's lines: the facts, the dry run, a scale's input and the buttons.
    pub fn lines(&self) -> Vec<(String, LineStyle)> {
        let Some(plan) = &self.plan else {
            return Vec::new();
        };
        let mut lines = Vec::new();
        match &plan.facts {
            None => {
                let labels: Vec<String> = plan.targets.iter().map(Target::label).collect();
                lines.push((
                    format!("{} {}", plan.verb, listed(&labels)),
                    LineStyle::Plain,
                ));
                lines.push((
                    "reading it from the server, with a dry run…".into(),
                    LineStyle::Dim,
                ));
            }
            Some(facts) => {
                lines.extend(facts.iter().map(|f| (f.clone(), LineStyle::Plain)));
                if self.cascades() {
                    lines.extend(
                        cascade_lines(plan)
                            .into_iter()
                            .map(|l| (l, LineStyle::Plain)),
                    );
                }
            }
        }
        match &plan.dry_run {
            Some(Ok(answer)) => {
                lines.push((format!("dry run: {answer}"), LineStyle::Dim));
            }
            Some(Err(why)) => lines.push((format!("dry run refused: {why}"), LineStyle::Error)),
            None => {}
        }
        if plan.verb == Verb::Scale && plan.facts.is_some() {
            lines.push((format!("new replicas: {}_", self.number), LineStyle::Plain));
        }
        if self.typing {
            lines.push(("container (up/down picks):".into(), LineStyle::Plain));
            for (at, c) in self.containers.iter().enumerate() {
                let picked = if at == self.container { ">" } else { " " };
                let init = if c.init { " (init)" } else { "" };
                lines.push((
                    format!("{picked} {}{init}: {}", c.name, c.image),
                    LineStyle::Plain,
                ));
            }
            lines.push((format!("new image: {}_", self.image), LineStyle::Plain));
            lines.push((
                "enter: the server's dry run · esc: cancel".into(),
                LineStyle::Dim,
            ));
        }
        lines.push((String::new(), LineStyle::Plain));
        let (yes, no) = (format!("[ {} ]", plan.verb), "[ Cancel ]".to_string());
        let buttons = if self.on_confirm {
            format!("> {yes} <    {no}")
        } else {
            format!("  {yes}    > {no} <")
        };
        let style = if self.ready() {
            LineStyle::Plain
        } else {
            LineStyle::Dim
        };
        lines.push((buttons, style));
        lines
    }
}

/// A delete's cascade and what it does to the dependents, as the dialog has it chosen:
/// the policy, one sentence of what goes and what stays (`deletes Deployment shop/web and
/// its 2 ReplicaSets and 6 Pods (background)`), and the dependents by name.
fn cascade_lines(plan: &Plan) -> Vec<String> {
    let policy = plan.propagation.as_str();
    let cascade = match plan.propagation {
        Propagation::Background => {
            "the object goes now, the garbage collector deletes its dependents after it"
        }
        Propagation::Foreground => {
            "the dependents are deleted first; the object stays (foregroundDeletion finalizer) \
             until they are gone"
        }
        Propagation::Orphan => "the dependents stay, their owner reference removed",
    };
    let mut lines = vec![format!("cascade: {policy}: {cascade}")];
    let Some(dependents) = &plan.dependents else {
        lines.push("dependents: reading the ownership index…".into());
        return lines;
    };
    let labels: Vec<String> = plan.targets.iter().map(Target::label).collect();
    let what = listed(&labels);
    let own = if plan.targets.len() == 1 {
        "its"
    } else {
        "their"
    };
    let policy = policy.to_lowercase();
    let counted = counted(&dependents.objects);
    let mut summary = if dependents.objects.is_empty() {
        format!("deletes {what}; nothing it owns is known ({policy})")
    } else {
        match plan.propagation {
            Propagation::Background => format!("deletes {what} and {own} {counted} ({policy})"),
            Propagation::Foreground => {
                format!("deletes {own} {counted} first, then {what} ({policy})")
            }
            Propagation::Orphan => {
                let stay = if dependents.objects.len() == 1 {
                    "stays"
                } else {
                    "stay"
                };
                format!("deletes {what} only; {own} {counted} {stay} ({policy})")
            }
        }
    };
    if !dependents.complete {
        summary.push_str("; still listing, more may come");
    }
    lines.push(summary);
    if !dependents.objects.is_empty() {
        let which = match plan.propagation {
            Propagation::Orphan => "dependents that stay",
            _ => "dependents that will go",
        };
        let names: Vec<String> = dependents.objects.iter().map(ToString::to_string).collect();
        lines.push(format!("{which} ({}): {}", names.len(), listed(&names)));
    }
    lines
}

/// `2 ReplicaSets and 6 Pods`: the objects counted by kind, kinds in the order first met.
fn counted(objects: &[ObjectRef]) -> String {
    let mut kinds: Vec<(&str, usize)> = Vec::new();
    for object in objects {
        match kinds.iter_mut().find(|(k, _)| *k == object.kind) {
            Some((_, n)) => *n += 1,
            None => kinds.push((&object.kind, 1)),
        }
    }
    let parts: Vec<String> = kinds
        .iter()
        .map(|(kind, n)| match n {
            1 => format!("1 {kind}"),
            n => format!("{n} {kind}s"),
        })
        .collect();
    match parts.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// How a dialog line is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineStyle {
    Plain,
    Dim,
    Error,
}

#[cfg(test)]
mod tests {
    use super::*;
    use kscope_resources::ResourceKind;

    fn plan(verb: Verb) -> Plan {
        Plan {
            id: 1,
            verb,
            targets: vec![Target {
                kind: ResourceKind::Deployments.into(),
                namespace: Some("shop".into()),
                name: "web".into(),
            }],
            facts: None,
            dry_run: None,
            replicas: None,
            patch: None,
            propagation: Propagation::default(),
            dependents: None,
        }
    }

    fn answer(verb: Verb, dry_run: Result<String, String>) -> Prepared {
        Prepared {
            verb,
            facts: vec![verb.to_string()],
            dry_run,
            replicas: None,
            patch: None,
            containers: Vec::new(),
        }
    }

    fn object(kind: &str, name: &str) -> ObjectRef {
        ObjectRef {
            kind: kind.into(),
            namespace: Some("shop".into()),
            name: name.into(),
        }
    }

    /// A delete's cascade cycles Background → Foreground → Orphan, each asked of the
    /// server's dry run again, and the dialog says what happens to the dependents.
    #[test]
    fn a_delete_chooses_its_cascade_and_asks_the_dry_run_again() {
        let mut dialog = ConfirmDialog::open(plan(Verb::Delete));
        assert_eq!(
            dialog.handle_key(&Action::ConfirmCascade),
            None,
            "no facts yet"
        );
        dialog.prepared(1, answer(Verb::Delete, Ok("ok".into())));
        let text = |dialog: &ConfirmDialog| {
            dialog
                .lines()
                .into_iter()
                .map(|(l, _)| l)
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert!(text(&dialog).contains("dependents: reading the ownership index…"));
        let dependents = Dependents {
            objects: vec![object("ReplicaSet", "web-1")],
            complete: true,
        };
        dialog.dependents(2, dependents.clone());
        assert!(
            text(&dialog).contains("reading the ownership index"),
            "another plan's"
        );
        dialog.dependents(1, dependents);
        assert!(text(&dialog).contains("cascade: Background"));
        assert!(text(&dialog).contains("dependents that will go (1): ReplicaSet shop/web-1"));
        assert_eq!(
            dialog.handle_key(&Action::ConfirmCascade),
            Some(Effect::Check)
        );
        assert_eq!(
            dialog.handle_key(&Action::ConfirmYes),
            None,
            "its dry run first"
        );
        dialog.checked(1, Ok("ok".into()));
        assert!(text(&dialog).contains("cascade: Foreground"));
        dialog.handle_key(&Action::ConfirmCascade);
        dialog.checked(1, Ok("ok".into()));
        assert!(text(&dialog).contains("dependents that stay (1): ReplicaSet shop/web-1"));
        assert!(
            text(&dialog)
                .contains("deletes Deployment shop/web only; its 1 ReplicaSet stays (orphan)")
        );
        assert_eq!(
            dialog.plan.as_ref().unwrap().propagation,
            Propagation::Orphan
        );
        assert_eq!(dialog.handle_key(&Action::ConfirmYes), Some(Effect::Write));
        let mut restart = ConfirmDialog::open(plan(Verb::Restart));
        restart.prepared(1, answer(Verb::Restart, Ok("ok".into())));
        assert_eq!(restart.handle_key(&Action::ConfirmCascade), None);
    }

    /// The dialog says in one sentence what goes and what stays under each cascade,
    /// counted by kind, and whether the index was still listing.
    #[test]
    fn a_delete_says_what_goes_counted_by_kind() {
        let mut plan = plan(Verb::Delete);
        let mut objects = vec![object("ReplicaSet", "web-1"), object("ReplicaSet", "web-2")];
        objects.extend((0..6).map(|i| object("Pod", &format!("web-1-{i}"))));
        plan.dependents = Some(Dependents {
            objects,
            complete: true,
        });
        assert_eq!(
            cascade_lines(&plan)[1],
            "deletes Deployment shop/web and its 2 ReplicaSets and 6 Pods (background)"
        );
        plan.propagation = Propagation::Foreground;
        assert_eq!(
            cascade_lines(&plan)[1],
            "deletes its 2 ReplicaSets and 6 Pods first, then Deployment shop/web (foreground)"
        );
        plan.propagation = Propagation::Orphan;
        assert_eq!(
            cascade_lines(&plan)[1],
            "deletes Deployment shop/web only; its 2 ReplicaSets and 6 Pods stay (orphan)"
        );
        plan.dependents = Some(Dependents::default());
        plan.propagation = Propagation::Background;
        assert_eq!(
            cascade_lines(&plan)[1..],
            [
                "deletes Deployment shop/web; nothing it owns is known (background); still \
              listing, more may come"
            ]
        );
        assert_eq!(
            counted(&[
                object("Job", "a"),
                object("Pod", "b"),
                object("Pod", "c"),
                object("Event", "d")
            ]),
            "1 Job, 2 Pods and 1 Event"
        );
    }

    /// Set image: the image is typed (any character, even y and n), up/down pick the
    /// container, Enter makes the patch and asks for its dry run; only its answer lets
    /// the write go.
    #[test]
    fn a_set_image_types_the_image_then_waits_for_its_dry_run() {
        let mut dialog = ConfirmDialog::open(plan(Verb::SetImage));
        let container = |name: &str, init| Container {
            name: name.into(),
            image: format!("{name}:1"),
            init,
        };
        dialog.prepared(
            1,
            Prepared {
                containers: vec![
                    container("setup", true),
                    container("web", false),
                    container("log", false),
                ],
                ..answer(Verb::SetImage, Ok(String::new()))
            },
        );
        assert!(dialog.typing());
        assert_eq!(dialog.container, 1, "the first app container");
        assert_eq!(
            dialog.handle_key(&Action::FilterAccept),
            None,
            "no image yet"
        );
        dialog.handle_key(&Action::LineHistoryNext);
        dialog.handle_key(&Action::LineHistoryNext);
        assert_eq!(dialog.container, 2);
        for c in "nyx:2z".chars() {
            dialog.handle_key(&Action::FilterChar(c));
        }
        dialog.handle_key(&Action::FilterBackspace);
        assert_eq!(
            dialog.handle_key(&Action::FilterAccept),
            Some(Effect::Check)
        );
        assert!(!dialog.typing());
        let plan = dialog.plan.clone().unwrap();
        assert_eq!(
            plan.patch,
            Some(json!({"spec": {"template": {"spec": {"containers": [
                {"name": "log", "image": "nyx:2"}
            ]}}}}))
        );
        assert!(
            plan.facts
                .unwrap()
                .contains(&"container log: log:1 → nyx:2".to_string())
        );
        assert_eq!(
            dialog.handle_key(&Action::ConfirmYes),
            None,
            "no dry run yet"
        );
        dialog.checked(1, Ok("the server accepts it".into()));
        assert_eq!(dialog.handle_key(&Action::ConfirmYes), Some(Effect::Write));
        let init = image_patch(&container("setup", true), "s:2");
        assert_eq!(
            init["spec"]["template"]["spec"]["initContainers"][0]["image"],
            "s:2"
        );
    }

    /// Nothing is accepted before the server's facts and dry run are in; then y or Enter
    /// on the confirm button accept, n and Enter on Cancel cancel.
    #[test]
    fn the_dialog_accepts_only_once_the_dry_run_passed() {
        let mut dialog = ConfirmDialog::open(plan(Verb::Restart));
        assert_eq!(dialog.handle_key(&Action::ConfirmYes), None);
        dialog.prepared(2, answer(Verb::Restart, Ok("ok".into())));
        assert_eq!(
            dialog.handle_key(&Action::ConfirmYes),
            None,
            "another plan's answer"
        );
        dialog.prepared(1, answer(Verb::Restart, Ok("ok".into())));
        assert_eq!(dialog.handle_key(&Action::ChooseValue), Some(Effect::Close));
        assert_eq!(dialog.handle_key(&Action::ConfirmSwitch), None);
        assert_eq!(dialog.handle_key(&Action::ChooseValue), Some(Effect::Write));
        assert_eq!(dialog.handle_key(&Action::ConfirmYes), Some(Effect::Write));
        assert_eq!(dialog.handle_key(&Action::ConfirmNo), Some(Effect::Close));
        dialog.prepared(1, answer(Verb::Restart, Err("forbidden".into())));
        assert_eq!(dialog.handle_key(&Action::ConfirmYes), None);
    }

    /// A scale needs its count typed: digits only, at most four.
    #[test]
    fn a_scale_takes_its_count_from_the_digits_typed() {
        let mut dialog = ConfirmDialog::open(plan(Verb::Scale));
        dialog.prepared(
            1,
            Prepared {
                replicas: Some(3),
                ..answer(Verb::Scale, Ok("ok".into()))
            },
        );
        assert_eq!(dialog.handle_key(&Action::ConfirmYes), None);
        for c in "123456".chars() {
            dialog.handle_key(&Action::ConfirmChar(c));
        }
        assert_eq!(dialog.replicas(), Some(1234));
        dialog.handle_key(&Action::ConfirmBackspace);
        assert_eq!(dialog.replicas(), Some(123));
        assert_eq!(dialog.handle_key(&Action::ConfirmYes), Some(Effect::Write));
        let mut restart = ConfirmDialog::open(plan(Verb::Restart));
        restart.handle_key(&Action::ConfirmChar('5'));
        assert_eq!(restart.number, "", "only a scale takes digits");
    }

    /// An answer is kept for the TTL, then asked again; each namespace and verb apart.
    #[test]
    fn access_answers_are_kept_for_their_ttl_per_namespace_and_verb() {
        let mut cache = AccessCache::default();
        let key = |ns: &str, verb: &str| {
            (
                Some(ns.to_string()),
                verb.to_string(),
                String::new(),
                "pods".to_string(),
            )
        };
        let then = Instant::now();
        cache.put(key("demo", "delete"), then, Some("no".into()));
        cache.put(key("demo", "patch"), then, None);
        assert_eq!(
            cache.get(&key("demo", "delete"), then),
            Some(Some("no".into()))
        );
        assert_eq!(cache.get(&key("demo", "patch"), then), Some(None));
        assert_eq!(cache.get(&key("other", "delete"), then), None);
        let later = then + ACCESS_TTL;
        assert_eq!(cache.get(&key("demo", "delete"), later), None, "expired");
    }

    /// A refusal names the user, the verb, the resource and the namespace.
    #[test]
    fn a_denial_says_who_may_not_do_what_where() {
        assert_eq!(
            denial("viewer", "delete", "pods", Some("demo"), ""),
            "viewer cannot delete pods in demo"
        );
        assert_eq!(
            denial("", "create", "pods/exec", None, "no RBAC rule"),
            "your user cannot create pods/exec in any namespace: no RBAC rule"
        );
    }

    /// A pod table also asks for the shell's and attach's subresources.
    #[test]
    fn a_pod_table_reviews_its_shell_and_attach() {
        let checks = access_checks(&ResourceKind::Pods.into());
        let asked: Vec<(&Action, &str, &str)> = checks
            .iter()
            .map(|(a, verb, _, resource)| (a, *verb, resource.as_str()))
            .collect();
        assert!(
            asked.contains(&(&Action::Delete, "delete", "pods")),
            "{asked:?}"
        );
        assert!(asked.contains(&(&Action::OpenShell, "create", "pods/exec")));
        assert!(asked.contains(&(&Action::Attach, "create", "pods/attach")));
        assert!(!asked.iter().any(|(a, ..)| **a == Action::Scale));
    }

    /// A 403 at write time says in plain words that this user may not, with the
    /// server's own message naming who and what.
    #[test]
    fn a_403_says_the_user_may_not() {
        let err = WriteError::Forbidden {
            message: r#"pods "web-1" is forbidden: User "viewer" cannot delete resource "pods""#
                .into(),
        };
        assert_eq!(
            plain(&err),
            r#"your user may not do this (403 Forbidden): pods "web-1" is forbidden: User "viewer" cannot delete resource "pods""#
        );
    }

    #[test]
    fn a_write_key_says_what_it_is_for() {
        let pod = Target {
            kind: ResourceKind::Pods.into(),
            namespace: Some("shop".into()),
            name: "web-1".into(),
        };
        assert_eq!(
            check_targets(Verb::Restart, std::slice::from_ref(&pod)),
            Err(
                "restart is for deployments, statefulsets and daemonsets; Pod shop/web-1 is a Pod"
                    .into()
            )
        );
        assert_eq!(check_targets(Verb::Delete, &[pod]), Ok(()));
    }
}
