extension Layout {
    func fetchAndMeasureMessages(_ ids: ArraySlice<Int64>) throws -> ([HeightCache.Entry], Int64, [Int64]) {
        throw NotesError(.invalidArgument, "messages are not laid out yet")
    }
}
