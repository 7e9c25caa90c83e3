//! The container picker of a shell (`o`) or an attach (`a`): on a pod with several
//! containers it asks which one, as k9s does, with the container kubectl would pick (the
//! `kubectl.kubernetes.io/default-container` annotation's, else the first) chosen at first,
//! so Enter does what `kubectl exec` would. A pod with one container opens at once. The pod
//! is read when the key is pressed, off the UI thread; the session then opens without a
//! second read.

use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use tokio::sync::mpsc;

use super::action::Action;
use super::effect::Effect;
use super::session::{SessionKind, default_container};

/// A pod's containers as the picker offers them, and the one offered first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodContainers {
    pub names: Vec<String>,
    /// Index in `names` of the container kubectl picks.
    pub default: usize,
}

impl PodContainers {
    /// The app containers of `pod` (init containers have ended by the time a shell makes
    /// sense, and kubectl exec offers them only by name).
    pub fn of(pod: &Pod) -> Self {
        let names: Vec<String> = pod
            .spec
            .iter()
            .flat_map(|s| &s.containers)
            .map(|c| c.name.clone())
            .collect();
        let default = default_container(pod)
            .and_then(|d| names.iter().position(|n| *n == d))
            .unwrap_or(0);
        Self { names, default }
    }
}

/// A read's answer, for picker `id`.
#[derive(Debug)]
pub struct ContainersRead {
    id: u64,
    result: Result<PodContainers, String>,
}

/// The picker over the table: which pod, for what, and its containers once read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerPicker {
    id: u64,
    pub namespace: String,
    pub pod: String,
    pub kind: SessionKind,
    /// The containers, or why there are none; `None` while the pod is read.
    pub choices: Option<Result<Vec<String>, String>>,
    pub selected: usize,
    /// Index of the container kubectl picks, marked in the list.
    pub default: usize,
}

impl ContainerPicker {
    /// `shell in pod demo/web-1`, for the title and the messages.
    pub fn what(&self) -> String {
        let verb = match self.kind {
            SessionKind::Shell(_) => "shell",
            SessionKind::Attach => "attach",
        };
        format!("{verb} in pod {}/{}", self.namespace, self.pod)
    }

    /// Takes `read` if it is this picker's; says whether it was.
    pub fn read(&mut self, read: ContainersRead) -> bool {
        if read.id != self.id {
            return false;
        }
        match read.result {
            Ok(found) if found.names.is_empty() => {
                self.choices = Some(Err(format!("{}: the pod has no containers", self.what())));
            }
            Ok(found) => {
                self.selected = found.default;
                self.default = found.default;
                self.choices = Some(Ok(found.names));
            }
            Err(why) => self.choices = Some(Err(why)),
        }
        true
    }

    fn names(&self) -> &[String] {
        match &self.choices {
            Some(Ok(names)) => names,
            _ => &[],
        }
    }

    /// The container chosen, once read.
    pub fn chosen(&self) -> Option<&str> {
        self.names().get(self.selected).map(String::as_str)
    }

    /// Whether there is nothing to ask: one container only.
    pub fn single(&self) -> bool {
        self.names().len() == 1
    }

    /// A key (the confirm dialog's): up and down choose, yes or Enter open, no cancels;
    /// port-forward forwards to the chosen container instead of opening it.
    pub fn handle_key(&mut self, action: &Action) -> Option<Effect> {
        let last = self.names().len().saturating_sub(1);
        match action {
            Action::Up => self.selected = self.selected.saturating_sub(1),
            Action::Down => self.selected = (self.selected + 1).min(last),
            Action::ConfirmYes | Action::ChooseValue if self.chosen().is_some() => {
                return Some(Effect::StartSession);
            }
            Action::PortForward if self.chosen().is_some() => {
                return Some(Effect::ForwardContainer);
            }
            Action::ConfirmNo => return Some(Effect::Close),
            _ => {}
        }
        None
    }

    /// The list's lines: `> name` on the chosen one, `(default)` beside kubectl's pick.
    pub fn lines(&self) -> Vec<String> {
        self.names()
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let mark = if i == self.selected { ">" } else { " " };
                let default = if i == self.default && self.names().len() > 1 {
                    " (default)"
                } else {
                    ""
                };
                format!("{mark} {name}{default}")
            })
            .collect()
    }
}

/// Reads the pods the picker asks about, and hands back the answers.
pub struct ContainerReads {
    sender: mpsc::UnboundedSender<ContainersRead>,
    receiver: mpsc::UnboundedReceiver<ContainersRead>,
    next_id: u64,
}

impl Default for ContainerReads {
    fn default() -> Self {
        let (sender, receiver) = mpsc::unbounded_channel();
        Self {
            sender,
            receiver,
            next_id: 0,
        }
    }
}

impl ContainerReads {
    /// Starts reading pod `namespace`/`pod` with `client`; returns the picker the answer
    /// fills. Must run inside a Tokio runtime.
    pub fn read(
        &mut self,
        client: kube::Client,
        namespace: String,
        pod: String,
        kind: SessionKind,
    ) -> ContainerPicker {
        self.next_id += 1;
        let id = self.next_id;
        let sender = self.sender.clone();
        let (ns, name) = (namespace.clone(), pod.clone());
        tokio::spawn(async move {
            let pods: Api<Pod> = Api::namespaced(client, &ns);
            let result = match pods.get(&name).await {
                Ok(pod) => Ok(PodContainers::of(&pod)),
                Err(kube::Error::Api(status)) => Err(status.message),
                Err(err) => Err(err.to_string()),
            };
            // Nobody listens once the app is gone.
            let _ = sender.send(ContainersRead { id, result });
        });
        ContainerPicker {
            id,
            namespace,
            pod,
            kind,
            choices: None,
            selected: 0,
            default: 0,
        }
    }

    /// The next answer. Cancel-safe, for the event loop's `select!`.
    pub async fn next(&mut self) -> Option<ContainersRead> {
        self.receiver.recv().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(annotation: Option<&str>) -> Pod {
        let mut pod = json!({
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {
                "initContainers": [{"name": "setup"}],
                "containers": [{"name": "app"}, {"name": "console"}, {"name": "proxy"}],
            },
        });
        if let Some(name) = annotation {
            pod["metadata"]["annotations"] =
                json!({"kubectl.kubernetes.io/default-container": name});
        }
        serde_json::from_value(pod).unwrap()
    }

    fn picker() -> ContainerPicker {
        ContainerPicker {
            id: 1,
            namespace: "shop".into(),
            pod: "web".into(),
            kind: SessionKind::Attach,
            choices: None,
            selected: 0,
            default: 0,
        }
    }

    /// The annotation's container is offered first; one it does not name (or none) gives
    /// the first, as kubectl picks; init containers are not offered.
    #[test]
    fn the_default_container_annotation_preselects() {
        assert_eq!(
            PodContainers::of(&pod(Some("console"))),
            PodContainers {
                names: vec!["app".into(), "console".into(), "proxy".into()],
                default: 1,
            }
        );
        assert_eq!(PodContainers::of(&pod(Some("gone"))).default, 0);
        assert_eq!(PodContainers::of(&pod(None)).default, 0);
    }

    /// Nothing opens before the pod is read or on another picker's answer; then up and
    /// down choose, Enter opens the chosen one, n cancels.
    #[test]
    fn the_picker_chooses_a_container_once_read() {
        let mut picker = picker();
        assert_eq!(
            picker.handle_key(&Action::ChooseValue),
            None,
            "not read yet"
        );
        let answer = |id| ContainersRead {
            id,
            result: Ok(PodContainers::of(&pod(Some("console")))),
        };
        assert!(!picker.read(answer(2)));
        assert!(picker.read(answer(1)));
        assert_eq!(picker.chosen(), Some("console"));
        assert_eq!(picker.lines(), ["  app", "> console (default)", "  proxy"]);
        picker.handle_key(&Action::Down);
        picker.handle_key(&Action::Down);
        assert_eq!(picker.chosen(), Some("proxy"), "stops at the last");
        picker.handle_key(&Action::Up);
        picker.handle_key(&Action::Up);
        assert_eq!(picker.chosen(), Some("app"));
        assert_eq!(
            picker.handle_key(&Action::ChooseValue),
            Some(Effect::StartSession)
        );
        assert_eq!(
            picker.handle_key(&Action::PortForward),
            Some(Effect::ForwardContainer)
        );
        assert_eq!(picker.handle_key(&Action::ConfirmNo), Some(Effect::Close));
        assert!(!picker.single());
    }

    /// A pod that cannot be read, or has no containers, says why and offers nothing.
    #[test]
    fn a_pod_without_containers_offers_nothing() {
        let mut picker = picker();
        picker.read(ContainersRead {
            id: 1,
            result: Ok(PodContainers {
                names: Vec::new(),
                default: 0,
            }),
        });
        assert_eq!(
            picker.choices,
            Some(Err(
                "attach in pod shop/web: the pod has no containers".into()
            ))
        );
        assert_eq!(picker.handle_key(&Action::ConfirmYes), None);
        assert_eq!(picker.handle_key(&Action::PortForward), None);
    }
}
