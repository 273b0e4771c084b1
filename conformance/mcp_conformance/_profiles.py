"""The kit's two hypothesis profiles, applied explicitly to every check.

Hypothesis loads a ``ci`` profile by itself when ``CI`` is set, and a project may load its own;
either would silently resize (or re-randomize) a certification. So the kit never relies on the
loaded profile: every check runs under a ``settings`` object built here with every field given,
on top of hypothesis's built-in defaults rather than whatever profile is current.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, TypeAlias, final

if TYPE_CHECKING:
    from hypothesis import settings

__all__ = ["PROFILES", "Profile", "ProfileName"]

ProfileName: TypeAlias = Literal["fast", "deep"]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Profile:
    """How hard the kit looks: examples per check, steps per state-machine run.

    Neither profile is derandomized: every run draws its examples from the run's seed, which
    varies from run to run unless pinned (``--mcp-conformance-seed``) and is printed for replay,
    so a probabilistic miss cannot stay green on every CI run. (``--mcp-conformance-seed=
    derandomized`` derives each check's examples from the check alone, as hypothesis's
    ``derandomize`` does: for a kit's own regression suite, never for a certificate.)

    ``provide_calls``: how many times ``source.idempotent`` calls a source target's ``provide()``
    on each of its instances (a source that fails now and then must be caught; a wrapper target
    gets 10 calls per generated example instead). ``server_examples``: examples per server
    law, each a pair of servers and clients in both protocol eras (far costlier than a registry
    example).
    """

    name: ProfileName
    max_examples: int
    stateful_step_count: int
    provide_calls: int
    server_examples: int

    def settings(self, *, max_examples: int | None = None, derandomize: bool = False) -> settings:
        """The hypothesis settings every check of this profile runs under."""
        # Imported here: the plugin imports profiles in every pytest run, the kit or not.
        from hypothesis import HealthCheck, Phase, Verbosity, settings  # noqa: PLC0415

        return settings(
            settings.get_profile("default"),
            max_examples=self.max_examples if max_examples is None else max_examples,
            stateful_step_count=self.stateful_step_count,
            derandomize=derandomize,
            # No example database: a certification is a function of the target and the profile,
            # not of what an earlier run on this machine happened to find.
            database=None,
            deadline=None,
            verbosity=Verbosity.normal,
            # No explain phase: the report carries the shrunk reproduction; explaining it costs
            # more than the rest of a fast run.
            phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink),
            report_multiple_bugs=False,
            print_blob=False,
            # Health checks judge a test's generators; the kit's are fixed and a target's slowness
            # is not a law violation, so none of them may turn into a FAIL.
            suppress_health_check=(
                HealthCheck.data_too_large,
                HealthCheck.filter_too_much,
                HealthCheck.too_slow,
                HealthCheck.large_base_example,
                HealthCheck.function_scoped_fixture,
                HealthCheck.differing_executors,
            ),
        )

    def describe(self) -> str:
        """E.g. ``fast (50 examples, 30 steps)``."""
        return f"{self.name} ({self.max_examples} examples, {self.stateful_step_count} steps)"


PROFILES: Final[dict[ProfileName, Profile]] = {
    # Sized so that certifying one target takes seconds on two cores (a registry under a minute).
    "fast": Profile(
        name="fast",
        max_examples=50,
        stateful_step_count=30,
        provide_calls=20,
        server_examples=10,
    ),
    "deep": Profile(
        name="deep",
        max_examples=1000,
        stateful_step_count=80,
        provide_calls=200,
        server_examples=100,
    ),
}
