// Chats exported by other apps: Telegram Desktop's JSON export and WhatsApp's `.txt` export. Read
// only; each message keeps its author in `sender`, and the exporting user's are `fromMe`.

/// Telling other apps' chat exports from NotesKit's own files of the same extension.
enum ForeignChat {
    /// The first bytes of `path` (at most 4 KiB), without a UTF-8 byte order mark.
    static func head(_ path: String) throws -> [UInt8] {
        let file = try InputFile(path: path)
        while file.available.count < 4096, try file.fill() {}
        var bytes = Array(file.available.prefix(4096))
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        return bytes
    }

    /// True when the JSON document's first key is one Telegram Desktop writes first.
    static func looksLikeTelegram(_ path: String) throws -> Bool {
        let bytes = try head(path)
        var i = 0
        func space() { while i < bytes.count, [32, 9, 10, 13].contains(bytes[i]) { i += 1 } }
        space()
        guard i < bytes.count, bytes[i] == 123 else { return false }
        i += 1
        space()
        guard i < bytes.count, bytes[i] == 34 else { return false }
        let start = i + 1
        guard let end = bytes[start...].firstIndex(of: 34) else { return false }
        let key = String(decoding: bytes[start..<end], as: UTF8.self)
        return ["about", "personal_information", "chats", "name", "type", "id", "messages", "profile_pictures", "contacts"].contains(key)
    }

    /// True when the first line that is not blank is a WhatsApp message line.
    static func looksLikeWhatsApp(_ path: String) throws -> Bool {
        let bytes = try head(path)
        for line in bytes.split(separator: 10, omittingEmptySubsequences: true) {
            let text = Array(line)
            if text.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 13 }) { continue }
            // A NotesKit transcript's line ("[2026-11-29 15:28:06] Alice: hi") is the transcript's.
            if TranscriptLines.header(Substring(String(decoding: text.last == 13 ? text.dropLast() : text[...], as: UTF8.self))) != nil { return false }
            return text.withUnsafeBufferPointer { WhatsAppChat.header($0) != nil }
        }
        return false
    }
}

// MARK: - Telegram

/// Telegram Desktop's JSON export (`result.json`): one chat (`{"name", "type", "id", "messages":
/// [...]}`) or the whole account (`{"personal_information": {...}, "chats": {"list": [chat, ...]},
/// "left_chats": {...}, ...}`), read as a stream, one message at a time.
///
/// Each chat becomes a conversation (uid derived from the chat's id, titled by its name), each
/// message of type `message` a message: its text (a string, or a list of strings and entities
/// whose `text` is joined), its time (`date_unixtime`, else `date`, local, read in `tz=`), its
/// author (`from`, kept as `sender`). Messages are mine when their `from_id` is the exporting
/// account's (`personal_information.user_id`, or `me=`, which also matches the `from` name); in a
/// one-to-one chat without either, the messages not from the other person (the chat's id). Service
/// messages (joins, pins, calls) and media without a caption are skipped and listed; replies and
/// edited messages are kept as their text. A message's uid is derived from its chat's id and its
/// own id, so a newer export of the same chat adds only what is new.
enum TelegramExport {
    static func read(_ path: String, into importer: Importer) throws {
        let file = try importer.open(path)
        let reader = Reader(path: path, importer: importer, scanner: JSONScanner(file: file))
        reader.setMe(importer.options.me)
        var single = Chat()
        var sawChats = false
        try reader.members { key, line in
            switch key {
            case "personal_information":
                let info = try reader.value(line)
                if importer.options.me == nil, case let .int(id)? = info["user_id"] { reader.meId = "user\(id)" }
            case "chats", "left_chats":
                sawChats = true
                try reader.members { key, line in
                    guard key == "list" else { return try reader.skip(line) }
                    try reader.elements { _ in
                        var chat = Chat()
                        try reader.members { key, line in
                            if try !reader.chatMember(key, line, &chat) { try reader.skip(line) }
                        }
                    }
                }
            default:
                if try !reader.chatMember(key, line, &single) { try reader.skip(line) }
            }
        }
        guard sawChats || single.sawMessages else {
            throw Importer.locate(formatError(nil, "not a Telegram export: it has neither \"messages\" nor \"chats\""), at: SourceLocation(file: path, line: 1))
        }
    }

    /// What is known of the chat being read.
    struct Chat {
        var name: String?
        var type: String?
        var id: Int64?
        var sawMessages = false
        var conversation: (uid: String, id: Int64)?
    }

    final class Reader {
        let path: String
        let importer: Importer
        let scanner: JSONScanner
        var buffer: [UInt8] = []
        /// The exporting account: its Telegram id (`user123`) and/or its name.
        var meId: String?
        var meName: String?

        init(path: String, importer: Importer, scanner: JSONScanner) {
            self.path = path
            self.importer = importer
            self.scanner = scanner
        }

        func setMe(_ me: String?) {
            guard let me else { return }
            let digits = me.hasPrefix("user") ? me.dropFirst(4) : Substring(me)
            if !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) { meId = "user" + digits }
            meName = me
        }

        func fatal(_ message: String, _ line: Int? = nil) -> NotesError {
            Importer.locate(formatError(nil, message), at: SourceLocation(file: path, line: line ?? scanner.line))
        }

        /// Calls `body` with each key of the object that starts at the next byte; `body` reads its value.
        func members(_ body: (String, Int) throws -> Void) throws {
            let file = scanner.file
            guard try scanner.skipSpace() == 123 else { throw fatal("not a Telegram export: expected a JSON object") }
            file.consume(1)
            if try scanner.skipSpace() == 125 { file.consume(1); return }
            while true {
                guard try scanner.skipSpace() == 34 else { throw fatal("expected a key in the Telegram export (truncated?)") }
                let keyLine = scanner.line
                try scanner.collectValue(into: &buffer)
                guard case let .string(key) = try NotesKitJSON.parse(buffer, line: keyLine, path: path, fatal: true) else { throw fatal("expected a key") }
                guard try scanner.skipSpace() == 58 else { throw fatal("expected ':' after \"\(key.prefix(40))\"") }
                file.consume(1)
                guard try scanner.skipSpace() != nil else { throw fatal("the file ends inside the export (truncated?)") }
                try body(key, scanner.line)
                switch try scanner.skipSpace() {
                case 44: file.consume(1)
                case 125: file.consume(1); return
                case nil: throw fatal("the file ends inside the export (truncated?)")
                default: throw fatal("expected ',' or '}' in the Telegram export")
                }
            }
        }

        /// Calls `body` with the line of each element of the array that starts at the next byte.
        func elements(_ body: (Int) throws -> Void) throws {
            let file = scanner.file
            guard try scanner.skipSpace() == 91 else { throw fatal("expected a JSON array in the Telegram export") }
            file.consume(1)
            if try scanner.skipSpace() == 93 { file.consume(1); return }
            while true {
                guard try scanner.skipSpace() != nil else { throw fatal("the file ends inside a list (truncated?)") }
                try body(scanner.line)
                switch try scanner.skipSpace() {
                case 44: file.consume(1)
                case 93: file.consume(1); return
                case nil: throw fatal("the file ends inside a list (truncated?)")
                default: throw fatal("expected ',' or ']' in the Telegram export")
                }
            }
        }

        /// The value that starts at the next byte, parsed (a syntax error is fatal).
        func value(_ line: Int) throws -> JSONValue {
            try scanner.collectValue(into: &buffer)
            return try NotesKitJSON.parse(buffer, line: line, path: path, fatal: true)
        }

        func skip(_ line: Int) throws {
            try scanner.collectValue(into: &buffer)
        }

        /// Reads one member of a chat object; false for a key that is not a chat's.
        func chatMember(_ key: String, _ line: Int, _ chat: inout Chat) throws -> Bool {
            switch key {
            case "name":
                if case let .string(name) = try value(line) { chat.name = name }
            case "type":
                if case let .string(type) = try value(line) { chat.type = type }
            case "id":
                if case let .int(id) = try value(line) { chat.id = id }
            case "messages":
                chat.sawMessages = true
                try elements { line in
                    try scanner.collectValue(into: &buffer)
                    let location = SourceLocation(file: path, line: line)
                    let value: JSONValue
                    do {
                        value = try NotesKitJSON.parse(buffer, line: line, path: path, fatal: false)
                    } catch let error as NotesError {
                        return try importer.fail(error, at: location)
                    }
                    try message(value, in: &chat, at: location)
                    importer.advance(to: scanner.file.consumed)
                }
            default:
                return false
            }
            return true
        }

        func message(_ value: JSONValue, in chat: inout Chat, at location: SourceLocation) throws {
            guard case .object = value else {
                return try importer.fail(formatError(nil, "a message must be a JSON object, got \(value.typeName)"), at: location)
            }
            if case let .string(type)? = value["type"], type != "message" {
                return try importer.leaveOut(.serviceMessage, at: location)
            }
            let text = Self.text(value["text"])
            if TextRules.isBlank(text) {
                return try importer.leaveOut(.mediaOnly, at: location)
            }
            let conversation = try conversationUid(&chat, at: location)
            let importer = self.importer
            let meId = self.meId, meName = self.meName
            let chatType = chat.type, chatId = chat.id
            try importer.add(try { () throws -> ExchangeRecord in
                let sentAt = try Self.time(value, importer.times)
                var sender: String?
                switch value["from"] {
                case let .string(name)?: sender = name
                case .null?: sender = "Deleted Account"
                default: sender = nil
                }
                let fromId = Self.string(value["from_id"])
                let fromMe: Bool
                if meId != nil || meName != nil {
                    fromMe = (meId != nil && fromId == meId) || (meName != nil && sender == meName)
                } else if chatType == "saved_messages" {
                    fromMe = true
                } else if chatType == "personal_chat", let id = chatId {
                    fromMe = fromId != "user\(id)"
                } else {
                    throw formatError("from", "the export does not say which account made it: pass \(option: "me", string: "Your Name") (or your id, \(option: "me", string: "user123456789"))")
                }
                var messageId = ""
                if case let .int(id)? = value["id"] { messageId = String(id) }
                return .message(try Fields.message(MessageRecord(
                    uid: nil, conversationUid: conversation, conversationTitle: nil, content: text, fromMe: fromMe,
                    sentAt: sentAt, sender: sender.map { String($0.prefix(TextRules.maxTitleLength)) },
                    identity: messageId.isEmpty ? nil : ["telegram", conversation, messageId])))
            }(), at: location)
        }

        /// The chat's conversation, found or created at its first message.
        func conversationUid(_ chat: inout Chat, at location: SourceLocation) throws -> String {
            if let c = chat.conversation { return c.uid }
            let key = chat.id.map(String.init) ?? chat.name ?? "chat"
            var title = chat.name ?? (chat.type == "saved_messages" ? "Saved Messages" : "Telegram chat \(key)")
            if TextRules.isBlank(title) { title = "Telegram chat \(key)" }
            title = String(title.prefix(TextRules.maxTitleLength))
            let made = try importer.conversation(uid: DerivedUID.make(["telegram", key]), title: title, firstSentAt: nil)
            chat.conversation = made
            return made.0
        }

        static func string(_ value: JSONValue?) -> String? {
            if case let .string(s)? = value { return s }
            return nil
        }

        /// A message's text: a string, or a list of strings and entities (`{"type", "text"}`).
        static func text(_ value: JSONValue?) -> String {
            switch value {
            case let .string(s)?: return s
            case let .array(parts)?:
                var out = ""
                for part in parts {
                    if case let .string(s) = part { out += s } else if case let .string(s)? = part["text"] { out += s }
                }
                return out
            default: return ""
            }
        }

        /// `date_unixtime` (seconds, as text or a number), else `date` (local time, in `tz=`).
        static func time(_ value: JSONValue, _ times: TimeReader) throws -> Timestamp {
            switch value["date_unixtime"] {
            case let .string(s)?:
                guard let v = Int64(s), let t = TimeReader.epoch(v) else { throw formatError("date_unixtime", "date_unixtime must be Unix seconds, got \"\(s.prefix(40))\"") }
                return t
            case let .int(v)?:
                guard let t = TimeReader.epoch(v) else { throw formatError("date_unixtime", "date_unixtime is out of range") }
                return t
            default:
                guard let date = value["date"], let t = try times.timestamp(date, field: "date") else { throw formatError("date", "date is missing") }
                return t
            }
        }
    }
}

// MARK: - WhatsApp

/// WhatsApp's chat export (`.txt`): Android's `12/31/23, 10:00 PM - Alice: hi` and iOS's
/// `[31/12/2023, 22:00:00] Alice: hi` (dates with `/`, `.` or `-`, two- or four-digit years,
/// 12- or 24-hour times with or without seconds, the invisible marks WhatsApp puts in front), the
/// further lines of a message as they are.
///
/// Lines without a sender (the encryption notice, joins, subject changes) are system lines, and a
/// message of nothing but an attachment (`<Media omitted>`, iOS's `<attached: …>` or `image
/// omitted`) has nothing to keep: both are skipped and listed. Dates are day first or month first:
/// the file tells when a day is above 12, else `dateOrder` must. Times are local, read in `tz=`.
/// Each author is kept as `sender`; the messages of `me=` are `fromMe` (without it, in a chat of
/// two people whose file is named `WhatsApp Chat with Alice`, the one who is not Alice). The chat
/// goes into a conversation as a transcript does (`conversation=`, `title=`, or the one holding
/// its first message, or one titled from the file name). Read twice: once for the date order and
/// the authors, once to import, one message in memory at a time.
enum WhatsAppChat {
    /// A message line's parts; the date as written (day and month in the file's order).
    struct Header {
        var first: Int64, second: Int64, year: Int64
        var yearFirst: Bool
        var hour: Int64, minute: Int64, secondOfMinute: Int64
        /// 0: a 24-hour time; 1: AM; 2: PM.
        var meridiem: Int
        /// Where the sender (or a system line's text) starts, and the ": " after the sender (nil: a system line).
        var rest: Int
        var colon: Int?
    }

    static func header(_ b: UnsafeBufferPointer<UInt8>) -> Header? {
        var i = 0
        let n = b.count
        // Invisible marks in front: LRM, RLM, LRE...RLO, BOM.
        while i + 2 < n, (b[i] == 0xE2 && b[i + 1] == 0x80 && (b[i + 2] == 0x8E || b[i + 2] == 0x8F || (0xAA...0xAE).contains(b[i + 2])))
                || (b[i] == 0xEF && b[i + 1] == 0xBB && b[i + 2] == 0xBF) { i += 3 }
        let bracket = i < n && b[i] == 91
        if bracket { i += 1 }
        func number(_ low: Int, _ high: Int) -> Int64? {
            var v: Int64 = 0, count = 0
            while i < n, count < high, b[i] >= 48, b[i] <= 57 { v = v * 10 + Int64(b[i] - 48); i += 1; count += 1 }
            return count >= low ? v : nil
        }
        let startFirst = i
        guard let first = number(1, 4) else { return nil }
        let yearFirst = i - startFirst == 4
        guard i < n, b[i] == 47 || b[i] == 46 || b[i] == 45 else { return nil }
        let separator = b[i]
        i += 1
        guard let second = number(1, 2), i < n, b[i] == separator else { return nil }
        i += 1
        guard let third = number(yearFirst ? 1 : 2, yearFirst ? 2 : 4) else { return nil }
        if i < n, b[i] == 46 { i += 1 }
        if i < n, b[i] == 44 { i += 1 }
        guard i < n, b[i] == 32 else { return nil }
        while i < n, b[i] == 32 { i += 1 }
        guard let hour = number(1, 2), i < n, b[i] == 58 || b[i] == 46 else { return nil }
        i += 1
        guard let minute = number(2, 2) else { return nil }
        var seconds: Int64 = 0
        if i + 2 < n, b[i] == 58 || b[i] == 46, b[i + 1] >= 48, b[i + 1] <= 57 {
            i += 1
            guard let s = number(2, 2) else { return nil }
            seconds = s
        }
        var meridiem = 0
        var j = i
        while j < n, b[j] == 32 { j += 1 }
        if j + 2 < n, b[j] == 0xE2, b[j + 1] == 0x80, b[j + 2] == 0xAF { j += 3 }  // narrow no-break space
        else if j + 1 < n, b[j] == 0xC2, b[j + 1] == 0xA0 { j += 2 }
        if j < n, let letter = Optional(b[j] | 0x20), letter == 97 || letter == 112 {
            var k = j + 1
            if k < n, b[k] == 46 { k += 1 }
            if k < n, b[k] | 0x20 == 109 {
                k += 1
                if k < n, b[k] == 46 { k += 1 }
                meridiem = letter == 97 ? 1 : 2
                i = k
            }
        }
        if bracket {
            guard i + 1 < n, b[i] == 93, b[i + 1] == 32 else { return nil }
            i += 2
        } else {
            guard i + 2 < n, b[i] == 32, b[i + 1] == 45, b[i + 2] == 32 else { return nil }
            i += 3
        }
        let rest = i
        var colon: Int?
        var k = rest
        while k + 1 < n, k - rest <= TranscriptLines.maxSenderBytes {
            if b[k] == 58 && b[k + 1] == 32 { colon = k; break }
            k += 1
        }
        if colon == rest { colon = nil }
        return Header(first: first, second: second, year: third, yearFirst: yearFirst, hour: hour, minute: minute,
                      secondOfMinute: seconds, meridiem: meridiem, rest: rest, colon: colon)
    }

    /// The local wall-clock milliseconds of a header, in `order`; nil when it is no valid time.
    static func localMilliseconds(_ h: Header, _ order: DateOrder) -> Int64? {
        var (year, month, day) = h.yearFirst ? (h.first, h.second, h.year) : order == .dmy ? (h.year, h.second, h.first) : (h.year, h.first, h.second)
        if year < 100 { year += 2000 }
        var hour = h.hour
        if h.meridiem != 0 {
            guard (1...12).contains(hour) else { return nil }
            hour = hour % 12 + (h.meridiem == 2 ? 12 : 0)
        }
        guard (1...12).contains(month), day >= 1, day <= Timestamp.daysIn(month: month, year: year), hour < 24, h.minute < 60,
              h.secondOfMinute < 60 else { return nil }
        return (Timestamp.days(fromCivil: year, month, day) * 86_400 + hour * 3600 + h.minute * 60 + h.secondOfMinute) * 1000
    }

    /// The text after a header: the message, or a system line.
    static func text(_ b: UnsafeBufferPointer<UInt8>, from start: Int) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: b[start...]), as: UTF8.self)
    }

    /// A message that is only an attachment the export does not carry.
    static func isMediaOnly(_ text: String) -> Bool {
        var t = Substring(text)
        while let c = t.unicodeScalars.first, c == "\u{200E}" || c == "\u{200F}" { t = Substring(t.unicodeScalars.dropFirst()) }
        let trimmed = String(t).trimmingSpaces()
        return trimmed == "<Media omitted>" || (trimmed.hasPrefix("<attached: ") && trimmed.hasSuffix(">"))
            || (text.unicodeScalars.first == "\u{200E}" && trimmed.hasSuffix(" omitted") && !trimmed.contains("\n"))
    }

    /// The file name's title: "WhatsApp Chat with Alice" → "Alice".
    static func title(_ path: String) -> String {
        var stem = ChatTarget.stem(path)
        for prefix in ["WhatsApp Chat with ", "WhatsApp Chat - "] where stem.hasPrefix(prefix) { stem = String(stem.dropFirst(prefix.count)) }
        return stem
    }

    // MARK: - Import

    /// What the first reading finds: the date order, and the first few authors.
    struct Survey {
        var order: DateOrder?
        var senders: [String] = []
        var moreSenders = false
    }

    static func survey(_ path: String, needOrder: Bool, needSenders: Bool) throws -> Survey {
        var survey = Survey()
        guard needOrder || needSenders else { return survey }
        let file = try InputFile(path: path)
        try file.skipByteOrderMark()
        while let line = try file.nextLine() {
            guard let h = header(line) else { continue }
            if needOrder, survey.order == nil, !h.yearFirst {
                if h.first > 12 && h.second <= 12 { survey.order = .dmy } else if h.second > 12 && h.first <= 12 { survey.order = .mdy }
            }
            if needSenders, !survey.moreSenders, let colon = h.colon {
                let name = String(decoding: UnsafeBufferPointer(rebasing: line[h.rest..<colon]), as: UTF8.self)
                if !survey.senders.contains(name) {
                    if survey.senders.count == 2 { survey.moreSenders = true } else { survey.senders.append(name) }
                }
            }
            if (!needOrder || survey.order != nil) && (!needSenders || survey.moreSenders) { break }
        }
        return survey
    }

    /// A message being read: its first line and what follows.
    private struct Pending: PendingMessage {
        var sentAt: Timestamp
        var sender: String?
        var content: String
        var line: Int
        var tooLong = false
    }

    static func read(_ path: String, into importer: Importer) throws {
        let options = importer.options
        let defaultTitle = title(path)
        let survey = try survey(path, needOrder: options.dateOrder == nil, needSenders: options.me == nil)
        var me = options.me
        if me == nil, !survey.moreSenders, survey.senders.count == 2, survey.senders.contains(defaultTitle) {
            me = survey.senders.first { $0 != defaultTitle }
        }
        let order = options.dateOrder ?? survey.order
        let file = try importer.open(path)
        var target = try ChatTarget(path: path, importer: importer, kind: "whatsapp", defaultTitle: defaultTitle)
        var pending: Pending?

        func flush() throws {
            guard case let (message, location)? = try importer.take(&pending, in: path) else { return }
            guard let sender = message.sender else { return try importer.leaveOut(.systemMessage, at: location) }
            if isMediaOnly(message.content) { return try importer.leaveOut(.mediaOnly, at: location) }
            // iOS marks its system lines (the encryption notice, deleted messages) with a leading LRM.
            if message.content.utf8.starts(with: [0xE2, 0x80, 0x8E]) { return try importer.leaveOut(.systemMessage, at: location) }
            let fromMe = me == sender
            let uid = try target.uid(first: (message.sentAt, fromMe, message.content), at: location)
            try importer.add(.message(try Fields.message(MessageRecord(
                uid: nil, conversationUid: uid, conversationTitle: nil, content: message.content, fromMe: fromMe,
                sentAt: message.sentAt, sender: sender,
                // Not who "me" is: the same file imported with another me= finds its messages.
                identity: ["whatsapp", uid, sender, message.sentAt.iso8601, message.content]))), at: location)
        }

        while let line = try file.nextLine() {
            let number = file.lineNumber
            var bytes = line
            if bytes.last == 13 { bytes = UnsafeBufferPointer(rebasing: bytes[..<(bytes.count - 1)]) }
            if let h = header(bytes) {
                try flush()
                let location = SourceLocation(file: path, line: number)
                guard let order = order ?? (h.yearFirst ? .dmy : nil) else {
                    throw Importer.locate(formatError("date_order", "the dates could be day first or month first (no day in the file is above 12): pass \(option: "dateOrder", choice: "dmy") or \(option: "dateOrder", choice: "mdy")"), at: location)
                }
                guard String(validating: bytes, as: UTF8.self) != nil else {
                    try importer.fail(formatError(nil, "the line is not valid UTF-8"), at: location)
                    continue
                }
                guard let local = localMilliseconds(h, order), let sentAt = importer.times.local(milliseconds: local) else {
                    try importer.fail(formatError("date", "the date or time is not valid (read \(order == .dmy ? "day first" : "month first"); pass \(option: "dateOrder") if that is wrong)"), at: location)
                    continue
                }
                if let colon = h.colon {
                    let sender = String(decoding: UnsafeBufferPointer(rebasing: bytes[h.rest..<colon]), as: UTF8.self)
                    pending = Pending(sentAt: sentAt, sender: sender, content: text(bytes, from: colon + 2), line: number)
                } else {
                    pending = Pending(sentAt: sentAt, sender: nil, content: text(bytes, from: h.rest), line: number)
                }
            } else if var message = pending {
                pending = nil  // one owner of the text while it grows
                guard let text = String(validating: bytes, as: UTF8.self) else {
                    try importer.fail(formatError(nil, "the line is not valid UTF-8"), at: SourceLocation(file: path, line: number))
                    continue
                }
                if message.content.utf8.count > 4 * TextRules.maxContentLength {
                    message.tooLong = true
                } else {
                    message.content += "\n"
                    message.content += text
                }
                pending = message
            } else if !bytes.allSatisfy({ $0 == 32 || $0 == 9 }) {
                try importer.fail(formatError(nil, "expected a WhatsApp message line like 12/31/23, 10:00 PM - Alice: hi or [31/12/2023, 22:00:00] Alice: hi"),
                                  at: SourceLocation(file: path, line: number))
            }
            importer.advance(to: file.consumed)
        }
        try flush()
    }
}
