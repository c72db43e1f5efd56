#!/usr/bin/env bash
# Checks the project's Perfetto schema subset against upstream Perfetto's
# schema: every message, field and enum value the subset declares must exist
# upstream under the same name with the same number, type and label, so the
# trace processor reads what gpunoise writes (a wrong number is dropped
# silently). A developer's check, not a test: CI has no copy of upstream.
# docs/perfetto-schema.md says when to run it.
#
#   tools/check_proto_subset.sh [--perfetto DIR_OR_GIT_DIR] [TRACE...]
#
# Upstream is read from a Perfetto checkout or bare git directory (default:
# the mirror at /work/.mirror/google+perfetto/repo, or $PERFETTO_REPO);
# nothing of it is written inside this repository. Each TRACE given is also
# decoded with `protoc --decode` against both schemas: since the subset uses
# upstream's names, the two texts must be identical; a field the subset does
# not declare shows as a bare number on the subset's side and fails.
set -euo pipefail

repo_root=$(cd "$(dirname "$0")/.." && pwd)
subset_rel=export/perfetto/protos/perfetto_trace_subset.proto
perfetto=${PERFETTO_REPO:-/work/.mirror/google+perfetto/repo}
traces=()
while (($#)); do
  case $1 in
    --perfetto) perfetto=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) traces+=("$1"); shift ;;
  esac
done

for tool in protoc python3 git; do
  command -v "$tool" >/dev/null || { echo "check_proto_subset: $tool not found" >&2; exit 2; }
done
descriptor_proto=""
for inc in /usr/include /usr/local/include; do
  [[ -f $inc/google/protobuf/descriptor.proto ]] && descriptor_proto=$inc
done
[[ -n $descriptor_proto ]] || { echo "check_proto_subset: google/protobuf/descriptor.proto not found (libprotobuf-dev)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

upstream_rel=protos/perfetto/trace/perfetto_trace.proto
if [[ -f $perfetto/$upstream_rel ]]; then
  cp "$perfetto/$upstream_rel" "$tmp/upstream.proto"
  upstream_rev=$(git -C "$perfetto" rev-parse HEAD 2>/dev/null || echo "work tree")
elif git -C "$perfetto" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  git -C "$perfetto" show "HEAD:$upstream_rel" >"$tmp/upstream.proto"
  upstream_rev=$(git -C "$perfetto" rev-parse HEAD)
else
  echo "check_proto_subset: no Perfetto checkout at $perfetto (give --perfetto DIR)" >&2
  exit 2
fi
echo "upstream: $perfetto @ $upstream_rev ($upstream_rel)"

protoc --descriptor_set_out="$tmp/subset.desc" -I"$repo_root/userspace" "$repo_root/userspace/$subset_rel"
protoc --descriptor_set_out="$tmp/upstream.desc" -I"$tmp" "$tmp/upstream.proto"
for side in subset upstream; do
  protoc --decode=google.protobuf.FileDescriptorSet -I"$descriptor_proto" google/protobuf/descriptor.proto \
    <"$tmp/$side.desc" >"$tmp/$side.txt"
done

python3 - "$tmp/subset.txt" "$tmp/upstream.txt" <<'EOF'
import re, sys

def parse(path):
    """protoc's text format of a FileDescriptorSet, as nested dicts of lists."""
    root = {}
    stack = [root]
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        if line.endswith("{"):
            child = {}
            stack[-1].setdefault(line[:-1].strip(), []).append(child)
            stack.append(child)
        elif line == "}":
            stack.pop()
        else:
            key, value = line.split(":", 1)
            stack[-1].setdefault(key.strip(), []).append(value.strip().strip('"'))
    return root["file"][0]

def one(d, key, default=""):
    return d.get(key, [default])[0]

def index(file):
    messages, enums = {}, {}
    package = one(file, "package")
    def walk_enum(e, prefix):
        enums[prefix + one(e, "name")] = {one(v, "name"): one(v, "number") for v in e.get("value", [])}
    def walk(m, prefix):
        name = prefix + one(m, "name")
        messages[name] = {one(f, "name"): f for f in m.get("field", [])}
        for n in m.get("nested_type", []):
            walk(n, name + ".")
        for e in m.get("enum_type", []):
            walk_enum(e, name + ".")
    for m in file.get("message_type", []):
        walk(m, "")
    for e in file.get("enum_type", []):
        walk_enum(e, "")
    return package, messages, enums

sub_pkg, sub_msgs, sub_enums = index(parse(sys.argv[1]))
up_pkg, up_msgs, up_enums = index(parse(sys.argv[2]))

def local(type_name, package):
    prefix = "." + package + "."
    return type_name[len(prefix):] if type_name.startswith(prefix) else type_name

errors, fields, values = [], 0, 0
for msg, sub_fields in sorted(sub_msgs.items()):
    up_fields = up_msgs.get(msg)
    if up_fields is None:
        errors.append(f"message {msg}: not upstream")
        continue
    for name, f in sorted(sub_fields.items()):
        fields += 1
        u = up_fields.get(name)
        where = f"{msg}.{name}"
        if u is None:
            errors.append(f"{where}: no such field upstream")
            continue
        for key in ("number", "type", "label"):
            if one(f, key) != one(u, key):
                errors.append(f"{where}: {key} {one(f, key)} here, {one(u, key)} upstream")
        if one(f, "type_name") and local(one(f, "type_name"), sub_pkg) != local(one(u, "type_name"), up_pkg):
            errors.append(f"{where}: type {local(one(f, 'type_name'), sub_pkg)} here, "
                          f"{local(one(u, 'type_name'), up_pkg)} upstream")
        # Packed encoding changes the bytes of repeated scalars.
        packed = lambda d: any(one(o, "packed", "false") == "true" for o in d.get("options", []))
        if packed(f) != packed(u):
            errors.append(f"{where}: packed {packed(f)} here, {packed(u)} upstream")
        in_oneof = lambda d: bool(one(d, "oneof_index"))
        if in_oneof(f) != in_oneof(u):
            errors.append(f"{where}: in a oneof {in_oneof(f)} here, {in_oneof(u)} upstream")
for enum, sub_values in sorted(sub_enums.items()):
    up_values = up_enums.get(enum)
    if up_values is None:
        errors.append(f"enum {enum}: not upstream")
        continue
    for name, number in sorted(sub_values.items()):
        values += 1
        if up_values.get(name) != number:
            errors.append(f"{enum}.{name} = {number} here, {up_values.get(name, 'absent')} upstream")

print(f"checked {len(sub_msgs)} messages, {fields} fields (number, type, label, message/enum type, packed, oneof), "
      f"{len(sub_enums)} enums, {values} enum values")
for e in errors:
    print("MISMATCH " + e)
sys.exit(1 if errors else 0)
EOF
echo "schema: subset matches upstream"

status=0
for trace in "${traces[@]}"; do
  protoc --decode=gpunoise.perfetto.Trace -I"$repo_root/userspace" "$repo_root/userspace/$subset_rel" \
    <"$trace" >"$tmp/subset.decoded"
  protoc --decode=perfetto.protos.Trace -I"$tmp" "$tmp/upstream.proto" <"$trace" >"$tmp/upstream.decoded"
  if cmp -s "$tmp/subset.decoded" "$tmp/upstream.decoded"; then
    echo "trace $trace: decodes identically with both schemas ($(wc -l <"$tmp/subset.decoded") lines)"
  else
    echo "trace $trace: decodes differently (subset < > upstream):"
    diff "$tmp/subset.decoded" "$tmp/upstream.decoded" | head -20
    status=1
  fi
done
exit $status
