"""Which kernels of a build got a tuned schedule: :func:`database_report` (printed by
``relay-tvm compile --tuning-db``; the Python API stays quiet and returns it on request).

It reads what the build recorded while applying the database (each kernel's
``LoweredFunc.schedule_rule`` and ``database_miss``, set in
:mod:`relay_tvm.backend.schedule`), so it says what the build did rather than recomputing it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..backend.schedule import NO_RECORD, NOT_TUNED


@dataclass
class DatabaseReport:
    """How a build applied its tuning database, kernel by kernel.

    Each list holds ``(kernel name, output shape)`` pairs, the shape as ``"1x32"`` (outputs
    joined by ``", "``), in the build's kernel order.

    Attributes:
        tuned: kernels built with a tuned record (measured faster than their untuned schedule).
        untuned_faster: kernels whose untuned schedule's record is their fastest (every tuned
            record was slower, or the search gave the kernel no trials): built with the untuned
            template.
        no_record: kernels tuning measures (they have a reduction) but the database has no
            record for: built with the untuned template (a model, shape or opt level other
            than the one tuned, or a tuning run stopped before them).
        not_applied: ``(name, shape, why)`` of kernels whose record was not applied (tuned for
            another target, a template that no longer takes its knobs, ...).
        not_tuned: kernels tuning skips (no reduction: copies and elementwise kernels; layout
            transforms; dynamic shapes), built with their usual schedule.
        mod_name: the build's module name (kernel names start ``tvmgen_<mod_name>_``).
    """

    tuned: list = field(default_factory=list)
    untuned_faster: list = field(default_factory=list)
    no_record: list = field(default_factory=list)
    not_applied: list = field(default_factory=list)
    not_tuned: list = field(default_factory=list)
    mod_name: str = "default"

    @property
    def total(self) -> int:
        """Kernels of the build."""
        return (len(self.tuned) + len(self.untuned_faster) + len(self.no_record)
                + len(self.not_applied) + len(self.not_tuned))

    def format(self, database: str = "", max_listed: int = 10) -> list:
        """The report as text lines (no prefix, no newline): a count line, then the kernels
        without a record and those whose record was not applied, ``max_listed`` of each at
        most, then ``"... and N more"``.

        Args:
            database: what to call the database in the first line (its path).
            max_listed: kernels listed per kind before ``"... and N more"``.
        """
        what = f"tuning database {database}" if database else "tuning database"
        none = len(self.no_record) + len(self.not_tuned)
        head = (f"{what}: {len(self.tuned)} of {self.total} kernels use a tuned schedule "
                f"(measured faster than their untuned one); {len(self.untuned_faster)} keep the "
                f"untuned schedule (no tuned record measured faster, or none searched); {none} "
                f"have no record: {len(self.no_record)} that tuning measures (built with the "
                f"untuned template{', listed below' if self.no_record else ''}), "
                f"{len(self.not_tuned)} that it skips (no reduction or dynamic shape)")
        if self.not_applied:
            head += f"; {len(self.not_applied)} have a record that was not applied"
        lines = [head]
        prefix = f"tvmgen_{self.mod_name}_"

        def short(name):
            return name[len(prefix):] if name.startswith(prefix) else name

        for kind, items in (("no record", self.no_record),
                            ("record not applied", self.not_applied)):
            for item in items[:max_listed]:
                why = f": {item[2]}" if len(item) > 2 else ""
                lines.append(f"  {kind}: {short(item[0])} ({item[1]}){why}")
            if len(items) > max_listed:
                lines.append(f"  ... and {len(items) - max_listed} more")
        return lines


def _shape(lowered) -> str:
    return ", ".join("x".join(str(d) for d in t.shape) or "scalar"
                     for t in lowered.output_types)


def database_report(lib) -> DatabaseReport:
    """How ``lib`` (what ``relay.build(..., database=...)`` or ``relay.vm.compile(...,
    database=...)`` returned) applied its database.

    Args:
        lib: a ``GraphExecutorFactoryModule`` or a VM ``Executable`` compiled in this process
            (their ``kernels``: name -> ``LoweredFunc``).

    Returns:
        :class:`DatabaseReport`; without a database every kernel lands in ``not_tuned``
        (nothing was looked up).
    """
    rep = DatabaseReport(mod_name=getattr(lib, "libmod_name", "default"))
    for name, k in lib.kernels.items():
        item = (name, _shape(k))
        rule = k.schedule_rule.split("+")[0]  # "+batch_loop": the batch-1 kernel's rule
        if rule.startswith("database"):
            (rep.untuned_faster if rule.endswith(":untuned") else rep.tuned).append(item)
        elif k.database_miss == NO_RECORD:
            rep.no_record.append(item)
        elif k.database_miss in ("", NOT_TUNED, "dynamic shape"):
            rep.not_tuned.append(item)
        else:
            rep.not_applied.append((*item, k.database_miss))
    return rep


__all__ = ["DatabaseReport", "database_report"]
