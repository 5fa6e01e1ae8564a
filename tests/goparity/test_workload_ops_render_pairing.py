"""OME's ``workload/ops/render_pairing_test.go``, through ``omerender.stamps.materialize_pod``.

Go: sgl-project/ome ``pkg/controller/v1beta1/workload/ops/render_pairing_test.go`` @ 1b71f4a8 (one
stored version, read whole), over ``ops/render.go`` (sgl-project eb2686d2; ome-projects 7307c238, the
newest stored, stamps the same label from ``ComponentPlan.PairingProtocol``). Go's plan carries the
pairing protocol; ours is the replica's ``spec.pairingProtocol``, which the pod render reads. The
builders are ``test_workload_ops_render.py``'s (Go's ``basicISVC``, ``basicPodSpec``,
``singlePodPlan``).
"""

from __future__ import annotations

from omerender import constants as c
from tests.goparity.test_workload_ops_render import isvc, render, single

GO = "sgl-project/ome pkg/controller/v1beta1/workload/ops/render_pairing_test.go @ 1b71f4a8"


def test_render_pairing_protocol_label() -> None:
    """Go: sgl-project/ome pkg/controller/v1beta1/workload/ops/render_pairing_test.go @ 1b71f4a8,
    TestRender_PairingProtocolLabel: a protocol stamps ``ome.io/pairing-protocol`` on the pod; a
    protocol-free plan stamps nothing (absent pairs with anything)."""
    pod = render(isvc(pairingProtocol="nixl-v2"), single())
    assert c.LABEL_PAIRING_PROTOCOL == "ome.io/pairing-protocol"
    assert pod["metadata"]["labels"].get(c.LABEL_PAIRING_PROTOCOL) == "nixl-v2", GO

    pod = render(isvc(), single())
    assert c.LABEL_PAIRING_PROTOCOL not in pod["metadata"]["labels"], GO
