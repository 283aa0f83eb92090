#!/usr/bin/env python3
"""Print the ingest-perf statistics of an Orthanc (GET /perf/stats) as a plain-text report.

    perf_report.py                                  # http://localhost:8042, every transport
    perf_report.py --url http://pacs:8042 --user admin --password secret --transport dicom
    perf_report.py --json saved-stats.json          # a saved answer instead of a server ('-': stdin)

Durations are in milliseconds. Exit code 0, or 2 when the server cannot be reached or refuses
the request. Needs only Python 3 and this source tree (uses `requests` when installed, urllib
otherwise).
"""
import argparse
import getpass
import os
import sys

# Python puts only this script's folder on sys.path; the package is at the repository root.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from ingest_perf.perf_report import EXIT_ERROR, ReportError, fetch_stats, filter_transport, load_json, render  # noqa: E402


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
    parser.add_argument("--width", type=int, help="line width, explanations are wrapped to it (default: terminal width or 100)")
    args = parser.parse_args(argv)

    try:
        if args.json:
            stats = filter_transport(load_json(args.json), args.transport)
        else:
            password = args.password
            if args.user is not None and password is None:
                if not sys.stdin.isatty():
                    raise ReportError("--user given without --password and no terminal to prompt on")
                password = getpass.getpass("Password for %s: " % args.user)
            stats = fetch_stats(args.url, args.transport, args.user, password)
        if not isinstance(stats, dict):
            raise ReportError("not a /perf/stats document (expected a JSON object)")
        sys.stdout.write(render(stats, args.width))
    except ReportError as e:
        sys.stderr.write("perf_report: %s\n" % e)
        return EXIT_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())
