"""The official MCP Python SDK against `kscope mcp` serving several clusters, or watching a
Widget controller for hot loops; kubectl is the truth.

Run by tests/it/mcp_fleet.rs: python3 mcp_fleet.py MODE KSCOPE KUBECONFIG STATE_DIR, MODE one
of `fleet` (a `kscope sim --clusters 2`), `hotloop` or `healthy` (a sim with the Widget
controller, buggy or not). Exits non-zero (an assertion) on any difference; prints one line
per step done.
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

MODE, KSCOPE, KUBECONFIG, STATE = sys.argv[1:5]
CLUSTERS = ["kscope-sim-1", "kscope-sim-2"]
# The URIs of resources-updated notifications, as they come.
UPDATED = []
# Every wait here is on a condition, bounded so that a broken server fails instead of hanging.
DEADLINE = 60


async def on_message(message):
    message = getattr(message, "root", message)
    if getattr(message, "method", None) == "notifications/resources/updated":
        UPDATED.append(str(message.params.uri))


def kubectl(*args):
    env = dict(os.environ, KUBECONFIG=KUBECONFIG)
    return subprocess.run(["kubectl", *args], env=env, check=True, capture_output=True, text=True).stdout


def pod_keys(context):
    """kubectl's namespace/name of every pod of the cluster behind `context`."""
    jsonpath = "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{'\\n'}{end}"
    return set(kubectl("--context", context, "get", "pods", "-A", "-o", jsonpath).split())


async def call(session, tool, arguments, error=False):
    result = await session.call_tool(tool, arguments)
    text = "".join(c.text for c in result.content if getattr(c, "text", None))
    assert bool(result.is_error) == error, f"{tool} {arguments}: is_error={result.is_error}: {text}"
    if error:
        return text
    assert json.loads(text) == result.structured_content, f"{tool}: text and structure differ"
    return result.structured_content


def by_cluster(rows):
    keys = {c: set() for c in CLUSTERS}
    for r in rows:
        assert r["cells"][0] == r["cluster"], r
        keys[r["cluster"]].add(r["key"])
    return keys


def state(answer, cluster):
    return next(s for s in answer["clusters"] if s["cluster"] == cluster)


async def until(what, check):
    """Calls `check` until it returns something true, at most DEADLINE seconds."""
    deadline = time.monotonic() + DEADLINE
    while True:
        got = await check()
        if got:
            return got
        assert time.monotonic() < deadline, f"never {what}"
        await asyncio.sleep(0.5)


async def fleet(session):
    truth = {c: pod_keys(c) for c in CLUSTERS}
    assert all(truth.values()) and truth[CLUSTERS[0]] != set(), truth

    # Every cluster's pods, each row naming its cluster, as kubectl lists each context.
    # A cluster may be relisting at any moment (the sim drops watches as a real one does):
    # the answer says so, and the comparison waits for one where both are current.
    async def both_current():
        answer = await call(session, "list", {"kind": "pods", "limit": 1000})
        return answer if answer["current"] else None

    listed = await until("both clusters current", both_current)
    assert listed["columns"][:3] == ["CLUSTER", "NAMESPACE", "NAME"], listed["columns"]
    assert by_cluster(listed["rows"]) == truth, (listed, truth)
    assert listed["current"] is True and [s["state"] for s in listed["clusters"]] == ["current"] * 2, listed
    assert listed["total"] == sum(len(t) for t in truth.values()), listed

    # Pages run across the clusters in order: every row once.
    rows, cursor = [], None
    while True:
        page = await call(session, "list", dict({"kind": "pods", "limit": 7}, **({"cursor": cursor} if cursor else {})))
        rows += page["rows"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(rows) == listed["total"] and by_cluster(rows) == truth, rows
    print("list", {c: len(t) for c, t in truth.items()})

    # cluster= in the filter, and the cluster argument, pick clusters.
    picked = await call(session, "list", {"kind": "pods", "filter": f"cluster={CLUSTERS[1]}", "limit": 1000})
    assert by_cluster(picked["rows"]) == {CLUSTERS[0]: set(), CLUSTERS[1]: truth[CLUSTERS[1]]}, picked
    assert [s["cluster"] for s in picked["clusters"]] == [CLUSTERS[1]], picked
    named = await call(session, "list", {"kind": "pods", "cluster": CLUSTERS[0], "limit": 1000})
    assert by_cluster(named["rows"]) == {CLUSTERS[0]: truth[CLUSTERS[0]], CLUSTERS[1]: set()}, named
    ns = sorted(truth[CLUSTERS[0]])[0].split("/")[0]
    app = json.loads(kubectl("--context", CLUSTERS[1], "get", "pods", "-A", "-o", "json"))["items"][0]
    app = app["metadata"]["labels"]["app"]
    both = await call(session, "list", {"kind": "pods", "filter": f"app={app},cluster in ({','.join(CLUSTERS)})",
                                        "limit": 1000})
    for c in CLUSTERS:
        jsonpath = "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{'\\n'}{end}"
        want = set(kubectl("--context", c, "get", "pods", "-A", "-l", f"app={app}", "-o", jsonpath).split())
        assert by_cluster(both["rows"])[c] == want, (c, both, want)
    print("picked")

    kinds = await call(session, "list_kinds", {"contains": "pod"})
    pods = next(k for k in kinds["kinds"] if k["name"] == "pods")
    assert pods["clusters"] == CLUSTERS and {w["cluster"] for w in pods["warm"]} == set(CLUSTERS), pods

    # One object's tools need a cluster when several are served, and name it.
    key = sorted(truth[CLUSTERS[1]])[0]
    ns, name = key.split("/")
    needed = await call(session, "get", {"kind": "pods", "namespace": ns, "name": name}, error=True)
    assert "several clusters" in needed and CLUSTERS[0] in needed and CLUSTERS[1] in needed, needed
    got = await call(session, "get", {"kind": "pods", "namespace": ns, "name": name, "cluster": CLUSTERS[1]})
    assert got["cluster"] == CLUSTERS[1] and f"name: {name}" in got["yaml"], got
    unknown = await call(session, "get", {"kind": "pods", "namespace": ns, "name": name, "cluster": "nosuch"},
                         error=True)
    assert "nosuch" in unknown and CLUSTERS[0] in unknown, unknown
    deltas = await call(session, "deltas", {"kind": "pods", "cluster": CLUSTERS[0], "limit": 1})
    assert deltas["cluster"] == CLUSTERS[0] and deltas["current"] is True, deltas
    hot = await call(session, "hotloops", {})
    assert [c["cluster"] for c in hot["clusters"]] == CLUSTERS, hot
    print("one cluster's tools")

    # The pods table as a resource follows every cluster: a write on the second is told.
    await session.subscribe_resource("kscope://table/pods")
    UPDATED.clear()
    kubectl("--context", CLUSTERS[1], "label", "pod", name, "-n", ns, "mcp-fleet=told", "--overwrite")

    async def told():
        return "kscope://table/pods" in UPDATED

    await until("told of the change", told)
    await session.unsubscribe_resource("kscope://table/pods")
    print("subscribed")

    # Pods forbidden on the second cluster, then its store restarted (every watch ends, as
    # after an etcd restore): its relists are refused, its store stops being current, and
    # every answer says so rather than passing its last rows off as current.
    scratch = tempfile.mkdtemp()
    faults, empty = os.path.join(scratch, "faults.json"), os.path.join(scratch, "empty.json")
    with open(faults, "w") as f:
        json.dump({"forbidden": ["pods", "configmaps"]}, f)
    with open(empty, "w") as f:
        f.write("{}")
    kubectl("--context", CLUSTERS[1], "replace", "--raw", "/sim/faults", "-f", faults)
    kubectl("--context", CLUSTERS[1], "create", "--raw", "/sim/restart", "-f", empty)

    async def stale():
        answer = await call(session, "list", {"kind": "pods", "limit": 1000})
        return answer if not state(answer, CLUSTERS[1])["current"] else None

    answer = await until("stale", stale)
    second = state(answer, CLUSTERS[1])
    assert second["state"] == "stale" and "not current" in second["reason"], second
    assert answer["current"] is False and state(answer, CLUSTERS[0])["current"] is True, answer
    assert by_cluster(answer["rows"])[CLUSTERS[0]] == truth[CLUSTERS[0]], answer
    followed = await call(session, "deltas", {"kind": "pods", "cluster": CLUSTERS[1]})
    assert followed["current"] is False and followed["state"]["state"] == "stale", followed
    print("stale", second["reason"])

    # A kind first used while forbidden there: the other cluster answers, this one is named.
    maps = await call(session, "list", {"kind": "configmaps", "limit": 1000})
    refused = state(maps, CLUSTERS[1])
    assert refused["state"] == "forbidden" and refused["current"] is False, maps
    assert maps["current"] is False and maps["rows"], maps
    assert {r["cluster"] for r in maps["rows"]} == {CLUSTERS[0]}, maps
    print("forbidden")


async def hotloops(session, buggy):
    """The Widget informer started by the first call; answers until a loop shows (buggy), or
    until the taps cover a whole window in which the controller wrote and none shows."""
    widgets = {"kinds": ["widgets.example.com"]}
    first = await call(session, "hotloops", widgets)
    if not buggy:
        # A change for the controller to reconcile while the informer watches.
        item = json.loads(kubectl("get", "widgets", "-A", "-o", "json"))["items"][0]["metadata"]
        kubectl("patch", "widgets", "-n", item["namespace"], item["name"], "--type=merge",
                "-p", '{"spec":{"size":"large","color":"red"}}')

    async def settled():
        report = await call(session, "hotloops", widgets)
        cluster = report["clusters"][0]
        if buggy:
            return report if report["found"] else None
        wrote = any(o["manager"] == "widget-controller" and o["statusWrites"] > 0
                    for o in cluster["report"]["objects"])
        return report if wrote and cluster["watched_seconds"] > 10 else None

    report = await until("settled", settled)
    loops = report["clusters"][0]["report"]["loops"]
    if buggy:
        assert any(line.startswith("widget-controller rewrites what it just wrote") for line in report["found"]), report
        assert loops[0]["manager"] == "widget-controller", loops
        assert "status.lastReconcileTime" in loops[0]["fields"], loops
        print("hotloop found", report["found"])
    else:
        assert loops == [] and report["found"] == [], report
        print("healthy: no loop in", report["clusters"][0]["watched_seconds"], "s")
    assert first["clusters"][0]["cluster"] == report["clusters"][0]["cluster"]


async def main():
    args = ["mcp", "--kubeconfig", KUBECONFIG, "-A"]
    if MODE == "fleet":
        args.append("--all-contexts")
    params = StdioServerParameters(
        command=KSCOPE,
        args=args,
        env={"XDG_STATE_HOME": STATE, "HOME": STATE},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            await session.initialize()
            if MODE == "fleet":
                await fleet(session)
            else:
                await hotloops(session, MODE == "hotloop")


asyncio.run(main())
