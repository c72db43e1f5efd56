#!/usr/bin/env python3
"""Prints facts about docs/deploy/kubernetes/gpunoise-monitor-daemonset.yaml
that the deploy test checks: one "key value" per line, then the monitor's
container args (one per line after "args:"), the web config Secret's web.yml
(after "web:") and the ConfigMap's monitor.conf (after "config:")."""
import sys

import yaml

docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
kinds = {d["kind"]: d for d in docs}
ds = kinds["DaemonSet"]
pod = ds["spec"]["template"]["spec"]
c = pod["containers"][0]
sc = c.get("securityContext", {})
mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
volumes = {v["name"]: v for v in pod.get("volumes", [])}
print("hostPID", pod.get("hostPID", False))
print("automountServiceAccountToken", pod.get("automountServiceAccountToken", True))
print("privileged", sc.get("privileged", False))
print("allowPrivilegeEscalation", sc.get("allowPrivilegeEscalation", True))
print("readOnlyRootFilesystem", sc.get("readOnlyRootFilesystem", False))
print("seccomp", sc.get("seccompProfile", {}).get("type", "-"))
print("caps.drop", ",".join(sc.get("capabilities", {}).get("drop", [])))
print("caps.add", ",".join(sorted(sc.get("capabilities", {}).get("add", []))))
print("memory.limit", c.get("resources", {}).get("limits", {}).get("memory", "-"))
for path in ("/sys/kernel/btf", "/sys/kernel/tracing", "/sys/fs/bpf"):
    vol = volumes.get(mounts.get(path, ""), {})
    print("mount", path, vol.get("hostPath", {}).get("path", "-"))
for probe in ("livenessProbe", "readinessProbe"):
    get = c.get(probe, {}).get("httpGet", {})
    print(probe, get.get("scheme", "HTTP"), get.get("path", "-"))
print("args:")
for a in c.get("args", []):
    print(a)
print("web:")
print(kinds["Secret"]["stringData"]["web.yml"], end="")
print("config:")
print(kinds["ConfigMap"]["data"]["monitor.conf"], end="")
