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
        /// The author's name when the line gives one instead of `Me` or `Them`.
        var sender: String? = nil
    }

    /// The longest sender name read or written, in bytes.
    static let maxSenderBytes = 200

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
        // A group chat's line: "Name: text".
        guard let first = who.first, first != 32, first != 9 else { return nil }
        var i = who.startIndex, n = 0
        while i < who.endIndex, n <= maxSenderBytes {
            let next = who.index(after: i)
            if who[i] == 58, next < who.endIndex, who[next] == 32 {
                guard n > 0, let name = String(Substring(who[who.startIndex..<i])) as String?, !TextRules.isBlank(name) else { return nil }
                return Header(sentAt: sentAt, fromMe: false, text: Substring(who[who.index(after: next)...]), sender: name)
            }
            i = next
            n += 1
        }
        return nil
    }

    /// The name a line shows for a message: `Me` for the user's, the sender's name when it reads
    /// back as itself, else `Them`.
    static func who(fromMe: Bool, sender: String?) -> String {
        guard !fromMe else { return "Me" }
        guard let sender, writable(sender) else { return "Them" }
        return sender
    }

    /// True when `name` reads back from a message line as the same sender.
    static func writable(_ name: String) -> Bool {
        let u = name.utf8
        guard let first = u.first, first != 32, first != 9, u.count <= maxSenderBytes, name != "Me", name != "Them",
              !u.contains(10), !u.contains(13) else { return false }
        var previous: UInt8 = 0
        for c in u {
            if previous == 58 && c == 32 { return false }
            previous = c
        }
        return previous != 58 && !TextRules.isBlank(name)
    }

    /// Appends one message: its header line, then its further lines (escaped where needed).
    static func write(sentAt: Timestamp, fromMe: Bool, sender: String? = nil, content: String, into out: inout [UInt8]) {
        out.append(91)
        var iso: [UInt8] = []
        sentAt.writeISO8601(into: &iso)
        out.append(contentsOf: iso[0..<10])
        out.append(32)
        out.append(contentsOf: iso[11..<19])
        out.append(contentsOf: "] ".utf8)
        out.append(contentsOf: who(fromMe: fromMe, sender: sender).utf8)
        out.append(contentsOf: ": ".utf8)
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
