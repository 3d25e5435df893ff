#!/usr/bin/python3
"""kube_client_check.py - the API-server emulator (apiserver_emu.py) seen by
the official Python client (python3-kubernetes): lists in pages, a watch
with bookmarks from a list's resourceVersion, and 410 after the history is
compacted. Prints one line per finding for test_kube_emu.sh to check:

  pages N items M        a list of M objects in N pages of --limit
  watch TYPE... NAME     the events seen for the object made while watching
  bookmark RV            a BOOKMARK was seen
  continue-410           a continue token from before a compaction: 410
  watch-410 HOW          a watch from before a compaction: 410 (HOW:
                         exception or event)

Usage: kube_client_check.py KUBECONFIG CONTROL_URL CA_FILE"""

import json
import ssl
import sys
import threading
import urllib.request

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

G, V, P, NS = "tinkerbell.org", "v1alpha1", "hardware", "default"
LABEL = "client-check=yes"


def control(url, ca, name):
    ctx = ssl.create_default_context(cafile=ca)
    req = urllib.request.Request(url + "/_emu/" + name, data=b"{}",
                                 headers={"Content-Type":
                                          "application/json"})
    with urllib.request.urlopen(req, timeout=10, context=ctx) as r:
        return json.load(r)


def hardware(name):
    return {"apiVersion": G + "/" + V, "kind": "Hardware",
            "metadata": {"name": name, "labels": {"client-check": "yes"}},
            "spec": {"interfaces": [{"dhcp": {"mac": "02:00:00:00:01:%02x" %
                                              (len(name) % 256)}}]}}


def pages(api, limit):
    n, names, cont, first = 0, [], None, None
    rv = None
    for _ in range(100):
        kw = {"limit": limit, "label_selector": LABEL}
        if cont:
            kw["_continue"] = cont
        r = api.list_namespaced_custom_object(G, V, NS, P, **kw)
        n += 1
        names += [o["metadata"]["name"] for o in r["items"]]
        rv = rv or r["metadata"]["resourceVersion"]
        cont = r["metadata"].get("continue")
        first = first or cont
        if not cont:
            break
    return n, names, rv, first


def watch_changes(api, rv):
    """Watches from rv while another thread creates, changes and deletes
    one Hardware; returns the types seen for it and the bookmarks."""
    seen, marks = [], []

    def writer():
        api.create_namespaced_custom_object(G, V, NS, P, hardware("py-w"))
        api.patch_namespaced_custom_object(G, V, NS, P, "py-w",
                                           {"spec": {"tinkVersion": 2}})
        api.delete_namespaced_custom_object(G, V, NS, P, "py-w")

    w = watch.Watch()
    t = None
    for ev in w.stream(api.list_namespaced_custom_object, G, V, NS, P,
                       resource_version=rv, allow_watch_bookmarks=True,
                       timeout_seconds=30, label_selector=LABEL):
        if ev["type"] == "BOOKMARK":
            marks.append(ev["raw_object"]["metadata"]["resourceVersion"])
        elif ev["raw_object"]["metadata"]["name"] == "py-w":
            seen.append(ev["type"])
        if "DELETED" in seen:
            w.stop()
        if t is None and marks:
            # The first bookmark says the watch is open; then the writes.
            t = threading.Thread(target=writer, daemon=True)
            t.start()
    return seen, marks


def main(argv):
    kubeconfig, ctl, ca = argv[1:4]
    config.load_kube_config(config_file=kubeconfig)
    api = client.CustomObjectsApi()
    for i in range(5):
        api.create_namespaced_custom_object(G, V, NS, P,
                                            hardware("py-%d" % i))
    n, names, rv, first = pages(api, 2)
    print("pages %d items %d" % (n, len(names)))
    print("names %s" % ",".join(names))
    sys.stdout.flush()

    seen, marks = watch_changes(api, rv)
    print("watch %s py-w" % " ".join(seen))
    for m in marks[:1]:
        print("bookmark %s" % m)
    sys.stdout.flush()

    # After a compaction, the first page's token and the list's rv are
    # too old.
    control(ctl, ca, "compact")
    try:
        api.list_namespaced_custom_object(G, V, NS, P, limit=2,
                                          _continue=first)
        print("continue-ok")
    except ApiException as e:
        print("continue-%d" % e.status)
    how = "none"
    try:
        w = watch.Watch()
        for ev in w.stream(api.list_namespaced_custom_object, G, V, NS, P,
                           resource_version=rv, timeout_seconds=10):
            if ev["type"] == "ERROR":
                how = "event %s" % ev["raw_object"].get("code")
                w.stop()
            else:
                how = "got " + ev["type"]
                w.stop()
    except ApiException as e:
        how = "exception %d" % e.status
    print("watch-410 %s" % how)
    for i in range(5):
        api.delete_namespaced_custom_object(G, V, NS, P, "py-%d" % i)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
