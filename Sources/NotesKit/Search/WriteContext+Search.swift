/// New records waiting to be indexed: a transaction that inserts many (bulk create, an import)
/// indexes them in one batch at its end, not one by one.
struct PendingSearch {
    var articles: [SearchIndex.Document] = []
    var messages: [SearchIndex.Document] = []
    /// Past this many waiting records a batch is indexed at once, so memory stays bounded.
    static let batch = 50_000
}

extension WriteContext {
    /// Indexes `article` (just inserted) with the transaction's other new articles.
    func indexLater(article: Article) throws {
        pendingSearch.articles.append(ArticleStore.searchDocument(article))
        if pendingSearch.articles.count >= PendingSearch.batch { try flushSearch() }
    }

    /// Indexes `messages` (just inserted) with the transaction's other new messages.
    func indexLater(messages: [Message]) throws {
        for m in messages { pendingSearch.messages.append(MessageStore.searchDocument(m)) }
        if pendingSearch.messages.count >= PendingSearch.batch { try flushSearch() }
    }

    /// Indexes every waiting record. Called before the transaction commits, and before any write
    /// that changes or removes indexed text (so that it finds the entries it changes).
    func flushSearch() throws {
        if !pendingSearch.articles.isEmpty {
            try SearchIndex.articles.add(connection, pendingSearch.articles)
            pendingSearch.articles.removeAll()
        }
        if !pendingSearch.messages.isEmpty {
            try SearchIndex.messages.add(connection, pendingSearch.messages)
            pendingSearch.messages.removeAll()
        }
    }
}
