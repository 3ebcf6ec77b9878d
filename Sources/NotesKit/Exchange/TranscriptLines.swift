/// The lines of a chat transcript: `[YYYY-MM-DD HH:MM:SS] Me: text` for a message the user sent,
/// `[YYYY-MM-DD HH:MM:SS] Them: text` for one received, times in UTC to the second. A message of
/// several lines continues on the lines after its first, as they are.
///
/// A continuation line that would read as the start of a message (or starts with `\`) is written
/// with a `\` in front, which reading removes; a transcript from elsewhere keeps its backslashes
/// unless one stands before such a line.
enum TranscriptLines {
    /// The start of a message line: its time and who sent it; `text` is the rest of the line.
    struct Header: Equatable {
        var sentAt: Timestamp
        var fromMe: Bool
        var text: Substring
    }

    /// Parses `line` as the first line of a message, or nil when it is not one.
    static func header(_ line: Substring) -> Header? {
        let u = line.utf8
        // "[" + 19 characters of time + "] " + "Me: " or "Them: "
        guard u.count >= 25, u.first == 91 else { return nil }
        let timeStart = u.index(after: u.startIndex)
        let timeEnd = u.index(timeStart, offsetBy: 19)
        guard u[timeEnd] == 93, u[u.index(after: timeEnd)] == 32 else { return nil }
        let time = String(Substring(u[timeStart..<timeEnd]))
        let bytes = Array(time.utf8)
        guard bytes.count == 19, bytes[10] == 32, let sentAt = Timestamp(iso8601: time + "Z") else { return nil }
        // Bytes, not Characters: a combining mark after the space would join it into one Character.
        let who = u[u.index(timeEnd, offsetBy: 2)...]
        if who.starts(with: "Me: ".utf8) { return Header(sentAt: sentAt, fromMe: true, text: Substring(who.dropFirst(4))) }
        if who.starts(with: "Them: ".utf8) { return Header(sentAt: sentAt, fromMe: false, text: Substring(who.dropFirst(6))) }
        return nil
    }

    /// Appends one message: its header line, then its further lines (escaped where needed).
    static func write(sentAt: Timestamp, fromMe: Bool, content: String, into out: inout [UInt8]) {
        out.append(91)
        var iso: [UInt8] = []
        sentAt.writeISO8601(into: &iso)
        out.append(contentsOf: iso[0..<10])
        out.append(32)
        out.append(contentsOf: iso[11..<19])
        out.append(contentsOf: fromMe ? Array("] Me: ".utf8) : Array("] Them: ".utf8))
        var first = true
        // Split on LF bytes ("\r\n" is one Character, and would not split on "\n").
        for line in content.utf8.split(separator: 10, omittingEmptySubsequences: false) {
            if !first {
                out.append(10)
                if needsEscape(Substring(line)) { out.append(92) }
            }
            first = false
            out.append(contentsOf: line)
        }
        out.append(10)
    }

    /// True when a continuation line must be written with a `\` in front.
    static func needsEscape(_ line: Substring) -> Bool {
        line.utf8.first == 92 || header(line) != nil
    }

    /// A continuation line as read: without the `\` that escaped it.
    static func unescape(_ line: Substring) -> Substring {
        guard line.utf8.first == 92 else { return line }
        let rest = Substring(line.utf8.dropFirst())
        return needsEscape(rest) ? rest : line
    }
}
