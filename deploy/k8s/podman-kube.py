#!/usr/bin/env python3
"""Runs Kubernetes manifests under `podman kube play` 4.3, on one host.

Debian 12's podman (4.3) plays Pods, Deployments, PersistentVolumeClaims and
ConfigMaps. deploy/k8s/base also has StatefulSets, Services and Secrets, so
`render` rewrites the manifests, mechanically and nothing else:

  StatefulSet  -> a Deployment with the same pod template (replicas must be 1),
                  and for each volumeClaimTemplate T a PersistentVolumeClaim
                  named T-STATEFULSET-0 (the name Kubernetes gives it), mounted
                  where T was.
  Service      -> no object: podman has no Services. The one workload the
                  Service selects gets the Service's name as its hostname, and
                  `play` gives its pod that name as a DNS alias on the run's
                  network (what the Service's name is in a namespace). Ports
                  are not remapped: targetPort must equal port.
  Secret       -> a ConfigMap of the decoded data, and secret volumes become
                  configMap volumes: podman 4.3 writes a Secret's `data` into
                  its volume still base64-encoded and drops `stringData`.
  ports        -> dropped from containers: podman 4.3 publishes every
                  containerPort on the host (in Kubernetes it is a
                  declaration); pods on the run's network reach each other's
                  ports without it.
  --prefix P   -> every object's name (and every reference to one) gets "P-",
                  as a namespace keeps two runs apart; hostnames and aliases
                  (the Services' names) stay as they are, since each run has
                  its own network.

Pods, Deployments, ConfigMaps and PersistentVolumeClaims pass through
otherwise unchanged; any other kind is an error (nothing is dropped
silently), and so is a construct the rewrite does not carry (env from a
Secret or ConfigMap, a hostPort, a Service selecting no workload or two).

  deploy/k8s/podman-kube.py render [--prefix P] FILE...    the rewritten YAML
  deploy/k8s/podman-kube.py play --network NET [--prefix P] [--only NAME] FILE...
      render, then: the claims' volumes first (a claim whose volume exists is
      kept), then one `podman kube play --network NET[:alias=SERVICE]` per
      workload (or only the workloads named) with the ConfigMaps it mounts
  deploy/k8s/podman-kube.py down --prefix P
      removes the pods and volumes named P-* (the network is the caller's)

e.g. kubectl kustomize deploy/k8s/base > fedmf.yaml
     deploy/k8s/cert-secrets.sh NAME=DIR ... > secrets.yaml
     podman network create demo
     deploy/k8s/podman-kube.py play --network demo --prefix demo fedmf.yaml secrets.yaml

tests/containers/k8s.sh runs the federation this way.
"""

import argparse
import base64
import copy
import subprocess
import sys
import tempfile

import yaml

PASS_THROUGH = {"Pod", "Deployment", "ConfigMap", "PersistentVolumeClaim"}


class Error(Exception):
    pass


def where(doc):
    meta = doc.get("metadata") or {}
    return "%s '%s'" % (doc.get("kind"), meta.get("name"))


def pod_template(doc):
    """The pod spec's owner: the Pod itself or the workload's template."""
    if doc["kind"] == "Pod":
        return doc
    return doc["spec"]["template"]


def check_containers(doc):
    """Drops containerPorts; refuses what this rewrite does not carry."""
    spec = pod_template(doc).get("spec") or {}
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if any("hostPort" in port for port in c.get("ports") or []):
            raise Error("%s: container '%s' has a hostPort, which this rewrite does not carry" %
                        (where(doc), c.get("name")))
        c.pop("ports", None)
        if c.get("envFrom"):
            raise Error("%s: container '%s' has envFrom, which this rewrite does not carry" %
                        (where(doc), c.get("name")))
        for env in c.get("env") or []:
            if "valueFrom" in env:
                raise Error("%s: env '%s' has valueFrom, which this rewrite does not carry" %
                            (where(doc), env.get("name")))


def statefulset_to_deployment(sts):
    spec = sts["spec"]
    if spec.get("replicas", 1) != 1:
        raise Error("%s: replicas %s; only 1 is carried (a Deployment under podman runs one pod)" %
                    (where(sts), spec.get("replicas")))
    name = sts["metadata"]["name"]
    template = copy.deepcopy(spec["template"])
    volumes = template["spec"].setdefault("volumes", [])
    claims = []
    for claim in spec.get("volumeClaimTemplates") or []:
        tname = claim["metadata"]["name"]
        if any(v.get("name") == tname for v in volumes):
            raise Error("%s: volume '%s' is both a pod volume and a volumeClaimTemplate" %
                        (where(sts), tname))
        pvc_name = "%s-%s-0" % (tname, name)
        claims.append({
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": pvc_name, "labels": dict(template["metadata"].get("labels") or {})},
            "spec": copy.deepcopy(claim["spec"]),
        })
        volumes.append({"name": tname, "persistentVolumeClaim": {"claimName": pvc_name}})
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": copy.deepcopy(sts["metadata"]),
        "spec": {"replicas": 1, "selector": copy.deepcopy(spec["selector"]), "template": template},
    }
    return claims + [deployment]


def secret_to_configmap(secret):
    data = {}
    for key, value in (secret.get("data") or {}).items():
        try:
            data[key] = base64.b64decode(value, validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError) as e:
            raise Error("%s: key '%s' is not base64 of UTF-8 text (%s)" % (where(secret), key, e))
    for key, value in (secret.get("stringData") or {}).items():
        data[key] = value
    meta = {"name": secret["metadata"]["name"]}
    if secret["metadata"].get("labels"):
        meta["labels"] = dict(secret["metadata"]["labels"])
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def secret_volumes_to_configmaps(doc):
    for v in pod_template(doc).get("spec", {}).get("volumes") or []:
        if "secret" in v:
            s = v.pop("secret")
            cm = {"name": s["secretName"]}
            for key in ("items", "defaultMode", "optional"):
                if key in s:
                    cm[key] = s[key]
            v["configMap"] = cm


def apply_services(services, workloads):
    for svc in services:
        selector = (svc.get("spec") or {}).get("selector") or {}
        if not selector:
            raise Error("%s: no selector; only Services that select a workload are carried" % where(svc))
        for port in svc["spec"].get("ports") or []:
            target = port.get("targetPort", port["port"])
            if target != port["port"]:
                raise Error("%s: port %s -> targetPort %s; podman has no port mapping between pods, "
                            "so targetPort must equal port" % (where(svc), port["port"], target))
        chosen = [w for w in workloads
                  if selector.items() <= (pod_template(w)["metadata"].get("labels") or {}).items()]
        if len(chosen) != 1:
            raise Error("%s selects %d workloads (%s); exactly one is carried" %
                        (where(svc), len(chosen), ", ".join(where(w) for w in chosen) or "none"))
        spec = pod_template(chosen[0])["spec"]
        name = svc["metadata"]["name"]
        if spec.get("hostname", name) != name:
            raise Error("%s: its workload %s already answers as '%s'" %
                        (where(svc), where(chosen[0]), spec["hostname"]))
        spec["hostname"] = name


def add_prefix(docs, prefix):
    if not prefix:
        return

    def p(name):
        return "%s-%s" % (prefix, name)

    for doc in docs:
        doc["metadata"]["name"] = p(doc["metadata"]["name"])
        if doc["kind"] in ("Pod", "Deployment"):
            for v in pod_template(doc).get("spec", {}).get("volumes") or []:
                if "configMap" in v:
                    v["configMap"]["name"] = p(v["configMap"]["name"])
                if "persistentVolumeClaim" in v:
                    v["persistentVolumeClaim"]["claimName"] = p(v["persistentVolumeClaim"]["claimName"])


def convert(docs, prefix=""):
    out, services, workloads = [], [], []
    for doc in docs:
        if doc is None:
            continue
        kind = doc.get("kind")
        if not kind or not (doc.get("metadata") or {}).get("name"):
            raise Error("a document without kind or metadata.name: %r" % (doc,)[:200])
        if (doc.get("metadata") or {}).get("namespace"):
            doc = copy.deepcopy(doc)
            del doc["metadata"]["namespace"]  # podman has no namespaces: --prefix stands in
        if kind == "StatefulSet":
            check_containers(doc)
            converted = statefulset_to_deployment(doc)
            out += converted
            workloads.append(converted[-1])
        elif kind == "Service":
            services.append(doc)
        elif kind == "Secret":
            out.append(secret_to_configmap(doc))
        elif kind in PASS_THROUGH:
            doc = copy.deepcopy(doc)
            if kind in ("Pod", "Deployment"):
                check_containers(doc)
                workloads.append(doc)
            out.append(doc)
        else:
            raise Error("%s: podman kube play 4.3 has no %s, and this rewrite does not carry it" %
                        (where(doc), kind))
    for w in workloads:
        secret_volumes_to_configmaps(w)
    apply_services(services, workloads)
    add_prefix(out, prefix)
    # Volumes before the pods that mount them (podman creates ConfigMap and
    # claim volumes as it reads them).
    order = {"ConfigMap": 0, "PersistentVolumeClaim": 1}
    out.sort(key=lambda d: order.get(d["kind"], 2))
    return out


def dump(docs):
    return yaml.safe_dump_all(docs, sort_keys=False)


def podman(*args, quiet=False):
    result = subprocess.run(["podman", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # podman 4.3 logs an error for every health check it cannot schedule
    # without systemd; the health checks still run on request
    # (`podman healthcheck run`).
    err = "\n".join(line for line in result.stderr.splitlines()
                     if "unable to get systemd connection" not in line)
    if result.returncode != 0:
        raise Error("podman %s failed (exit %d):\n%s" % (" ".join(args), result.returncode, err))
    if err and not quiet:
        print(err, file=sys.stderr)
    return result.stdout


def kube_play(docs, network):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
        f.write(dump(docs))
        f.flush()
        podman("kube", "play", "--network", network, f.name)


def claimed_by(workloads):
    return {v["persistentVolumeClaim"]["claimName"] for w in workloads
            for v in pod_template(w)["spec"].get("volumes") or [] if "persistentVolumeClaim" in v}


def play(docs, network, only=()):
    """One `podman kube play` per workload, so each gets its own DNS alias."""
    claims = [d for d in docs if d["kind"] == "PersistentVolumeClaim"]
    configmaps = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ConfigMap"}
    workloads = [d for d in docs if d["kind"] in ("Pod", "Deployment")]
    if only:
        unknown = set(only) - {w["metadata"]["name"] for w in workloads}
        if unknown:
            raise Error("--only %s: no such workload" % ", ".join(sorted(unknown)))
        workloads = [w for w in workloads if w["metadata"]["name"] in only]
        claims = [c for c in claims if c["metadata"]["name"] in claimed_by(workloads)]
    # A claim whose volume exists is kept, as a PersistentVolumeClaim outlives
    # its pods (a workload played again finds its state).
    existing = set(podman("volume", "ls", "--format", "{{.Name}}").split())
    claims = [c for c in claims if c["metadata"]["name"] not in existing]
    if claims:
        kube_play(claims, network)
    for w in workloads:
        spec = pod_template(w)["spec"]
        mounted = [v["configMap"]["name"] for v in spec.get("volumes") or [] if "configMap" in v]
        missing = [m for m in mounted if m not in configmaps]
        if missing:
            raise Error("%s mounts ConfigMap(s) %s, which are not in the manifests" %
                        (where(w), ", ".join(missing)))
        net = network + (":alias=" + spec["hostname"] if spec.get("hostname") else "")
        kube_play([configmaps[m] for m in mounted] + [w], net)
        print("played %s%s" % (where(w), " as '%s'" % spec["hostname"] if spec.get("hostname") else ""))


def down(prefix):
    pods = [p for p in podman("pod", "ls", "--format", "{{.Name}}").split() if p.startswith(prefix + "-")]
    if pods:
        podman("pod", "rm", "-f", "-t", "5", *pods, quiet=True)
    volumes = [v for v in podman("volume", "ls", "--format", "{{.Name}}").split()
               if v.startswith(prefix + "-")]
    if volumes:
        podman("volume", "rm", "-f", *volumes, quiet=True)
    print("removed %d pod(s), %d volume(s) named %s-*" % (len(pods), len(volumes), prefix))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    for name in ("render", "play"):
        cmd = sub.add_parser(name)
        cmd.add_argument("--prefix", default="",
                         help="prefix for every object's name (a stand-in for a namespace)")
        if name == "play":
            cmd.add_argument("--network", required=True, help="the podman network to play into")
            cmd.add_argument("--only", action="append", default=[],
                             help="play only this workload (its name with the prefix; repeatable)")
        cmd.add_argument("files", nargs="+", help="manifests ('-' = stdin)")
    cmd = sub.add_parser("down")
    cmd.add_argument("--prefix", required=True)
    args = ap.parse_args()
    if args.prefix and not args.prefix.replace("-", "").isalnum():
        ap.error("--prefix: letters, digits and '-' only")
    try:
        if args.command == "down":
            down(args.prefix)
            return
        docs = []
        for f in args.files:
            with (sys.stdin if f == "-" else open(f)) as fh:
                try:
                    docs += list(yaml.safe_load_all(fh))
                except yaml.YAMLError as e:
                    raise Error("%s: %s" % (f, e))
        out = convert(docs, args.prefix)
        if args.command == "render":
            sys.stdout.write(dump(out))
        else:
            play(out, args.network, args.only)
    except (Error, OSError) as e:
        sys.exit("podman-kube: %s" % e)


if __name__ == "__main__":
    main()
