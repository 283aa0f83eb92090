// The running Orthanc's version, read once at start-up, for the behaviours that changed between
// the Orthancs the plugin supports (tested: 1.10.1, 1.12.7 and 1.13.0): the plugin adapts to the one
// it finds.
#pragma once

#include <string>

namespace IngestPerf
{
  struct OrthancVersion
  {
    int major = 1;
    int minor = 10;
    int revision = 1;

    // "1.12.7" -> 1.12.7; "mainline" and anything unparsable count as newer than every release.
    static OrthancVersion Parse(const std::string& text);
    bool AtLeast(int major, int minor, int revision) const;
    std::string ToString() const;

    // From 1.12.2, HttpCompressionEnabled defaults to false and answers under 2048 bytes are sent
    // uncompressed: an ingest answer (a few hundred bytes) is never compressed.
    bool CompressesSmallAnswers() const { return !AtLeast(1, 12, 2); }
    bool HttpCompressionDefault() const { return !AtLeast(1, 12, 2); }
    // From 1.13.0, under OverwriteInstances "Never" (the default) and "IfChanged", a store of an
    // instance already stored (the same content, for "IfChanged") ends after a lookup in the index,
    // before any instance filter and OnStored: the plugin sees its ReceivedInstance only.
    bool AnswersDuplicatesBeforeFilters() const { return AtLeast(1, 13, 0); }
  };
}
