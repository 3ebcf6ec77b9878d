#if canImport(Glibc)
import Glibc
#endif

/// A point in time: UTC milliseconds since 1970-01-01T00:00:00Z.
///
/// Stored as an integer (so ordering and keyset paging are integer comparisons) and written as
/// ISO-8601 text at the edges (`2026-11-29T15:28:06.123Z`). Valid years are 0001 to 9999.
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    /// The smallest and largest representable instants (0001-01-01 and 9999-12-31T23:59:59.999Z).
    public static let range: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_999

    /// The current wall-clock time, truncated to the millisecond.
    public static func now() -> Timestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(milliseconds: Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000)
    }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.milliseconds < b.milliseconds }

    /// ISO-8601 in UTC with milliseconds, e.g. `2026-11-29T15:28:06.123Z`.
    public var iso8601: String {
        var out: [UInt8] = []
        out.reserveCapacity(24)
        writeISO8601(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends ``iso8601`` as UTF-8 to `out`.
    ///
    /// An instant outside ``range`` (only a damaged file, or one another program wrote, holds one)
    /// is written as the nearest instant inside it, so the text is always valid ISO-8601 with a
    /// four-digit year, whatever the stored integer.
    public func writeISO8601(into out: inout [UInt8]) {
        let clamped = min(max(milliseconds, Self.range.lowerBound), Self.range.upperBound)
        let (days, msOfDay) = Self.floorDivide(clamped, 86_400_000)
        let (y, m, d) = Self.civil(fromDays: days)
        let seconds = msOfDay / 1000
        func two(_ v: Int64) {
            out.append(UInt8(48 + v / 10))
            out.append(UInt8(48 + v % 10))
        }
        func digits(_ value: Int64, _ width: Int) {
            if width == 2 { return two(value) }
            if width == 3 { out.append(UInt8(48 + value / 100)); return two(value % 100) }
            two(value / 100)
            two(value % 100)
        }
        digits(y, 4); out.append(45); digits(m, 2); out.append(45); digits(d, 2); out.append(84)
        digits(seconds / 3600, 2); out.append(58); digits(seconds / 60 % 60, 2); out.append(58); digits(seconds % 60, 2)
        out.append(46); digits(msOfDay % 1000, 3); out.append(90)
    }

    public var description: String { iso8601 }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; a space may stand for `T`.
    /// Fractions beyond milliseconds are truncated. Returns nil for anything else.
    public init?(iso8601 text: String) {
        let b = Array(text.utf8)
        var i = 0
        func number(_ count: Int) -> Int64? {
            guard i + count <= b.count else { return nil }
            var v: Int64 = 0
            for k in i..<(i + count) {
                let c = b[k]
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int64(c - 48)
            }
            i += count
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let y = number(4), expect(45), let mo = number(2), expect(45), let d = number(2) else { return nil }
        guard i < b.count, b[i] == 84 || b[i] == 116 || b[i] == 32 else { return nil }
        i += 1
        guard let h = number(2), expect(58), let mi = number(2), expect(58), let s = number(2) else { return nil }
        var ms: Int64 = 0
        if i < b.count, b[i] == 46 || b[i] == 44 {
            i += 1
            var digits = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                if digits < 3 { ms = ms * 10 + Int64(b[i] - 48) }
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            if digits < 3 { for _ in digits..<3 { ms *= 10 } }
        }
        var offsetMinutes: Int64 = 0
        guard i < b.count else { return nil }
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if b[i] == 43 || b[i] == 45 {
            let sign: Int64 = b[i] == 45 ? -1 : 1
            i += 1
            guard let oh = number(2) else { return nil }
            _ = expect(58)
            guard let om = number(2), oh < 24, om < 60 else { return nil }
            offsetMinutes = sign * (oh * 60 + om)
        } else {
            return nil
        }
        guard i == b.count, y >= 1, (1...12).contains(mo), d >= 1, d <= Self.daysIn(month: mo, year: y),
              h < 24, mi < 60, s < 60 else { return nil }
        let days = Self.days(fromCivil: y, mo, d)
        let value = ((days * 86_400 + h * 3600 + mi * 60 + s) - offsetMinutes * 60) * 1000 + ms
        guard Self.range.contains(value) else { return nil }
        self.milliseconds = value
    }

    /// The calendar date of this instant in the host's local time zone (libc `localtime_r`, which
    /// follows `TZ`), as `YYYY-MM-DD`.
    public var localDateString: String {
        var seconds = time_t(Self.floorDivide(milliseconds, 1000).0)
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else {
            return String(iso8601.prefix(10))
        }
        return Self.pad(Int64(parts.tm_year) + 1900, 4) + "-" + Self.pad(Int64(parts.tm_mon) + 1, 2) + "-" + Self.pad(Int64(parts.tm_mday), 2)
    }

    // MARK: - Calendar arithmetic (Howard Hinnant's days-from-civil)

    static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let q = a / b, r = a % b
        return r < 0 ? (q - 1, r + b) : (q, r)
    }

    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func pad(_ value: Int64, _ width: Int) -> String {
        let s = String(value)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
