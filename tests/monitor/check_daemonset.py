#!/usr/bin/env python3
"""Prints facts about docs/deploy/kubernetes/gpunoise-monitor-daemonset.yaml
that the deploy test checks: one "key value" per line, then the monitor's
container args (one per line after "args:") and the ConfigMap's monitor.conf
(after "config:")."""
import sys

import yaml

docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
kinds = {d["kind"]: d for d in docs}
ds = kinds["DaemonSet"]
pod = ds["spec"]["template"]["spec"]
c = pod["containers"][0]
mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
volumes = {v["name"]: v for v in pod.get("volumes", [])}
print("hostPID", pod.get("hostPID", False))
print("privileged", c.get("securityContext", {}).get("privileged", False))
for path in ("/sys/kernel/btf", "/sys/kernel/tracing", "/sys/fs/bpf"):
    vol = volumes.get(mounts.get(path, ""), {})
    print("mount", path, vol.get("hostPath", {}).get("path", "-"))
print("liveness", c.get("livenessProbe", {}).get("httpGet", {}).get("path", "-"))
print("args:")
for a in c.get("args", []):
    print(a)
print("config:")
print(kinds["ConfigMap"]["data"]["monitor.conf"], end="")
