"""The Kubernetes manifests (deploy/kubernetes/) as text, and the Pods `scripts/kube_pods.py`
makes of their StatefulSet for podman: what a broadcast needs is there and nothing drifts.

The schemas are checked by `make kube-validate` and the pods run by `make kube-test`
(scripts/kube_test.py, minutes; not part of `make test`).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

from browser_core import build_settings

sys.path.insert(
    0, str(Path(__file__).resolve().parents[1] / "scripts")
)  # the scripts folder (no package)
import kube_pods


def _sts() -> dict[str, Any]:
    return kube_pods.statefulset(kube_pods.manifests())


def _env(container: dict[str, Any]) -> dict[str, Any]:
    return {item["name"]: item for item in container["env"]}


def test_each_pod_is_the_statefulsets_template_made_into_replica_n() -> None:
    sts = _sts()
    docs = kube_pods.render(host_port=18765, tokens_dir=Path("/run/tokens"))
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [
        ("PersistentVolumeClaim", "state-stream-browser-0"),
        ("Pod", "stream-browser-0"),
        ("PersistentVolumeClaim", "state-stream-browser-1"),
        ("Pod", "stream-browser-1"),
    ]
    for ordinal, pod in enumerate(d for d in docs if d["kind"] == "Pod"):
        name = f"stream-browser-{ordinal}"
        spec = copy.deepcopy(pod["spec"])
        (container,) = spec["containers"]
        env = _env(container)
        assert env["SB_INSTANCE"] == {"name": "SB_INSTANCE", "value": name}
        token_file = f"/etc/stream-browser/tokens/{name}"
        assert env["SB_SERVICE_TOKEN_FILE"]["value"] == token_file
        assert container["ports"][0]["hostPort"] == 18765 + ordinal
        assert container["ports"][0]["hostIP"] == "127.0.0.1"
        assert spec.pop("hostname") == name
        claim = spec["volumes"].pop()
        assert claim == {"name": "state", "persistentVolumeClaim": {"claimName": f"state-{name}"}}
        tokens = next(v for v in spec["volumes"] if v["name"] == "tokens")
        assert tokens == {
            "name": "tokens",
            "hostPath": {"path": "/run/tokens", "type": "Directory"},
        }
        tokens.pop("hostPath")
        tokens["secret"] = next(
            v for v in sts["spec"]["template"]["spec"]["volumes"] if v["name"] == "tokens"
        )["secret"]
        # the optional Gemini login is left out (podman 4.3 will not start without it)
        template_spec = copy.deepcopy(sts["spec"]["template"]["spec"])
        kube_pods.without_optional_secrets({"spec": template_spec})
        assert [v["name"] for v in template_spec["volumes"]] == [v["name"] for v in spec["volumes"]]
        assert "gemini-login" not in [m["name"] for m in container["volumeMounts"]]
        # everything else is the template's, as it is written
        template = copy.deepcopy(sts["spec"]["template"]["spec"])
        kube_pods.without_optional_secrets({"spec": template})
        (original,) = template["containers"]
        for key in ("env", "ports"):
            container.pop(key)
        assert {k: v for k, v in original.items() if k not in ("env", "ports")} == container
        assert {k: v for k, v in template.items() if k != "containers"} == {
            k: v for k, v in spec.items() if k != "containers"
        }


def test_the_stop_grace_lets_the_longest_call_finish_and_answers_before_the_kill() -> None:
    pod = _sts()["spec"]["template"]["spec"]
    env = _env(pod["containers"][0])
    settings = build_settings(
        SB_CALL_DEADLINE_S=env["SB_CALL_DEADLINE_S"]["value"], GEMINI_MIN_S=12
    )
    longest = settings.call_deadline_s + settings.gemini_min_s + 2  # the tool's outer bound
    grace = float(env["SB_STOP_GRACE_S"]["value"])
    assert longest < grace <= pod["terminationGracePeriodSeconds"] - 5


def test_a_broadcast_runs_as_a_user_is_probed_for_a_wedged_chrome_and_stays_in_the_cluster() -> (
    None
):
    docs = {d["kind"]: d for d in kube_pods.manifests()}
    pod = docs["StatefulSet"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert pod["securityContext"]["runAsNonRoot"] and pod["securityContext"]["runAsUser"] == 10001
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    # only what Chrome's own sandbox needs stays in the bounding set
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["SYS_CHROOT"]}
    assert container["livenessProbe"]["exec"]["command"][-1] == "--chrome"
    assert container["readinessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["resources"]["requests"]["memory"] and container["resources"]["limits"]
    key = _env(container)["GEMINI_API_KEY"]["valueFrom"]["secretKeyRef"]
    assert key["name"] == "stream-browser-gemini-key" and key["optional"] is True
    service = docs["Service"]["spec"]
    assert service["clusterIP"] == "None" and "type" not in service  # headless, no NodePort
    assert docs["StatefulSet"]["spec"]["serviceName"] == docs["Service"]["metadata"]["name"]
