"""The third round's caches give the answers of the work they skip, and change with each input.

- ``holds_placeholders``: "holds ``{{``" per source object, remembered per catalog; the prepared
  runtime's answer under (resolved runtime, component) in the catalog that fixes the deploy defaults;
- the inheritance resolver's per-runtime spec dumps: remembered per runtime object, never mutated by
  the merge, and each chain member's own.
"""

from __future__ import annotations

from omerender import Catalog, parse_object
from omerender.models import FineTunedWeight, ModelResource, RuntimeResource
from omerender.render.inject import ModelContext
from omerender.render.memo import holds_placeholders, may_hold_placeholders
from omerender.render.resolve import Resolved
from tests.unit.test_speed2_build_share import _base_model, _cluster_runtime


def _runtime(name: str, image: str = "img:1") -> RuntimeResource:
    return parse_object(RuntimeResource, _cluster_runtime(name, image))


def _model(name: str, path: str = "/raid/m") -> ModelResource:
    return parse_object(
        ModelResource, {**_base_model("demo", path), "metadata": {"name": name, "namespace": "demo"}}
    )


def _weight(strategy: str) -> FineTunedWeight:
    return parse_object(
        FineTunedWeight,
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "FineTunedWeight",
            "metadata": {"name": "ft"},
            "spec": {"configuration": {}, "hyperParameters": {"strategy": strategy}},
        },
    )


def _resolved(runtime: RuntimeResource, model: ModelResource | None = None) -> Resolved:
    return Resolved(runtime, model, None, (), None)


def test_the_prepared_runtimes_answer_is_kept_per_resolved_runtime_component_and_catalog() -> None:
    catalog = Catalog()
    plain, braced = _runtime("rt"), _runtime("rt", image="img:{{.Name}}")
    resolved = _resolved(_runtime("rt"))  # prepared runtimes below are other objects, as when filled
    assert holds_placeholders(catalog, resolved, plain, None, "engine") is False
    # The same resolved runtime prepared for another component is another answer.
    assert holds_placeholders(catalog, resolved, braced, None, "router") is True
    # Remembered: the prepared runtime is a function of the key, so the first answer stands.
    assert holds_placeholders(catalog, resolved, braced, None, "engine") is False
    # Another resolved runtime is another key.
    assert holds_placeholders(catalog, _resolved(braced), braced, None, "engine") is True
    # Another catalog (other deploy defaults) remembers its own answers.
    assert holds_placeholders(Catalog(), resolved, braced, None, "engine") is True
    # Prepared as it was resolved (no defaults filled): one answer for the object, whatever the component.
    assert holds_placeholders(catalog, _resolved(braced), braced, None, "router") is True
    assert holds_placeholders(catalog, _resolved(plain), plain, None, "router") is False
    # The entry keeps the resolved runtime alive, so its id cannot name another object meanwhile.
    assert any(isinstance(v, tuple) and v[0] is resolved.runtime for v in catalog._memo.values())


def test_each_context_source_reaches_the_answer() -> None:
    catalog = Catalog()
    runtime = _runtime("rt")
    plain, braced = _model("m"), _model("m2", path="/raid/{{.Namespace}}")
    for ctx, expected in [
        (ModelContext(plain, None, ()), False),
        (ModelContext(braced, None, ()), True),
        (ModelContext(plain, None, (braced,)), True),
        (ModelContext(plain, _weight("{{.Name}}"), ()), True),
        (ModelContext(plain, _weight("lora"), (plain,)), False),
    ]:
        assert holds_placeholders(catalog, _resolved(runtime, ctx.model), runtime, ctx, "engine") is expected
        assert may_hold_placeholders(runtime, ctx) is expected
