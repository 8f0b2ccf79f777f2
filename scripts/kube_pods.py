"""The StatefulSet of deploy/kubernetes/ as plain Pods, for an engine that runs no StatefulSet
(`podman kube play` 4.3 runs Pods, Deployments, volume claims and ConfigMaps, no StatefulSet).

One source: each Pod is the StatefulSet's own pod template, made into replica N the way the
StatefulSet controller and the kubelet make it: the name and host name `NAME-N`, the volume
claim templates as claims `CLAIM-NAME-N`, the downward-API fields (`metadata.name`, ...) and
`$(VAR)` references in the environment resolved. Nothing else changes but what is asked for
on the command line (a host port per replica on loopback, the image, extra variables, the
tokens from a host folder instead of the Secret) and the optional Secret volumes, which
podman 4.3 cannot leave out:

    python scripts/kube_pods.py --host-port 18765 --tokens-dir /path/to/tokens > pods.yaml
    podman kube play pods.yaml && podman kube down pods.yaml
"""

from __future__ import annotations

import argparse
import copy
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped,unused-ignore]

ROOT = Path(__file__).resolve().parents[1]
KUSTOMIZATION = ROOT / "deploy" / "kubernetes" / "kustomization.yaml"
_VAR_REF = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def manifests(kustomization: Path = KUSTOMIZATION) -> list[dict[str, Any]]:
    """Every document of the kustomization's resources, in order."""
    listed = yaml.safe_load(kustomization.read_text())
    docs: list[dict[str, Any]] = []
    for name in listed.get("resources", []):
        text = (kustomization.parent / name).read_text()
        docs.extend(doc for doc in yaml.safe_load_all(text) if doc)
    return docs


def statefulset(docs: Iterable[dict[str, Any]]) -> dict[str, Any]:
    found = [doc for doc in docs if doc.get("kind") == "StatefulSet"]
    if len(found) != 1:
        raise SystemExit(f"expected one StatefulSet in the manifests, found {len(found)}")
    return found[0]


def replica(sts: dict[str, Any], ordinal: int, *, host_port: int | None = None) -> list[Any]:
    """Replica `ordinal` of `sts`: its volume claims and its Pod."""
    name = f"{sts['metadata']['name']}-{ordinal}"
    template = copy.deepcopy(sts["spec"]["template"])
    metadata = {**template.get("metadata", {}), "name": name}
    labels = {**metadata.get("labels", {}), "statefulset.kubernetes.io/pod-name": name}
    metadata["labels"] = labels
    spec = template["spec"]
    spec.setdefault("hostname", name)
    claims = []
    for claim in sts["spec"].get("volumeClaimTemplates", []):
        claim_name = f"{claim['metadata']['name']}-{name}"
        claims.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": claim_name, "labels": labels},
                "spec": copy.deepcopy(claim["spec"]),
            }
        )
        volume = {"name": claim["metadata"]["name"]}
        volume["persistentVolumeClaim"] = {"claimName": claim_name}
        spec.setdefault("volumes", []).append(volume)
    pod_fields = {"metadata.name": name, "metadata.namespace": "default"}
    for container in spec.get("containers", []):
        container["env"] = list(_resolved_env(container.get("env", []), pod_fields))
        if host_port is not None:
            for port in container.get("ports", []):
                if port.get("name") == "http":
                    port["hostPort"] = host_port + ordinal
                    port["hostIP"] = "127.0.0.1"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
    return [*claims, pod]


def _resolved_env(env: list[dict[str, Any]], pod_fields: dict[str, str]) -> Iterator[Any]:
    """As the kubelet: a `fieldRef` becomes its value, `$(VAR)` the value of an earlier VAR."""
    seen: dict[str, str] = {}
    for item in env:
        item = dict(item)
        field = (item.get("valueFrom") or {}).get("fieldRef", {}).get("fieldPath")
        if field is not None:
            if field not in pod_fields:
                raise SystemExit(f"env {item['name']}: fieldRef {field} is not one this knows")
            item.pop("valueFrom")
            item["value"] = pod_fields[field]
        if "value" in item:
            item["value"] = _VAR_REF.sub(lambda m: seen.get(m[1], m[0]), str(item["value"]))
            seen[item["name"]] = item["value"]
        yield item


def with_env(pod: dict[str, Any], extra: dict[str, str]) -> None:
    """Set (or replace) variables of every container of `pod`."""
    for container in pod["spec"].get("containers", []):
        kept = [item for item in container.get("env", []) if item["name"] not in extra]
        container["env"] = kept + [{"name": k, "value": v} for k, v in extra.items()]


def with_tokens_from(pod: dict[str, Any], folder: Path) -> None:
    """The `tokens` Secret volume as a host folder holding a file per replica. (podman 4.3's
    Secret volumes do not carry the data: `stringData` is dropped and `data` is not
    base64-decoded; a host folder works on every version.)"""
    for volume in pod["spec"].get("volumes", []):
        if volume.get("name") == "tokens":
            volume.pop("secret", None)
            volume["hostPath"] = {"path": str(folder), "type": "Directory"}


def without_optional_secrets(pod: dict[str, Any]) -> None:
    """Drop the Secret volumes marked optional, and their mounts: podman 4.3 refuses to start
    a pod whose optional Secret does not exist (Kubernetes mounts nothing)."""
    spec = pod["spec"]
    gone = {v["name"] for v in spec.get("volumes", []) if (v.get("secret") or {}).get("optional")}
    spec["volumes"] = [v for v in spec.get("volumes", []) if v["name"] not in gone]
    for container in spec.get("containers", []):
        mounts = container.get("volumeMounts", [])
        container["volumeMounts"] = [m for m in mounts if m["name"] not in gone]


def render(
    *,
    replicas: int | None = None,
    host_port: int | None = None,
    image: str | None = None,
    env: dict[str, str] | None = None,
    tokens_dir: Path | None = None,
    kustomization: Path = KUSTOMIZATION,
) -> list[dict[str, Any]]:
    """The documents `podman kube play` gets: per replica its claims and its Pod."""
    sts = statefulset(manifests(kustomization))
    count = sts["spec"].get("replicas", 1) if replicas is None else replicas
    docs: list[dict[str, Any]] = []
    for ordinal in range(count):
        parts = replica(sts, ordinal, host_port=host_port)
        pod = parts[-1]
        if image:
            for container in pod["spec"]["containers"]:
                container["image"] = image
        if env:
            with_env(pod, env)
        if tokens_dir is not None:
            with_tokens_from(pod, tokens_dir)
        without_optional_secrets(pod)
        docs.extend(parts)
    return docs


def _pairs(values: list[str], what: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key:
            raise SystemExit(f"{what} {value!r}: expected NAME=VALUE")
        pairs[key] = rest
    return pairs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicas", type=int, help="default: the StatefulSet's")
    parser.add_argument("--host-port", type=int, help="replica N on 127.0.0.1:HOST_PORT+N")
    parser.add_argument("--image", help="default: the manifest's")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--tokens-dir", type=Path, help="a folder of token files, one per pod")
    args = parser.parse_args(argv)
    docs = render(
        replicas=args.replicas,
        host_port=args.host_port,
        image=args.image,
        env=_pairs(args.env, "--env"),
        tokens_dir=args.tokens_dir,
    )
    yaml.safe_dump_all(docs, sys.stdout, sort_keys=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
