extension Layout {
    func fetchAndMeasureMessages(_ ids: ArraySlice<Int64>, allOrNothing: Bool) throws -> ([HeightCache.Entry], Int64, [Int64]) {
        throw NotesError(.invalidArgument, "messages are not laid out yet")
    }
}
