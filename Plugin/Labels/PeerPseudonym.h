// IngestPerf.HashPeers: the calling AETs, called AETs and client addresses, as they leave the
// plugin (labels, groups, associations, open connections, filters echoed), replaced by stable
// short hashes: "aet-" or "ip-" and the first 8 hex digits of the value's 64-bit FNV-1a. Without a
// key, so the same value gives the same name on every Orthanc and after every restart, and
// operators can correlate. Pseudonymisation, not encryption: a small set of AETs or addresses is
// brute-forced in moments. Applied by the exporter, never on the ingest path.
#pragma once

#include "Labels/InstanceLabels.h"

#include <string>

namespace IngestPerf
{
  // remoteAet, remoteIp and calledAet: the dimensions that name peers.
  bool IsPeerDimension(LabelDimension dimension);

  // "aet-" or "ip-" and 8 hex digits.
  std::string PeerPseudonym(const char* prefix, const std::string& value);

  // Whether `value` has the form of a pseudonym of that dimension ("aet-" or "ip-", 8 hex digits).
  bool IsPseudonym(LabelDimension dimension, const std::string& value);

  // A client address (an open connection's remote end) as exported: its pseudonym when `hash`.
  std::string ExportedAddress(const std::string& address, bool hash);

  // A label value as exported: the pseudonym of a peer dimension's value when `hash`; "(none)",
  // "(other)" and the other dimensions unchanged.
  std::string ExportedLabelValue(LabelDimension dimension, const std::string& value, bool hash);
}
