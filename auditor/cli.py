"""Command line: parse arguments only, then hand over to the API.

Exit codes: 0 nothing at or above ``--fail-on``; 1 a finding at or above it; 2 usage or input
error (one line on stderr, no report); 3 the data passed but a check crashed.
Heavy libraries are imported only after parsing, so ``auditor --help`` is fast.
"""
from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NoReturn, Sequence

from auditor import __version__
from auditor.core.config import SPLIT_DESIGNS

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_CRASH = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse's own code too)
        self.exit(EXIT_USAGE, f"auditor: error: {message} (see auditor --help)\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="auditor", description="Audit ML dataset splits for leakage, drift, "
                "tokenization bugs and separability; writes report.html and report.json.")
    p.add_argument("--version", action="version", version=f"auditor {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    run = sub.add_parser("run", help="audit splits described by audit.yaml or by flags")
    run.add_argument("config", nargs="?", help="audit.yaml (paths inside are relative to it)")
    for split in ("train", "val", "test"):
        run.add_argument(f"--{split}", metavar="PATH", help=f"{split} split file")
    run.add_argument("--label", help="label column")
    run.add_argument("--time", help="time column (enables temporal checks)")
    run.add_argument("--group", action="extend", nargs="+", default=[], metavar="COL",
                     help="entity column(s) that must not cross splits")
    run.add_argument("--id", action="extend", nargs="+", default=[], metavar="COL",
                     help="identifier column(s): never features, ignored by duplicate checks")
    run.add_argument("--text", action="extend", nargs="+", default=[], metavar="COL",
                     help="free-text column(s)")
    run.add_argument("--exclude", action="extend", nargs="+", default=[], metavar="COL",
                     help="column(s) to ignore entirely")
    run.add_argument("--split", default=None, choices=SPLIT_DESIGNS,
                     help="how the splits were made, stated in the report and read by the "
                          "checks that depend on it (default: config, else inferred from the "
                          "data)")
    run.add_argument("--seed", type=int, default=None, help="random seed (default: config or 0)")
    _csv_arguments(run)
    run.add_argument("--no-sample", action="store_true",
                     help="data beyond the memory budget are an error (exit 2) instead of "
                          "being audited on a seeded sample")
    run.add_argument("--write-clean", metavar="DIR", default=None,
                     help="tokens.contamination writes each evaluation split without its "
                          "contaminated rows to DIR/<split>.parquet; tokens.benchmarks the "
                          "training split without the documents holding benchmark problems")
    run.add_argument("--engine", choices=["polars", "spark"], default=None,
                     help="where the measuring runs (default: config or polars)")
    run.add_argument("--spark-master", metavar="URL", default=None,
                     help="Spark master for --engine spark (default local[*])")
    run.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                     help="a Spark setting for --engine spark (repeatable)")
    _common(run)
    _workflow_options(run)

    scan = sub.add_parser("scan-code", help="scan .py scripts / .ipynb notebooks for "
                          "preprocessing fitted before the split (static analysis, no execution)")
    scan.add_argument("paths", nargs="+", metavar="PATH", help="files or directories")
    scan.add_argument("--fitter", action="extend", nargs="+", default=[], metavar="NAME",
                      help="extra transformer class/function names to treat as fitted on data")
    _common(scan, suite=False)

    demo = sub.add_parser("demo", help="audit bundled deterministic data with planted problems")
    _common(demo, suite=False)
    _export_expectations(sub)

    verify = sub.add_parser("verify", help="exit 0 when the inputs recorded in a report.json "
                            "are unchanged, 1 naming the changed file")
    verify.add_argument("report", metavar="REPORT_JSON", help="a report.json of auditor run")
    verify.add_argument("--config", metavar="AUDIT_YAML", default=None,
                        help="also compare the audit.yaml now with the config the report "
                             "recorded (roles, suite, thresholds, waivers; not data paths)")
    verify.add_argument("--root", metavar="DIR", default=None,
                        help="the inputs moved: look each recorded file up under DIR, at its "
                             "place relative to the folder that held them all")
    verify.add_argument("--tokenizer", metavar="SPEC", default=None,
                        help="the tokenizer moved: load it from SPEC instead of the recorded "
                             "one (its probes are still compared with the recorded ids)")
    verify.add_argument("-q", "--quiet", action="store_true", help="no output, exit code only")

    history = sub.add_parser("history", help="an HTML page of trends over the runs kept in "
                             "a ledger")
    history.add_argument("--ledger", metavar="PATH|URL", default=None,
                         help="SQLite file or SQLAlchemy URL (default reports/ledger.sqlite)")
    history.add_argument("--out", metavar="DIR", default=None,
                         help="output directory for history.html (default reports/history)")
    return p


def _workflow_options(p: argparse.ArgumentParser) -> None:
    """Options of `run` for scheduled audits and sign-off (auditor.signoff.ledger, .baseline,
    .provenance, .ci_outputs)."""
    p.add_argument("--ledger", metavar="PATH|URL", default=None,
                   help="append this run to a ledger: SQLite file or SQLAlchemy URL "
                        "(default: ledger: in audit.yaml, else none)")
    p.add_argument("--no-ledger", action="store_true",
                   help="do not append this run to the ledger of audit.yaml (an ad-hoc run)")
    p.add_argument("--baseline", metavar="PATH|last", default=None,
                   help="mark findings new/persisting/resolved against a previous report.json"
                        " ('last': the newest run in the ledger or next to --out)")
    p.add_argument("--junit", metavar="PATH", default=None,
                   help="also write a JUnit XML file (one test case per check)")
    p.add_argument("--summary-md", metavar="PATH", default=None,
                   help="also write a Markdown verdict (e.g. $GITHUB_STEP_SUMMARY)")
    p.add_argument("--hash", choices=["full", "fast"], default="full",
                   help="input hashes recorded for `auditor verify`: full SHA-256 (default) "
                        "or fast (Parquet footer + size + mtime)")


def _common(p: argparse.ArgumentParser, suite: bool = True) -> None:
    p.add_argument("--out", metavar="DIR", help="output directory (default reports/<UTC time>)")
    if suite:  # `run`: also the gate of a scheduled audit against its baseline
        p.add_argument("--suite", metavar="NAME|PATH", help="suite name in checks/ or a path")
        p.add_argument("--fail-on", choices=["warn", "fail", "new"], default="fail",
                       help="lowest severity that makes the exit code 1 (default: fail); new: "
                            "only a fail the --baseline did not hold")
    else:
        p.add_argument("--fail-on", choices=["warn", "fail"], default="fail",
                       help="lowest severity that makes the exit code 1 (default: fail)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress or summary output")
    p.add_argument("-v", "--verbose", action="store_true", help="log details (tracebacks of "
                   "crashed checks) to stderr")


def _csv_arguments(parser: Any) -> None:
    parser.add_argument("--csv-delimiter", metavar="CHAR", default=None,
                        help="delimiter of CSV split files (default ',', a tab for .tsv; "
                             "audit.yaml csv: delimiter)")
    parser.add_argument("--csv-decimal", choices=[".", ","], default=None,
                        help="decimal mark of CSV split files (',' with --csv-delimiter ';')")


def _csv_format(base: Any, args: Any) -> Any:
    """``base`` (an audit.yaml's ``csv:``, or the defaults) with the CSV flags given applied;
    a bad delimiter is one ConfigError line."""
    from pydantic import ValidationError

    from auditor.core.config import CsvFormat
    from auditor.errors import ConfigError

    given = {k: v for k, v in (("delimiter", args.csv_delimiter), ("decimal", args.csv_decimal))
             if v is not None}
    if not given:
        return base
    try:
        return CsvFormat(**{**(base.model_dump() if base is not None else {}), **given})
    except ValidationError as err:
        raise ConfigError(f"--csv-delimiter/--csv-decimal: "
                          f"{err.errors()[0]['msg'].removeprefix('Value error, ')}") from None


def _export_expectations(sub: Any) -> None:
    exp = sub.add_parser("export-expectations", help="write a Great Expectations suite inferred "
                         "from one split (types, null-rate bounds, category sets, quantile "
                         "ranges) for schema.expectations")
    exp.add_argument("config", nargs="?", help="audit.yaml (its column roles are used)")
    exp.add_argument("--from", dest="from_split", metavar="SPLIT",
                     help="split of audit.yaml to learn from (default: the first)")
    exp.add_argument("--train", metavar="PATH", help="learn from this file instead of a YAML")
    exp.add_argument("--out", metavar="FILE", help="suite JSON to write (default: stdout)")
    exp.add_argument("--name", help="suite name (default auditor-<split>)")
    for flag, what in (("--id", "identifier"), ("--group", "entity"),
                       ("--exclude", "ignored")):
        exp.add_argument(flag, action="extend", nargs="+", default=[], metavar="COL",
                         help=f"{what} column(s)")
    exp.add_argument("--time", help="time column (type and nulls only)")
    exp.add_argument("--null-slack", type=float, default=0.01, metavar="S",
                     help="null-rate band: the split's null share +- S (default 0.01)")
    exp.add_argument("--quantile-slack", type=float, default=0.05, metavar="D",
                     help="quantile q allowed between the split's quantiles at q-D and q+D "
                          "(default 0.05)")
    exp.add_argument("--max-categories", type=int, default=50, metavar="N",
                     help="text columns with at most N values get a value set (default 50)")
    exp.add_argument("--min-eval-rows", type=int, default=1000, metavar="N",
                     help="bands allow the sampling noise of evaluation splits of N rows "
                          "(default 1000)")
    _csv_arguments(exp)


def default_out_dir(base: Path | None = None) -> Path:
    """``reports/<UTC time>`` under ``base`` (the audit.yaml's folder; the working directory
    for flags): the name only, see :func:`prepare_out_dir` for its uniqueness."""
    return (base or Path()) / "reports" / datetime.now(timezone.utc).strftime(
        "%Y-%m-%dT%H-%M-%SZ")


# folders this process created (deepest last): removed again, when still empty, if the run
# ends with a usage or input error, so a refused run leaves nothing behind
_CREATED: list[Path] = []


def _mkdirs(path: Path) -> None:
    missing = []
    p = path
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    path.mkdir(parents=True, exist_ok=True)
    _CREATED.extend(reversed(missing))


def remove_created_dirs() -> None:
    """Remove the folders this run created, deepest first, where they are still empty."""
    while _CREATED:
        try:
            _CREATED.pop().rmdir()
        except OSError:
            pass


def prepare_out_dir(out: str | None, base: Path | None = None) -> Path:
    """Create the output directory and prove it is writable before any work is done (with a
    uniquely named probe: concurrent runs into one folder must not race). The default folder
    is new for every run: two runs in the same second get ``...Z`` and ``...Z-2``. Temporary
    files that killed runs left in the folder are removed."""
    from auditor.errors import InputError
    from auditor.report.output import clean_stale_temp_files, probe_writable

    path = Path(out) if out else default_out_dir(base)
    try:
        if out:
            _mkdirs(path)
        else:
            _mkdirs(path.parent)
            stem = path
            for k in range(2, 10_000):
                try:
                    path.mkdir()
                    _CREATED.append(path)
                    break
                except FileExistsError:
                    path = stem.with_name(f"{stem.name}-{k}")
        probe_writable(path)
    except OSError as err:
        if path.exists() and not path.is_dir():  # was "not writable (File exists)"
            raise InputError(f"{path}: is a file, not a directory; --out names the folder "
                             "the report is written into") from None
        raise InputError(f"{path}: output directory is not writable ({err.strerror or err})") \
            from None
    clean_stale_temp_files(path)
    return path


def entry() -> NoReturn:
    """The ``auditor`` command: :func:`main`, then exit without tearing the interpreter down.
    Everything the run writes is closed by then (reports are renamed into place, stdout and
    stderr and logging are flushed here), while Python's module teardown of the scientific
    stack alone takes 0.3-0.5 s (measured: ``import sklearn.ensemble`` then exit, 0.3 s after
    the import finished)."""
    try:
        code = main()
    except SystemExit as stop:  # argparse: --help, usage errors
        code = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
        if isinstance(stop.code, str):
            print(stop.code, file=sys.stderr)
    import logging

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more to say
            pass
    try:  # C stdio buffers of native libraries, which os._exit would drop
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):
        pass
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _CREATED.clear()  # folders of an earlier main() in this process are not this run's
    from auditor.core.allocator import tune_for_batch

    tune_for_batch()
    if args.command is None:
        build_parser().print_help(sys.stderr)
        return EXIT_USAGE
    if getattr(args, "verbose", False):
        import logging
        logging.basicConfig(level=logging.DEBUG, format="%(name)s: %(message)s")
    from auditor.errors import AuditorError

    from auditor.report.output import terminal_safe

    try:
        if args.command == "demo":
            return _demo(args)
        if args.command == "scan-code":
            return _scan_code(args)
        if args.command == "export-expectations":
            return _export_command(args)
        if args.command == "verify":
            return _verify(args)
        if args.command == "history":
            return _history(args)
        return _run(args)
    except AuditorError as err:
        remove_created_dirs()
        print(f"auditor: error: {terminal_safe(err)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("auditor: interrupted; no report was written", file=sys.stderr)
        return 130
    except MemoryError:
        print("auditor: error: out of memory while loading the data; sample the splits or run "
              "on a larger machine", file=sys.stderr)
        return EXIT_USAGE
    except Exception as err:  # a bug of ours outside any check: one line, not a traceback
        import logging
        logging.getLogger("auditor").debug("internal error", exc_info=True)
        print(f"auditor: internal error: {type(err).__name__}: {terminal_safe(err)} (rerun "
              "with --verbose for the traceback; no report was written)", file=sys.stderr)
        return EXIT_CRASH


def _run(args: argparse.Namespace) -> int:
    from auditor.core.config import apply_column_flags, config_from_flags, load_config

    flags = any([args.train, args.val, args.test])
    if args.config and flags:
        from auditor.errors import ConfigError
        raise ConfigError("give either an audit.yaml or --train/--test flags, not both")
    base = None
    if args.config:
        cfg = load_config(args.config)
        base = Path(args.config).resolve().parent
        # column flags override the YAML's keys (documented in the README), never ignored
        cfg = apply_column_flags(cfg, label=args.label, time=args.time, groups=args.group,
                                 ids=args.id, text=args.text, exclude=args.exclude)
        if args.seed is not None:  # model_copy does not validate: check here
            from auditor.core.config import check_seed
            cfg = cfg.model_copy(update={"seed": check_seed(args.seed, "--seed")})
    else:
        cfg = config_from_flags(train=args.train, val=args.val, test=args.test,
                                label=args.label, time=args.time, groups=args.group,
                                ids=args.id, text=args.text, exclude=args.exclude,
                                seed=args.seed or 0)
    if args.write_clean:
        from auditor.errors import ConfigError
        from auditor.core.suites import read_suite

        suite_name = args.suite or cfg.suite
        suite = read_suite(suite_name)
        able = [c for c, ok in (("tokens.contamination", cfg.tokens is not None),
                                ("tokens.benchmarks", bool(cfg.benchmarks) and bool(
                                    cfg.tokens or cfg.columns.text))) if ok]
        writers = [c for c in able if c in suite]
        if not able:
            raise ConfigError("--write-clean needs a tokens: section (tokens.contamination "
                              "writes the evaluation splits without the documents found in "
                              "train) or a benchmarks: section with a text column "
                              "(tokens.benchmarks writes train without benchmark problems)")
        if not writers:
            raise ConfigError(f"--write-clean: suite {suite_name!r} does not run "
                              f"{' or '.join(able)}")
        over = dict(cfg.thresholds)
        for c in writers:
            over[c] = {**over.get(c, {}), "clean_dir": str(Path(args.write_clean).resolve())}
        cfg = cfg.model_copy(update={"thresholds": over})
    if args.csv_delimiter is not None or args.csv_decimal is not None:
        cfg = cfg.model_copy(update={"csv": _csv_format(cfg.csv, args)})
    if args.no_sample:
        cfg = cfg.model_copy(update={"sample": False})
    if args.split:
        from auditor.core.config import check_split
        cfg = cfg.model_copy(update={"split": args.split})
        check_split(cfg, "--split")
    if args.engine or args.spark_master or args.spark_conf:
        from auditor.engines.spark_io import parse_conf
        cfg = cfg.model_copy(update={
            "engine": args.engine or cfg.engine,
            "spark_master": args.spark_master or cfg.spark_master,
            "spark_conf": {**cfg.spark_conf, **parse_conf(args.spark_conf)}})
    inputs = run_inputs(cfg, args.config)
    from auditor.report.output import refuse_overwriting_inputs

    if args.no_ledger and args.ledger:
        from auditor.errors import ConfigError
        raise ConfigError("--ledger and --no-ledger contradict each other: give one")
    if args.fail_on == "new" and not args.baseline:
        from auditor.errors import ConfigError
        raise ConfigError("--fail-on new gates on the failing findings a baseline did not "
                          "hold: add --baseline last (the newest run in the ledger or next to "
                          "--out) or --baseline PATH/report.json")
    ledger = None if args.no_ledger else (args.ledger or cfg.ledger)
    named = {"--junit": getattr(args, "junit", None),
             "--summary-md": getattr(args, "summary_md", None),
             "--ledger": ledger if ledger and "://" not in ledger else None}
    extra = {k: Path(v) for k, v in named.items() if v}
    for folder in ([Path(args.out)] if args.out else []):  # refused runs create nothing
        refuse_overwriting_inputs([*_report_paths(folder), *extra.values()], inputs)
        _refuse_colliding(folder, extra)
    out = prepare_out_dir(args.out, base)
    refuse_overwriting_inputs([*_report_paths(out), *extra.values()], inputs)
    _refuse_colliding(out, extra)
    return execute(cfg, out, suite=args.suite, fail_on=args.fail_on, quiet=args.quiet,
                   hash_mode=args.hash, baseline=args.baseline, ledger=ledger,
                   junit=args.junit, summary_md=args.summary_md)


def _report_paths(out: Path) -> list[Path]:
    return [out / "report.json", out / "report.html"]


def _refuse_colliding(out: Path, extra: dict[str, Path]) -> None:
    """--junit / --summary-md / --ledger onto the report pair or onto each other: refused."""
    from auditor.report.output import refuse_colliding_outputs

    refuse_colliding_outputs({"report.json": out / "report.json",
                              "report.html": out / "report.html", **extra})


def run_inputs(cfg: Any, config_path: str | None = None) -> list[Path]:
    """Every file the run reads (splits, reference, pipeline scripts, the audit.yaml, a suite
    file, an expectation suite, a local tokenizer): outputs must never resolve to one of
    them."""
    paths = [Path(p) for p in cfg.datasets.values()]
    if cfg.reference is not None:
        paths.append(Path(cfg.reference))
    paths += [Path(p) for p in cfg.pipeline]
    if config_path:
        paths.append(Path(config_path))
    if str(cfg.suite).endswith((".yaml", ".yml")):
        paths.append(Path(cfg.suite))
    if cfg.expectations is not None:
        paths.append(Path(cfg.expectations))
    if cfg.tokens is not None:  # a local tokenizer file or folder (absolute once resolved)
        kind, sep, rest = cfg.tokens.tokenizer.partition(":")
        local = Path(rest if sep and kind != "tiktoken" else cfg.tokens.tokenizer)
        if local.is_absolute():
            paths.append(local)
    return paths


def _demo(args: argparse.Namespace) -> int:
    from auditor.core.config import load_config
    from auditor.loading.demo import write_demo

    out = prepare_out_dir(args.out)
    config_path = write_demo(out / "data")
    cfg = load_config(config_path)
    code = execute(cfg, out, suite=None, fail_on=args.fail_on, quiet=args.quiet)
    try:  # the tokenized example needs the `tokens` extra (tokenizers)
        from auditor.loading.demo_tokens import write_token_demo
        token_cfg = load_config(write_token_demo(out / "tokens" / "data"))
    except ImportError as err:
        print(f"(tokenized demo skipped: {err}; install auditor[tokens])", file=sys.stderr)
    else:
        token_code = execute(token_cfg, out / "tokens", suite=None, fail_on=args.fail_on,
                             quiet=args.quiet)
        code = EXIT_FINDINGS if EXIT_FINDINGS in (code, token_code) else max(code, token_code)
    if code == EXIT_FINDINGS and not args.quiet:
        print("The demo data has planted problems, so a non-zero exit code is the expected "
              "outcome: the audit caught them.", file=sys.stderr)
    return code


def _scan_code(args: argparse.Namespace) -> int:
    from auditor.api import scan_report

    from auditor.core.inputs import check_input_path
    from auditor.report.output import refuse_overwriting_inputs

    paths = [Path(p) for p in args.paths]
    for p in paths:  # a FIFO would block the reader forever
        check_input_path(p)
    if args.out:
        refuse_overwriting_inputs(_report_paths(Path(args.out)), paths)
    out = prepare_out_dir(args.out)
    return publish(scan_report(paths, args.fitter), out, fail_on=args.fail_on, quiet=args.quiet)


def execute(cfg: Any, out: Path, *, suite: str | None, fail_on: str, quiet: bool,
            hash_mode: str = "full", baseline: str | None = None, ledger: str | None = None,
            junit: str | None = None, summary_md: str | None = None) -> int:
    """Run the audit, write report.json then report.html atomically, print the verdict;
    then the CI outputs (``junit``, ``summary_md``) and the ledger entry when asked. The
    ledger and the baseline are opened before the run: unusable ones fail fast (exit 2)."""
    from auditor.api import run_audit

    if baseline is not None and baseline != "last":  # refused before the ledger is created
        from auditor.report.results import read_report
        read_report(baseline)
    store = None
    if ledger:
        from auditor.signoff.ledger import Ledger
        store = Ledger(ledger)
    first_run = False
    if baseline == "last":
        from auditor.signoff.baseline import latest_report
        found = latest_report(out, ledger)
        baseline, first_run = (str(found) if found else None), found is None
    progress = not quiet and sys.stderr.isatty() and not os.environ.get("CI")
    report = run_audit(cfg, suite=suite, progress=progress, hash_mode=hash_mode,
                       baseline=baseline, history=store)
    if first_run:
        from auditor.signoff.baseline import NO_BASELINE_NOTE
        report.notes.append(NO_BASELINE_NOTE)
    code = publish(report, out, fail_on=fail_on, quiet=quiet)
    if junit or summary_md or store is not None:
        from auditor.report.output import output_errors, write_atomic

        doc = report.to_dict()
        if junit:
            from auditor.report.ci_outputs import junit_xml
            with output_errors(junit):
                write_atomic(Path(junit), junit_xml(doc, fail_on))
        if summary_md:
            from auditor.report.ci_outputs import summary_markdown
            with output_errors(summary_md):
                write_atomic(Path(summary_md), summary_markdown(doc, fail_on, code))
        if store is not None:
            store.append(doc, report_path=out / "report.json")
    return code


def _verify(args: argparse.Namespace) -> int:
    from auditor.signoff.verify import config_changes, verify_inputs

    from auditor.errors import InputError
    from auditor.report.results import read_report

    doc = read_report(args.report)
    recorded, benchmarks = doc.get("tokenizer"), doc.get("benchmarks")
    if args.tokenizer and recorded is None:
        raise InputError(f"{args.report}: --tokenizer: the report records no tokenizer (its "
                         "audit had no tokens: section)")
    ok, changed, unverifiable = verify_inputs(args.report, args.root,
                                              more=recorded is not None or bool(benchmarks))
    if benchmarks:  # the public benchmarks the corpus was checked against
        from auditor.signoff.verify import verify_benchmarks

        same, other = verify_benchmarks(benchmarks)
        ok, changed = ok + same, changed + other
    config = config_changes(args.report, args.config) if args.config else []
    if recorded is not None:  # a tokens: section: the tokenizer must still encode as audited
        from auditor.signoff.tokenizer_record import verify_tokenizer

        same, other = verify_tokenizer(recorded, args.tokenizer)
        ok, changed = ok + same, changed + other
    if not args.quiet:
        from auditor.report.grouping import printable
        for line in ok + unverifiable:
            print(f"  {printable(line)}", file=sys.stderr)
        for line in changed:
            print(f"auditor: CHANGED {printable(line)}", file=sys.stderr)
        for line in config:
            print(f"auditor: CHANGED config: {printable(line)}", file=sys.stderr)
        print("verify: " + (f"{len(changed):,} of {len(ok) + len(changed):,} inputs changed"
                            if changed else f"all {len(ok):,} recorded inputs unchanged")
              + (" (the tokenizer counted as one)" if recorded is not None else "")
              + (f" (with {len(benchmarks):,} benchmark{'s' * (len(benchmarks) != 1)})"
                 if benchmarks else "")
              + ("" if not args.config else
                 f"; the config changed ({len(config):,} keys)" if config else
                 "; the config is the one signed off"), file=sys.stderr)
    return EXIT_FINDINGS if changed or config else EXIT_OK


def _history(args: argparse.Namespace) -> int:
    from auditor.errors import InputError
    from auditor.signoff.history import write_history
    from auditor.signoff.ledger import DEFAULT_LEDGER, is_url

    target = args.ledger or DEFAULT_LEDGER
    if not is_url(target) and not Path(target).is_file():
        raise InputError(f"{target}: ledger not found (runs are appended with auditor run "
                         "--ledger PATH or ledger: in audit.yaml)")
    from auditor.report.output import output_errors, refuse_overwriting_inputs

    ledger_file = [] if is_url(target) else [Path(target)]
    out_arg = args.out or str(Path("reports") / "history")
    refuse_overwriting_inputs([Path(out_arg) / "history.html"], ledger_file)
    out = prepare_out_dir(out_arg)
    with output_errors(out / "history.html"):
        print(write_history(target, out))
    return EXIT_OK


def publish(report: Any, out: Path, *, fail_on: str, quiet: bool) -> int:
    """Write report.json and report.html as a pair (each to a temporary file, then both
    renamed under the folder's lock: a reader never sees the json of one run with the html of
    another), print the verdict; exit code. A sampled audit says so on stderr even with
    ``--quiet``: its counts are estimates."""
    from auditor.report.output import output_errors, terminal_safe, write_files_together
    from auditor.report.render import render_html

    from auditor.report.results import report_json

    doc = report.to_dict()
    text = report_json(doc)
    with output_errors(out / "report.json"):  # disk full, read-only: exit 2, nothing written
        write_files_together(out, {"report.json": text, "report.html": render_html(doc)})
    code = report.exit_code(fail_on)
    sampled = sampled_note(report)
    if sampled and quiet:
        print(f"auditor: warning: {terminal_safe(sampled)}", file=sys.stderr)
    if not quiet:
        print_summary(report, out, code, fail_on)
    print(terminal_safe(out / "report.html"))
    return code


def sampled_note(report: Any) -> str | None:
    """The report's note saying the splits were read as samples (memory budget), if any."""
    from auditor.loading.data import SAMPLED_NOTE_START

    return next((n for n in getattr(report, "notes", None) or []
                 if n.startswith(SAMPLED_NOTE_START)), None)


def print_summary(report: Any, out: Path, code: int, fail_on: str = "fail") -> None:
    """A rich table of checks and a plain-words verdict, on stderr. Every data-derived text
    (check summaries hold column names) is escaped for the terminal: control characters shown
    as escapes, rich markup brackets escaped."""
    from rich.console import Console
    from rich.table import Table

    from auditor.report.output import terminal_safe

    colors = {"pass": "green", "warn": "yellow", "fail": "red", "error": "magenta",
              "skipped": "dim"}
    console = Console(file=sys.stderr, highlight=False)
    from auditor.report.ranks import STATUS_RANK

    ran = sorted((c for c in report.checks if c.status != "skipped"),  # skipped: one line
                 key=lambda c: -STATUS_RANK[c.status])                 # below; failing first
    if sys.stderr.isatty():
        table = Table(show_header=True, header_style="bold", expand=False)
        table.add_column("status")
        table.add_column("check")
        table.add_column("summary", overflow="fold")
        table.add_column("time", justify="right")
        for c in ran:
            table.add_row(f"[{colors[c.status]}]{c.status}[/]", terminal_safe(c.id, markup=True),
                          terminal_safe(c.summary, markup=True), f"{c.duration_s:.2f}s")
        console.print(table, markup=True)
    else:  # a log (CI, cron): a line per check, never wrapped (rich wraps at 80 columns there)
        width = max((len(c.id) for c in ran), default=0)
        for c in ran:
            console.print(f"{c.status:>8}  {terminal_safe(c.id):<{width}}  "
                          f"{c.duration_s:7.2f}s  {terminal_safe(c.summary)}", markup=False,
                          highlight=False, soft_wrap=True)
    from auditor.report.grouping import finding_lines, skipped_line
    doc = report.to_dict()
    skipped = skipped_line(doc)
    if skipped:
        console.print(terminal_safe(skipped), markup=False, highlight=False, soft_wrap=True)
    for line in finding_lines(doc):  # grouped and resolved findings, then the waived ones
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    from auditor.report.diagnosis import diagnosis_lines

    problems = diagnosis_lines(doc)
    if problems:  # last, next to the verdict: what a person reads first in a log's tail
        console.print("[bold]Diagnosis[/] (most harmful first):", markup=True)
        for line in problems:
            console.print(terminal_safe(line), markup=False, highlight=False, soft_wrap=True)
    words = {0: "PASS: nothing at or above the --fail-on level.",
             1: "FAIL: the audit found problems at or above the --fail-on level "
                "(exit code 1). Read the failed checks in the report.",
             **({0: "PASS: no failing finding is new since the baseline.",
                 1: "FAIL: the audit found failing findings that are new since the baseline "
                    "(exit code 1). Read them in the report ([new])."} if fail_on == "new"
                else {}),
             3: "ERROR: the data passed, but a check crashed (exit code 3); the report marks "
                "it as error."}
    if report.split_design:
        from auditor.report.split_design import design_sentence

        console.print(terminal_safe(design_sentence(report.split_design)), markup=False,
                      soft_wrap=True)  # one line, greppable in a pipeline log
    sampled = sampled_note(report)
    if sampled:
        console.print(f"[bold yellow]SAMPLED:[/] {terminal_safe(sampled, markup=True)}",
                      markup=True)
    on_sample = " (on a sample of the rows: counts are estimates)" if sampled else ""
    console.print(f"[bold]{words.get(code, '')}[/]  status={report.status}{on_sample}, "
                  f"{report.duration_s:.1f}s", markup=True)
    console.print(f"report: {terminal_safe(out / 'report.html')}  "
                  f"(and {terminal_safe(out / 'report.json')})", markup=False)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


def _export_command(args: Any) -> int:
    """``auditor export-expectations``: infer a suite from one split and write it (JSON)."""
    import json

    from auditor.core.config import load_config
    from auditor.errors import ConfigError
    from auditor.integrations.gx_export import infer_suite
    from auditor.loading.data import read_table

    if args.config and args.train:
        raise ConfigError("give either an audit.yaml (with --from SPLIT) or --train PATH")
    for flag, value, ok, what in (
            ("--null-slack", args.null_slack, 0 <= args.null_slack <= 1, "a share in [0, 1]"),
            ("--quantile-slack", args.quantile_slack, 0 <= args.quantile_slack <= 0.5,
             "a probability in [0, 0.5]"),
            ("--max-categories", args.max_categories, args.max_categories >= 0,
             "an integer >= 0"),
            ("--min-eval-rows", args.min_eval_rows, args.min_eval_rows >= 1, "an integer >= 1")):
        if not ok:
            raise ConfigError(f"export-expectations {flag} must be {what}; got {value!r}")
    ids, fixed, exclude = list(args.id), list(args.group) + ([args.time] if args.time else []), \
        list(args.exclude)
    if args.config:
        cfg = load_config(args.config)
        split = args.from_split or next(iter(cfg.datasets))
        if split not in cfg.datasets:
            raise ConfigError(f"--from {split!r}: not a split of {args.config} (splits: "
                              f"{', '.join(cfg.datasets)})")
        path = Path(cfg.datasets[split])
        csv = cfg.csv
        cols = cfg.columns
        ids += list(cols.ids)
        fixed += list(cols.groups) + list(cols.text) + ([cols.time] if cols.time else [])
        exclude += list(cols.exclude)
        if cfg.tokens is not None:
            fixed += cfg.tokens.columns()
    elif args.train:
        split, path, csv = args.from_split or "train", Path(args.train), None
    else:
        raise ConfigError("give an audit.yaml (export-expectations audit.yaml --from train) "
                          "or --train PATH")
    df = read_table(path, _csv_format(csv, args))
    try:
        doc = infer_suite(df, name=args.name or f"auditor-{split}", ids=ids, fixed=fixed,
                          exclude=exclude, null_slack=args.null_slack,
                          quantile_slack=args.quantile_slack,
                          max_categories=args.max_categories,
                          min_eval_rows=args.min_eval_rows, source=str(path))
    except ImportError as err:
        raise ConfigError(str(err)) from None
    text = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if args.out:
        from auditor.report.output import output_errors, refuse_overwriting_inputs, write_atomic

        refuse_overwriting_inputs([Path(args.out)],  # never the split or the audit.yaml
                                  [path] + ([Path(args.config)] if args.config else []))
        with output_errors(args.out):
            write_atomic(Path(args.out), text)
        n = len(doc["expectations"])
        print(f"{n:,} expectations inferred from {split} ({df.height:,} rows) written to "
              f"{args.out}", flush=True)
    else:
        print(text, end="")
    return 0
