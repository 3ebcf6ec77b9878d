extension Conversation {
    /// Checks a conversation title: non-blank, no NUL, at most ``TextRules/maxTitleLength`` code
    /// points. Throws a `.validation` error naming `title`.
    public static func validate(title: String) throws {
        try TextRules.checkRequired(title, field: "title", limit: TextRules.maxTitleLength, code: "conversation_title")
    }
}

extension Message {
    /// Checks a message text: non-blank, no NUL, at most ``TextRules/maxContentLength`` code points.
    /// Throws a `.validation` error naming `content` (the model field; Python's `send(text)` and
    /// `receive(text)` report the same field name).
    public static func validate(content: String) throws {
        try TextRules.checkRequired(content, field: "content", limit: TextRules.maxContentLength, code: "message")
    }

    /// Checks a sender's name when there is one: the title rules (non-blank, no NUL, at most
    /// ``TextRules/maxTitleLength`` code points). Throws `.validation` on `sender`.
    public static func validate(sender: String?) throws {
        if let sender { try TextRules.checkRequired(sender, field: "sender", limit: TextRules.maxTitleLength) }
    }

    /// Checks an explicit `sentAt` (an imported message's time). Throws `.validation` on `sent_at`.
    static func validate(sentAt: Timestamp?) throws {
        if let sentAt, !Timestamp.range.contains(sentAt.milliseconds) {
            throw NotesError.validation("sent_at", "sent_at is out of range (years 0001 to 9999)")
        }
    }
}
