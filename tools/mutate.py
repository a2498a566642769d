"""Mutation testing with mutmut on the modules that carry correctness, under a time budget.

    python tools/mutate.py hull --budget-s 900        # one target
    python tools/mutate.py --budget-s 3600            # every target, one after the other
    python tools/mutate.py hull --report-only         # re-read a finished (or cut) run

mutmut 3 reads its settings from pyproject.toml and mutates in place under `mutants/`, so each
target runs in a scratch copy of the repository, build/mutmut/<target>/, whose pyproject.toml
gets a [tool.mutmut] section naming the one module to mutate and the tests that exercise it.
Each run starts afresh, since results from older tests would be stale; a run cut by the
budget keeps what it has, and `--resume` carries on from there (mutmut skips mutants that
already have a result). The survivors report is written to
build/mutmut/<target>/survivors.md: the score, then each surviving mutant's diff. Triaged
survivors (equivalent mutants, with the reason) are listed in tools/mutation-survivors.md.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRATCH = ROOT / "build" / "mutmut"
COPIED = ("app", "models", "tests", "checkpoints", "content", "templates", "static")


@dataclass(frozen=True)
class Target:
    module: str  # the file to mutate
    tests: tuple[str, ...]  # the test files (or pytest node ids) that exercise it


TARGETS = {
    "entmax": Target(
        "models/entmax.py",
        (
            "tests/test_entmax.py",
            "tests/test_entmax_properties.py",
        ),
    ),
    "pointer": Target(
        "models/pointer.py",
        (
            "tests/test_pointer.py",
            "tests/test_pointer_sample.py",
        ),
    ),
    "seq2seq": Target(
        "models/seq2seq.py",
        (
            "tests/test_seq2seq.py",
            "tests/test_translation_big.py",
        ),
    ),
    "hull": Target(
        "models/tasks/hull.py",
        ("tests/test_tasks_hull.py",),
    ),
    "tsp": Target(
        "models/tasks/tsp.py",
        ("tests/test_tasks_tsp.py",),
    ),
    "limits": Target(
        "app/limits.py",
        (
            *(
                f"tests/test_hardening.py::{name}"  # its limit tests, not the whole file
                for name in (
                    "test_an_oversized_body_is_refused_before_parsing",
                    "test_the_body_limit_also_guards_endpoints_outside_fastapi",
                    "test_the_rate_limit_answers_429_with_retry_after",
                    "test_the_rate_limit_can_be_switched_off",
                    "test_limits_are_documented_in_the_schema",
                    "test_the_bucket_refills_at_the_configured_rate",
                    # limits at their edges (the section at the end of the file)
                    "test_a_lemma_of_exactly_the_maximum_length_is_accepted",
                    "test_a_body_of_exactly_the_cap_is_accepted_and_one_byte_more_is_not",
                    "test_pruning_forgets_full_buckets_and_keeps_a_drained_client_drained",
                    "test_every_security_header_is_sent_with_its_value",
                    "test_a_declared_oversized_body_gets_the_whole_json_answer_with_its_size",
                    "test_a_streamed_oversized_body_is_refused_with_the_sentence_for_an_unknown_size",
                    "test_a_refusal_after_the_answer_started_is_not_answered_twice",
                    "test_other_http_errors_pass_through_the_body_limit",
                    "test_the_rate_limit_counts_per_address_not_per_connection",
                    "test_a_429_says_when_to_come_back_in_whole_seconds",
                    "test_pruning_waits_until_a_bucket_has_refilled_completely",
                    "test_freed_memory_goes_back_and_arenas_are_capped_on_glibc",
                )
            ),
        ),
    ),
}


def toml_list(items: list[str]) -> str:
    return "[" + ", ".join(f'"{item}"' for item in items) + "]"


def mutmut_section(target: Target) -> str:
    tests = [t for t in target.tests if (ROOT / t.split("::")[0]).exists()]
    data = [c for c in COPIED if c not in ("app", "models")]
    return (
        "\n[tool.mutmut]\n"
        'source_paths = ["app", "models"]\n'
        f"only_mutate = {toml_list([target.module])}\n"
        f"also_copy = {toml_list(data)}\n"
        f"pytest_add_cli_args_test_selection = {toml_list(tests)}\n"
        'pytest_add_cli_args = ["-q", "-p", "no:cacheprovider", "-m", "not browser"]\n'
    )


def prepare(name: str, target: Target, resume: bool) -> Path:
    """The scratch copy for one target, with today's sources and tests."""
    scratch = SCRATCH / name
    if not resume:
        shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True, exist_ok=True)
    for folder in COPIED:
        shutil.rmtree(scratch / folder, ignore_errors=True)
        ignore = shutil.ignore_patterns("__pycache__", "browser", "*.pyc")
        shutil.copytree(ROOT / folder, scratch / folder, ignore=ignore)
    pyproject = (ROOT / "pyproject.toml").read_text()
    (scratch / "pyproject.toml").write_text(pyproject + mutmut_section(target))
    return scratch


HANG_S = 180  # a mutant's test run this long loops forever: the target tests take 5-40 s


def end_hung_mutants(stop: threading.Event) -> None:
    """mutmut did not end a worker whose mutant loops forever (one in length_bucketed_batches
    did); end any worker older than HANG_S. mutmut records the kill, which counts as caught:
    a hang fails a test run as surely as an assert."""
    while not stop.wait(5):
        listing = subprocess.run(
            ["ps", "-eo", "pid=,etimes=,args="], capture_output=True, text=True
        ).stdout
        for line in listing.splitlines():
            pid, age, command = line.split(None, 2)
            if command.startswith("mutmut: ") and int(age) > HANG_S:
                print(f"ended a hung run: {command}", flush=True)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)


def mutmut(scratch: Path, *args: str, timeout_s: float | None = None) -> str:
    """mutmut's output; at the timeout its whole process group (the workers too) is ended."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    stop = threading.Event()
    threading.Thread(target=end_hung_mutants, args=(stop,), daemon=True).start()
    try:
        return _mutmut(scratch, env, args, timeout_s)
    finally:
        stop.set()


def _mutmut(scratch: Path, env: dict, args: tuple[str, ...], timeout_s: float | None) -> str:
    with subprocess.Popen(
        [sys.executable, "-m", "mutmut", *args],
        cwd=scratch,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    ) as process:
        try:
            return process.communicate(timeout=timeout_s)[0]
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                out = process.communicate(timeout=30)[0]
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                out = process.communicate()[0]
            return out + "\n(cut by the time budget)\n"


def statuses(scratch: Path) -> dict[str, str]:
    """mutant name -> status (killed, survived, timeout, no tests, not checked, …)."""
    listing = mutmut(scratch, "results", "--all", "true")
    found = re.findall(r"^\s+(\S+): (.+)$", listing, flags=re.MULTILINE)
    return {name: status.strip() for name, status in found}


def write_report(name: str, scratch: Path, elapsed_s: float) -> str:
    result = statuses(scratch)
    counts: dict[str, int] = {}
    for status in result.values():
        counts[status] = counts.get(status, 0) + 1
    # a mutant that hangs or crashes the test process is caught as surely as a failed assert
    killed = sum(counts.get(status, 0) for status in ("killed", "timeout", "segfault"))
    tried = sum(n for status, n in counts.items() if status != "not checked")
    score = f"{killed}/{tried} killed ({100 * killed / tried:.0f}%)" if tried else "nothing tried"
    tally = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "no results"
    summary = (
        f"{name} ({TARGETS[name].module}): {score}; {len(result)} mutants ({tally}); "
        f"{elapsed_s:.0f} s this run"
    )
    lines = [f"# Mutation survivors: {name}", "", summary, ""]
    for mutant, status in sorted(result.items()):
        if status in ("killed", "timeout", "not checked"):
            continue
        diff = mutmut(scratch, "show", mutant).strip()
        lines += [f"## {mutant} ({status})", "", "```diff", diff, "```", ""]
    (scratch / "survivors.md").write_text("\n".join(lines))
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", help=f"any of {', '.join(TARGETS)}; default all")
    parser.add_argument("--budget-s", type=float, default=900, help="wall time for all targets")
    parser.add_argument("--workers", type=int, default=1, help="mutants tested at once")
    parser.add_argument("--report-only", action="store_true", help="do not run; report only")
    parser.add_argument("--resume", action="store_true", help="keep an earlier run's results")
    args = parser.parse_args()
    unknown = set(args.targets) - TARGETS.keys()
    if unknown:
        parser.error(
            f"unknown target {', '.join(sorted(unknown))}; choose from {', '.join(TARGETS)}"
        )
    deadline = time.monotonic() + args.budget_s
    for name in args.targets or list(TARGETS):
        start = time.monotonic()
        scratch = SCRATCH / name if args.report_only else prepare(name, TARGETS[name], args.resume)
        left = deadline - start
        if not args.report_only and left > 0:
            log = mutmut(scratch, "run", "--max-children", str(args.workers), timeout_s=left)
            (scratch / "run.log").write_text(log)
        summary = write_report(name, scratch, time.monotonic() - start)
        print(summary, f"\n  survivors: {(scratch / 'survivors.md').relative_to(ROOT)}")


if __name__ == "__main__":
    main()
