#if canImport(Glibc)
import Glibc
#endif

/// A time zone for the local times of import files (`tz=`): UTC, a fixed offset (`+08:00`,
/// `-0530`, `UTC+8`), or an IANA name (`Asia/Shanghai`) read from the system's zoneinfo files
/// (TZif, `$TZDIR` or `/usr/share/zoneinfo`), their transitions and the rule after the last one.
struct ImportZone {
    /// (UTC seconds from which it applies, offset in seconds), sorted; the first offset applies before.
    private var transitions: [(at: Int64, offset: Int64)] = []
    private var initial: Int64 = 0
    /// The POSIX rule after the last transition (`CET-1CEST,M3.5.0,M10.5.0/3`), when the file has one.
    private var rule: PosixRule?
    let name: String

    static let utc = ImportZone(name: "UTC")

    private init(name: String) { self.name = name }

    /// The zone named `text`; `.validation` on `tz` when it is neither an offset nor a zone this
    /// system knows.
    static func named(_ text: String) throws -> ImportZone {
        let upper = text.uppercased()
        if upper == "UTC" || upper == "Z" || upper == "GMT" || upper == "ETC/UTC" { return .utc }
        var offsetText = Substring(text)
        if upper.hasPrefix("UTC") || upper.hasPrefix("GMT") { offsetText = offsetText.dropFirst(3) }
        if let offset = fixedOffset(offsetText) {
            var zone = ImportZone(name: text)
            zone.initial = offset
            return zone
        }
        let valid = !text.isEmpty && text.utf8.count < 200 && !text.hasPrefix("/") && !text.split(separator: "/").contains("..")
            && text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || "0123456789/_-+".unicodeScalars.contains($0)) }
        let folder = getenv("TZDIR").map { String(cString: $0) } ?? "/usr/share/zoneinfo"
        guard valid, let kind = fileKind(folder + "/" + text), !kind.isDirectory, kind.size < 1 << 20,
              let bytes = try? InputFile.readAll(folder + "/" + text), var zone = parse(bytes, name: text) else {
            throw NotesError(.validation, "tz must be a time zone like \"Europe/Berlin\", \"UTC\" or \"+08:00\", got \"\(text.prefix(60))\" (this system has no such zone)", field: "tz")
        }
        zone.transitions.sort { $0.at < $1.at }
        return zone
    }

    /// `+08:00`, `+0800`, `+8`, `-05:30` → seconds east of UTC.
    private static func fixedOffset(_ text: Substring) -> Int64? {
        let b = Array(text.utf8)
        guard let sign = b.first, sign == 43 || sign == 45 else { return nil }
        let digits = b.dropFirst().filter { $0 != 58 }
        guard !digits.isEmpty, digits.count <= 4, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        let value = digits.reduce(Int64(0)) { $0 * 10 + Int64($1 - 48) }
        let hours = digits.count <= 2 ? value : value / 100, minutes = digits.count <= 2 ? 0 : value % 100
        guard hours <= 14, minutes < 60 else { return nil }
        return (sign == 45 ? -1 : 1) * (hours * 3600 + minutes * 60)
    }

    /// A TZif file (RFC 8536), version 2 or later for its 64-bit data and rule; nil when malformed.
    private static func parse(_ b: [UInt8], name: String) -> ImportZone? {
        func be(_ at: Int, _ size: Int) -> Int64? {
            guard at >= 0, at + size <= b.count else { return nil }
            var v: Int64 = 0
            for i in 0..<size { v = v << 8 | Int64(b[at + i]) }
            if size == 4 { return Int64(Int32(truncatingIfNeeded: v)) }
            return v
        }
        func counts(_ at: Int) -> [Int]? {
            guard b.count >= at + 44, b[at] == 84, b[at + 1] == 90, b[at + 2] == 105, b[at + 3] == 102 else { return nil }
            return (0..<6).compactMap { be(at + 20 + 4 * $0, 4).map(Int.init) }
        }
        guard let v1 = counts(0), v1.count == 6 else { return nil }
        // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
        let v1size = v1[3] * 5 + v1[4] * 6 + v1[5] + v1[2] * 8 + v1[1] + v1[0]
        var zone = ImportZone(name: name)
        guard b[4] >= 50, let c = counts(44 + v1size), c.count == 6 else {
            // Version 1: 32-bit transitions only.
            return read(b, at: 44, counts: v1, timeSize: 4, into: &zone) != nil ? zone : nil
        }
        guard let end = read(b, at: 44 + v1size + 44, counts: c, timeSize: 8, into: &zone) else { return nil }
        // The footer: "\n" rule "\n".
        if end < b.count, b[end] == 10, let close = b[(end + 1)...].firstIndex(of: 10), close > end + 1 {
            zone.rule = PosixRule(String(decoding: b[(end + 1)..<close], as: UTF8.self))
        }
        return zone
    }

    /// Reads one data block; returns the offset after it.
    private static func read(_ b: [UInt8], at start: Int, counts c: [Int], timeSize: Int, into zone: inout ImportZone) -> Int? {
        let timecnt = c[3], typecnt = c[4]
        guard typecnt > 0, timecnt < 100_000 else { return nil }
        let timesAt = start, indexAt = timesAt + timecnt * timeSize, typesAt = indexAt + timecnt
        let end = typesAt + typecnt * 6 + c[5] + c[2] * (timeSize + 4) + c[1] + c[0]
        guard end <= b.count else { return nil }
        var offsets: [Int64] = []
        for t in 0..<typecnt {
            var v: Int64 = 0
            for i in 0..<4 { v = v << 8 | Int64(b[typesAt + 6 * t + i]) }
            offsets.append(Int64(Int32(truncatingIfNeeded: v)))
        }
        zone.initial = offsets[0]
        zone.transitions = []
        for i in 0..<timecnt {
            var v: Int64 = 0
            for k in 0..<timeSize { v = v << 8 | Int64(b[timesAt + i * timeSize + k]) }
            if timeSize == 4 { v = Int64(Int32(truncatingIfNeeded: v)) }
            let type = Int(b[indexAt + i])
            guard type < typecnt else { return nil }
            zone.transitions.append((v, offsets[type]))
        }
        return end
    }

    /// The offset (seconds east of UTC) in force at UTC second `t`.
    func offset(atUTC t: Int64) -> Int64 {
        if let last = transitions.last, t >= last.at, let rule { return rule.offset(atUTC: t) }
        if transitions.isEmpty { return rule?.offset(atUTC: t) ?? initial }
        var lo = 0, hi = transitions.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if transitions[mid].at <= t { lo = mid + 1 } else { hi = mid }
        }
        return lo == 0 ? initial : transitions[lo - 1].offset
    }

    /// The UTC milliseconds of local wall-clock milliseconds `local`. A local time that happens twice
    /// (clocks going back) is the earlier instant; one that never happens (clocks going forward)
    /// is read with the offset before the change.
    func utc(fromLocal local: Int64) -> Int64 {
        if transitions.isEmpty && rule == nil { return local - initial * 1000 }
        let seconds = Timestamp.floorDivide(local, 1000).0
        let first = offset(atUTC: seconds)
        let second = offset(atUTC: seconds - first)
        if first == second { return local - first * 1000 }
        let candidates = [first, second].filter { offset(atUTC: seconds - $0) == $0 }
        // Both fit: the earlier instant (the larger offset); none fits: the offset before the gap.
        return local - (candidates.max() ?? min(first, second)) * 1000
    }
}

/// A POSIX TZ rule (`STDoffset[DST[offset][,Mm.w.d[/time],Mm.w.d[/time]]]`), as TZif footers hold.
/// Only the `Mm.w.d` form of dates (what every zoneinfo file uses) is read; other forms keep the
/// standard offset.
struct PosixRule {
    var standard: Int64
    var daylight: Int64?
    var start: (month: Int64, week: Int64, day: Int64, time: Int64)?
    var end: (month: Int64, week: Int64, day: Int64, time: Int64)?

    init?(_ text: String) {
        var s = Substring(text).utf8[...]
        func name() -> Bool {
            if s.first == 60 {  // <+08>
                guard let close = s.firstIndex(of: 62) else { return false }
                s = s[s.index(after: close)...]
                return true
            }
            let letters = s.prefix { ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) }
            guard letters.count >= 3 else { return false }
            s = s.dropFirst(letters.count)
            return true
        }
        func time() -> Int64? {
            var sign: Int64 = 1
            if s.first == 45 { sign = -1; s = s.dropFirst() } else if s.first == 43 { s = s.dropFirst() }
            var parts: [Int64] = []
            while parts.count < 3 {
                let digits = s.prefix { $0 >= 48 && $0 <= 57 }
                guard !digits.isEmpty else { return nil }
                parts.append(digits.reduce(0) { $0 * 10 + Int64($1 - 48) })
                s = s.dropFirst(digits.count)
                guard s.first == 58 else { break }
                s = s.dropFirst()
            }
            return sign * (parts[0] * 3600 + (parts.count > 1 ? parts[1] * 60 : 0) + (parts.count > 2 ? parts[2] : 0))
        }
        func date() -> (Int64, Int64, Int64, Int64)? {
            guard s.first == 77 else { return nil }  // M
            s = s.dropFirst()
            var v: [Int64] = []
            for i in 0..<3 {
                let digits = s.prefix { $0 >= 48 && $0 <= 57 }
                guard !digits.isEmpty else { return nil }
                v.append(digits.reduce(0) { $0 * 10 + Int64($1 - 48) })
                s = s.dropFirst(digits.count)
                if i < 2 { guard s.first == 46 else { return nil }; s = s.dropFirst() }
            }
            var at: Int64 = 7200
            if s.first == 47 { s = s.dropFirst(); guard let t = time() else { return nil }; at = t }
            guard (1...12).contains(v[0]), (1...5).contains(v[1]), (0...6).contains(v[2]) else { return nil }
            return (v[0], v[1], v[2], at)
        }
        guard name(), let std = time() else { return nil }
        standard = -std  // POSIX offsets are west of UTC
        guard !s.isEmpty else { return }
        guard name() else { return nil }
        daylight = standard + 3600
        if let first = s.first, first != 44, let dst = time() { daylight = -dst }
        guard s.first == 44 else { return }
        s = s.dropFirst()
        guard let a = date(), s.first == 44 else { daylight = nil; return }
        s = s.dropFirst()
        guard let b = date() else { daylight = nil; return }
        start = a
        end = b
    }

    func offset(atUTC t: Int64) -> Int64 {
        guard let daylight, let start, let end else { return standard }
        let year = Timestamp.civil(fromDays: Timestamp.floorDivide(t + standard, 86_400).0).0
        // The changes in UTC: the start is given in standard time, the end in daylight time.
        let begins = Self.day(year, start) * 86_400 + start.time - standard
        let ends = Self.day(year, end) * 86_400 + end.time - daylight
        let inDaylight = begins < ends ? (t >= begins && t < ends) : (t >= begins || t < ends)
        return inDaylight ? daylight : standard
    }

    /// Days since 1970 of the `week`th (5 = last) weekday `day` (0 = Sunday) of `month` in `year`.
    static func day(_ year: Int64, _ r: (month: Int64, week: Int64, day: Int64, time: Int64)) -> Int64 {
        let first = Timestamp.days(fromCivil: year, r.month, 1)
        let weekday = Timestamp.floorDivide(first + 4, 7).1  // 1970-01-01 was a Thursday
        var d = first + Timestamp.floorDivide(r.day - weekday, 7).1 + (r.week - 1) * 7
        let length = Timestamp.daysIn(month: r.month, year: year)
        while d >= first + length { d -= 7 }
        return d
    }
}

/// How an import reads times: ISO-8601 with a zone as it is; a date alone (`2024-01-15`, its
/// midnight) and a time without a zone (`2024-01-15T10:00[:00]`, `2024-01-15 10:00`) in the import's
/// zone (`tz=`, UTC by default); a whole number as Unix time, in seconds below 100 000 000 000
/// (until the year 5138), else in milliseconds.
struct TimeReader {
    var zone: ImportZone = .utc

    func timestamp(_ text: String, field: String) throws -> Timestamp {
        if let t = Timestamp(iso8601: text) { return t }
        if let t = epoch(text) ?? local(text) { return t }
        throw formatError(field, "\(field) must be an ISO-8601 time like 2026-11-29T15:28:06.123Z (or 2026-11-29 15:28, 2026-11-29, Unix seconds), got \"\(text.prefix(40))\"")
    }

    /// A JSON value where a time is expected: text, or a number of Unix seconds or milliseconds.
    func timestamp(_ value: JSONValue, field: String) throws -> Timestamp? {
        switch value {
        case .null: return nil
        case let .string(s): return try timestamp(s, field: field)
        case let .int(v):
            guard let t = Self.epoch(v) else { throw formatError(field, "\(field) is out of range (years 0001 to 9999): \(v)") }
            return t
        default: throw formatError(field, "\(field) must be a time (text or Unix seconds), got \(value.typeName)")
        }
    }

    static func epoch(_ v: Int64) -> Timestamp? {
        let ms = v.magnitude < 100_000_000_000 ? v * 1000 : v
        guard Timestamp.range.contains(ms) else { return nil }
        return Timestamp(milliseconds: ms)
    }

    private func epoch(_ text: String) -> Timestamp? {
        let u = text.utf8
        guard let first = u.first, first == 45 || (first >= 48 && first <= 57), u.count <= 19,
              u.dropFirst().allSatisfy({ $0 >= 48 && $0 <= 57 }), let v = Int64(text) else { return nil }
        return Self.epoch(v)
    }

    /// `YYYY-MM-DD`, or a date and a time (`T` or space, minutes or seconds, a fraction) without zone.
    private func local(_ text: String) -> Timestamp? {
        let u = Array(text.utf8)
        var iso: String
        switch u.count {
        case 10: iso = text + "T00:00:00Z"
        case 16: iso = text + ":00Z"
        default:
            guard u.count >= 19 else { return nil }
            iso = text + "Z"
        }
        guard let t = Timestamp(iso8601: iso) else { return nil }
        return local(milliseconds: t.milliseconds)
    }

    /// Local wall-clock milliseconds (as if UTC) in the import's zone.
    func local(milliseconds: Int64) -> Timestamp? {
        let utc = zone.utc(fromLocal: milliseconds)
        return Timestamp.range.contains(utc) ? Timestamp(milliseconds: utc) : nil
    }
}
