"""The official MCP Python SDK against `kscope mcp` on one cluster, at two edges: the opt-in
early answer while a large state still streams in, and a kind the user may not list.
kubectl is the truth.

Run by tests/it/mcp_edges.rs: python3 mcp_edges.py MODE KSCOPE KUBECONFIG STATE_DIR [CONTEXT],
MODE one of `first_rows` (a sim whose watch-list streams its pods slowly) or `forbidden` (a
sim refusing Secrets to everyone; CONTEXT its read-only viewer). Exits non-zero (an
assertion) on any difference; prints one line per step done.
"""

import asyncio
import json
import os
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

MODE, KSCOPE, KUBECONFIG, STATE = sys.argv[1:5]
CONTEXT = sys.argv[5] if len(sys.argv) > 5 else None
# Every pod on one page: the most rows and bytes a page may hold.
WHOLE = {"kind": "pods", "limit": 1000, "max_bytes": 1048576}


def kubectl(*args):
    env = dict(os.environ, KUBECONFIG=KUBECONFIG)
    context = ["--context", CONTEXT] if CONTEXT else []
    return subprocess.run(["kubectl", *context, *args], env=env, check=True, capture_output=True,
                          text=True).stdout


def pod_keys():
    jsonpath = "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{'\\n'}{end}"
    return set(kubectl("get", "pods", "-A", "-o", jsonpath).split())


async def call(session, tool, arguments, error=False):
    result = await session.call_tool(tool, arguments)
    text = "".join(c.text for c in result.content if getattr(c, "text", None))
    assert bool(result.is_error) == error, f"{tool} {arguments}: is_error={result.is_error}: {text}"
    if error:
        return text
    assert json.loads(text) == result.structured_content, f"{tool}: text and structure differ"
    return result.structured_content


async def first_rows(session):
    truth = pod_keys()
    # The first call on pods starts their informer: with first_rows it answers once the
    # store holds some, while the rest still streams, and says the answer is partial.
    early = await call(session, "list", dict(WHOLE, first_rows=True))
    states = early["clusters"]
    assert early["current"] is False and [s["state"] for s in states] == ["syncing"], early
    assert "reason" in states[0] and states[0]["reason"], states
    keys = {r["key"] for r in early["rows"]}
    assert 0 < early["total"] < len(truth), (early["total"], len(truth))
    assert early["next_cursor"] is None and len(keys) == early["total"], early["total"]
    assert keys <= truth, sorted(keys - truth)
    print(f"first rows: {early['total']} of {len(truth)} pods, syncing")
    # Without first_rows the call waits for the whole state: every pod, current.
    whole = await call(session, "list", WHOLE)
    assert whole["current"] is True and [s["state"] for s in whole["clusters"]] == ["current"], whole
    assert whole["next_cursor"] is None and whole["total"] == len(truth), whole["total"]
    assert {r["key"] for r in whole["rows"]} == truth, sorted({r["key"] for r in whole["rows"]} ^ truth)
    print(f"then all {whole['total']} pods, current")


async def forbidden(session):
    # kubectl, as the same user, is refused too: the truth for the words.
    refused = subprocess.run(["kubectl", "--context", CONTEXT, "get", "secrets", "-A"],
                             env=dict(os.environ, KUBECONFIG=KUBECONFIG), capture_output=True, text=True)
    assert refused.returncode != 0 and "forbidden" in refused.stderr.lower(), refused.stderr
    for tool, arguments in [
        ("list", {"kind": "secrets"}),
        ("get", {"kind": "secrets", "namespace": "default", "name": "anything"}),
    ]:
        text = await call(session, tool, arguments, error=True)
        lower = text.lower()
        assert "forbidden" in lower and "secrets" in lower and "viewer" in lower, f"{tool}: {text}"
        # Said once, plainly: not a timeout, and no stack of wrappers.
        assert "did not sync" not in lower and "timed out" not in lower, f"{tool}: {text}"
        print(f"{tool} secrets: {text}")
    # The other tools answer as before, the refused kind listed among the kinds.
    truth = pod_keys()
    pods = await call(session, "list", WHOLE)
    assert {r["key"] for r in pods["rows"]} == truth and pods["current"] is True, pods["total"]
    ns, name = sorted(truth)[0].split("/")
    one = await call(session, "get", {"kind": "pods", "namespace": ns, "name": name})
    assert name in json.dumps(one), one
    await call(session, "describe", {"kind": "pods", "namespace": ns, "name": name})
    kinds = await call(session, "list_kinds", {})
    assert "secrets" in json.dumps(kinds), kinds
    again = await call(session, "list", {"kind": "secrets"}, error=True)
    assert "forbidden" in again.lower(), again
    print("other tools answer")


async def main():
    args = ["mcp", "--kubeconfig", KUBECONFIG, "-A"] + (["--context", CONTEXT] if CONTEXT else [])
    params = StdioServerParameters(
        command=KSCOPE,
        args=args,
        env={"XDG_STATE_HOME": STATE, "KSCOPE_LOG": "kscope=debug", "HOME": STATE},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await {"first_rows": first_rows, "forbidden": forbidden}[MODE](session)


asyncio.run(asyncio.wait_for(main(), 60))
