// One diagnosis in progress: the figures read, every rule's check and the findings so far. The
// predicates live in AssociationRules.cpp (the C-STORE gaps), StoreRules.cpp (Orthanc's store and
// the site's code in it), HttpRules.cpp (HTTP clients and threads) and OutcomeRules.cpp (what was
// not stored); their words in DiagnosisRuleTable.cpp.
#pragma once

#include "Diagnosis/DiagnosisRuleTable.h"
#include "Diagnosis/DiagnosisRules.h"

#include <string>
#include <vector>

namespace IngestPerf
{
  class RuleEvaluation
  {
  public:
    explicit RuleEvaluation(const DiagnosisInput& input);

    // Every rule in the table's order, then the findings ranked.
    Diagnosis Run();

  private:
    const DiagnosisInput& input_;
    const TransportFigures& dicom_;
    const TransportFigures& rest_;
    Diagnosis result_;

    void Check(const RuleEntry& rule, bool fired, const std::string& reason);
    Finding& Add(const RuleEntry& rule, const char* transport, double costMs, CostKind kind, double cycleMs);
    // The words of a finding that its figures do not change: the rule's explanation, action and effect
    // (with the link to its measurement), and the confidence with the sentence that says why.
    static void Describe(Finding& f, const RuleEntry& rule, const char* confidence, const char* reason);

    // The cycle of the transports merged, for the findings on "all": each transport's cycle
    // weighted by its instances (for C-STORE alone, its own cycle).
    double AllCycleMs() const;
    bool PythonRegisters(const char* hook) const;
    // " (orthanc-python's script registers OnStoredInstance)" when it does, else "".
    std::string PythonText(const char* hook) const;
    std::vector<std::string> AllOtherPlugins() const;
    // The OnStored wait per stored instance, spread over every instance stored.
    double OnStoredWaitPerInstanceMs(const TransportFigures& figures) const;
    // "in the last 5 minutes", "since the reset": the scope of the figures of a finding.
    std::string Scope() const;

    // AssociationRules.cpp
    double ShareAtDelayedAckTimers() const;
    bool EnoughGaps(const RuleEntry& rule);
    bool SiteHoldsReceivedInstanceCallback() const;
    bool DicomWorkersSaturated();
    bool CStoreAnswerStall();
    bool SenderStall(bool explained);
    bool SiteReceivedInstanceCallback();
    void SlowSender(bool explained);

    // StoreRules.cpp
    bool EnoughInstances(const RuleEntry& rule);
    void WaitingForCpu();
    bool TranscodingBound();
    bool SiteCallbacks();
    bool CStoreFilters();
    void StorageBound(bool cstoreFilters);
    void IndexBound();
    void SlowChangeConsumer();
    void SlowFilters(bool transcoding);

    // HttpRules.cpp
    void HttpThreadsSaturated();
    bool LuaLock();
    void SlowUploads(bool explained);
    void SlowHttpClient();
    void CompressedAnswers();

    // OutcomeRules.cpp
    std::string MostFrom(bool unreadable) const;
    const char* FailingTransport(bool unreadable, uint64_t failed) const;
    void AddFailureEvidence(Finding& f, bool unreadable) const;
    void RejectedOrDuplicate();
    void StoresFailing();
    void UnreadableInstances();
  };
}
