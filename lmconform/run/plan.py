"""The one way a run is assembled, for the pytest plugin, the tests' runner and the proxy gate alike: which target
(the embedded reference server and bridge when none is named), which checks judge which cases, what the target is
known to fail, and, once started, what the target is (its discovered models and its fingerprint)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property

from lmconform.api_table import APIS, HTTP, STDIO
from lmconform.cases import Case, load_cases
from lmconform.checks import select
from lmconform.checks.registry import Check
from lmconform.clients import load_sdks
from lmconform.expectations import Expectations
from lmconform.fingerprint import fingerprint
from lmconform.run.run import Run, discover, judging, run_requirements
from lmconform.run.sources import SOURCES
from lmconform.settings import RunSettings
from lmconform.target import Target
from lmconform.wire.collector import collector_paused, freeze_long_lived

# The bridge of the embedded run: lmconform's reference bridge with its deterministic echo agent, which needs no
# model and says what history it was given (so commit and discard are judged, not UNSUPPORTED), started by its
# module's name (0.1 s a case). A pause before each part after the first lets the cancel case cancel
# its request while it streams, as it would a model's; a short answer still takes a fraction of a second.
EMBEDDED_BRIDGE = (sys.executable, "-m", "lmconform.bridge", "--agent", "echo", "--part-delay", "0.02")


def embedded_bridge(faults: tuple[str, ...] = (), profile: str = "strict") -> tuple[str, ...]:
    return (*EMBEDDED_BRIDGE, "--profile", profile, *(word for fault in faults for word in ("--fault", fault)))


@dataclass(frozen=True)
class RunPlan:
    """A run before it starts. A target with neither a base URL nor a bridge command is the embedded reference
    server, with `faults`, and the embedded reference bridge, with `bridge_faults`."""

    target: Target
    upstream: Target | None = None
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    expectations: Expectations | None = None
    apis: tuple[str, ...] = tuple(APIS)
    faults: tuple[str, ...] = ()  # of the embedded reference server
    bridge_faults: tuple[str, ...] = ()  # of the embedded reference bridge
    probe: bool = True  # fingerprint the target when the run starts (a few GET requests)
    settings: RunSettings = RunSettings()
    cases: tuple[str, ...] | None = None  # globs over the cases the run plays (Case.named_by); None: every case
    exclude_cases: tuple[str, ...] = ()  # globs over the cases it leaves out
    _servers: list = field(default_factory=list, compare=False, repr=False)

    @cached_property
    def checks(self) -> list[Check]:
        return select(self.include, self.exclude, run_requirements(self.target, self.upstream))

    def cases_of(self, api: str) -> list[Case]:
        """The cases of `api` the run plays. A case a source makes examples of takes part when its source does with
        the run's settings (a coding agent's when the run runs that agent, --agents). A case takes part when
        `cases` names it (when it names any) and `exclude_cases` does not."""
        return [case for case in load_cases(api)
                if (not case.source or SOURCES[case.source].takes_part(case, self.settings))
                and (self.cases is None or any(case.named_by(pattern) for pattern in self.cases))
                and not any(case.named_by(pattern) for pattern in self.exclude_cases)]

    def pairs(self, api: str) -> list[tuple[Case, Check]]:
        """Every case of `api` the run plays with every selected check that judges it, in case then check order;
        none when the target has no address for the API's transport (an HTTP endpoint has no bridge, and a bridge
        no HTTP API)."""
        if not self.target.reaches(APIS[api].transport):
            return []
        return [(case, check) for case in self.cases_of(api) for check in judging(self.checks, case)]

    def played_ahead(self, cases: Iterable[Case]) -> list[Case]:
        """Those of `cases` a run plays in a thread beside its own (Run.play_ahead): the cases of the embedded
        reference bridge, each a process started for it and parts paced by `--part-delay`, which wait far more
        than they compute. Only its own bridge without faults: each of its cases ends within a second, so a run
        that stops (Ctrl-C, an error) waits no longer than that for the one in hand; a user's bridge, or one
        with a fault that holds its answer, may take its whole read timeout."""
        if not self.target.embedded or self.bridge_faults:
            return []
        return [case for case in cases if APIS[case.api].transport == STDIO]

    def start(self, clients: Iterable[str] | None = None, cases: Iterable[Case] = ()) -> Run:
        """The run against the target, found and fingerprinted; raises TargetUnreachable when nothing answers.
        Facts the plan's target carries in its fingerprint already (how a test server was built) are kept.
        `clients`: the surfaces of the client checks the run will judge (pytest's, once `-k` has deselected);
        None: those of every selected check that judges an API of the plan's. `cases`: those the run will judge, of
        which it starts playing ahead the ones it plays so (`played_ahead`), while the SDKs load."""
        target = self.target
        if target.embedded:
            if any(APIS[api].transport == STDIO for api in self.apis):
                target = replace(target, bridge_command=embedded_bridge(self.bridge_faults, target.bridge_profile))
            if any(APIS[api].transport == HTTP for api in self.apis):
                from lmconform.reference import ReferenceServer

                server = ReferenceServer(faults=self.faults).start()
                self._servers.append(server)
                target = replace(target, base_url=server.base_url)
        try:
            if target.base_url:
                target = discover(target)
                if self.probe:
                    target = replace(target, fingerprint={**fingerprint(target), **(target.fingerprint or {})})
            rooms = (APIS[api].room("run") for api in self.apis if target.reaches(APIS[api].transport))
            players = {room for room in rooms if room is not None}
            for player in sorted(players, key=lambda module: module.__name__):
                target = player.discover(target)  # what a player finds out before its first case
            upstream = discover(self.upstream) if self.upstream else None
        except BaseException:
            self.stop()
            raise
        run = Run(target, self.expectations, upstream, checks=self.checks, on_close=self.stop, settings=self.settings)
        try:
            run.play_ahead(self.played_ahead(cases))
            # Once the target has answered: the SDKs take two seconds to import, which a target that is not there
            # would make its user wait for "Is the server running?".
            # Importing makes objects that live as long as the process, and cycles of no garbage: the collector,
            # started again and again by the allocations, would only traverse them (a third of a second).
            with collector_paused():
                load_sdks({check.surface for check in self.checks if check.kind == "client"}
                          & {surface for api in self.apis for surface in APIS[api].clients} if clients is None
                          else clients)
            freeze_long_lived()
        except BaseException:
            run.close()
            raise
        return run

    def stop(self) -> None:
        """Stop the embedded reference server, if this plan started one."""
        while self._servers:
            self._servers.pop().stop()

    def run_all(self) -> Run:
        """Start, and judge every selected check on every case it applies to: `pytest suites` without pytest."""
        run = self.start(cases=[case for api in self.apis for case, _ in self.pairs(api)])
        try:
            for api in self.apis:
                for case, check in self.pairs(api):
                    run.judge(case, check)
        finally:
            run.close()
        return run


def run_suite(target: Target, apis: tuple[str, ...] = tuple(APIS), include=(), exclude=(),
              expectations: Expectations | None = None, upstream: Target | None = None, probe: bool = True,
              settings: RunSettings = RunSettings(), cases: tuple[str, ...] | None = None,
              exclude_cases: tuple[str, ...] = ()) -> Run:
    """Every case of `apis` (those `cases` names, when it names any; not those `exclude_cases` names) x every selected
    check that applies, against a running target."""
    return RunPlan(target, upstream, tuple(include), tuple(exclude), expectations, tuple(apis), probe=probe,
                   settings=settings, cases=cases, exclude_cases=tuple(exclude_cases)).run_all()
