#!/usr/bin/python3
"""Offline checks of deploy/k8s for tests/containers/k8s.sh.

  k8s_check.py discovery DIR
      writes a kubectl discovery cache for the API groups the manifests use,
      as a Kubernetes API server serves them (v1, apps/v1), so that
      `kubectl create --dry-run=client` maps objects without a cluster
  k8s_check.py manifests RENDERED_YAML CONFIG_DIR
      every object against the Kubernetes API schema (python3-kubernetes'
      models: unknown fields and missing required fields are errors), then
      what the daemons need of them (below)
  k8s_check.py secrets SECRETS_YAML PKI_DIR NAME...
      Secret fedmf-certs-NAME holds PKI_DIR/NAME/{ca.crt,NAME.crt,NAME.key}
  k8s_check.py probes RENDERED_YAML
      one line per probe: WORKLOAD TAB CONTAINER TAB KIND TAB COMMAND (shell
      words), KIND liveness|readiness|startup, or "none" for a container
      without probes

What the daemons need (`manifests`), each an error naming the object:
  - each daemon's ConfigMap holds the settings of its deploy/config file
    (compose and Kubernetes run one configuration);
  - a daemon's --config is a key of a ConfigMap mounted where it points;
  - each daemon mounts exactly one Secret, fedmf-certs-NAME, at its cert_dir,
    NAME being its certificate name;
  - every daemon with a gRPC port has readiness and liveness probes running
    `fedmf health 127.0.0.1:PORT --cert-dir CERTS --name NAME --peer-name
    NAME` on the port it listens on;
  - its state (the server's database, a party's state_dir, a device host's
    ledger) is on a volumeClaimTemplate of a one-replica StatefulSet;
  - Prometheus scrape annotations exactly on the daemons with metrics_listen,
    naming its port and /metrics;
  - every Service selects exactly one workload, on ports its daemon listens on.
"""
import base64
import json
import os
import shlex
import sys

import kubernetes.client
import yaml

MODELS = {  # kind -> (apiVersion, model)
    "ConfigMap": ("v1", "V1ConfigMap"),
    "Secret": ("v1", "V1Secret"),
    "Service": ("v1", "V1Service"),
    "PersistentVolumeClaim": ("v1", "V1PersistentVolumeClaim"),
    "Pod": ("v1", "V1Pod"),
    "Deployment": ("apps/v1", "V1Deployment"),
    "StatefulSet": ("apps/v1", "V1StatefulSet"),
}
SCALARS = {"str": str, "int": int, "bool": bool, "float": (int, float)}


class Fail(Exception):
    pass


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def name_of(doc):
    return "%s/%s" % (doc["kind"], doc["metadata"]["name"])


# ---------------------------------------------------------------- discovery
def discovery(root):
    groups = {"v1": {"configmaps": "ConfigMap", "secrets": "Secret", "services": "Service",
                     "persistentvolumeclaims": "PersistentVolumeClaim", "pods": "Pod",
                     "namespaces": "Namespace"},
              "apps/v1": {"deployments": "Deployment", "statefulsets": "StatefulSet",
                          "daemonsets": "DaemonSet", "replicasets": "ReplicaSet"}}
    group_list = {"kind": "APIGroupList", "apiVersion": "v1", "groups": []}
    for gv, resources in groups.items():
        group = gv.split("/")[0] if "/" in gv else ""
        version = {"groupVersion": gv, "version": gv.split("/")[-1]}
        group_list["groups"].append({"name": group, "versions": [version], "preferredVersion": version})
        listing = {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": [
            {"name": r, "singularName": "", "namespaced": kind != "Namespace", "kind": kind,
             "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]}
            for r, kind in resources.items()]}
        os.makedirs(os.path.join(root, gv), exist_ok=True)
        with open(os.path.join(root, gv, "serverresources.json"), "w") as f:
            json.dump(listing, f)
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "servergroups.json"), "w") as f:
        json.dump(group_list, f)


# ---------------------------------------------------------------- schema
def check_value(value, typ, path):
    """Every key a field of its model, every value of its field's type."""
    if typ == "object":  # IntOrString, quantities, raw extensions
        return
    if typ in SCALARS:
        ok = isinstance(value, SCALARS[typ]) and not (typ != "bool" and isinstance(value, bool))
        if not ok:
            raise Fail("%s: %r is not a %s" % (path, value, typ))
        return
    if typ.startswith("list["):
        if not isinstance(value, list):
            raise Fail("%s: not a list" % path)
        for i, v in enumerate(value):
            check_value(v, typ[5:-1], "%s[%d]" % (path, i))
        return
    if typ.startswith("dict("):
        if not isinstance(value, dict):
            raise Fail("%s: not a map" % path)
        inner = typ[5:-1].split(", ", 1)[1]
        for k, v in value.items():
            check_value(v, inner, "%s.%s" % (path, k))
        return
    model = getattr(kubernetes.client, typ)
    if not isinstance(value, dict):
        raise Fail("%s: not an object (%s)" % (path, typ))
    fields = {json_key: attr for attr, json_key in model.attribute_map.items()}
    for key, v in value.items():
        if key not in fields:
            raise Fail("%s.%s: no such field in %s (fields: %s)" %
                       (path, key, typ, ", ".join(sorted(fields))))
        check_value(v, model.openapi_types[fields[key]], "%s.%s" % (path, key))


def check_schema(doc):
    kind = doc.get("kind")
    if kind not in MODELS:
        raise Fail("%s: kind %s is not one this deployment uses" % (doc.get("metadata"), kind))
    api_version, model = MODELS[kind]
    if doc.get("apiVersion") != api_version:
        raise Fail("%s: apiVersion %s, not %s" % (name_of(doc), doc.get("apiVersion"), api_version))
    check_value(doc, model, name_of(doc))
    # Required fields: the client's models refuse a missing one when built.
    try:
        kubernetes.client.ApiClient()._ApiClient__deserialize(doc, model)
    except ValueError as e:
        raise Fail("%s: %s" % (name_of(doc), e))


# ---------------------------------------------------------------- the daemons' needs
def template(doc):
    return doc if doc["kind"] == "Pod" else doc["spec"]["template"]


def flag(command, name):
    return command[command.index(name) + 1] if name in command else None


def port_of(address):
    return int(str(address).rsplit(":", 1)[1])


def daemon_view(w, configmaps, configs_dir):
    """(container, config or None, identity, gRPC port, cert dir, state path, mounts)."""
    spec = template(w)["spec"]
    (c,) = spec["containers"]
    cmd = c["command"]
    mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts") or []}
    volumes = {v["name"]: v for v in spec.get("volumes") or []}
    config = None
    if "--config" in cmd:
        path = flag(cmd, "--config")
        directory, key = path.rsplit("/", 1)
        vol = volumes.get(mounts.get(directory))
        if not vol or "configMap" not in vol:
            raise Fail("%s: --config %s is not in a mounted ConfigMap" % (name_of(w), path))
        cm = configmaps[vol["configMap"]["name"]]
        if key not in cm["data"]:
            raise Fail("%s: ConfigMap %s has no key %s" % (name_of(w), cm["metadata"]["name"], key))
        config = yaml.safe_load(cm["data"][key])
        daemon = cmd[0]
        source = os.path.join(configs_dir, "server.yaml" if daemon == "fedmf-server"
                              else config.get("name", "?") + ".yaml")
        with open(source) as f:
            if yaml.safe_load(f) != config:
                raise Fail("%s: ConfigMap %s key %s differs from %s" %
                           (name_of(w), cm["metadata"]["name"], key, source))
    if cmd[0] == "fedmf-server":
        ident, port, cert_dir = config["tls"]["name"], port_of(config["listen"]), config["tls"]["cert_dir"]
        state = config["database"]
    elif cmd[0] == "fedmf-party":
        ident, port, cert_dir = config["name"], port_of(config["admin_listen"]), config["tls"]["cert_dir"]
        state = config["state_dir"]
    elif cmd[0] == "fedmf-aggregator":
        ident, port, cert_dir, state = flag(cmd, "--name"), port_of(flag(cmd, "--listen")), flag(cmd, "--cert-dir"), None
    elif cmd[0] == "fedmf-device":
        ident, port, cert_dir, state = flag(cmd, "--name"), None, flag(cmd, "--cert-dir"), flag(cmd, "--ledger")
    else:  # the operator's CLI: only its certificate
        ident, port, cert_dir, state = "operator", None, "/certs", None
    # Its certificate: one Secret, fedmf-certs-IDENT, at cert_dir.
    secrets = [(m, volumes[n]["secret"]["secretName"]) for m, n in mounts.items()
               if "secret" in volumes.get(n, {})]
    if secrets != [(cert_dir, "fedmf-certs-" + ident)]:
        raise Fail("%s: mounts Secrets %s; wants exactly fedmf-certs-%s at %s" %
                   (name_of(w), secrets, ident, cert_dir))
    return c, config, ident, port, cert_dir, state, mounts


def check_manifests(path, configs_dir):
    docs = load(path)
    for d in docs:
        check_schema(d)
    configmaps = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ConfigMap"}
    workloads = [d for d in docs if d["kind"] in ("Deployment", "StatefulSet", "Pod")]
    listening = {}
    for w in workloads:
        c, config, ident, port, cert_dir, state, mounts = daemon_view(w, configmaps, configs_dir)
        health = ["fedmf", "health", "127.0.0.1:%s" % port, "--cert-dir", cert_dir,
                  "--name", ident, "--peer-name", ident, "--timeout"]
        for kind in ("readinessProbe", "livenessProbe", "startupProbe"):
            probe = c.get(kind)
            if probe is None:
                if port and kind != "startupProbe":
                    raise Fail("%s: serves gRPC health on %d but has no %s" % (name_of(w), port, kind))
                continue
            if not port:
                raise Fail("%s: a %s, but it serves no port" % (name_of(w), kind))
            cmd = probe["exec"]["command"]
            if cmd[:len(health)] != health or probe.get("timeoutSeconds", 1) <= int(cmd[len(health)]):
                raise Fail("%s: %s %s; wants %s SECONDS with timeoutSeconds above SECONDS" %
                           (name_of(w), kind, cmd, health))
        if state:
            claims = {t["metadata"]["name"] for t in w["spec"].get("volumeClaimTemplates") or []}
            under = [m for m, n in mounts.items() if n in claims and (state + "/").startswith(m + "/")]
            if w["kind"] != "StatefulSet" or w["spec"].get("replicas", 1) != 1 or not under:
                raise Fail("%s: its state %s is not on a claim of a one-replica StatefulSet" %
                           (name_of(w), state))
        annotations = template(w)["metadata"].get("annotations") or {}
        metrics = config.get("metrics_listen") if config else None
        want = ({"prometheus.io/scrape": "true", "prometheus.io/port": str(port_of(metrics)),
                 "prometheus.io/path": "/metrics"} if metrics else {})
        got = {k: v for k, v in annotations.items() if k.startswith("prometheus.io/")}
        if got != want:
            raise Fail("%s: scrape annotations %s, wants %s" % (name_of(w), got, want))
        ports = {port} | ({port_of(metrics)} if metrics else set())
        listening[w["metadata"]["name"]] = (template(w)["metadata"]["labels"], ports - {None})
    for svc in (d for d in docs if d["kind"] == "Service"):
        sel = svc["spec"]["selector"]
        chosen = [n for n, (labels, _) in listening.items() if sel.items() <= labels.items()]
        if len(chosen) != 1:
            raise Fail("%s selects %s; wants exactly one workload" % (name_of(svc), chosen))
        for p in svc["spec"]["ports"]:
            if p.get("targetPort", p["port"]) not in listening[chosen[0]][1]:
                raise Fail("%s: port %s is not one %s listens on (%s)" %
                           (name_of(svc), p, chosen[0], sorted(listening[chosen[0]][1])))
    print("deploy/k8s: %d objects match the Kubernetes API schema (python3-kubernetes %s) and the "
          "daemons' configs, certificates, probes, state and ports" %
          (len(docs), kubernetes.__version__))


def check_secrets(path, pki, names):
    secrets = {d["metadata"]["name"]: d for d in load(path)}
    for d in secrets.values():
        check_schema(d)
    if sorted(secrets) != sorted("fedmf-certs-" + n for n in names):
        raise Fail("Secrets %s, wants fedmf-certs-{%s}" % (sorted(secrets), ",".join(names)))
    for n in names:
        data = secrets["fedmf-certs-" + n]["data"]
        files = {"ca.crt": "ca.crt", n + ".crt": n + ".crt", n + ".key": n + ".key"}
        if sorted(data) != sorted(files):
            raise Fail("fedmf-certs-%s has keys %s" % (n, sorted(data)))
        for key, f in files.items():
            with open(os.path.join(pki, n, f), "rb") as fh:
                if base64.b64decode(data[key]) != fh.read():
                    raise Fail("fedmf-certs-%s: %s is not %s/%s/%s" % (n, key, pki, n, f))


def probes(path):
    for w in load(path):
        if w["kind"] not in ("Deployment", "StatefulSet", "Pod"):
            continue
        for c in template(w)["spec"]["containers"]:
            found = False
            for kind in ("liveness", "readiness", "startup"):
                probe = c.get(kind + "Probe")
                if probe:
                    found = True
                    print("\t".join([w["metadata"]["name"], c["name"], kind,
                                     shlex.join(probe["exec"]["command"])]))
            if not found:
                print("\t".join([w["metadata"]["name"], c["name"], "none", ""]))


def main():
    args = sys.argv[1:]
    try:
        if args[:1] == ["discovery"] and len(args) == 2:
            discovery(args[1])
        elif args[:1] == ["manifests"] and len(args) == 3:
            check_manifests(args[1], args[2])
        elif args[:1] == ["secrets"] and len(args) >= 4:
            check_secrets(args[1], args[2], args[3:])
        elif args[:1] == ["probes"] and len(args) == 2:
            probes(args[1])
        else:
            sys.exit(__doc__)
    except Fail as e:
        sys.exit("k8s_check: %s" % e)


if __name__ == "__main__":
    main()
