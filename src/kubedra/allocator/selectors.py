"""Bridge from the allocator to the CEL engine, with the caches that keep selectors off the hot path.

- compiled programs are cached per expression (many claims share a DeviceClass selector);
- results are memoised per (expression, device object): slices are immutable while an Allocator lives,
  so a selector is evaluated at most once per device; runtime errors are memoised too and re-raised each
  time, because upstream treats them as errors on every attempt.

The scheduler compiles selectors in the "stored expressions" environment (every library ever introduced)
without a cost estimate; :mod:`kubedra.validate` uses the stricter new-expressions environment instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubedra.model.objects import Device


class SelectorError(Exception):
    """A selector failed to compile or evaluate; the allocator turns it into an AllocationError."""

    def __init__(self, index: int, expression: str, message: str, runtime: bool) -> None:
        super().__init__(message)
        self.index = index
        self.expression = expression
        self.message = message
        self.runtime = runtime

    def describe(self, owner: str, device: str) -> str:
        if self.runtime:
            return f"{owner}: selector #{self.index} on device {device}: CEL runtime error: {self.message}"
        return f"{owner}: selector #{self.index}: CEL compile error: {self.message}"


class SelectorMatcher:
    def __init__(
        self,
        *,
        target_version: str = "1.37",
        consumable_capacity: bool = True,
        list_type_attributes: bool = False,
    ) -> None:
        self.target_version = target_version
        self.consumable_capacity = consumable_capacity
        self.list_type_attributes = list_type_attributes
        self._env: Any = None
        self._programs: dict[str, Any] = {}
        self._memo: dict[tuple[str, int], tuple[Device, bool | BaseException]] = {}
        self.evaluations = 0  # CEL evaluations actually run (memo misses)

    def _environment(self) -> Any:
        if self._env is None:
            from kubedra.cel import SelectorEnvironment

            self._env = SelectorEnvironment(
                self.target_version,
                consumable_capacity=self.consumable_capacity,
                list_type_attributes=self.list_type_attributes,
                stored=True,
            )
        return self._env

    def compile(self, index: int, expression: str) -> Any:
        prog = self._programs.get(expression)
        if prog is None:
            from kubedra.cel import CELCompileError

            try:
                prog = self._environment().compile(expression)
            except CELCompileError as e:
                prog = e
            self._programs[expression] = prog
        if isinstance(prog, Exception):
            raise SelectorError(
                index,
                expression,
                str(getattr(prog, "detail", None) or getattr(prog, "message", prog)),
                runtime=False,
            )
        return prog

    def matches(self, index: int, expression: str, device: Device, driver: str) -> bool:
        key = (expression, id(device))
        hit = self._memo.get(key)
        if hit is not None and hit[0] is device:
            value = hit[1]
        else:
            prog = self.compile(index, expression)
            from kubedra.cel import CELRuntimeError

            self.evaluations += 1
            try:
                value = bool(prog.matches(device, driver))
            except CELRuntimeError as e:
                value = e
            self._memo[key] = (device, value)
        if isinstance(value, BaseException):
            raise SelectorError(
                index,
                expression,
                str(getattr(value, "detail", None) or getattr(value, "message", value)),
                runtime=True,
            )
        return value

    def all_match(self, selectors: Sequence[str], device: Device, driver: str) -> bool:
        return all(self.matches(i, expr, device, driver) for i, expr in enumerate(selectors))
