#include "Recording/DuplicateDetection.h"

namespace IngestPerf
{
  namespace
  {
    constexpr int64_t kNsPerSecond = 1000000000;

    bool ReadDigits(int& target, const char* text, int count)
    {
      int value = 0;
      for (int i = 0; i < count; i++)
      {
        if (text[i] < '0' || text[i] > '9')
        {
          return false;
        }
        value = value * 10 + (text[i] - '0');
      }
      target = value;
      return true;
    }

    int DaysInMonth(int year, int month)
    {
      static const int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
      const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
      return (month == 2 && leap) ? 29 : kDays[month - 1];
    }

    // Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    int64_t DaysFromCivil(int64_t year, unsigned month, unsigned day)
    {
      year -= month <= 2;
      const int64_t era = (year >= 0 ? year : year - 399) / 400;
      const unsigned yearOfEra = static_cast<unsigned>(year - era * 400);
      const unsigned dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
      const unsigned dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear;
      return era * 146097 + static_cast<int64_t>(dayOfEra) - 719468;
    }
  }


  bool ParseReceptionDate(int64_t& epochSeconds, const char* value)
  {
    if (value == nullptr)
    {
      return false;
    }
    int year, month, day, hour, minute, second;
    if (!ReadDigits(year, value, 4) || !ReadDigits(month, value + 4, 2) || !ReadDigits(day, value + 6, 2) ||
        value[8] != 'T' || !ReadDigits(hour, value + 9, 2) || !ReadDigits(minute, value + 11, 2) ||
        !ReadDigits(second, value + 13, 2) || value[15] != '\0')
    {
      return false;
    }
    // Exactly the dates Orthanc writes (boost's to_iso_string of time()'s clock): a real day of
    // that month, no leap second.
    if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, month) || hour > 23 || minute > 59 || second > 59)
    {
      return false;
    }
    epochSeconds = DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 + hour * 3600 +
                   minute * 60 + second;
    return true;
  }


  bool IsAlreadyStored(const DuplicateEvidence& evidence)
  {
    if (evidence.receptionSecond < 0)
    {
      return false;
    }
    const int64_t receptionStartNs = evidence.receptionSecond * kNsPerSecond;
    if (receptionStartNs + kNsPerSecond <= evidence.startWallNs - kWallClockMarginNs)
    {
      return true;  // the whole second of that reception ended before this ingest started
    }
    if (receptionStartNs >= evidence.startWallNs + kWallClockMarginNs)
    {
      return false;  // committed after this ingest started
    }
    // Ambiguous second: an earlier store's change or OnStored, seen after that store's reception second
    // began, means the reception date is that store's.
    return evidence.hasEarlierStore && evidence.earlierStoreWallNs + kWallClockMarginNs >= receptionStartNs;
  }
}
