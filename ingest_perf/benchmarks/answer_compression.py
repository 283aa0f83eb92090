"""What compressing an ingest answer costs: the "7 ms to compress an answer of a few hundred bytes" of
the Orthanc team's notes (seed 000), measured two ways in one run.

1. zlib on the real answers: the JSON answers of POST /instances that the Orthanc of part 2 gave,
   each compressed as Orthanc's gzip compressor does (zlib, level 6, a gzip header), many times:
   the CPU time of one compression.
2. Inside Orthanc 1.10.1 (which compresses any answer when the client accepts gzip), with the plugin
   splitting every instance (PhasePartsSampling 1): the CPU part of requestGap, on the HTTP thread
   between a request's store and the next request of its connection, where Orthanc builds,
   compresses and sends the answer. Rounds alternate a client accepting gzip and one that does not
   (Accept-Encoding: identity); two further cases repeat each setting, the null comparison: the
   difference between two rounds of one setting is the method's resolution.

  .venv/bin/python -m ingest_perf.benchmarks.answer_compression [--instances 100] [--rounds 4] [--markdown]
"""
import argparse
import os
import statistics
import tempfile
import time
import zlib

import requests

from ingest_perf import clients
from ingest_perf.generate_series import write_series
from ingest_perf.orthanc_process import OrthancProcess, default_plugin_path

# (name, Accept-Encoding of the client)
CASES = [("gzip", "gzip, deflate"), ("identity", "identity"), ("gzip (null)", "gzip, deflate"),
         ("identity (null)", "identity")]


def gzip_answer(body):
    """As Orthanc's GzipCompressor: zlib at level 6 with a gzip header (wbits 16 + 15)."""
    compressor = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return compressor.compress(body) + compressor.flush()


def zlib_cost(answers, repeat):
    """CPU microseconds to compress one answer (the median over the answers of each one's mean)."""
    per_answer = []
    for body in answers:
        start = time.process_time()
        for _ in range(repeat):
            gzip_answer(body)
        per_answer.append((time.process_time() - start) / repeat * 1e6)
    return statistics.median(per_answer)


def request_gap(orthanc, files, accept_encoding):
    """One round: the files on one keep-alive connection; requestGap's parts from /perf/stats."""
    requests.post(orthanc.url + "/perf/reset", timeout=10).raise_for_status()
    uploads = clients.http_upload(orthanc.url, files, accept_encoding=accept_encoding)
    encodings = {upload.encoding for upload in uploads}
    gap = orthanc.stats(transport="rest")["transports"]["rest"]["phases"]["requestGap"]
    parts = gap["parts"]
    return {"count": gap["count"], "mean": gap["mean"], "onCpu": parts["onCpu"]["mean"],
            "blocked": parts["blocked"]["mean"], "encodings": encodings}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=2000, help="compressions of each answer for zlib's figure")
    parser.add_argument("--plugin", default=default_plugin_path())
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="answer-compression-")
    files = write_series(os.path.join(work, "series"), args.instances, rows=64, columns=64)
    rounds = {name: [] for name, _ in CASES}
    with OrthancProcess(os.path.join(work, "orthanc"), plugin_path=args.plugin,
                        ingest_perf={"PhasePartsSampling": 1},
                        extra_config={"HttpCompressionEnabled": True, "OverwriteInstances": True}) as orthanc:
        for round_index in range(args.rounds):
            order = CASES if round_index % 2 == 0 else list(reversed(CASES))
            for name, encoding in order:
                result = request_gap(orthanc, files, encoding)
                expected = "gzip" if encoding.startswith("gzip") else "identity"
                if result["encodings"] != {expected}:
                    raise SystemExit("%s: answers came as %s, expected %s" % (name, result["encodings"], expected))
                rounds[name].append(result)
        # The answers' exact bytes, uncompressed (the instances are stored again: OverwriteInstances).
        raw = [requests.post(orthanc.url + "/instances", data=clients.read_body(path), timeout=60,
                             headers={"Accept-Encoding": "identity"}).content for path in files[:20]]
    sizes = sorted(len(body) for body in raw)
    micro = zlib_cost(raw, args.repeat)

    def median_of(name, key):
        return statistics.median(r[key] for r in rounds[name])

    lines = []
    lines.append("Compressing an ingest answer (%d instances per round, %d rounds, alternating)" %
                 (args.instances, args.rounds))
    lines.append("")
    lines.append("| what | figure |")
    lines.append("| --- | --- |")
    lines.append("| answer size (bytes, JSON as Orthanc writes it) | %d-%d |" % (sizes[0], sizes[-1]))
    lines.append("| zlib level 6, gzip header, CPU per answer | %.1f us |" % micro)
    for name, _ in CASES:
        lines.append("| requestGap on Orthanc's CPU, client %s (median of rounds) | %.3f ms (gap mean %.3f ms, "
                     "blocked %.3f ms) |" % (name, median_of(name, "onCpu"), median_of(name, "mean"),
                                             median_of(name, "blocked")))
    difference = median_of("gzip", "onCpu") - median_of("identity", "onCpu")
    null = abs(median_of("gzip (null)", "onCpu") - median_of("gzip", "onCpu")) + \
        abs(median_of("identity (null)", "onCpu") - median_of("identity", "onCpu"))
    lines.append("| gzip minus identity, CPU in requestGap | %+.3f ms (null: %.3f ms) |" % (difference, null))
    print("\n".join(lines) if args.markdown else "\n".join(line.replace("| ", "").replace(" |", "")
                                                           for line in lines if not line.startswith("| ---")))


if __name__ == "__main__":
    main()
