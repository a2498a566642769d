"""Mutation testing with mutmut on the modules that carry correctness, under a time budget.

    python tools/mutate.py hull --budget-s 900        # one target
    python tools/mutate.py --budget-s 3600            # every target, one after the other
    python tools/mutate.py hull --report-only         # re-read a finished (or cut) run
    python tools/mutate.py hull --resume --survivors  # after new tests: the survivors again

mutmut 3 reads its settings from pyproject.toml and mutates in place under `mutants/`, so each
target runs in a scratch copy of the repository, build/mutmut/<target>/, whose pyproject.toml
gets a [tool.mutmut] section naming the one module to mutate and the tests that exercise it.
Each run starts afresh, since results from older tests would be stale; a run cut by the
budget keeps what it has, and `--resume` carries on from there (mutmut skips mutants that
already have a result). After new tests, `--resume --survivors` tests again only the mutants
that survived (or had no tests) in the last run, against today's tests, and keeps every other
result: minutes instead of a whole run. The survivors report is written to
build/mutmut/<target>/survivors.md: the score, then each surviving mutant's diff. Triaged
survivors (equivalent mutants, with the reason) are listed in tools/mutation-survivors.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
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
COPIED = (
    "app",
    "models",
    "tests",
    "bench",
    "checkpoints",
    "content",
    "templates",
    "static",
    "deploy",
)


@dataclass(frozen=True)
class Target:
    module: str  # the file to mutate
    tests: tuple[str, ...]  # the test files (or pytest node ids) that exercise it
    settings: str = ""  # more [tool.mutmut] lines, for this target only


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
    # --- the web layer (issue 43): each family's request models and views, then the shared
    # modules; each with the behaviour tests that exercise it (not the fuzzing or browser ones)
    "url-state": Target(
        "app/pointer/url_state.py",
        ("tests/test_pointer_url_state.py", "tests/test_web_mutation_gaps.py"),
    ),
    "pointer-requests": Target(
        "app/pointer/requests.py",
        (
            "tests/test_pointer_requests.py",
            "tests/test_api_pointer.py",
            "tests/test_pointer_url_state.py",
            "tests/test_hardening_requests.py",
        ),
    ),
    "pointer-views": Target(
        "app/pointer/views.py",
        (
            "tests/test_pointer_result_view.py",
            "tests/test_pointer_board_figure.py",
            "tests/test_computed_sentences.py",
            "tests/test_api_pointer.py",
            "tests/test_board_labels.py",
            "tests/test_pointer_sample.py",
        ),
    ),
    "pointer-board": Target(
        "app/pointer/board.py",
        (
            "tests/test_pointer_board_figure.py",
            "tests/test_computed_sentences.py",
            "tests/test_api_pointer.py",
        ),
    ),
    "seq2seq-requests": Target(
        "app/seq2seq/requests.py",
        (
            "tests/test_seq2seq_requests.py",
            "tests/test_api_seq2seq.py",
            "tests/test_seq2seq_service.py",
        ),
    ),
    "seq2seq-views": Target(
        "app/seq2seq/service.py",
        (
            "tests/test_seq2seq_views.py",
            "tests/test_seq2seq_service.py",
            "tests/test_api_seq2seq.py",
        ),
    ),
    "your-turn": Target("app/pointer/your_turn.py", ("tests/test_your_turn.py",)),
    "learning": Target("app/learning.py", ("tests/test_learning.py",)),
    "entmax-requests": Target(
        "app/entmax/requests.py",
        ("tests/test_api_entmax.py", "tests/test_entmax_figure.py", "tests/test_reader_terms.py"),
    ),
    "entmax-views": Target(
        "app/entmax/figures.py",
        (
            "tests/test_api_entmax.py",
            "tests/test_entmax_figure.py",
            "tests/test_entmax_family_figures.py",
        ),
    ),
    "routing-requests": Target(
        "app/routing/requests.py",
        ("tests/test_api_routing.py", "tests/test_api_schema_names.py"),
    ),
    "routing-views": Target("app/routing/service.py", ("tests/test_api_routing.py",)),
    "errors": Target(
        "app/errors.py",
        (
            "tests/test_error_sentences.py",
            "tests/test_errors_and_responses.py",
            "tests/test_api_pointer.py",
            "tests/test_hardening_requests.py",
            "tests/test_web_mutation_gaps.py",
        ),
    ),
    "security": Target(
        "app/security.py",
        (
            "tests/test_hardening.py",
            "tests/test_hardening_proxy.py",
            "tests/test_proxy_trust.py",
        ),
    ),
    "compute": Target("app/compute.py", ("tests/test_hardening_requests.py",)),
    "content": Target("app/content.py", ("tests/test_content.py", "tests/test_page_numbers.py")),
    "takeaways": Target(
        "app/result_takeaways.py",
        ("tests/test_result_takeaways.py", "tests/test_reader_terms.py"),
    ),
    "widgets": Target(
        "app/widgets/__init__.py",
        (
            "tests/test_widget_renderer.py",
            "tests/test_page_gate.py",
            "tests/test_pages.py",
            "tests/test_reader_terms.py",
            "tests/test_result_values.py",
        ),
    ),
    "results-table": Target(
        "app/widgets/results_table.py",
        ("tests/test_result_values.py", "tests/test_reader_terms.py", "tests/test_pages.py"),
    ),
    "try-this": Target(
        "app/widgets/try_this.py",
        ("tests/test_reader_terms.py", "tests/test_pages.py"),
    ),
    # --- the models' entry points and kernels
    # the two-thread tests start GNU OpenMP's thread pool, and a process forked from one that
    # has started it is ended with SIGTERM ("suspicious"): each mutant is forked from a server
    # that has only collected the tests
    "entmax-kernels": Target(
        "models/entmax_kernels.py",
        ("tests/test_entmax_kernels.py", "tests/test_entmax.py"),
        'process_isolation = "forkserver"\n',
    ),
    "pointer-run": Target(
        "models/pointer_run.py",
        ("tests/test_pointer_run.py", "tests/test_api_pointer.py", "tests/test_snapshots.py"),
    ),
    # the entry point's own tests: tests/test_api_seq2seq.py also calls it, through the app
    # and every shipped model, at 30-60 s a mutant on this machine
    "seq2seq-run": Target(
        "models/seq2seq_run.py",
        ("tests/test_computed_sentences.py", "tests/test_seq2seq_service.py"),
    ),
    "references": Target("models/references.py", ("tests/test_references.py",)),
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
        f"{target.settings}"
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


EARLIER = "earlier-verdicts.json"  # in a scratch copy: the verdicts before a --survivors run


def verdicts(scratch: Path) -> dict[str, str]:
    """`statuses`, with the verdicts of an earlier run kept for the mutants a --survivors run
    did not test again (mutmut forgets every verdict when the test selection changes; a mutant
    the earlier tests killed is still killed, since those tests are still there)."""
    result = statuses(scratch)
    earlier_file = scratch / EARLIER
    if earlier_file.exists():
        earlier = json.loads(earlier_file.read_text())
        for mutant, status in result.items():
            if status == "not checked" and earlier.get(mutant, "not checked") != "not checked":
                result[mutant] = earlier[mutant]
    return result


def survivors(scratch: Path) -> list[str]:
    """The mutants an earlier run in `scratch` did not kill, did not reach before its budget
    ran out, or saw end by a signal ("suspicious") (none without an earlier run);
    the verdicts are kept in the scratch copy for the report after the new run."""
    if not (scratch / "mutants").is_dir():
        return []
    earlier = verdicts(scratch)
    (scratch / EARLIER).write_text(json.dumps(earlier, indent=1, sort_keys=True))
    undecided = ("survived", "no tests", "not checked", "suspicious")
    return [m for m, status in earlier.items() if status in undecided]


def write_report(name: str, scratch: Path, elapsed_s: float) -> str:
    result = verdicts(scratch)
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
    parser.add_argument(
        "--survivors",
        action="store_true",
        help="with --resume: test again only what the last run did not kill, with today's tests",
    )
    args = parser.parse_args()
    if args.survivors and not args.resume:
        parser.error("--survivors re-tests an earlier run's survivors: give --resume too")
    unknown = set(args.targets) - TARGETS.keys()
    if unknown:
        parser.error(
            f"unknown target {', '.join(sorted(unknown))}; choose from {', '.join(TARGETS)}"
        )
    deadline = time.monotonic() + args.budget_s
    for name in args.targets or list(TARGETS):
        start = time.monotonic()
        again = survivors(SCRATCH / name) if args.survivors and not args.report_only else []
        if args.survivors and not again:
            print(f"{name}: no survivors to test again")
            continue
        scratch = SCRATCH / name if args.report_only else prepare(name, TARGETS[name], args.resume)
        left = deadline - start
        if not args.report_only and left > 0:
            workers = ("--max-children", str(args.workers))
            log = mutmut(scratch, "run", *workers, *again, timeout_s=left)
            (scratch / "run.log").write_text(log)
        summary = write_report(name, scratch, time.monotonic() - start)
        print(summary, f"\n  survivors: {(scratch / 'survivors.md').relative_to(ROOT)}")


if __name__ == "__main__":
    main()
