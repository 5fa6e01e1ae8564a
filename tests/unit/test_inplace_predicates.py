"""The watch filter lets through the pod updates an in-place step waits on (``omereconcile/controller/predicates.py``):
the transition marker, the spec image, the image the runtime reports; other annotations stay filtered."""

from __future__ import annotations

import copy
from typing import Any

from omereconcile.controller.predicates import plan_relevant_update
from omerender import constants as c


def _pod() -> dict[str, Any]:
    return {
        "metadata": {"name": "p0", "uid": "u", "resourceVersion": "1", "labels": {}, "annotations": {}},
        "spec": {"nodeName": "n1", "containers": [{"name": "engine", "image": "e:v1"}]},
        "status": {"phase": "Running", "containerStatuses": [{"name": "engine", "image": "e:v1"}]},
    }


def _changed(edit: Any) -> bool:
    old = _pod()
    new = copy.deepcopy(old)
    new["metadata"]["resourceVersion"] = "2"
    edit(new)
    return plan_relevant_update("pods", old, new)


def test_the_marker_the_spec_image_and_the_runtime_image_pass() -> None:
    assert _changed(
        lambda p: p["metadata"]["annotations"].update({c.ANNOTATION_IN_PLACE_IMAGE_TRANSITION: "{}"})
    )
    assert _changed(lambda p: p["spec"]["containers"][0].update(image="e:v2"))
    assert _changed(lambda p: p["status"]["containerStatuses"][0].update(image="e:v2"))


def test_another_annotation_is_filtered() -> None:
    assert not _changed(lambda p: p["metadata"]["annotations"].update({"example.com/note": "x"}))
