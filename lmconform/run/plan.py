"""The one way a run is assembled, for the pytest plugin, the tests' runner and the proxy gate alike: which target
(the embedded reference server when none is named), which checks judge which cases, what the target is known to
fail, and, once started, what the target is (its discovered model and its fingerprint)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

from lmconform.apis import APIS
from lmconform.cases import Case, load_cases
from lmconform.checks import select
from lmconform.checks.registry import Check
from lmconform.expectations import Expectations
from lmconform.fingerprint import fingerprint
from lmconform.fuzz.streams import SOURCE as STREAMS
from lmconform.run.run import Run, applies, discover
from lmconform.target import Target
from lmconform.vocabulary import Requirement


def run_requirements(target: Target, upstream: Target | None) -> frozenset[Requirement]:
    """What a run against `target` (and `upstream`, if any) offers the checks that require something."""
    return target.profile_requirements | ({Requirement.UPSTREAM} if upstream is not None else frozenset())


@dataclass(frozen=True)
class RunPlan:
    """A run before it starts. A target without a base URL is the embedded reference server, with `faults`."""

    target: Target
    upstream: Target | None = None
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    expectations: Expectations | None = None
    apis: tuple[str, ...] = tuple(APIS)
    faults: tuple[str, ...] = ()  # of the embedded reference server
    probe: bool = True  # fingerprint the target when the run starts (a few GET requests)
    _servers: list = field(default_factory=list, compare=False, repr=False)

    @cached_property
    def checks(self) -> list[Check]:
        return select(self.include, self.exclude, run_requirements(self.target, self.upstream))

    def pairs(self, api: str) -> list[tuple[Case, Check]]:
        """Every case of `api` with every selected check that judges it, in case then check order. The sources of
        generated wire forms take part only when the run sends some (--upstream-fuzz)."""
        cases = [case for case in load_cases(api) if case.source != STREAMS or self.target.stream_examples]
        return [(case, check) for case in cases for check in self.checks if applies(check, case)]

    def start(self) -> Run:
        """The run against the target, found and fingerprinted; raises TargetUnreachable when nothing answers.
        Facts the plan's target carries in its fingerprint already (how a test server was built) are kept."""
        target = self.target
        if not target.base_url:
            from lmconform.reference import ReferenceServer

            server = ReferenceServer(faults=self.faults).start()
            self._servers.append(server)
            target = replace(target, base_url=server.base_url)
        try:
            target = discover(target)
            if self.probe:
                target = replace(target, fingerprint={**fingerprint(target), **(target.fingerprint or {})})
            upstream = discover(self.upstream) if self.upstream else None
        except BaseException:
            self.stop()
            raise
        return Run(target, self.expectations, upstream, checks=self.checks, on_close=self.stop)

    def stop(self) -> None:
        """Stop the embedded reference server, if this plan started one."""
        while self._servers:
            self._servers.pop().stop()

    def run_all(self) -> Run:
        """Start, and judge every selected check on every case it applies to: `pytest suites` without pytest."""
        run = self.start()
        try:
            for api in self.apis:
                for case, check in self.pairs(api):
                    run.judge(case, check)
        finally:
            run.close()
        return run


def run_suite(target: Target, apis: tuple[str, ...] = tuple(APIS), include=(), exclude=(),
              expectations: Expectations | None = None, upstream: Target | None = None, probe: bool = True) -> Run:
    """Every case of `apis` x every selected check that applies, against a running target."""
    return RunPlan(target, upstream, tuple(include), tuple(exclude), expectations, tuple(apis), probe=probe).run_all()
