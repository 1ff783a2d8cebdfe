"""Kubernetes CEL for kubedra: DRA device selectors and reusable Kubernetes CEL environments.

Built on cel-expr-python (Google's cel-cpp). Fidelity target: k8s.io/dynamic-resource-allocation
``cel/compile.go`` + apiserver ``pkg/cel`` at the chosen Kubernetes version.

Selectors (what the allocator calls)::

    from kubedra.cel import SelectorEnvironment, CELCompileError, CELRuntimeError

    env = SelectorEnvironment("1.37", stored=True)          # scheduler view (StoredExpressions)
    sel = env.compile('device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100")')
    sel.matches(device, "gpu.nvidia.com", key=("slice-uid", "gpu-0"))   # -> bool or CELRuntimeError

* ``SelectorEnvironment(target_version="1.37", *, consumable_capacity=True, list_type_attributes=False,
  stored=False)``; ``.compile(expression) -> CompiledSelector`` (LRU cached per environment) raises
  :class:`CELCompileError` (an ``InputError``) with upstream-like ``detail``: ``compilation failed: ERROR:
  <input>:L:C: ...``, ``must evaluate to bool or the unknown type, not int``, ``Too long: may not be more than
  10240 bytes`` and ``too complex, exceeds cost limit`` (the last two only when ``stored=False``).
* ``CompiledSelector.matches(device, driver, *, key=None) -> bool``; ``.max_cost`` is the static estimate.
  ``device`` is any object with ``name``, ``attributes`` (qualified name as written -> object with ``kind`` and
  ``value``), ``capacity`` (name -> object with ``value: Quantity``) and ``allow_multiple_allocations``.
  One activation per device is cached (by ``key`` or, without one, by object identity), and with a ``key`` the
  result is memoised per (expression, key): pass a key that changes when the device changes (e.g. slice uid
  + generation + device name). Runtime errors raise :class:`CELRuntimeError` every time; ``.detail`` is
  upstream's text (``no such key: x. consider using CEL optional chaining ...``), so the allocator can prefix
  ``claim X: selector #i on device D: CEL runtime error:`` itself. From 1.38 (``cel.attributeValuesLazy``) a
  device attribute v0.38 cannot represent fails only a selector reading it; where kubedra cannot tell what
  upstream answers on such a device it raises :class:`CELUndecidedError` (an InputError, not a runtime error).

Other environments (policy/migrate helpers): :func:`kubedra.cel.env.build_env` gives an
:class:`~kubedra.cel.env.Environment` with apiserver's base libraries at a version and any variables, e.g. a
ValidatingAdmissionPolicy env with ``object``, ``oldObject``, ``params``, ``namespaceObject``, ``request`` as
``cel.Type.DYN``; ``env.compile(text)`` returns a :class:`~kubedra.cel.env.Program`
(``program.eval(env.runtime.Activation({...}))``, ``program.output_type``, ``program.max_cost``). The library
set per version is :func:`kubedra.cel.env.library_groups`; function declarations live in
:mod:`kubedra.cel.library`, the cost model in :mod:`kubedra.cel.cost`.

Semantics reproduced: ``device.driver``; ``device.attributes``/``device.capacity`` keyed by domain
(unqualified names under the driver's domain, qualified names split at the first "/"); a missing domain
yields an empty map (``"d" in device.attributes`` stays false), a missing id is a runtime error; version
attributes are ``kubernetes.Semver`` values, capacities ``kubernetes.Quantity``; lists for list-type
attributes; ``device.allowMultipleAllocations`` declared only with consumable capacity (always when stored);
``includes`` (DRA, errors past 48 elements) from 1.36 when list-type attributes are on (always when stored);
a non-bool result is a runtime error.

Runtime cost: cel-expr-python exposes no cost tracker or limit. An expression whose static estimate is
within 1,000,000 cannot exceed the limit at run time (the estimate is an upper bound for API-valid devices);
for a stored expression above it, the estimate is recomputed with the device's actual sizes and the
evaluation fails with ``operation cancelled: actual cost limit exceeded`` when that still exceeds the limit
(conservative: upstream counts only what actually runs, so a short-circuiting expression may pass there).
Known gaps are listed in :mod:`kubedra.cel.env`.
"""

from kubedra.cel.checks import CELCompileError
from kubedra.cel.env import Environment, Program, build_env, library_groups
from kubedra.cel.selector import (
    MAX_COST,
    MAX_EXPRESSION_LENGTH,
    CELRuntimeError,
    CELUndecidedError,
    CompiledSelector,
    SelectorEnvironment,
    split_qualified_name,
)

__all__ = [
    "MAX_COST",
    "MAX_EXPRESSION_LENGTH",
    "CELCompileError",
    "CELRuntimeError",
    "CELUndecidedError",
    "CompiledSelector",
    "Environment",
    "Program",
    "SelectorEnvironment",
    "build_env",
    "library_groups",
    "split_qualified_name",
]
