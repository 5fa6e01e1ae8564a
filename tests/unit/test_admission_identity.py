"""The ``inferenceReplica`` identity block, read as strictly as OME's ``parseInferenceReplicaConfig``.

A lax read would turn a mistake into a wrong boundary: ``groups: ["system:authenticated"]`` would make every
caller the InferenceService controller. OME refuses such a block, and the webhook then answers creates and
spec changes with 500 (``load inferenceReplica config: invalid inferenceReplica config: <detail>``).
"""

from __future__ import annotations

import json

import pytest

from omerender.admission import IdentityConfigError, parse_identity_config
from omerender.catalog import ControllerIdentity
from tests.unit.test_webhook import _reader, _review


def block(**identity: object) -> str:
    return json.dumps({"controllerIdentity": identity})


@pytest.mark.parametrize(
    ("raw", "detail"),
    [
        ("null", "expected a JSON object, got null"),
        ("[]", "expected a JSON object, got []"),
        ('{"controllerIdentity": null}', "controllerIdentity: expected a JSON object, got null"),
        ('{"controlleridentity": {}}', 'unknown field "controlleridentity"'),
        ('{"controllerIdentity": {"users": ["a"]}}', 'controllerIdentity: unknown field "users"'),
        ('{"controllerIdentity": {}, "controllerIdentity": {}}', 'duplicate key "controllerIdentity"'),
        (block(usernames=[" sa"]), "controllerIdentity.usernames[0] has surrounding whitespace"),
        (block(usernames=["a", ""]), "controllerIdentity.usernames[1] is blank"),
        (block(groups=["  "]), "controllerIdentity.groups[0] is blank"),
        (
            block(usernames=["system:anonymous"]),
            'username "system:anonymous" names every caller and cannot identify the controller',
        ),
        (
            block(groups=["ops", "system:authenticated"]),
            'group "system:authenticated" names every caller and cannot identify the controller',
        ),
        (
            block(groups=["system:serviceaccounts"]),
            'group "system:serviceaccounts" names every caller and cannot identify the controller',
        ),
        (block(usernames="a"), "controllerIdentity.usernames must be a list of strings"),
    ],
)
def test_a_malformed_block_is_refused_with_its_reason(raw: str, detail: str) -> None:
    with pytest.raises(IdentityConfigError) as err:
        parse_identity_config(raw)
    assert err.value.detail == detail
    assert str(err.value) == f"invalid inferenceReplica config: {detail}"


@pytest.mark.parametrize("raw", [None, "", "  \n", "{}", block(), block(usernames=[], groups=None)])
def test_an_absent_or_empty_block_configures_no_identity(raw: str | None) -> None:
    assert parse_identity_config(raw) is None


def test_a_valid_block_names_the_identity() -> None:
    raw = block(usernames=["system:serviceaccount:ome:ome-controller"], groups=["ome:controllers"])
    assert parse_identity_config(raw) == ControllerIdentity(
        frozenset({"system:serviceaccount:ome:ome-controller"}), frozenset({"ome:controllers"})
    )


def test_the_webhook_refuses_to_treat_every_caller_as_the_controller() -> None:
    reader = _reader({"data": {"inferenceReplica": block(groups=["system:authenticated"])}})
    resp = reader.handle(_review({"modelRef": {"name": "m"}}))["response"]
    assert (resp["allowed"], resp["status"]["code"]) == (False, 500)
    assert resp["status"]["message"] == (
        "load inferenceReplica config: invalid inferenceReplica config: "
        'group "system:authenticated" names every caller and cannot identify the controller'
    )
