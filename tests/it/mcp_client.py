"""The official MCP Python SDK against `kscope mcp` over stdio, with kubectl as the truth.

Run by tests/it/mcp.rs: python3 mcp_client.py KSCOPE KUBECONFIG STATE_DIR [URL]. Exits
non-zero (an assertion) on any difference; prints one line per step done. With URL, the
client speaks streamable HTTP to a `kscope mcp --listen` already serving there, and checks
that the tools and a filtered list answer as over stdio.
"""

import asyncio
import base64
import json
import os
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

KSCOPE, KUBECONFIG, STATE = sys.argv[1:4]
URL = sys.argv[4] if len(sys.argv) > 4 else None
TOOLS = {"list_kinds", "list", "get", "describe", "events", "logs", "deltas", "indexes", "hotloops",
         "tree", "timeline"}
# Every answer, to look for Secret values in at the end.
ANSWERS = []
# The URIs of resources-updated notifications, as they come.
UPDATED = []


async def on_message(message):
    message = getattr(message, "root", message)
    if getattr(message, "method", None) == "notifications/resources/updated":
        UPDATED.append(str(message.params.uri))


def kubectl(*args):
    env = dict(os.environ, KUBECONFIG=KUBECONFIG)
    return subprocess.run(["kubectl", *args], env=env, check=True, capture_output=True, text=True).stdout


def pod_keys(*selector):
    """kubectl's namespace/name of the pods in every namespace that `selector` selects."""
    jsonpath = "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{'\\n'}{end}"
    return set(kubectl("get", "pods", "-A", *selector, "-o", jsonpath).split())


async def call(session, tool, arguments, error=False):
    result = await session.call_tool(tool, arguments)
    text = "".join(c.text for c in result.content if getattr(c, "text", None))
    ANSWERS.append(text)
    assert bool(result.is_error) == error, f"{tool} {arguments}: is_error={result.is_error}: {text}"
    if error:
        return text
    assert result.structured_content is not None, f"{tool}: no structured content"
    assert json.loads(text) == result.structured_content, f"{tool}: text and structure differ"
    return result.structured_content


async def pages(session, arguments):
    """Every row of a list, page by page; the pages seen."""
    rows, cursor, count = [], None, 0
    while True:
        page = await call(session, "list", dict(arguments, cursor=cursor) if cursor else arguments)
        rows += page["rows"]
        count += 1
        cursor = page["next_cursor"]
        assert page["truncated"] == (cursor is not None) or page["truncated"], page
        if cursor is None:
            return rows, count


async def main():
    params = StdioServerParameters(
        command=KSCOPE,
        args=["mcp", "--kubeconfig", KUBECONFIG, "-A"],
        env={"XDG_STATE_HOME": STATE, "KSCOPE_LOG": "kscope=debug", "HOME": STATE},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            assert {t.name for t in tools} == TOOLS, [t.name for t in tools]
            for tool in tools:
                assert tool.input_schema.get("type") == "object", tool
            print("tools", len(tools))

            kinds = await call(session, "list_kinds", {})
            names = {k["name"] for k in kinds["kinds"]}
            assert {"pods", "secrets", "deployments", "widgets.example.com"} <= names, names
            print("kinds", len(names))

            # list with an index filter: the same objects as kubectl's label selector.
            pods = json.loads(kubectl("get", "pods", "-A", "-o", "json"))["items"]
            apps = {}
            for p in pods:
                app = p["metadata"].get("labels", {}).get("app")
                if app:
                    apps.setdefault(app, []).append(p)
            app = max(apps, key=lambda a: len(apps[a]))
            truth = pod_keys("-l", f"app={app}")
            # A watch that fails right after the first list (a loaded machine outrunning the
            # sim's history) relists; that answer says it is not current, and the comparison
            # waits, bounded, for one that is.
            deadline = time.monotonic() + 60
            while True:
                listed = await call(session, "list", {"kind": "pods", "filter": f"app={app}", "limit": 1000})
                if listed["current"] or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.5)
            assert {r["key"] for r in listed["rows"]} == truth, (listed, truth)
            assert listed["columns"][:2] == ["NAMESPACE", "NAME"], listed["columns"]
            assert listed["truncated"] is False and listed["next_cursor"] is None
            # One cluster: no CLUSTER column, but every answer names it and says it is current.
            assert listed["current"] is True and [c["state"] for c in listed["clusters"]] == ["current"], listed
            context = listed["clusters"][0]["cluster"]
            assert {r["cluster"] for r in listed["rows"]} == {context}, listed
            some = sorted(truth)[0]
            ns, name = some.split("/")
            narrowed = await call(session, "list", {"kind": "po", "namespace": ns, "filter": f"app={app}",
                                                    "columns": ["name", "STATUS"], "sort": "-NAME"})
            expected = sorted((k.split("/")[1] for k in truth if k.startswith(ns + "/")), reverse=True)
            assert [r["cells"][0] for r in narrowed["rows"]] == expected, narrowed
            assert narrowed["columns"] == ["NAME", "STATUS"], narrowed
            print("list", app, len(truth))

            # Pagination and caps.
            everything = {f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in pods}
            rows, count = await pages(session, {"kind": "pods", "limit": 7})
            assert count == -(-len(rows) // 7) and count > 1, (count, len(rows))
            assert len({r["key"] for r in rows}) == len(rows)
            # The sim's churn may add or remove a pod meanwhile: most are the same.
            assert len(everything & {r["key"] for r in rows}) >= len(everything) - 5
            small = await call(session, "list", {"kind": "pods", "max_bytes": 300})
            assert small["truncated"] is True and 0 < len(small["rows"]) < 10, small
            assert len(json.dumps(small["rows"])) <= 300 + 10, small
            print("pages", count)

            # Errors, in the words kscope get uses.
            bad = await call(session, "list", {"kind": "pods", "filter": "app in a"}, error=True)
            assert "column 8" in bad and "app in a" in bad, bad
            unknown = await call(session, "list", {"kind": "nosuchkind"}, error=True)
            assert "nosuchkind" in unknown, unknown
            column = await call(session, "list", {"kind": "pods", "columns": ["COLOUR"]}, error=True)
            assert "COLOUR" in column and "STATUS" in column, column
            index = await call(session, "list", {"kind": "pods", "filter": "colour=red"}, error=True)
            assert "unknown index" in index, index
            missing = await call(session, "get", {"kind": "pods", "namespace": ns, "name": "nosuchpod"}, error=True)
            assert "not found" in missing, missing
            print("errors")

            got = await call(session, "get", {"kind": "pods", "namespace": ns, "name": name})
            assert f"name: {name}" in got["yaml"] and "managedFields" not in got["yaml"], got
            assert got["cluster"] == context, got
            other = await call(session, "get", {"kind": "pods", "namespace": ns, "name": name,
                                                "cluster": "nosuchcluster"}, error=True)
            assert "nosuchcluster" in other and context in other, other
            with_fields = await call(session, "get", {"kind": "pods", "namespace": ns, "name": name,
                                                      "managed_fields": True})
            assert "managedFields" in with_fields["yaml"]
            cut = await call(session, "get", {"kind": "pods", "namespace": ns, "name": name, "max_bytes": 100})
            assert cut["truncated"] is True and len(cut["yaml"].encode()) <= 100, cut
            described = await call(session, "describe", {"kind": "pods", "namespace": ns, "name": name})
            assert described["text"].startswith("Name:") and name in described["text"], described
            events = await call(session, "events", {"namespace": ns})
            assert isinstance(events["events"], list)
            await call(session, "events", {"kind": "pods", "namespace": ns, "name": name})
            running = next(p for p in pods if p["status"].get("phase") == "Running")
            logs = await call(session, "logs", {"namespace": running["metadata"]["namespace"],
                                                "name": running["metadata"]["name"],
                                                "container": running["spec"]["containers"][0]["name"],
                                                "tail": 5})
            assert 0 < len(logs["lines"]) <= 5, logs
            print("get describe events logs")

            # Secrets: listed, got, described, followed; never a value.
            secrets = json.loads(kubectl("get", "secrets", "-A", "-o", "json"))["items"]
            with_data = [s for s in secrets if s.get("data")]
            assert with_data, "the sim has Secrets with data"
            for s in with_data[:3]:
                meta = s["metadata"]
                args = {"kind": "secrets", "namespace": meta["namespace"], "name": meta["name"]}
                got = await call(session, "get", args)
                assert got["masked_secret_values"] >= len(s["data"]), got
                await call(session, "describe", args)
            await call(session, "list", {"kind": "secrets"})
            await call(session, "deltas", {"kind": "secrets"})

            # Deltas while kubectl writes.
            start = await call(session, "deltas", {"kind": "pods", "limit": 1})
            assert start["entries"] and start["truncated"] is True, start
            latest = await call(session, "deltas", {"kind": "pods", "limit": 1000, "max_bytes": 1048576})
            since = latest["last_resource_version"]
            # The first change after the list has no earlier version in the tap to diff with
            # (`changed` is null): the second names the field.
            kubectl("label", "pod", name, "-n", ns, "mcp-test=first", "--overwrite")
            kubectl("label", "pod", name, "-n", ns, "mcp-test=followed", "--overwrite")
            seen, deadline = [], time.monotonic() + 20
            while time.monotonic() < deadline:
                follow = await call(session, "deltas", {"kind": "pods", "namespace": ns, "name": name,
                                                        "since": since})
                seen += follow["entries"]
                since = follow["last_resource_version"]
                if any("metadata.labels.mcp-test" in (e["changed"] or []) for e in seen):
                    break
                await asyncio.sleep(0.2)
            assert any(e["type"] == "MODIFIED" and "metadata.labels.mcp-test" in (e["changed"] or [])
                       for e in seen), seen
            assert all(e["key"] == some for e in seen), seen
            print("deltas", len(seen))

            # Indexes: listed, one added at run time and queried at once.
            indexes = await call(session, "indexes", {"kind": "pods"})
            assert {"namespace", "app"} <= {i["name"] for i in indexes["indexes"]}, indexes
            added = await call(session, "indexes", {"kind": "pods", "add": "mcptest label=mcp-test"})
            assert "mcptest" in {i["name"] for i in added["indexes"]} and not added["relisted"], added
            tagged = await call(session, "list", {"kind": "pods", "filter": "mcptest=followed"})
            assert [r["key"] for r in tagged["rows"]] == [some], tagged
            again = await call(session, "indexes", {"kind": "pods", "add": "mcptest label=x"}, error=True)
            assert "mcptest" in again, again
            path = await call(session, "indexes", {"kind": "pods", "add": "sa field={.spec.serviceAccountName}"})
            assert path["relisted"] is True and "sa" in {i["name"] for i in path["indexes"]}, path
            print("indexes")

            # A kind's table as a resource, and a change to it notified.
            templates = (await session.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["kscope://table/{kind}"], templates
            listed = (await session.list_resources()).resources
            assert "kscope://table/pods" in {str(r.uri) for r in listed}, listed
            table = await session.read_resource("kscope://table/pods")
            table = json.loads(table.contents[0].text)
            ANSWERS.append(json.dumps(table))
            assert table["total"] > 0 and table["columns"][1] == "NAME", table
            await session.subscribe_resource("kscope://table/secrets")
            await session.subscribe_resource("kscope://table/pods")
            UPDATED.clear()
            kubectl("label", "pod", name, "-n", ns, "mcp-test=notified", "--overwrite")
            deadline = time.monotonic() + 20
            while "kscope://table/pods" not in UPDATED and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            assert "kscope://table/pods" in UPDATED, UPDATED
            await session.unsubscribe_resource("kscope://table/pods")
            print("resources", len(UPDATED))

            report = await call(session, "hotloops", {})
            hot = report["clusters"][0]["report"]
            assert isinstance(hot["objects"], list), report
            # The demo's controllers are healthy: no loop, in the report or in words.
            assert hot["loops"] == [] and report["found"] == [], report
            print("hotloops")

            # tree: a Deployment's dependents are the ReplicaSets and pods whose
            # ownerReferences kubectl reads name it, and a pod's owners up are that chain.
            deploys = json.loads(kubectl("get", "deployments", "-A", "-o", "json"))["items"]
            deploy = max(deploys, key=lambda d: d["status"].get("readyReplicas", 0))
            dns, dname = deploy["metadata"]["namespace"], deploy["metadata"]["name"]

            def owned_by(items, uids):
                return {i["metadata"]["uid"]: i["metadata"]["name"] for i in items
                        if any(o["uid"] in uids for o in i["metadata"].get("ownerReferences", []))}

            rs_truth = owned_by(json.loads(kubectl("get", "rs", "-n", dns, "-o", "json"))["items"],
                                {deploy["metadata"]["uid"]})
            pod_truth = owned_by(json.loads(kubectl("get", "pods", "-n", dns, "-o", "json"))["items"],
                                 set(rs_truth))
            assert pod_truth, (dname, rs_truth)
            tree = await call(session, "tree", {"kind": "deploy", "namespace": dns, "name": dname,
                                                "kinds": "replicasets,pods"})
            nodes = tree["nodes"]
            assert (nodes[0]["kind"], nodes[0]["name"], nodes[0]["depth"]) == ("Deployment", dname, 0), nodes
            assert {n["name"] for n in nodes if (n["kind"], n["depth"]) == ("ReplicaSet", 1)} \
                == set(rs_truth.values()), (nodes, rs_truth)
            assert {n["name"] for n in nodes if (n["kind"], n["depth"]) == ("Pod", 2)} \
                == set(pod_truth.values()), (nodes, pod_truth)
            assert tree["objects"] == len(nodes) and tree["truncated"] is False, tree
            pod = sorted(pod_truth.values())[0]
            up = await call(session, "tree", {"kind": "pods", "namespace": dns, "name": pod, "up": True,
                                              "kinds": "replicasets,deployments"})
            assert [(n["kind"], n["depth"]) for n in up["nodes"]] == \
                [("Deployment", 0), ("ReplicaSet", 1), ("Pod", 2)], up
            cut = await call(session, "tree", {"kind": "deploy", "namespace": dns, "name": dname,
                                               "kinds": "replicasets,pods", "max_bytes": 200})
            assert cut["truncated"] is True and len(cut["nodes"]) < len(nodes), cut
            gone = await call(session, "tree", {"kind": "deploy", "namespace": dns, "name": "nosuchdeploy"},
                              error=True)
            assert gone == f'deployments "nosuchdeploy" not found in namespace {dns}', gone
            print("tree", len(nodes))

            # timeline: after kubectl writes a label, kubectl is the manager of that field.
            kubectl("label", "deploy", dname, "-n", dns, "mcp-timeline=written", "--overwrite")
            timeline = await call(session, "timeline", {"kind": "deploy", "namespace": dns, "name": dname})
            managers = {c.get("manager") for e in timeline["entries"] for c in e.get("changes", [])
                        if "mcp-timeline" in c["path"]}
            assert any(m and m.startswith("kubectl") for m in managers), timeline
            assert timeline["total"] == len(timeline["entries"]), timeline
            bad = await call(session, "timeline", {"kind": "deploy", "namespace": dns, "name": "nosuchdeploy"},
                             error=True)
            assert "nosuchdeploy" in bad and "not found" in bad, bad
            print("timeline", timeline["total"])

    values = set()
    for s in secrets:
        # A token Secret's `namespace` is its namespace's name, public everywhere.
        for k, v in (s.get("data") or {}).items():
            if k == "namespace":
                continue
            values.add(v)
            decoded = base64.b64decode(v).decode("utf-8", "replace")
            if len(decoded) >= 6:
                values.add(decoded)
    values = {v for v in values if len(v) >= 6}
    assert values
    for answer in ANSWERS:
        for v in values:
            assert v not in answer, f"a Secret value reached an answer: {answer[:200]}"
    print("no secret value in", len(ANSWERS), "answers")


async def over_http():
    async with streamable_http_client(URL) as (read, write, *_):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            assert {t.name for t in tools} == TOOLS, [t.name for t in tools]
            truth = pod_keys()
            listed = await call(session, "list", {"kind": "pods", "limit": 1000})
            keys = {r["key"] for r in listed["rows"]}
            assert len(keys & truth) >= len(truth) - 5, (keys, truth)
            bad = await call(session, "list", {"kind": "pods", "filter": "app in a"}, error=True)
            assert "column 8" in bad, bad
            print("http", len(keys))


asyncio.run(over_http() if URL else main())
