"""Validate deploy/kubernetes/ against Kubernetes' own schemas (`make kube-validate`, which
runs `python scripts/kube_validate.py`).

Three renderings, every document strict (an unknown field is an error, as the API server's
strict field validation makes it): the files as written, `kubectl kustomize` of the folder
(when kubectl is installed: what `kubectl apply -k` sends), and the Pods scripts/kube_pods.py
makes for podman. The schemas are those `kubernetes-validate` (PyPI) ships, for the newest
Kubernetes version it knows unless `--version X.Y` says otherwise.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped,unused-ignore]

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the scripts folder (no package)
import kube_pods

try:
    import kubernetes_validate
    from kubernetes_validate.utils import latest_version
except ImportError:  # pragma: no cover - the make target installs it
    raise SystemExit(
        "kubernetes-validate is not installed: run make kube-validate (it installs it), or "
        ".venv/bin/python -m pip install -c constraints.txt -e '.[kube]'"
    ) from None

FOLDER = kube_pods.KUSTOMIZATION.parent


def kustomized() -> list[dict[str, Any]] | None:
    """`kubectl kustomize` of the folder, or None without kubectl."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        return None
    done = subprocess.run(
        [kubectl, "kustomize", str(FOLDER)], capture_output=True, text=True, timeout=60
    )
    if done.returncode != 0:
        raise SystemExit(f"kubectl kustomize {FOLDER} failed:\n{done.stderr}")
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def check(docs: Iterable[dict[str, Any]], source: str, version: str) -> list[str]:
    """One line per problem: `source: Kind/name: what is wrong`."""
    problems = []
    for doc in docs:
        where = f"{source}: {doc.get('kind')}/{(doc.get('metadata') or {}).get('name')}"
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            path = ".".join(str(part) for part in exc.path) or "(top)"
            problems.append(f"{where}: {path}: {exc.message}")
        except kubernetes_validate.SchemaNotFoundError as exc:
            problems.append(f"{where}: no schema for it in Kubernetes {version} ({exc})")
        else:
            print(f"ok  {where}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", help="Kubernetes X.Y (default: the newest known)")
    args = parser.parse_args(argv)
    version = args.version or latest_version()
    print(f"Kubernetes {version} schemas (kubernetes-validate), strict")
    renderings: list[tuple[str, list[dict[str, Any]]]] = [
        ("files", kube_pods.manifests()),
        ("podman pods", kube_pods.render(host_port=18765, tokens_dir=Path("/run/tokens"))),
    ]
    rendered = kustomized()
    if rendered is None:
        print("kubectl is not installed: the kustomize rendering is not checked")
    else:
        renderings.insert(1, ("kubectl kustomize", rendered))
    problems = [line for name, docs in renderings for line in check(docs, name, version)]
    for line in problems:
        print(f"NOT VALID  {line}")
    print(f"{len(problems)} problem(s)" if problems else "all valid")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
