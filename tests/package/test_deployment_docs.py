"""The load-balancer configuration and manifests ``docs/deployment.md`` shows are the tested ones.

- The HAProxy file in the docs is what ``examples/deployment/cluster.py`` generates (the same
  function writes the configuration every multi-worker test runs behind), and HAProxy accepts it
  without a warning.
- The Kubernetes manifests in the docs are ``examples/deployment/kubernetes.yaml``, and every
  resource in it validates against the official Kubernetes schemas (``kubernetes-validate``,
  strict: an unknown field is an error).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Final

import kubernetes_validate
import pytest
import yaml

ROOT: Final = Path(__file__).resolve().parents[2]
DOCS: Final = ROOT / "docs" / "deployment.md"
EXAMPLE: Final = ROOT / "examples" / "deployment"
sys.path.insert(0, str(EXAMPLE))

from cluster import haproxy_config  # noqa: E402 -- the example's folder is on the path first

# The deployment the docs describe: the balancer at 10.0.0.2, three workers on their own hosts.
DOCUMENTED: Final = haproxy_config(
    "10.0.0.2:8000",
    {"w1": "10.0.0.11:8001", "w2": "10.0.0.12:8001", "w3": "10.0.0.13:8001"},
)


def fenced(language: str) -> list[str]:
    """The docs' code blocks in ``language``, each as its text."""
    pattern = re.compile(rf"^```{language}\n(.*?)^```$", re.MULTILINE | re.DOTALL)
    return pattern.findall(DOCS.read_text(encoding="utf-8"))


def test_the_documented_haproxy_file_is_the_generated_one() -> None:
    """The docs show the whole file, exactly as the tested generator writes it."""
    assert DOCUMENTED in fenced("haproxy")


@pytest.mark.skipif(shutil.which("haproxy") is None, reason="needs haproxy")
def test_haproxy_accepts_it_without_a_warning(tmp_path: Path) -> None:
    """``haproxy -c``: valid, and nothing to warn about at every start."""
    config = tmp_path / "haproxy.cfg"
    config.write_text(DOCUMENTED)
    checked = subprocess.run(  # noqa: S603 -- a fixed command on our own file
        ["haproxy", "-c", "-f", str(config)],  # noqa: S607 -- haproxy from the PATH
        capture_output=True,
        text=True,
        check=False,
    )
    said = checked.stdout + checked.stderr
    assert checked.returncode == 0, said
    assert "WARNING" not in said
    assert "ALERT" not in said


def test_the_documented_manifests_are_the_example() -> None:
    """The docs show ``examples/deployment/kubernetes.yaml`` whole."""
    assert (EXAMPLE / "kubernetes.yaml").read_text(encoding="utf-8") in fenced("yaml")


def _resources() -> list[dict[str, Any]]:
    with (EXAMPLE / "kubernetes.yaml").open(encoding="utf-8") as manifests:
        return [resource for resource in yaml.safe_load_all(manifests) if resource]


@pytest.mark.parametrize(
    "resource", _resources(), ids=lambda r: f"{r['kind']}/{r['metadata']['name']}"
)
def test_every_manifest_validates_against_the_kubernetes_schema(resource: dict[str, Any]) -> None:
    """Each resource is valid for the newest Kubernetes the validator knows, strictly."""
    version = kubernetes_validate.latest_version()
    kubernetes_validate.validate(resource, version, strict=True)


def test_the_workers_are_probed_and_drained() -> None:
    """The worker Deployment: readiness on /readyz, liveness on /livez, a drain that fits."""
    (deployment,) = [r for r in _resources() if r["kind"] == "Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    (worker,) = pod["containers"]
    args = worker["args"]
    drain = float(args[args.index("--drain-time") + 1])
    pause = worker["lifecycle"]["preStop"]["sleep"]["seconds"]
    assert worker["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert worker["livenessProbe"]["httpGet"]["path"] == "/livez"
    assert pod["terminationGracePeriodSeconds"] > drain + pause
    assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    (service,) = [
        r for r in _resources() if r["kind"] == "Service" and r["metadata"]["name"] == "mcp-core"
    ]
    assert "sessionAffinity" not in service["spec"]
