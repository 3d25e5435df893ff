"""kinds.py - what the API-server emulator (apiserver_emu.py) serves: its
resources, the discovery documents kubectl reads, and the
CustomResourceDefinitions of Tinkerbell's six kinds that it holds from the
start. Standard library only."""

VERBS = ["create", "delete", "deletecollection", "get", "list", "patch",
         "update", "watch"]
STATUS_VERBS = ["get", "patch", "update"]
GIT_VERSION = "v1.30.0"   # what /version says (--server-version)


class Kind:
    """One resource: its group, version, plural (the URL's word), kind,
    whether namespaced, short names, categories, whether it has a status
    subresource, and whether the server knows a strategic-merge patch of it
    (built-in kinds do; custom resources answer 415)."""

    def __init__(self, group, version, plural, singular, kind, namespaced,
                 short=(), categories=(), status=False, builtin=False):
        self.group = group
        self.version = version
        self.plural = plural
        self.singular = singular
        self.kind = kind
        self.namespaced = namespaced
        self.short = list(short)
        self.categories = list(categories)
        self.status = status
        self.builtin = builtin

    @property
    def api_version(self):
        return "%s/%s" % (self.group, self.version) if self.group \
            else self.version

    @property
    def group_resource(self):
        """What the real server names in its messages:
        hardware.tinkerbell.org."""
        return "%s.%s" % (self.plural, self.group) if self.group \
            else self.plural

    def resource_entry(self):
        e = {"name": self.plural, "singularName": self.singular,
             "namespaced": self.namespaced, "kind": self.kind,
             "verbs": VERBS}
        if self.short:
            e["shortNames"] = self.short
        if self.categories:
            e["categories"] = self.categories
        return e

    def status_entry(self):
        return {"name": self.plural + "/status", "singularName": "",
                "namespaced": self.namespaced, "kind": self.kind,
                "verbs": STATUS_VERBS}


TINK = "tinkerbell.org"
BMC = "bmc.tinkerbell.org"
CAT = ["tinkerbell"]
KINDS = [
    Kind(TINK, "v1alpha1", "hardware", "hardware", "Hardware", True, ["hw"],
         CAT, status=True),
    Kind(TINK, "v1alpha1", "templates", "template", "Template", True,
         ["tpl"], CAT, status=True),
    Kind(TINK, "v1alpha1", "workflows", "workflow", "Workflow", True, ["wf"],
         CAT, status=True),
    Kind(BMC, "v1alpha1", "machines", "machine", "Machine", True, [], CAT,
         status=True),
    Kind(BMC, "v1alpha1", "jobs", "job", "Job", True, ["j"], CAT,
         status=True),
    Kind(BMC, "v1alpha1", "tasks", "task", "Task", True, ["t"], CAT,
         status=True),
    Kind("", "v1", "secrets", "secret", "Secret", True, builtin=True),
    Kind("", "v1", "namespaces", "namespace", "Namespace", False, ["ns"],
         status=True, builtin=True),
    Kind("coordination.k8s.io", "v1", "leases", "lease", "Lease", True,
         builtin=True),
    Kind("apiextensions.k8s.io", "v1", "customresourcedefinitions",
         "customresourcedefinition", "CustomResourceDefinition", False,
         ["crd", "crds"], status=True, builtin=True),
]


def find(api_version, plural):
    for k in KINDS:
        if k.api_version == api_version and k.plural == plural:
            return k
    return None


def by_plural(plural):
    """The kind of a plural (each plural is served by one group here)."""
    for k in KINDS:
        if k.plural == plural:
            return k
    return None


def group_versions():
    out = []
    for k in KINDS:
        if k.group and k.api_version not in out:
            out.append(k.api_version)
    return out


def version_doc(git_version):
    minor = git_version.lstrip("v").split(".")[1]
    return {"major": "1", "minor": minor, "gitVersion": git_version,
            "gitCommit": "0" * 40, "gitTreeState": "clean",
            "buildDate": "2024-04-17T00:00:00Z", "goVersion": "go1.22.2",
            "compiler": "gc", "platform": "linux/amd64"}


def api_doc(addr):
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                            "serverAddress": addr}]}


def group_doc(group):
    vs = [{"groupVersion": gv, "version": gv.split("/")[1]}
          for gv in group_versions() if gv.split("/")[0] == group]
    if not vs:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group,
            "versions": vs, "preferredVersion": vs[0]}


def groups_doc():
    groups = []
    for gv in group_versions():
        g = gv.split("/")[0]
        if all(x["name"] != g for x in groups):
            d = group_doc(g)
            del d["kind"], d["apiVersion"]
            groups.append(d)
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def resources_doc(api_version):
    res = []
    for k in KINDS:
        if k.api_version == api_version:
            res.append(k.resource_entry())
            if k.status:
                res.append(k.status_entry())
    if not res:
        return None
    return {"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": api_version, "resources": res}


# ---- OpenAPI v3, only what kubectl 1.27+ reads before apply and create ----
#
# kubectl asks whether a kind's PATCH takes the fieldValidation parameter
# (then it leaves validation to the server, which here validates nothing)
# and whether its PATCH takes a strategic-merge body (not said here: a
# custom resource gets a merge patch, a built-in kind the strategic one
# kubectl knows from its own types). Without these documents kubectl
# falls back to OpenAPI v2 (protobuf), which is not served: kubectl older
# than 1.27 needs --validate=false.

def _gv_path(api_version):
    return ("apis/" if "/" in api_version else "api/") + api_version


def openapi_root():
    paths = {}
    for gv in ["v1"] + group_versions():
        paths[_gv_path(gv)] = {"serverRelativeURL": "/openapi/v3/%s?hash=%s"
                               % (_gv_path(gv), GIT_VERSION)}
    return {"paths": paths}


def openapi_gv(path):
    """The OpenAPI v3 document of a group-version ("apis/G/V" or
    "api/v1"), or None."""
    paths = {}
    for k in KINDS:
        if _gv_path(k.api_version) != path:
            continue
        gvk = {"group": k.group, "version": k.version, "kind": k.kind}
        op = {"x-kubernetes-group-version-kind": gvk,
              "parameters": [{"name": "fieldValidation", "in": "query",
                              "schema": {"type": "string"}}],
              "responses": {"200": {"description": "OK"}}}
        base = "/" + path + ("/namespaces/{namespace}" if k.namespaced
                             else "") + "/" + k.plural + "/{name}"
        paths[base] = {"get": op, "put": op, "patch": op}
        if k.status:
            paths[base + "/status"] = {"get": op, "put": op, "patch": op}
    if not paths:
        return None
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes",
                                         "version": GIT_VERSION},
            "paths": paths, "components": {"schemas": {}}}


# ---- the CRDs of Tinkerbell's kinds (what its Helm chart installs) ----

def _obj(props=None, preserve=False):
    s = {"type": "object"}
    if props:
        s["properties"] = props
    if preserve:
        s["x-kubernetes-preserve-unknown-fields"] = True
    return s


_STR = {"type": "string"}
_CONDS = {"type": "array", "items": _obj({
    "type": _STR, "status": _STR, "reason": _STR, "message": _STR,
    "time": {"type": "string", "format": "date-time"}})}

# Workflow status, monorepo (tinkerbell/tinkerbell): PENDING... states,
# currentState with IDs, templateRendering.
WORKFLOW_STATUS_MONOREPO = _obj({
    "agentID": _STR,
    "state": {"type": "string", "description": "PREPARING, PENDING, RUNNING, "
              "POST, SUCCESS, FAILED or TIMEOUT"},
    "currentState": _obj({"agentID": _STR, "taskID": _STR, "actionID": _STR,
                          "state": _STR, "actionName": _STR,
                          "taskName": _STR}),
    "tasks": {"type": "array", "items": _obj({
        "id": _STR, "name": _STR, "agentID": _STR,
        "actions": {"type": "array", "items": _obj({
            "id": _STR, "name": _STR, "image": _STR, "state": _STR,
            "executionStart": _STR, "executionStop": _STR,
            "executionDuration": _STR, "message": _STR}, True)}}, True)},
    "bootOptions": _obj(preserve=True),
    "templateRendering": {"type": "string", "enum": ["successful", "failed"]},
    "globalTimeout": {"type": "integer"},
    "globalExecutionStop": {"type": "string", "format": "date-time"},
    "conditions": _CONDS,
})

# Workflow status, standalone tink <= v0.12: STATE_* states,
# currentAction, templateRending (sic), tasks[].worker,
# actions[].status/startedAt/seconds.
WORKFLOW_STATUS_LEGACY = _obj({
    "state": {"type": "string", "description": "STATE_PENDING, "
              "STATE_RUNNING, STATE_FAILED, STATE_TIMEOUT or STATE_SUCCESS"},
    "currentAction": _STR,
    "templateRending": _STR,
    "globalTimeout": {"type": "integer"},
    "tasks": {"type": "array", "items": _obj({
        "name": _STR, "worker": _STR,
        "actions": {"type": "array", "items": _obj({
            "name": _STR, "image": _STR, "status": _STR,
            "startedAt": {"type": "string", "format": "date-time"},
            "seconds": {"type": "integer"}, "message": _STR}, True)}}, True)},
    "bootOptions": _obj(preserve=True),
    "conditions": _CONDS,
})


def crd(kind, workflow_schema):
    """The CustomResourceDefinition of a Tinkerbell kind (schema: spec kept
    as given; the Workflow's status per --workflow-crd)."""
    if kind.kind == "Workflow":
        status = WORKFLOW_STATUS_MONOREPO if workflow_schema == "monorepo" \
            else WORKFLOW_STATUS_LEGACY
    else:
        status = _obj(preserve=True)
    schema = _obj({"apiVersion": _STR, "kind": _STR,
                   "metadata": {"type": "object"},
                   "spec": _obj(preserve=True), "status": status})
    names = {"plural": kind.plural, "singular": kind.singular,
             "kind": kind.kind, "listKind": kind.kind + "List",
             "categories": kind.categories}
    if kind.short:
        names["shortNames"] = kind.short
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": kind.group_resource},
        "spec": {"group": kind.group, "names": names, "scope": "Namespaced",
                 "versions": [{"name": kind.version, "served": True,
                               "storage": True,
                               "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": schema}}]},
        "status": {"acceptedNames": names, "storedVersions": [kind.version],
                   "conditions": [{"type": "Established", "status": "True",
                                   "reason": "InitialNamesAccepted",
                                   "message": "the initial names have been "
                                   "accepted"}]},
    }


def seed_crds(workflow_schema):
    return [crd(k, workflow_schema) for k in KINDS
            if k.group in (TINK, BMC)]
