#!/usr/bin/python3
"""store_equals_api — whether ironbelld's store holds what the API server
emulator holds: for every synced kind, the same objects (namespace, name,
uid), each with the same generation (where the API has one), labels and annotations (the
ironbell.dev/ ones, which the daemon adds, aside); Secrets only those a
Machine names.

    store_equals_api.py EMU_DUMP.json STORE_DIR

EMU_DUMP.json is the emulator's /_emu/dump; STORE_DIR holds one file per
plural (hardware.json, ...) with the admin API's list of that kind. Prints
"equal" and exits 0, or prints each difference and exits 1.
"""
import json
import os
import sys

KINDS = ["hardware", "templates", "workflows", "machines", "jobs", "tasks", "secrets"]


def key(o):
    m = o.get("metadata", {})
    return (m.get("namespace", ""), m.get("name", ""))


def summary(o):
    m = o.get("metadata", {})
    ann = {k: v for k, v in (m.get("annotations") or {}).items()
           if not k.startswith("ironbell.dev/")}
    return {"uid": m.get("uid"), "labels": m.get("labels") or {}, "annotations": ann}


def same(api, store):
    """The generation counts only where the API server keeps one (custom
    resources; a Secret has none, the store gives every object one)."""
    a, s = summary(api), summary(store)
    g = api.get("metadata", {}).get("generation")
    return a == s and (g is None or g == store.get("metadata", {}).get("generation"))


def main():
    dump = json.load(open(sys.argv[1]))["objects"]
    diffs = []
    wanted_secrets = set()
    for mach in dump.get("machines", []):
        ref = mach.get("spec", {}).get("connection", {}).get("authSecretRef") or {}
        if ref.get("name"):
            wanted_secrets.add((ref.get("namespace") or key(mach)[0], ref["name"]))
    for plural in KINDS:
        api = {key(o): o for o in dump.get(plural, [])}
        if plural == "secrets":
            api = {k: o for k, o in api.items() if k in wanted_secrets}
        with open(os.path.join(sys.argv[2], plural + ".json")) as f:
            store = {key(o): o for o in json.load(f).get("items", [])}
        for k in sorted(set(api) | set(store)):
            if k not in store:
                diffs.append("%s %s/%s: in the API, not in the store" % (plural, *k))
            elif k not in api:
                diffs.append("%s %s/%s: in the store, not in the API" % (plural, *k))
            elif not same(api[k], store[k]):
                diffs.append("%s %s/%s: API %s, store %s" % (
                    plural, *k, json.dumps(summary(api[k]), sort_keys=True),
                    json.dumps(summary(store[k]), sort_keys=True)))
    if diffs:
        print("\n".join(diffs))
        return 1
    print("equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
