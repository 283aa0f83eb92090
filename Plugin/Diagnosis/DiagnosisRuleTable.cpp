// The table of the diagnosis's rules: for each, the figures it reads, its thresholds, its evidence and
// every sentence it says, on one screen per rule, in the order the rules are checked (the answer's
// "rules"). A sentence's conversions ("%.1f" a figure, "%s" a name) take what its predicate gives, in
// order. An effect says what to expect, and where it was measured.
#include "Diagnosis/DiagnosisRuleTable.h"

#include <stdexcept>

namespace IngestPerf
{
  namespace
  {
    // The sentences several rules share; a rule's own sentence of the same name comes first.
    const std::vector<RuleSentence> kSharedSentences = {
      {"notEnoughGaps", "not judged: %.0f C-STORE gaps (at least %.0f needed)"},
      {"notEnoughInstances", "not judged: %.0f instances stored"},
      {"explainedAbove", "the gaps are explained by the finding above"},
      {"mostFrom", ". Since the reset, most came from %s: %.0f"},
      {"fromAetAt", "calling AET %s at %s"},
      {"fromAet", "calling AET %s"},
      {"fromAddress", "%s over %s"},
      {"fromUnknown", "an unknown client over %s"},
      {"scopeSinceReset", "since the reset"},
      {"scopeIn", "in %s"},
      {"pythonRegisters", " (orthanc-python's script registers %s)"}};

    const std::vector<RuleEntry> kRules = {
      {"dicom-workers-saturated",
       "C-STORE associationGap and serverTotal (sums and p50), the associations open now and in the samples of the "
       "span, DicomThreadsCount",
       {{"minimumGapP50Ms", 10}, {"gapP50OverServerTotalP50", 2}},
       {"associationsOnAverage", "associationsOpenNow", "associationsOpenAtMost", "connectionSamples",
        "samplesWithMoreAssociationsThanWorkers", "DicomThreadsCount", "associationGap", "serverTotal"},
       {{"notFired", "%.1f associations on average (%.0f open at most, %.0f now) for DicomThreadsCount %.0f"},
        {"notFiredGap", "; gap p50 %.1f ms"},
        {"fired", "%.1f associations on average (%.0f open at most, %.0f now) for %.0f DICOM workers"},
        {"verdict", "More simultaneous C-STORE associations (%.0f) than DICOM worker threads (DicomThreadsCount %.0f): "
                    "each association waits for a worker between its instances"},
        {"explanation",
         "Orthanc runs a command of an association on one of its %.0f DICOM workers, which then waits up to a second "
         "for that association's next command. With %.1f associations on average (the gaps and stores of all "
         "associations over the %.1f s of ingest), instances wait for a free worker: the gap p50 is %.1f ms."},
        {"explanationStallNext", " %.0f%% of the gaps also sit at the delayed-ACK timer and TCP_NODELAY is not in "
                                 "effect: with enough workers, expect cstore-answer-stall next."},
        {"action", "Raise DicomThreadsCount to at least the number of simultaneous associations (Orthanc restart)"},
        {"effect",
         "Expect the associations to stop waiting for a worker between their instances: the gap falls to what the "
         "sender and the network take, and the instances per second rise; with 8 associations, a worker each rather "
         "than one for all gave a gap median about 5 times shorter and about 1.6 times the throughput"},
        {"confidenceHigh",
         "the open TCP associations outnumbered the workers (right now, or in the samples taken once a second)"},
        {"confidenceMedium", "inferred from the gaps and stores over the window (Little's law); no more associations "
                             "than workers were seen open"}},
       "docs/measurements/benchmarks.md#the-fixes-of-the-diagnosis-before-and-after"},

      {"cstore-answer-stall",
       "C-STORE associationGap, its gaps at one and two delayed-ACK timers (the timer read from the gaps), "
       "serverTotal, TCP_NODELAY on Orthanc's side",
       {{"shareOfGapsAtTimers", 0.5}, {"highConfidenceShareOfGaps", 0.8}},
       {"gapsAtOneDelayedAck", "gapsAtTwoDelayedAcks", "delayedAckTimerMs", "associationGap", "serverTotal", "cycleMs",
        "dicomTcpNoDelayInEffect"},
       {{"explainedByWorkers", "the gaps are explained by dicom-workers-saturated"},
        {"notJudgedNoDelay", "TCP_NODELAY is in effect on Orthanc's DICOM associations: its answers do not stall"},
        {"notFired", "%.0f%% of the gaps at one or two delayed-ACK timers (%s or %s, %.0f%% needed); gap p50 %.1f ms, "
                     "serverTotal p50 %.1f ms"},
        {"fired", "%.0f%% of the gaps at one delayed-ACK timer (%s), %.0f%% at two (%s); serverTotal p50 %.1f ms"},
        {"verdict", "C-STORE answer stall: %.0f%% of each C-STORE cycle (%.0f of %.0f ms per instance, means) passes "
                    "between instances, the delayed-ACK timer holding Orthanc's C-STORE answer (Nagle)"},
        {"verdictSenderToo", " and the sender's dataset"},
        {"explanation", "Orthanc stores an instance in %s but the gap to the next one is %s, %.0f%% of the gaps at the "
                        "%.0f ms delayed-ACK timer (or two of them). Orthanc (DCMTK) sends the 12-byte header of its "
                        "C-STORE answer and the rest in two writes; without TCP_NODELAY, Nagle's algorithm holds the "
                        "rest until the client acknowledges the header, which it delays (40 ms on Linux, 200 ms on "
                        "Windows). The sender is not idle: it waits for the answer."},
        {"explanationSenderToo",
         " Most gaps hold two timers: the sender's small datasets stall the same way on its side."},
        {"action", "Start Orthanc with TCP_NODELAY=1 in its environment (systemd: Environment=TCP_NODELAY=1 in a "
                   "drop-in; docker: -e TCP_NODELAY=1; DCMTK reads a non-zero integer only, so 0 or yes keeps Nagle's "
                   "algorithm), restart Orthanc; then the sender's own stall, if any, shows as sender-stall (a DCMTK "
                   "sender gains as much again with TCP_NODELAY=1 in its own environment)"},
        {"effect", "Expect the delayed-ACK wait, about %.0f ms, gone from each instance's C-STORE cycle: one "
                   "association should store several times the instances per second, and more once the sender answers "
                   "without Nagle too (about 3 and 12 times in the benchmark, at Linux's 40 ms)"},
        {"confidence", "%.0f%% of the gaps sit at the delayed-ACK timer; a sender pausing about %.0f ms on its own "
                       "would look the same, which TCP_NODELAY on Orthanc's side tells apart"}},
       "docs/measurements/benchmarks.md#dicom-tcp_nodelay-the-remedy-for-the-c-store-answer-stall"},

      {"sender-stall",
       "C-STORE associationGap (count, sum), its gaps at the delayed-ACK timer and their time, the cycle, the senders "
       "since the reset, TCP_NODELAY on Orthanc's side",
       {{"minimumGaps", 3},
        {"shareOfGaps", 0.03},  // storescu: 4 to 19 gaps of 59 from one run to the next
        {"shareOfGapTime", 0.25},
        {"shareOfCycle", 0.10},
        {"clearShareOfGaps", 0.10},
        {"clearShareOfGapTime", 0.5}},
       {"sendersSinceReset", "gapsAtDelayedAckTimer", "gapsAtOneDelayedAck", "gapsAtTwoDelayedAcks",
        "shareOfGapTimeAtDelayedAckTimer", "associationGap", "serverTotal", "cycleMs", "dicomTcpNoDelayInEffect",
        "delayedAckTimerMs"},
       {{"notJudgedNagle",
         "not judged: TCP_NODELAY is not in effect on Orthanc's side, whose answers stall at the same timer"},
        {"seen", "%.0f gaps of %.0f at the delayed-ACK timer (%s or %s), %.0f%% of the gaps' time, %.0f%% of the cycle "
                 "(%.1f of %.1f ms per instance, means)"},
        {"notFired", "; needed: %.0f gaps and %.0f%% of them, %.0f%% of their time, %.0f%% of the cycle"},
        {"verdict", "The sender's own Nagle stall: %.0f%% of each C-STORE cycle (%.1f of %.1f ms per instance, means) "
                    "passes in gaps at the delayed-ACK timer, though Orthanc answers with TCP_NODELAY"},
        {"explanation",
         "TCP_NODELAY is in effect on Orthanc's associations, so its C-STORE answers leave at once; yet %.0f of the "
         "%.0f gaps between instances sit at the %.0f ms delayed-ACK timer and take %.0f%% of the gaps' time: the gap "
         "is %s, short for most instances and about %.0f ms longer for the others. The sender holds the end of a "
         "dataset behind Nagle's algorithm until Orthanc acknowledges what it sent before, which Orthanc's kernel "
         "delays. Its median hides it; the time it costs is the mean's."},
        {"theSender", "the sender"},
        {"theSenderNamed", "the sender (calling AET %s)"},
        {"theSenderKnown", "the sender (calling AET %s, %s)"},
        {"action", "Disable Nagle's algorithm on %s: %s"},
        {"actionOtherSender", ". Another sender: %s"},
        {"effect",
         "Expect the sender's delayed-ACK waits gone from the gaps between instances: one association should store "
         "about 1.2 to 3.7 times the instances per second (storescu), about 3 times (a second Orthanc)"},
        {"confidenceHigh",
         "Orthanc's side is fixed and the gaps at the timer are many and take most of the gaps' time"},
        {"confidenceMedium", "Orthanc's side is fixed, but few gaps sit at the timer: a sender pausing about %.0f ms "
                             "now and then on its own would look the same"}},
       "docs/diagnosis.md#sender-stall"},

      {"received-instance-callback",
       "the site's orthanc-python callbacks, whether this plugin holds the ReceivedInstanceCallback, HTTP receive and "
       "serverTotal, C-STORE associationGap",
       {{"receiveMs", 20}, {"receiveShareOfServerTotal", 0.4}, {"gapP50Ms", 20}},
       {"receive", "associationGap", "receiveParts", "pythonCallbacks"},
       {{"notJudgedHeld", "this plugin holds the ReceivedInstanceCallback"},
        {"notJudgedNotRegistered", "no site script registers the ReceivedInstanceCallback"},
        {"seen", "HTTP receive mean %.1f ms, C-STORE associationGap p50 %.1f ms"},
        {"whereHttp", "HTTP receive mean %.1f ms"},
        {"whereDicom", "C-STORE associationGap p50 %.1f ms"},
        {"verdict", "The site's ReceivedInstanceCallback (orthanc-python's script registers it): it runs before the "
                    "store, in %s, which no hook of this plugin separates from the upload or the sender"},
        {"explanation", "Orthanc lets one plugin hold the ReceivedInstanceCallback and calls it first in its store, "
                        "before parsing the instance; this plugin leaves it to the site's script, so the callback's "
                        "time lies in HTTP receive and the C-STORE gap, with the client's and the sender's."},
        {"action", "Make the site's ReceivedInstanceCallback return at once: only the edit of the instance there, "
                   "anything slow (lookups, web services) after the store or in a job"},
        {"effect", "Not a configuration change: expect each instance to arrive sooner by the callback's time, as in "
                   "the rule's scenario, an orthanc-python ReceivedInstanceCallback of 20 ms"},
        {"confidence", "the site's script registers the callback and the phase that holds it is long; the callback is "
                       "not timed on its own, and a slow upload or sender looks the same"}},
       "docs/diagnosis.md#received-instance-callback"},

      {"slow-sender",
       "C-STORE associationGap (mean, p50) and serverTotal (p50), the gaps at the delayed-ACK timer, TCP_NODELAY on "
       "Orthanc's side",
       {{"gapMeanMs", 20}, {"gapP50OverServerTotalP50", 2}},
       {"associationGap", "serverTotal", "cycleMs", "gapsAtDelayedAckTimers", "dicomTcpNoDelayInEffect",
        "megabytesPerInstance"},
       {{"notFired", "gap mean %.1f ms (%.0f ms needed), p50 %.1f ms against serverTotal p50 %.1f ms"},
        {"fired", "gap mean %.1f ms against serverTotal p50 %.1f ms, %.0f%% of the gaps at the delayed-ACK timer"},
        {"verdict", "The senders are slow: %.0f%% of each C-STORE cycle (%.0f of %.0f ms per instance, means) passes "
                    "between two instances of an association"},
        {"explanation",
         "The gap is %s, Orthanc's store %s. The gap holds the C-STORE answer going back, the sender preparing its "
         "next instance, and the dataset's transfer; Orthanc's DICOM workers are not all busy and the gaps do not sit "
         "at the delayed-ACK timer, so the time is the sender's or the network's."},
        {"action", "Look at the sender: its own pacing or queue, its disk, the network between (over a long link, "
                   "Nagle's algorithm costs a round trip: %s)"},
        {"effect", "not measurable from Orthanc: the time is spent outside it"},
        {"actionNagle", "Start Orthanc with TCP_NODELAY=1 in its environment (systemd: Environment=TCP_NODELAY=1 in a "
                        "drop-in; docker: -e TCP_NODELAY=1), so that Orthanc's answers leave at once; then look at the "
                        "sender: its own pacing or queue, its disk, the network between, and %s"},
        {"effectNagle", "expect the gap to shorten by the part of it that is Orthanc's answer waiting, if any; the "
                        "rest is the sender's"},
        {"confidenceHigh", "TCP_NODELAY is in effect on Orthanc's side, the workers are free"},
        {"confidenceMedium", "the gaps are not at the delayed-ACK timer; without TCP_NODELAY on Orthanc's side a part "
                             "of each gap may still be its answer's stall"}},
       ""},

      {"http-threads-saturated",
       "HTTP serverTotal (sum, mean), the HTTP connections open now and in the samples of the span, HttpThreadsCount",
       {{"busyShareOfThreads", 0.9}},
       {"httpThreadsBusyOnAverage", "HttpThreadsCount", "httpConnectionsOpenNow", "httpConnectionsOpenAtMost",
        "connectionSamples", "samplesWithMoreConnectionsThanThreads", "serverTotal"},
       {{"notJudged", "not judged: %.0f HTTP instances"},
        {"notFired", "%.2f HTTP threads busy storing on average, %.0f connections open at most (%.0f now), for "
                     "HttpThreadsCount %.0f"},
        {"fired", "%.2f HTTP threads busy storing on average, %.0f connections open at most (%.0f now), for %.0f"},
        {"verdict", "Orthanc's HTTP threads are all busy (HttpThreadsCount %.0f, %.0f client connections open): "
                    "uploads wait for a thread before Orthanc reads them"},
        {"explanation", "Orthanc's web server (CivetWeb) gives each connection a thread for as long as it stays open, "
                        "keep-alive included; beyond HttpThreadsCount, connections wait unanswered, and no plugin sees "
                        "that wait. The cost is estimated, and low: each waiting connection queues behind at least the "
                        "stores in progress (connections per thread, minus one, times serverTotal's mean)."},
        {"action", "Raise HttpThreadsCount above the number of simultaneous clients (Orthanc restart)"},
        {"effect", "Expect the requests to stop queueing for a thread: with 8 clients, 16 threads rather than 2 gave "
                   "the slowest requests (p99) about a tenth of the time and about a third more instances per second, "
                   "the median request longer as more ran at once"},
        {"confidenceHigh", "more client connections were open than Orthanc has HTTP threads (right now, or in the "
                           "samples taken once a second)"},
        {"confidenceMedium", "the threads were busy storing most of the time, but no queue is visible now"}},
       "docs/measurements/benchmarks.md#the-fixes-of-the-diagnosis-before-and-after"},

      {"waiting-for-cpu",
       "serverTotal and its split (on a CPU, waiting for one, blocked) over the split instances",
       {{"waitingMs", 1}, {"shareOfServerTotal", 0.25}, {"highConfidenceSplitInstances", 20}},
       {"serverTotal", "serverTotalParts", "preStoreParts", "persistParts"},
       {{"notJudged", "not judged: %.0f instances with their phases split, %.0f with a run delay (%.0f needed)"},
        {"notFired", "waiting for a CPU %.2f ms of serverTotal %.1f ms (%.0f%%) over %.0f split instances"},
        {"fired", "waiting for a CPU %.1f ms of serverTotal %.1f ms (%.0f%%) over %.0f split instances"},
        {"verdict", "Waiting for a CPU: Orthanc's threads wait %.1f ms of each instance's %.1f ms in Orthanc (%.0f%%) "
                    "ready to run, without a CPU"},
        {"explanation",
         "The storing thread's run delay (the kernel's schedstat) between the bounds of each phase: time it was ready "
         "to run while other threads or processes had the CPUs. Orthanc's store is %s."},
        {"action", "Give Orthanc CPU: move, or lower the priority (nice) of, what runs beside it on the same cores; "
                   "give its machine or container more cores or a higher CPU quota (on a virtual machine, CPU steal by "
                   "the host shows as this too)"},
        {"effect", "Expect each store to shorten by the wait, %.0f%% of it: the time is not Orthanc's work"},
        {"confidence", "measured on %.0f instances whose phases were split (IngestPerf.PhasePartsSampling)"}},
       ""},

      {"transcoding-bound",
       "the transcode phase (IngestPerf.TranscodeTiming), or preStore with IngestTranscoding set; serverTotal",
       {{"transcodeMs", 2}, {"preStoreMs", 5}, {"shareOfServerTotal", 0.25}},
       {"transcodeParts", "preStoreParts", "IngestTranscoding", "transcode", "preStore", "serverTotal",
        "transcodedByAnEarlierPlugin", "TranscodeTiming"},
       {{"notFiredTimed", "transcode mean %.1f ms of serverTotal %.1f ms"},
        {"notFiredInferred", "IngestTranscoding is set; preStore mean %.1f ms of serverTotal %.1f ms"},
        {"notFiredNone", "no transcoding measured, IngestTranscoding is not set"},
        {"firedTimed", "transcode mean %.1f ms of serverTotal %.1f ms"},
        {"firedInferred", "preStore (IngestTranscoding set) mean %.1f ms of serverTotal %.1f ms"},
        {"verdict", "Transcoding on ingest takes %.1f ms of each instance's %.1f ms in Orthanc"},
        {"verdictSyntax", " (IngestTranscoding %s)"},
        {"explanationTimed", "The transcode phase is timed (IngestPerf.TranscodeTiming)."},
        {"explanationInferred", "IngestTranscoding is set and preStore, which contains the transcoding, is long; set "
                                "IngestPerf.TranscodeTiming to FallThrough to time it on its own."},
        {"explanationEarlierPlugin", " Some instances were transcoded by a plugin loaded before this one (GDCM...)."},
        {"action", "Transcode later, off the ingest path (a job or a Lua/plugin on StableSeries), or choose a cheaper "
                   "IngestTranscoding syntax, or a faster transcoder plugin"},
        {"effect", "Expect the transcode gone from each instance's store: with JPEG lossless, each store about 4 times "
                   "shorter and about 3.5 times the instances per second in the benchmark"},
        {"confidenceHigh", "the transcode phase is measured"},
        {"confidenceMedium", "preStore holds the transcoding and the other pre-store steps (parsing, filters); the "
                             "transcoding is not timed on its own"}},
       "docs/measurements/benchmarks.md#the-fixes-of-the-diagnosis-before-and-after"},

      {"site-callbacks",
       "otherFilters, otherOnStored, onStoredWait (per stored instance) and serverTotal; the plugins loaded before and "
       "after this one, the site's orthanc-python callbacks",
       {{"callbacksMs", 5}, {"shareOfServerTotal", 0.25}},
       {"otherFilters", "otherOnStored", "onStoredWait", "onStoredWaitPerInstanceMs", "otherOnStoredParts",
        "serverTotal", "pluginsLoadedBefore", "pluginsLoadedAfter", "pythonCallbacks"},
       {{"seen", "otherFilters %.1f + otherOnStored %.1f + onStoredWait %.1f ms per instance of serverTotal %.1f ms"},
        {"verdict", "The site's plugin callbacks: %.1f ms of each instance's %.1f ms in Orthanc; %s"},
        {"whereOnStored", "their OnStoredInstance callbacks take %.1f ms (%s, loaded after this plugin)"},
        {"whereFilters",
         "their instance filters (IncomingDicomInstanceFilter) take %.1f ms (%s, loaded after this plugin)"},
        {"whereLock", "%.1f ms pass between the index commit and this plugin's OnStoredInstance (Orthanc's OnStored "
                      "lock, held while other stores' callbacks run)"},
        {"wherePluginsBefore",
         "%.1f ms pass between the index commit and this plugin's OnStoredInstance (the OnStoredInstance callbacks of "
         "%s, loaded before this plugin, or Orthanc's OnStored lock)"},
        {"explanation",
         "Orthanc calls the plugins' instance filters and OnStoredInstance callbacks on the storing thread, in the "
         "order the plugins registered them, before it answers the sender; this plugin times what lies between its own "
         "two callbacks of each chain (otherFilters, otherOnStored) and, from the instance's NewInstance change, the "
         "time between the index commit and its OnStoredInstance (onStoredWait). Every plugin's OnStoredInstance runs "
         "under one lock of Orthanc's, so a slow one holds the stores of every sender."},
        {"action", "Make these callbacks return at once: hand the slow work (forwarding, web service calls, edits) to "
                   "a queue, a thread or an Orthanc job that runs after the instance is stored (orthanc-python: a "
                   "thread of the script's own, or OnChange, which orthanc-python runs on a queue of its own)"},
        {"effect",
         "Not a configuration change: expect each store to shorten by the callbacks' time, and the stores of the other "
         "senders to stop waiting for them, as in the rule's scenario, an orthanc-python OnStoredInstance of 30 ms"},
        {"confidenceBetween", "timed between this plugin's two callbacks of Orthanc's chain: nothing but the other "
                              "plugins' callbacks runs there"},
        {"confidenceWait", "the time between the index commit and this plugin's OnStoredInstance holds the callbacks "
                           "of the plugins loaded before it and the wait for Orthanc's OnStored lock, not told apart; "
                           "list this plugin first in \"Plugins\" to time the callbacks alone"}},
       "docs/diagnosis.md#site-callbacks"},

      {"cstore-filters",
       "persist of C-STORE and of HTTP instances (p50), C-STORE serverTotal (p50), the other plugins, the site's "
       "orthanc-python callbacks",
       {{"extraPersistMs", 5}, {"shareOfServerTotal", 0.25}},
       {"dicomPersist", "restPersist", "otherPlugins", "pythonCallbacks"},
       {{"notJudged", "not judged: persist of %.0f C-STORE and %.0f HTTP instances (both needed, %.0f each)"},
        {"seen", "persist p50 %.1f ms over C-STORE, %.1f ms over HTTP, C-STORE serverTotal p50 %.1f ms"},
        {"verdict", "C-STORE filters: each C-STORE instance spends %.1f ms more in persist than an HTTP one (p50 %.1f "
                    "against %.1f ms), on the same storage and index"},
        {"verdictPlugins", "; plugins loaded: %s"},
        {"explanation",
         "Orthanc calls the plugins' C-STORE filters (IncomingCStoreInstanceFilter) for C-STORE instances only, after "
         "the instance filters and before the storage write, so their time is in persist; the storage write and the "
         "index transaction are the same for both transports. This plugin registers no C-STORE filter (Orthanc stops "
         "at the first that accepts), so it cannot time them on their own."},
        {"action", "Make the C-STORE filter of the site's plugin (IncomingCStoreInstanceFilter: in orthanc-python, the "
                   "function the script registers as one) decide from the instance alone, without network calls or "
                   "heavy work; what must wait can run after the instance is stored"},
        {"effect", "Not a configuration change: expect each C-STORE instance to shorten by the difference, as in the "
                   "rule's scenario, an orthanc-python C-STORE filter of 30 ms"},
        {"confidence", "persist differs between the transports; the C-STORE filters are the only step of Orthanc's "
                       "store that C-STORE alone runs, but they are not timed on their own"},
        {"confidencePython", ", and the site's orthanc-python script registers one"}},
       "docs/diagnosis.md#cstore-filters"},

      {"storage-bound",
       "with IngestPerf.TimedStorage, storagePrepare and storageWrite and their split; without, persist, its split and "
       "onStoredWait; serverTotal, StorageCompression, SyncStorageArea, the storage plugin and the index",
       {{"storageMs", 5}, {"shareOfServerTotal", 0.4}, {"persistUntimedMs", 20}},
       {"storagePrepare", "storageWrite", "storagePrepareParts", "storageWriteParts", "persist", "persistParts",
        "serverTotal", "storageWriteMegabytesPerSecond", "index", "storagePlugin", "StorageCompression",
        "SyncStorageArea"},
       {{"seenTimed", "storagePrepare %.1f + storageWrite %.1f ms of serverTotal %.1f ms"},
        {"notFiredTimedWaiting",
         "storagePrepare %.1f + storageWrite %.1f ms, mostly waiting for a CPU: see waiting-for-cpu"},
        {"verdictCompression", "Storage-bound: compressing the files (StorageCompression) takes %.1f ms of each "
                               "instance's %.1f ms in Orthanc"},
        {"explanationCompression",
         "storagePrepare (MD5 and compression, before the first write) dominates the storage."},
        {"actionCompression", "Set StorageCompression to false (files already stored stay readable)"},
        {"effectCompression",
         "Expect the compression gone from each store, at the cost of the disk space it saved: for 2 MB instances, "
         "each store about 6 times shorter and about 7 times the instances per second in the benchmark"},
        {"verdictWrite",
         "Storage-bound: writing the files takes %.1f ms of each instance's %.1f ms in Orthanc (%.1f MB/s)"},
        {"theDisk", "the disk of StorageDirectory"},
        {"explanationWrite", "storageWrite (the storage area's create calls) dominates the store."},
        {"actionWrite", "A faster storage for StorageDirectory (local SSD rather than a network share)"},
        {"actionSync", "; SyncStorageArea false trades durability on power loss for speed"},
        {"effectWrite", "Not a configuration change: expect each store to shorten by the storageWrite time a faster "
                        "storage saves (the rule's scenario, a disk slow to flush: docs/diagnosis.md#storage-bound)"},
        {"confidenceTimed", "the storage is timed by IngestPerf.TimedStorage"},
        {"explainedByCStoreFilters",
         "persist %.1f ms over HTTP: the longer C-STORE persist is the cstore-filters rule's"},
        {"notFired", "persist %.1f ms (%.1f of it after the index commit) of serverTotal %.1f ms (untimed storage: "
                     "%.0f ms needed)"},
        {"notFiredWaiting", "persist %.1f ms of serverTotal %.1f ms, %s: see waiting-for-cpu"},
        {"fired", "persist %.1f ms of serverTotal %.1f ms"},
        {"verdictUntimed",
         "Storage- or index-bound: writing each instance (persist) takes %.1f ms of its %.1f ms in Orthanc"},
        {"verdictOnCpu",
         "On a CPU in persist: writing each instance takes %.1f ms of its %.1f ms in Orthanc, %.0f%% of it on a CPU"},
        {"onCpuCompression", " (StorageCompression compresses every file)"},
        {"onCpuHashing", " (hashing, the index's own work)"},
        {"verdictBlocked", "Blocked in persist: writing each instance takes %.1f ms of its %.1f ms in Orthanc, %.0f%% "
                           "of it blocked (waiting for the storage, %s, or the index, %s)"},
        {"explanation", "persist holds the storage write and the index transaction; without the timed storage Orthanc "
                        "gives no hook between them."},
        {"explanationSplit", " Where its time goes, from the storing thread's clocks: %s."},
        {"effectCompressionUntimed",
         "Expect the compression gone from each store, at the cost of the disk space it saved"},
        {"confidenceCompression", "persist is mostly on a CPU and StorageCompression is on; IngestPerf.TimedStorage "
                                  "would time the compression on its own"},
        {"actionTimedStorage", "Turn on IngestPerf.TimedStorage to split persist into storageWrite and indexUpdate, "
                               "then follow that finding"},
        {"effectTimedStorage", "none by itself: it tells which of the two to fix"},
        {"actionStoragePlugin", "The storage area belongs to %s, so this plugin cannot time its writes apart: look at "
                                "its store (the database or object store, the network to it) and at the index (%s)"},
        {"effectStoragePlugin",
         "Not a configuration change: expect each store to shorten by what a faster storage or index saves"},
        {"confidenceSplit",
         "whether persist is on a CPU, waiting or blocked is measured; the storage and the index are not told apart"},
        {"confidenceUntimed", "storage and index are not told apart"}},
       "docs/measurements/benchmarks.md#the-fixes-of-the-diagnosis-before-and-after"},

      {"index-bound",
       "indexUpdate (with IngestPerf.TimedStorage) and its split, onStoredWait per stored instance, serverTotal, the "
       "index plugin",
       {{"indexMs", 5}, {"shareOfServerTotal", 0.4}},
       {"index", "indexUpdate", "indexUpdateParts", "serverTotal"},
       {{"notJudged", "not judged: indexUpdate needs IngestPerf.TimedStorage"},
        {"notFired", "indexUpdate %.1f ms (%.1f of it after the index commit) of serverTotal %.1f ms (%.0f samples)"},
        {"notFiredWaiting", "indexUpdate %.1f ms of serverTotal %.1f ms, %s: see waiting-for-cpu"},
        {"fired", "indexUpdate %.1f ms of serverTotal %.1f ms"},
        {"verdict", "Index-bound: Orthanc's index transaction takes %.1f ms of each instance's %.1f ms (%s)"},
        {"blockedBySqlite", "the disk of the SQLite index, or Orthanc's lock"},
        {"blockedByDatabase", "the database server, or Orthanc's lock"},
        {"explanation", "indexUpdate runs from the end of the last file write to OnStored: the index transaction, and "
                        "the wait for Orthanc's OnStored lock."},
        {"action", "The SQLite index sits in IndexDirectory: put it on a fast local disk; for many concurrent clients, "
                   "a PostgreSQL index (orthanc-postgresql) scales better"},
        {"actionDatabase", "Look at the database server: its commit latency (synchronous_commit, disk), the network to "
                           "it, its load; the plugin's IndexConnectionsCount on Orthanc 1.12"},
        {"effect", "Not a configuration change: expect each store to shorten by the indexUpdate time a faster database "
                   "saves, as in the rule's scenario, a slow PostgreSQL"},
        {"confidence", "the index transaction is timed between the storage write and OnStored"}},
       "docs/diagnosis.md#index-bound"},

      {"slow-change-consumer",
       "the NewInstance changes waiting now, changeDispatch (p50), the change thread's time per instance while changes "
       "wait",
       {{"backlog", 10}, {"lagP50Ms", 100}, {"perInstanceMs", 10}},
       {"newInstanceBacklog", "perInstanceWhileBacklogged", "changeDispatch", "LuaScripts"},
       {{"notFired", "backlog %.0f, changeDispatch p50 %.1f ms, change thread %.1f ms per instance while backlogged"},
        {"fired", "backlog %.0f, change thread %.1f ms per instance"},
        {"verdict", "A slow change consumer: Orthanc's change thread spends %.0f ms per instance in Lua or plugins' "
                    "OnChange, %.0f NewInstance changes wait"},
        {"explanation", "Orthanc delivers changes to Lua and to every plugin's OnChange on one thread. This is off the "
                        "ingest path (the store does not wait), but everything that reacts to new instances (routing, "
                        "auto-forwarding, Lua OnStoredInstance) lags, and the queue grows."},
        {"action", "Find the slow OnChange consumer (Lua scripts, plugins) and make it hand its work to a queue or a "
                   "job instead of doing it on the change thread"},
        {"effect", "Off the ingest path: expect the stores no faster, and what reacts to new instances (routing, "
                   "forwarding, Lua) no longer lagging behind them, as in the rule's scenario"},
        {"confidenceHigh", "the change thread's time per instance is measured while changes wait"},
        {"confidenceMedium", "changes wait now; the change thread's time per instance is not timed yet, the lag of the "
                             "changes delivered stands for it"}},
       "docs/diagnosis.md#slow-change-consumer"},

      {"slow-filters",
       "preStore and transcode (means), serverTotal, LuaScripts, IngestTranscoding",
       {{"preStoreMs", 5}, {"shareOfServerTotal", 0.25}},
       {"preStore", "transcode", "serverTotal", "LuaScripts", "IngestTranscoding"},
       {{"explainedByTranscoding", "preStore is explained by the transcoding finding (not timed on its own)"},
        {"seen", "preStore without transcoding %.1f ms of serverTotal %.1f ms"},
        {"verdict", "Slow filters: %.1f ms of each instance's %.1f ms in Orthanc pass before the store, in Lua or "
                    "other plugins' instance filters"},
        {"explanation", "preStore runs from the received instance to the last instance filter: DICOM parsing, Lua's "
                        "ReceivedInstanceFilter and IncomingInstanceFilter, other plugins' filters; parsing takes well "
                        "under a millisecond for a 0.5 MB instance."},
        {"action", "Review the Lua filters (ReceivedInstanceFilter, IncomingInstanceFilter) and other plugins' "
                   "filters: no network calls or heavy work there"},
        {"effect", "Not a configuration change: expect each store to shorten by the filters' time in preStore, which "
                   "without them is a fraction of a millisecond, as in the rule's scenario, a slow Lua filter"},
        {"confidenceHigh", "Lua scripts are configured and nothing else in preStore is slow"},
        {"confidenceMedium", "no Lua script is configured: a plugin's filter, or very large instances"}},
       "docs/diagnosis.md#slow-filters"},

      {"lua-lock",
       "HTTP receive and its split, HTTP serverTotal, the Lua callbacks the scripts define",
       {{"receiveMs", 20}, {"receiveShareOfServerTotal", 0.4}},
       {"receive", "receiveParts", "luaCallbacks", "LuaScripts"},
       {{"notJudged", "no Lua callback defined (LuaScripts)"},
        {"notFired", "receive %.1f ms of serverTotal %.1f ms (%.0f samples)"},
        {"notFiredNotWaiting", "receive %.1f ms, %s: not a wait"},
        {"fired", "receive %.1f ms of serverTotal %.1f ms with Lua callbacks"},
        {"verdict", "Orthanc's Lua lock: each HTTP request waits %.1f ms before its body is read while Lua's callbacks "
                    "(%s) hold the lock"},
        {"verdictBlocked", " (%.0f%% of it blocked)"},
        {"explanation", "Orthanc runs every Lua callback under one lock, and takes it in the filter of every HTTP "
                        "request, whether or not the scripts define IncomingHttpRequestFilter; Lua's OnStoredInstance "
                        "runs later on Lua's own thread (C-STORE does not wait for it), holding the lock: the next "
                        "HTTP request waits in receive, before its body is read."},
        {"action", "Make the Lua callbacks (%s) return at once: no HTTP calls or loops in them; move slow work to a "
                   "job (Orthanc's /modalities/.../store with Asynchronous) or to a plugin's own thread"},
        {"effect", "Not a configuration change: expect each HTTP request to stop waiting for the lock, as in the "
                   "rule's scenario, a Lua OnStoredInstance of 30 ms"},
        {"confidence", "the Lua callbacks are configured and the HTTP receive waits; a slow upload would look the same "
                       "(the wait is not timed on its own)"}},
       "docs/diagnosis.md#lua-lock"},

      {"slow-uploads",
       "HTTP receive (mean, sum), HTTP serverTotal, the bytes received",
       {{"receiveMs", 20}, {"receiveShareOfServerTotal", 0.4}},
       {"receive", "serverTotal", "uploadMegabytesPerSecond"},
       {{"explainedByLuaLock", "the HTTP receive is explained by lua-lock or received-instance-callback"},
        {"notJudged", "not judged: %.0f HTTP receive samples"},
        {"seen", "receive %.1f ms of serverTotal %.1f ms"},
        {"verdict",
         "Slow uploads: HTTP clients take %.0f ms to send each instance (%.1f MB/s), Orthanc stores it in %.1f ms"},
        {"explanation", "receive runs from Orthanc's HTTP request filter (headers read) to the instance received: the "
                        "body's upload by the client and its reading by Orthanc."},
        {"action", "Look at the client and the network: bandwidth, a proxy, the client reading its files slowly; "
                   "several uploads in parallel hide the latency"},
        {"effect", "not measurable from Orthanc: the time is spent by the client or the network"},
        {"confidence", "receive is measured per instance"}},
       ""},

      {"slow-http-client",
       "requestGap of the HTTP or STOW-RS connections and its split, the transport's cycle and serverTotal, "
       "HttpCompressionEnabled",
       {{"gapMeanMs", 5}, {"shareOfCycle", 0.3}, {"answerOnCpuShare", 0.5}},
       {"requestGap", "requestGapParts", "serverTotal", "answersAcceptingCompression", "HttpCompressionEnabled"},
       {{"notJudged", "not judged: %.0f gaps between two requests of one HTTP connection (%.0f needed)"},
        {"seen", "requestGap %s, %.0f%% of a %.1f ms cycle"},
        {"notFiredClient", "%s; %s: the client's part %.1f ms"},
        {"verdictAnswer", "Orthanc's answers take the time between requests: %.1f ms of each HTTP instance's %.1f ms "
                          "cycle pass between its store and the next request, %.0f%% of it on Orthanc's CPU (building, "
                          "compressing and sending the answer)"},
        {"verdictClient", "The HTTP client waits between requests: %.1f ms of each instance's %.1f ms cycle (%.0f%%) "
                          "pass between Orthanc's answer and the client's next request on the same connection"},
        {"explanation", "requestGap runs on Orthanc's HTTP thread from the end of a request's store (OnStored) to the "
                        "next request of the same keep-alive connection (its headers read): Orthanc builds, compresses "
                        "and sends the answer on its CPU, then waits for the client. "},
        {"explanationSplit", "Its split: %s; Orthanc's CPU in it is %.2f ms, the client's turnaround the rest."},
        {"explanationUnsplit", "Split for %.0f of its %.0f gaps (the page shows them), fewer than the %.0f a judgement "
                               "needs: whose time it is is not judged here."},
        {"actionAnswer", "Set HttpCompressionEnabled to false if the clients accept gzip (Orthanc before 1.12.2 "
                         "compresses every answer), or give Orthanc CPU"},
        {"effectAnswer", "Expect up to the %.2f ms Orthanc spends on a CPU between requests saved"},
        {"actionClient", "On the client: send the next instance as soon as the answer arrives (what does it do between "
                         "requests: reading files, logging, a rate limit?), or send over several connections at once"},
        {"effectClient", "Expect each instance's cycle to shorten by up to the client's share of the gap, %.1f ms"},
        {"confidenceHigh", "the gap is measured on each connection and split on the HTTP thread"},
        {"confidenceMedium", "the gap is measured; too few of the gaps are split to say whose time it is"}},
       ""},

      {"compressed-answers",
       "the HTTP ingest answers to clients accepting gzip or deflate, HttpCompressionEnabled, Orthanc's version",
       {},
       {"answersToClientsAcceptingCompression", "HttpCompressionEnabled", "orthancVersion", "serverTotal"},
       {{"notFired", "%.0f HTTP ingest answers to clients accepting gzip/deflate; this Orthanc does not compress them"},
        {"notFiredCompresses", "%.0f HTTP ingest answers to clients accepting gzip/deflate; Orthanc compresses them"},
        {"fired", "%.0f HTTP ingest answers compressed by Orthanc"},
        {"verdict", "Orthanc gzip-compresses each of its %.0f ingest answers (a few hundred bytes): about 17 us each, "
                    "too little to measure inside requestGap; HttpCompressionEnabled false turns it off"},
        {"explanation",
         "Orthanc before 1.12.2 compresses any answer when the client accepts gzip or deflate; the compression happens "
         "after every plugin hook, inside requestGap (on Orthanc's CPU, with building and sending the answer). zlib "
         "takes about 17 us on such an answer (docs/measurements/benchmarks.md#compressing-an-ingest-answer)."},
        {"action", "Set HttpCompressionEnabled to false (Orthanc 1.12.2 and later default to it)"},
        {"effect", "Expect no measurable change: with 1 and 4 clients, uploads took as long with the compression as "
                   "without, within the run-to-run spread"},
        {"confidence", "the compression is certain from Orthanc's rule, but its cost is not observable, and switching "
                       "it off changed nothing measurable"}},
       "docs/measurements/benchmarks.md#the-fixes-of-the-diagnosis-before-and-after"},

      {"rejected-or-duplicate",
       "the outcomes of the instances received (already stored, not DICOM, rejected), serverTotal",
       {{"minimumInstances", 5}, {"shareOfReceived", 0.05}},
       {"outcomes", "OverwriteInstances", "serverTotal"},
       {{"seen", "%.0f already stored, %.0f rejected of %.0f"},
        {"verdict",
         "%.0f%% of the instances received were not stored: %.0f already stored (sent again), %.0f rejected"},
        {"explanation", "A duplicate goes through the whole store before Orthanc finds it in its index; the cost is "
                        "estimated as serverTotal's mean per duplicate, spread over the stored instances."},
        {"action", "Duplicates: a sender re-sending (retries after timeouts, a router sending twice): look at its "
                   "queue and logs. Rejected: a client posting non-DICOM files, or filters discarding on purpose"},
        {"effect", "Expect each duplicate not sent to save a whole store"},
        {"explanationBeforeFilters",
         "This Orthanc (1.13 or later, OverwriteInstances \"Never\" or \"IfChanged\") parses a duplicate and finds it "
         "in its index before any filter, then answers AlreadyStored: no hook marks that answer, so what a duplicate "
         "costs is not observable (its upload or transfer and its parsing, not a whole store)."},
        {"effectBeforeFilters",
         "Expect each duplicate not sent to save its transfer, its parsing and one lookup in the "
         "index"},
        {"confidence", "the outcomes are counted exactly"}},
       ""},

      {"stores-failing",
       "the failed stores by reason and by transport (after the instance filters), the senders with failures since the "
       "reset, the site's orthanc-python callbacks",
       {},
       {"failedByReason", "failed", "storedOrAlreadyStored", "failedBySenderSinceReset", "failedByTransport"},
       {{"notFired", "no store failed after the instance filters (%.0f stored, %.0f unreadable)"},
        {"fired", "%.0f stores failed after the instance filters, %.0f stored"},
        {"verdict", "Orthanc is losing instances: %.0f of %.0f stores failed %s (%.1f%%), mostly %s%s"},
        {"verdictRefused",
         "Refused by the site's C-STORE filter, or lost: %.0f of %.0f C-STORE stores ended after the instance filters "
         "without being stored %s (%.0f%%); orthanc-python's script registers IncomingCStoreInstanceFilter%s"},
        {"explanation", "Each failed store is an instance the sender believes sent or must send again: %s. The plugin "
                        "concludes a store failed when the thread that ran it has left Orthanc's store without "
                        "reaching OnStored (docs/outcomes.md)."},
        {"actionDiskFull", "Free space on the storage's file system, or move StorageDirectory to a larger one; Orthanc "
                           "refuses every instance until there is room"},
        {"actionQuota", "Raise MaximumStorageSize or MaximumPatientCount, or unprotect patients so that Orthanc can "
                        "recycle the oldest"},
        {"quotaValue", "larger, or 0 for no limit"},
        {"actionStorageWrite",
         "The storage area refuses writes: check its file system (space, permissions, errors in the kernel's log)"},
        {"actionIndex", "The index refuses the instances after they were written: check the database (its log, disk, "
                        "connections) and Orthanc's limits"},
        {"actionAfterFilters", "Look at Orthanc's log for \"Store failure\" and storage errors; set "
                               "IngestPerf.TimedStorage to tell a failed write, a failed index and a filter apart"},
        {"actionRefused", "If the site's C-STORE filter refuses these instances on purpose, nothing is lost: turn on "
                          "IngestPerf.TimedStorage to count them as rejected; otherwise look at Orthanc's log for "
                          "\"Store failure\" and storage errors"},
        {"effect", "Expect every instance stored instead of lost: %.0f %s"},
        {"confidenceMedium", "the failures are counted exactly; which step failed needs TimedStorage"},
        {"confidenceHigh", "the failures are counted exactly, and their reason observed"}},
       ""},

      {"unreadable-instances",
       "the instances failed before the instance filters, of those received; the senders with such failures since the "
       "reset; the filters that run before the instance filters (Lua, orthanc-python, plugins loaded before this one)",
       {{"rankedWithLostFromShare", 0.01}},
       {"failedBeforeFilters", "received", "rankedWithLostInstancesFromShare", "failedBySenderSinceReset",
        "failedByTransport"},
       {{"notFired", "no instance failed before the instance filters (%.0f received)"},
        {"fired", "%.0f of %.0f instances failed before the instance filters (%.1f%%)"},
        {"verdict", "Clients sent instances Orthanc could not read: %.0f of %.0f instances received %s (%.1f%%)"},
        {"verdictFilters", "Orthanc could not read, or the site's filters refused, instances clients sent: %.0f of "
                           "%.0f instances received %s (%.1f%%)"},
        {"rare", ", rare"},
        {"explanation", "These instances %s. Orthanc answered the sender with an error (HTTP 400, a C-STORE failure "
                        "status): nothing was written, and the sender knows."},
        {"action", "Look at Orthanc's log for the refused instances (\"Exception while storing DICOM\", missing tags) "
                   "and at the sender named: a cut upload, a damaged file or missing identifiers are the sender's to "
                   "fix; a refusal by the site's Lua script or filter is by design"},
        {"effect", "Expect each instance sent whole and with its identifiers to be stored"},
        {"confidenceMedium", "counted exactly; a refusal by a filter before the instance filters is not told apart "
                             "from an unreadable file"},
        {"confidenceHigh", "counted exactly, and no filter runs before the instance filters"}},
       ""},
    };

  }


  const std::vector<RuleEntry>& DiagnosisRuleTable()
  {
    return kRules;
  }


  const std::vector<RuleSentence>& SharedSentences()
  {
    return kSharedSentences;
  }
}
