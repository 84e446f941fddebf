#!/usr/bin/env python3
"""A scheduler extender written with Python's standard library only, as teams write them for
kube-scheduler: pods labelled want=you may only run on the node given on the command line;
the prioritizer prefers nodes whose name sorts last. It speaks the upstream wire format
(Go field names; either "Nodes" or "NodeNames" depending on nodeCacheCapable).

Usage: python_extender.py ALLOWED_NODE   (prints "PORT <n>" once listening on 127.0.0.1)
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ALLOWED = sys.argv[1]
CALLS = {"filter": 0, "prioritize": 0}


def node_names(args):
    if args.get("NodeNames") is not None:
        return list(args["NodeNames"])
    return [n["metadata"]["name"] for n in (args.get("Nodes") or {}).get("items") or []]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, obj):
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        counts = json.dumps(CALLS).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(counts)))
        self.end_headers()
        self.wfile.write(counts)

    def do_POST(self):
        args = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        verb = self.path.rstrip("/").rsplit("/", 1)[-1]
        CALLS[verb] = CALLS.get(verb, 0) + 1
        names = node_names(args)
        labels = (args["Pod"].get("metadata") or {}).get("labels") or {}
        if verb == "filter":
            keep, failed = names, {}
            if labels.get("want") == "you":
                keep = [n for n in names if n == ALLOWED]
                failed = {n: "only %s takes want=you pods" % ALLOWED for n in names if n != ALLOWED}
            result = {"FailedNodes": failed, "Error": ""}
            if args.get("NodeNames") is not None:
                result["NodeNames"] = keep
            else:
                items = [n for n in args["Nodes"]["items"] if n["metadata"]["name"] in keep]
                result["Nodes"] = {"items": items}
            self.reply(result)
        elif verb == "prioritize":
            ranked = sorted(names)
            self.reply([{"Host": n, "Score": min(10, i)} for i, n in enumerate(ranked)])
        else:
            self.send_response(404)
            self.end_headers()


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print("PORT %d" % server.server_address[1], flush=True)
server.serve_forever()
