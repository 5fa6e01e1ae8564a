"""Differential test: decoding the ``deploy`` key against Go's ``encoding/json``.

``tools/gotypes/cmd/deployconfig`` decodes each text into OME's DeployConfig shape (its field names,
types and tags under OME's package name) as ``parseDeployConfig`` does. Where Go's decoder refuses a
text, ``omerender.deploy.parse_deploy_config`` must refuse it with the same words after ``unable to parse
deploy config json: ``; where Go decodes it, omerender may refuse it only by a validation of its own.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from omerender.deploy import DeployConfigError, parse_deploy_config

pytestmark = pytest.mark.gobuild

PREFIX = "unable to parse deploy config json: "
MODE = '"defaultDeploymentMode": "RawDeployment"'
TEXTS = [
    f"{{{MODE}}}",
    f'{{{MODE}, "terminationGracePeriodSeconds": 30}}',
    f'{{{MODE}, "terminationGracePeriodSeconds": "30"}}',
    f'{{{MODE}, "terminationGracePeriodSeconds": 1.5}}',
    f'{{{MODE}, "terminationGracePeriodSeconds": 1e3}}',
    f'{{{MODE}, "terminationGracePeriodSeconds": true}}',
    f'{{{MODE}, "terminationGracePeriodSeconds": [1]}}',
    f'{{{MODE}, "terminationGracePeriodSeconds": {{}}}}',
    f'{{{MODE}, "terminationGracePeriodSeconds": 9223372036854775808}}',
    f'{{{MODE}, "terminationGracePeriodSeconds": null}}',
    f'{{{MODE}, "minReadySeconds": 2147483648}}',
    f'{{{MODE}, "minReadySeconds": -1}}',
    f'{{{MODE}, "replicas": "x"}}',
    f'{{{MODE}, "replicas": {{"defaultMinReplicas": "1"}}}}',
    f'{{{MODE}, "replicas": {{"defaultMaxReplicas": 3}}}}',
    f'{{{MODE}, "replicas": {{"defaultMaxReplicas": {{"engine": 2.5}}}}}}',
    f'{{{MODE}, "updateStrategy": []}}',
    f'{{{MODE}, "updateStrategy": {{"engine": "SurgeThenDrain"}}}}',
    f'{{{MODE}, "updateStrategy": {{"engine": {{"type": 3}}}}}}',
    f'{{{MODE}, "updateStrategy": {{"engine": {{"maxSurge": 1.5}}}}}}',
    f'{{{MODE}, "updateStrategy": {{"engine": {{"maxSurge": "25%", "maxUnavailable": 2}}}}}}',
    '{"defaultDeploymentMode": 7}',
    '{"DefaultDeploymentMode": "RawDeployment", "TerminationGracePeriodSeconds": "x"}',
    "[]",
    '"RawDeployment"',
    "null",
    "{",
    "{}x",
]


def test_deploy_config_decoding_agrees_with_go(gotypes_bin: Path) -> None:
    lines = "".join(json.dumps({"id": i, "deploy": t}) + "\n" for i, t in enumerate(TEXTS))
    proc = subprocess.run(
        [str(gotypes_bin / "deployconfig")],
        input=lines,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(answers) == len(TEXTS)
    disagreements = []
    for text, go in zip(TEXTS, answers, strict=True):
        try:
            parse_deploy_config(text)
            mine = None
        except DeployConfigError as exc:
            mine = str(exc)
        go_error = go.get("error")
        if go_error is not None:
            if mine != PREFIX + go_error:
                disagreements.append((text, mine, go_error))
        elif mine is not None and mine.startswith(PREFIX):
            disagreements.append((text, mine, "decodes"))
    assert not disagreements, "\n".join(f"{t}\n  py: {m}\n  go: {g}" for t, m, g in disagreements)
