"""A small external agent speaking soclab's JSON-lines protocol (version 1), for the adapter tests.

Usage: python jsonl_agent.py MODE. It investigates a little through the tools, then, by MODE:
report (send a report message), submit (call submit_report), crash, hang, malformed, bad-report,
linger (report, then keep running), child-hang (start a child process, then hang).
Its pid (and its child's) go to the file named by SOCLAB_TEST_PIDFILE, if set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "report"
_next_id = 0


def send(msg: dict) -> None:
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def receive() -> dict:
    line = sys.stdin.readline()
    if not line:
        sys.exit("the harness closed stdin")
    return json.loads(line)


def call(tool: str, **args) -> dict:
    global _next_id
    _next_id += 1
    send({"type": "call", "id": f"c{_next_id}", "tool": tool, "args": args})
    reply = receive()
    assert reply["type"] == "result" and reply["id"] == f"c{_next_id}", reply
    return reply


def write_pids(*pids: int) -> None:
    path = os.environ.get("SOCLAB_TEST_PIDFILE")
    if path:
        with open(path, "w") as f:
            f.write(" ".join(map(str, pids)))


def main() -> None:
    start = receive()
    assert start["type"] == "start" and start["protocol"] == 1, start
    write_pids(os.getpid())
    print(f"agent: started on a {start['trigger']['type']}", file=sys.stderr)
    host = start["trigger"]["pivot"]["host.name"]
    names = [t["name"] for t in start["tools"]]

    if MODE == "crash":
        print(
            "agent: Traceback (most recent call last):\nRuntimeError: model server unreachable",
            file=sys.stderr,
        )
        sys.exit(3)
    if MODE == "malformed":
        print("thinking about it...")
        sys.stdout.flush()
        receive()
        return
    if MODE == "hang":
        time.sleep(3600)
    if MODE == "child-hang":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        write_pids(os.getpid(), child.pid)
        time.sleep(3600)

    indices = call("list_indices", pattern="logs-*")
    assert indices["ok"], indices
    missing = call("get_mappings", index="logs-nope")
    assert not missing["ok"] and missing["error"]["error"]["type"] == "index_not_found_exception", missing
    bogus = call("rm_rf", path="/")
    assert not bogus["ok"] and "unknown tool [rm_rf]" in bogus["error"]["error"]["reason"], bogus
    rows = call(
        "esql_query",
        query=f'FROM logs-endpoint.events.process-default | WHERE host.name == "{host}"'
        " | KEEP @timestamp, process.pid, process.executable",
    )["result"]["values"]
    implant = rows[-1]
    summary = f"{host} ran {implant[2]} (pid {implant[1]}) at {implant[0]}."
    findings = {
        "implicated_hosts": [host],
        "iocs": [implant[2]],
        "evidence": [{"index": "logs-endpoint.events.process-default", "id": "p-1", "why": "implant start"}],
    }

    if MODE == "submit":
        wrong = call("submit_report", markdown=summary, findings="not an object")
        assert not wrong["ok"] and wrong["error"]["error"]["type"] == "illegal_argument_exception", wrong
        done = call("submit_report", markdown=summary, findings=findings)
        assert done["ok"] and done["result"] == {"acknowledged": True}, done
        # The harness closes stdin once the report is in.
        assert sys.stdin.readline() == ""
        return
    if MODE == "bad-report":
        send({"type": "report", "markdown": summary, "findings": "not an object"})
        return
    send(
        {
            "type": "report",
            "markdown": summary,
            "findings": findings,
            "usage": {"input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.0042},
        }
    )
    if MODE == "linger":
        time.sleep(3600)
    assert "submit_report" in names


if __name__ == "__main__":
    main()
