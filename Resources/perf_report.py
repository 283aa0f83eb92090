#!/usr/bin/env python3
"""Print the ingest-perf diagnosis and statistics of an Orthanc (GET /perf/diagnosis, /perf/stats)
as a plain-text report: the findings first, most costly first, each with its fix; then the phases.

    perf_report.py                                  # http://localhost:8042, every transport
    perf_report.py --url http://pacs:8042 --user admin --password secret --transport dicom
    perf_report.py --json saved-stats.json          # a saved answer instead of a server ('-': stdin)
    perf_report.py --no-diagnosis                   # the statistics only
    perf_report.py --window 5m                      # the last 5 minutes only (1m, 5m, 15m or 1h)
    perf_report.py --slowest 20 --transport dicom   # the 20 slowest recent instances (GET /perf/slowest)
    perf_report.py --trace trace.json --seconds 300 # save GET /perf/trace for Perfetto, print a summary

Durations are in milliseconds. Exit code 0, or 2 when the server cannot be reached or refuses
the request. Needs only Python 3 and this source tree (uses `requests` when installed, urllib
otherwise).
"""
import argparse
import getpass
import json
import sys

from ingest_perf.perf_report import (EXIT_ERROR, ReportError, fetch_json, fetch_stats, filter_transport, load_json,
                                     render, render_diagnosis, render_slowest, trace_summary)


def positive(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("expected a positive integer, got %s" % text)
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("--url", default="http://localhost:8042", help="Orthanc's HTTP address (default: %(default)s)")
    parser.add_argument("--user", help="HTTP basic authentication user")
    parser.add_argument("--password", help="password of --user (prompted for when omitted on a terminal)")
    parser.add_argument("--transport", choices=["rest", "dicom", "plugin", "job", "all"],
                        help="only this transport ('all': merged over every transport); default: each of them")
    parser.add_argument("--json", metavar="FILE", help="read a saved /perf/stats answer instead of querying ('-': stdin)")
    parser.add_argument("--slowest", metavar="N", type=positive,
                        help="print the N slowest recent instances (GET /perf/slowest; with --json: a saved answer)")
    parser.add_argument("--phase", default="serverTotal",
                        help="with --slowest: the phase to rank by (default: %(default)s)")
    parser.add_argument("--window",
                        help="only the recent past: 1m, 5m, 15m or 1h (default: since the start or the last reset; "
                             "with --slowest: 5m, and any number of s, m or h)")
    parser.add_argument("--trace", metavar="FILE",
                        help="save GET /perf/trace (Chrome trace JSON) to FILE, print a summary")
    parser.add_argument("--seconds", type=positive, default=60, help="with --trace: how recent (default: %(default)s)")
    parser.add_argument("--no-diagnosis", action="store_true",
                        help="do not print GET /perf/diagnosis before the statistics (it is never read with --json)")
    parser.add_argument("--width", type=int, help="line width, explanations are wrapped to it (default: terminal width or 100)")
    args = parser.parse_args(argv)

    try:
        password = args.password
        if not args.json and args.user is not None and password is None:
            if not sys.stdin.isatty():
                raise ReportError("--user given without --password and no terminal to prompt on")
            password = getpass.getpass("Password for %s: " % args.user)
        if args.slowest or args.trace:
            if args.slowest:
                if args.json:
                    answer = load_json(args.json)
                else:
                    params = {"n": args.slowest, "phase": args.phase, "window": args.window or "5m"}
                    if args.transport:
                        params["transport"] = args.transport
                    answer = fetch_json(args.url, "/perf/slowest", params, args.user, password)
                if not isinstance(answer, dict):
                    raise ReportError("not a /perf/slowest document (expected a JSON object)")
                sys.stdout.write(render_slowest(answer, args.slowest))
            if args.trace:
                trace = fetch_json(args.url, "/perf/trace", {"seconds": args.seconds}, args.user, password, timeout=60)
                try:
                    with open(args.trace, "w", encoding="utf-8") as f:
                        json.dump(trace, f)
                except OSError as e:
                    raise ReportError("cannot write %s: %s" % (args.trace, e))
                sys.stdout.write("%s: %s\n" % (args.trace, trace_summary(trace)))
            return 0
        if args.json:
            stats = filter_transport(load_json(args.json), args.transport)
        else:
            stats = fetch_stats(args.url, args.transport, args.user, password, window=args.window)
            if not args.no_diagnosis:
                params = {"window": args.window or "5m"}
                if args.transport:
                    params["transport"] = args.transport
                sys.stdout.write(render_diagnosis(
                    fetch_json(args.url, "/perf/diagnosis", params, args.user, password), args.width))
        if not isinstance(stats, dict):
            raise ReportError("not a /perf/stats document (expected a JSON object)")
        sys.stdout.write(render(stats, args.width))
    except ReportError as e:
        sys.stderr.write("perf_report: %s\n" % e)
        return EXIT_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())
