// The official JavaScript client against the sim (tests/it/sim_node_client.rs): lists all pods,
// watches from the list's resourceVersion, creates a pod, waits until it runs, deletes it,
// and prints one JSON line per step and per watch event until the DELETED.
import * as k8s from '@kubernetes/client-node';

const [kubeconfig, name] = process.argv.slice(2);
const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(k8s.CoreV1Api);
const namespace = 'default';
const say = (line) => console.log(JSON.stringify(line));

const list = await core.listPodForAllNamespaces();
say({ step: 'list', items: list.items.length, resourceVersion: list.metadata.resourceVersion });

let deleted;
const gone = new Promise((resolve, reject) => {
  deleted = { resolve, reject };
});
const watching = await new k8s.Watch(kc).watch(
  '/api/v1/pods',
  { resourceVersion: list.metadata.resourceVersion, fieldSelector: `metadata.name=${name}` },
  (type, pod) => {
    say({
      event: type,
      deletionTimestamp: pod.metadata.deletionTimestamp ?? null,
      deletionGracePeriodSeconds: pod.metadata.deletionGracePeriodSeconds ?? null,
      phase: pod.status?.phase ?? null,
    });
    if (type === 'DELETED') deleted.resolve();
  },
  (err) => {
    if (err) deleted.reject(err);
  },
);

const created = await core.createNamespacedPod({
  namespace,
  body: {
    metadata: { name },
    spec: {
      terminationGracePeriodSeconds: 30,
      containers: [{ name: 'app', image: 'nginx:1.27' }],
    },
  },
});
say({ step: 'created', uid: created.metadata.uid });

// Deleted before it runs it would go at once: no grace period to see.
for (;;) {
  const pod = await core.readNamespacedPod({ namespace, name });
  if (pod.status?.phase === 'Running') break;
  await new Promise((r) => setTimeout(r, 100));
}
await core.deleteNamespacedPod({ namespace, name });
say({ step: 'deleted' });
await gone;
watching.abort();
